// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Builds sessions with defaults so each test states only what it is about.
enum Factory {
    /// The seeds' stream: a 30-minute program with a pre-roll, a break at 10:00 and one at 20:00.
    /// Stream: pre 0–30, b1 630–690 (content 600), b2 1290–1380 (content 1200); stream end 1980.
    static let seedBreaks = [
        AdBreak(id: "pre", start: 0, duration: 30),
        AdBreak(id: "b1", start: 630, duration: 60),
        AdBreak(id: "b2", start: 1290, duration: 90)
    ]

    /// Three one-minute mid-rolls and no pre-roll, for seeks over several breaks. With a 40-minute
    /// program: m1 600–660 (content 600), m2 1200–1260 (content 1140), m3 1800–1860 (content 1680);
    /// stream end 2580.
    static let threeBreaks = [
        AdBreak(id: "m1", start: 600, duration: 60),
        AdBreak(id: "m2", start: 1200, duration: 60),
        AdBreak(id: "m3", start: 1800, duration: 60)
    ]
    static let threeBreaksContent: Double = 2400

    /// One break at 10:00 (the seeds' diagram): b1 600–660, 30-minute program.
    static let oneBreak = [AdBreak(id: "b1", start: 600, duration: 60)]

    static func session(
        breaks: [AdBreak] = seedBreaks,
        kind: SessionKind = .onDemand,
        contentDuration: Double? = 1800,
        policy: AdPolicy = AdPolicy(),
        resume: Double? = nil,
        adRules: AdRules? = nil,
        watched: Set<String> = [],
        lastBreakCompletedAt: Double? = nil,
        now: Double = 1000
    ) throws -> (TimelineSession, [TimelineAction]) {
        var s = try TimelineSession(
            SessionConfiguration(
                kind: kind, contentDuration: contentDuration, breaks: breaks, policy: policy,
                resumeContentTime: resume, adRules: adRules, previouslyWatchedBreakIds: watched,
                lastBreakCompletedAt: lastBreakCompletedAt))
        let opened = s.opened(at: now)
        return (s, opened)
    }

    /// The three-mid-roll stream, with `watched` breaks already watched.
    static func threeBreakSession(
        policy: AdPolicy = AdPolicy(), watched: Set<String> = [], now: Double = 1000
    ) throws -> TimelineSession {
        try session(
            breaks: threeBreaks, contentDuration: threeBreaksContent, policy: policy, watched: watched,
            now: now
        ).0
    }

    /// A session whose viewer is playing content at stream time `at` (a first playhead report there).
    static func playing(
        at t: Double, breaks: [AdBreak] = oneBreak, contentDuration: Double? = 1800, policy: AdPolicy = AdPolicy(),
        watched: Set<String> = [], now: Double = 1000
    ) throws -> TimelineSession {
        var (s, _) = try session(
            breaks: breaks, contentDuration: contentDuration, policy: policy, watched: watched,
            now: now)
        try s.report(t, at: now)
        return s
    }

    static func policy(_ edit: (inout AdPolicy) -> Void) -> AdPolicy {
        var p = AdPolicy()
        edit(&p)
        return p
    }

    static func preset(_ preset: AdPolicy.Preset, _ edit: (inout AdPolicy) -> Void = { _ in }) -> AdPolicy {
        var p = AdPolicy(preset: preset)
        edit(&p)
        return p
    }
}

extension TimelineSession {
    /// `opened(at:into:)`, returning the actions.
    mutating func opened(at now: Double) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        opened(at: now, into: &actions)
        return actions
    }

    /// A playhead report (playing at rate 1 unless told).
    @discardableResult
    mutating func report(_ t: Double, at now: Double, rate: Double = 1, playing: Bool = true) throws(TimelineError)
        -> [TimelineAction]
    {
        try handle(.playheadReported(streamTime: t, rate: rate, playing: playing), at: now)
    }

    /// A viewer's seek: seek started then seek ended. Returns the actions of seek ended.
    @discardableResult
    mutating func seek(from: Double, to: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        _ = try handle(.seekStarted(from: from), at: now)
        return try handle(.seekEnded(from: from, to: to), at: now)
    }

    /// The player's ad-break-started then ad-break-ended `duration` seconds later. Returns the actions of
    /// ad-break-ended.
    @discardableResult
    mutating func playBreak(_ id: String, at now: Double, duration: Double = 60) throws(TimelineError)
        -> [TimelineAction]
    {
        _ = try handle(.adBreakStarted(breakId: id), at: now)
        return try handle(.adBreakEnded(breakId: id), at: now + duration)
    }

    /// Whether the session holds break `id` as watched.
    func isWatched(_ id: String, at now: Double = 0) -> Bool {
        snapshot(at: now).breaks.first { $0.id == id }?.watched ?? false
    }
}

