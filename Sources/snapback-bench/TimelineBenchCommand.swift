// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackCommandLine
import SnapbackTimeline

/// `snapback-bench timeline`: the pure timeline on one core, no daemon, no I/O.
/// - events per second for a session with 100 breaks (a player's mix: playhead reports, seeks that snap
///   back, ad events, pauses), against a baseline loop that only builds the same events;
/// - conversions for 10 vs 100,000 breaks: ns per conversion and the ratio (O(log n): close to 1).
struct TimelineBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "The timeline engine alone: events per second, conversions for 10 vs 100,000 breaks.",
        discussion: prose(
            """
            Measures the timeline engine in-process on one core (pin it with taskset for steady figures):
            events per second for a session with 100 ad breaks, and stream→content / content→stream
            conversions with 10 vs 100,000 breaks.
            """))

    @Option(name: .long, help: ArgumentHelp("Events to apply.", valueName: "n")) var events = 2_000_000
    @Option(name: .long, help: ArgumentHelp("Conversions per layout.", valueName: "n")) var conversions = 2_000_000

    func validate() throws {
        try checkRange(events, "--events", 1000...1_000_000_000)
        try checkRange(conversions, "--conversions", 1000...1_000_000_000)
    }

    func run() throws {
        try Self.measure(events: events, conversions: conversions)
    }

    static func measure(events: Int, conversions: Int) throws {
        say("timeline engine, one core, in-process")
        let (rate, baseline) = try eventRate(events)
        say(
            "  events, session with 100 breaks: \(fixed(rate / 1e6, 2)) M events/s (\(fixed(1e9 / rate, 0)) ns/event); "
                + "building the events alone: \(fixed(1e9 / baseline, 0)) ns/event")
        let small = try conversionCost(breaks: 10, count: conversions, local: true)
        let large = try conversionCost(breaks: 100_000, count: conversions, local: true)
        let smallRandom = try conversionCost(breaks: 10, count: conversions, local: false)
        let largeRandom = try conversionCost(breaks: 100_000, count: conversions, local: false)
        say("  conversions (stream→content + content→stream), ns per pair:")
        say("    near a moving playhead:        10 breaks \(fixed(small, 1)), 100,000 breaks \(fixed(large, 1))")
        say(
            "    uniformly random in the stream: 10 breaks \(fixed(smallRandom, 1)), 100,000 breaks \(fixed(largeRandom, 1)) (memory-bound)"
        )
        say(
            "ratio conversion 100,000/10 breaks = \(fixed(large / small, 2)) near the playhead, \(fixed(largeRandom / smallRandom, 2)) random"
        )
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// 100 breaks of 60 s every 10 minutes of a 1000-minute program.
    static func hundredBreaks() -> [AdBreak] {
        (0..<100).map { i in AdBreak(id: "b\(i)", start: Double(i) * 660 + 300, duration: 60) }
    }

    /// The event at step `i` of the player's mix, for the position `t`.
    @inline(__always)
    static func event(_ i: Int, _ t: Double) -> TimelineEvent {
        switch i % 40 {
        case 39: return .seekEnded(from: t, to: t + 700)
        case 19: return .paused(streamTime: t)
        default: return .playheadReported(streamTime: t, rate: 1, playing: true)
        }
    }

    static func eventRate(_ count: Int) throws -> (Double, Double) {
        var policy = AdPolicy()
        policy.bookmarkInterval = 30
        let config = SessionConfiguration(contentDuration: 60_000, breaks: hundredBreaks(), policy: policy)
        var session = try TimelineSession(config)
        var opening: [TimelineAction] = []
        session.opened(at: 0, into: &opening)
        var t = 0.0
        var wall = 0.0
        var sink = 0
        let start = now()
        for i in 0..<count {
            wall += 0.5
            let actions: [TimelineAction]
            do {
                actions = try session.handle(event(i, t), at: wall)
            } catch {
                actions = []
            }
            sink &+= actions.count
            // Follow the daemon's commands like a player would: to the seek target, through the break.
            var moved = false
            for a in actions { if case .seek(let to, _) = a.kind { t = to; moved = true } }
            if !moved { t += 0.5 }
            if t > 60_000 || session.isClosed {
                session = try TimelineSession(config)
                session.opened(at: wall, into: &opening)
                t = 0
            }
        }
        let elapsed = now() - start
        // Baseline: the same loop building the same events without the engine.
        var bt = 0.0
        let baseStart = now()
        for i in 0..<count {
            if case .seekEnded(_, let to) = event(i, bt) { sink &+= Int(to) }
            bt = bt > 60_000 ? 0 : bt + 0.5
        }
        let baseElapsed = now() - baseStart
        if sink == 42 { say("") }
        return (Double(count) / elapsed, Double(count) / baseElapsed)
    }

    /// `local`: queries within ±30 minutes of a playhead that moves through the stream, as a player's
    /// are; otherwise uniformly random over the whole stream.
    static func conversionCost(breaks n: Int, count: Int, local: Bool) throws -> Double {
        let span = Double(n) * 100
        let breaks = (0..<n).map { i in AdBreak(id: "b\(i)", start: Double(i) * 100 + 50, duration: 20) }
        let layout = try TimelineLayout(breaks: breaks)
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        var sink = 0.0
        var playhead = 0.0
        let start = now()
        for _ in 0..<count {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            let u = Double(x >> 11) / Double(1 << 53)
            let s = local ? (playhead + (u - 0.5) * 3600).magnitude.truncatingRemainder(dividingBy: span) : u * span
            playhead += 0.25
            if playhead >= span { playhead = 0 }
            let c = layout.contentTime(forStreamTime: s)
            sink += layout.streamTime(forContentTime: c)
        }
        let elapsed = now() - start
        if sink == -1 { say("") }
        return elapsed / Double(count) * 1e9
    }
}