/// Checks that `event` is refused with exactly `expected` and that the session is unchanged afterwards.
func expectRefused(
    _ s: inout TimelineSession, _ event: TimelineEvent, at now: Double, with expected: TimelineError,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let before = s.snapshot(at: now)
    do {
        let actions = try s.handle(event, at: now)
        Issue.record("\(event.name) was accepted (\(actions)); expected \(expected)", sourceLocation: sourceLocation)
    } catch {
        #expect(same(error, expected), sourceLocation: sourceLocation)
    }
    #expect(s.snapshot(at: now) == before, "the refused event changed the session", sourceLocation: sourceLocation)
}

/// Checks that building a session from `configuration` fails with exactly `expected`.
func expectRejected(
    _ configuration: SessionConfiguration, with expected: TimelineError,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        _ = try TimelineSession(configuration)
        Issue.record("the configuration was accepted; expected \(expected)", sourceLocation: sourceLocation)
    } catch {
        #expect(same(error, expected), sourceLocation: sourceLocation)
    }
}

/// Equality of errors that also holds for the NaN a refused NaN time carries.
func same(_ a: TimelineError, _ b: TimelineError) -> Bool { a == b || a.description == b.description }

extension Array where Element == TimelineAction {
    /// The seek commands, as (target, reason).
    var seeks: [Seek] { compactMap { if case .seek(let t, let r) = $0.kind { return Seek(t, r) } else { return nil } } }
    var watched: [String] { compactMap { if case .breakWatched(let id) = $0.kind { return id } else { return nil } } }
    var played: [String] { compactMap { if case .playBreak(let id) = $0.kind { return id } else { return nil } } }
    var bookmarks: [Double] {
        compactMap { if case .saveBookmark(let c, _, _) = $0.kind { return c } else { return nil } }
    }
    /// The bookmarks saved, with the stream time and the trigger.
    var savedBookmarks: [Bookmark] {
        compactMap { if case .saveBookmark(let c, let s, let t) = $0.kind { return Bookmark(c, s, t) } else { return nil } }
    }
    var clearsBookmark: Bool { contains { $0.kind == .clearBookmark } }
    var allAdsCompleted: Bool { contains { $0.kind == .allAdsCompleted } }
    /// Timers armed, as (timer, deadline).
    var timers: [Timer] {
        compactMap { if case .scheduleTimer(let t, let d) = $0.kind { return Timer(t, d) } else { return nil } }
    }
    var cancelledTimers: [TimelineTimer] {
        compactMap { if case .cancelTimer(let t) = $0.kind { return t } else { return nil } }
    }
    /// The deadline of the armed `timer`, if these actions arm it.
    func deadline(of timer: TimelineTimer) -> Double? { timers.last { $0.timer == timer }?.deadline }
}

struct Seek: Equatable, Sendable, CustomStringConvertible {
    var to: Double
    var reason: SeekReason
    init(_ to: Double, _ reason: SeekReason) { self.to = to; self.reason = reason }
    var description: String { "\(to) \(reason.rawValue)" }
}

struct Bookmark: Equatable, Sendable, CustomStringConvertible {
    var content: Double
    var stream: Double
    var trigger: BookmarkTrigger
    init(_ content: Double, _ stream: Double, _ trigger: BookmarkTrigger) {
        self.content = content; self.stream = stream; self.trigger = trigger
    }
    var description: String { "content \(content) (stream \(stream), \(trigger.rawValue))" }
}

struct Timer: Equatable, Sendable, CustomStringConvertible {
    var timer: TimelineTimer
    var deadline: Double
    init(_ timer: TimelineTimer, _ deadline: Double) { self.timer = timer; self.deadline = deadline }
    var description: String { "\(timer.rawValue) at \(deadline)" }
}
