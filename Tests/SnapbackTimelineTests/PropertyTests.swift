// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import SnapbackTimeline
import Testing

/// A random valid stitched timeline: up to `maxCount` breaks with random gaps (some zero: back-to-back
/// breaks, a pre-roll at 0) and durations (some zero), a random tail after the last (zero: a post-roll),
/// in random order. A share of the breaks cut content (`contentResumeOffset`): less than they last, as
/// much, or more — up to four times as much and a minute (an empty break may cut content too).
struct RandomTimeline {
    var breaks: [AdBreak]
    var contentDuration: Double
    var streamEnd: Double

    init(_ rng: inout SplitMix64, maxCount: Int = 50, watchedShare: Double = 0.2) {
        let n = Int.random(in: 0...maxCount, using: &rng)
        var t = 0.0, content = 0.0, previousDuration = 1.0
        breaks = []
        breaks.reserveCapacity(n)
        for i in 0..<n {
            // A zero gap after an empty break would put two breaks at one start: rejected by design.
            let gap = rng.chance(0.15) && previousDuration > 0 ? 0 : Double.random(in: 0.5...900, using: &rng)
            let duration = rng.chance(0.05) ? 0 : Double.random(in: 1...180, using: &rng)
            t += gap
            content += gap
            var offset: Double?
            if rng.chance(0.4) {
                offset = rng.pick([
                    0, duration, Double.random(in: 0...duration, using: &rng),
                    Double.random(in: duration...(4 * duration + 60), using: &rng)
                ])
            }
            breaks.append(
                AdBreak(
                    id: "b\(i)", start: t, duration: duration, watched: rng.chance(watchedShare),
                    contentResumeOffset: offset))
            content += offset ?? 0
            t += duration
            previousDuration = duration
        }
        let tail = rng.chance(0.15) ? 0 : Double.random(in: 0...900, using: &rng)
        contentDuration = content + tail
        streamEnd = t + tail
        breaks.shuffle(using: &rng)
    }
}

@Suite struct PropertyTests {
    static let seeds: [UInt64] = Array(1...300)

    /// Stream times to probe: random ones, every break boundary, and points just around them.
    func streamProbes(_ tl: RandomTimeline, _ rng: inout SplitMix64) -> [Double] {
        var ts = (0..<200).map { _ in Double.random(in: 0...max(tl.streamEnd, 1), using: &rng) }
        for b in tl.breaks { ts += [b.start, b.end, b.start.nextDown, b.end.nextDown, b.end.nextUp, b.start + 0.25] }
        return (ts + [0, tl.streamEnd]).filter { $0 >= 0 && $0 <= tl.streamEnd }.sorted()
    }

    @Test func streamToContentToStreamRoundTripsOutsideBreaks() throws {
        for seed in Self.seeds {
            var rng = SplitMix64(seed: seed)
            let tl = RandomTimeline(&rng)
            let layout = try TimelineLayout(breaks: tl.breaks)
            for s in streamProbes(tl, &rng) where layout.breakContaining(s) == nil {
                let back = layout.streamTime(forContentTime: layout.contentTime(forStreamTime: s))
                #expect(abs(back - s) <= 1e-9 * max(1, s), "seed \(seed): \(s) → \(back)")
            }
        }
    }

    @Test func contentToStreamToContentRoundTrips() throws {
        for seed in Self.seeds {
            var rng = SplitMix64(seed: seed)
            let tl = RandomTimeline(&rng)
            let layout = try TimelineLayout(breaks: tl.breaks)
            for _ in 0..<200 {
                let c = Double.random(in: 0...max(tl.contentDuration, 1), using: &rng)
                let s = layout.streamTime(forContentTime: c)
                #expect(layout.breakContaining(s) == nil, "seed \(seed): content \(c) → stream \(s) inside a break")
                let back = layout.contentTime(forStreamTime: s)
                if abs(back - c) <= 1e-9 * max(1, c) { continue }
                // Content a break cut has no stream time: it resolves to the end of the break (of the last of
                // back-to-back ones) that cut it, where the content comes back.
                let cut = layout.breaks.indices.contains { i in
                    layout.breaks[i].end == s && layout.contentPosition(ofBreakAt: i) <= c
                        && c < layout.contentResumePosition(ofBreakAt: i)
                        && abs(back - layout.contentResumePosition(ofBreakAt: i)) <= 1e-9 * max(1, back)
                }
                #expect(cut, "seed \(seed): content \(c) → stream \(s) → content \(back)")
            }
        }
    }

    @Test func streamToContentIsMonotonic() throws {
        for seed in Self.seeds {
            var rng = SplitMix64(seed: seed)
            let tl = RandomTimeline(&rng)
            let layout = try TimelineLayout(breaks: tl.breaks)
            let cs = streamProbes(tl, &rng).map { layout.contentTime(forStreamTime: $0) }
            for i in cs.indices.dropFirst() where cs[i] < cs[i - 1] {
                Issue.record("seed \(seed): content time goes back from \(cs[i - 1]) to \(cs[i])")
            }
            #expect(cs.allSatisfy { $0 >= 0 && $0 <= tl.contentDuration + 1e-9 * tl.contentDuration })
        }
    }

    @Test func contentToStreamIsMonotonic() throws {
        for seed in Self.seeds {
            var rng = SplitMix64(seed: seed)
            let tl = RandomTimeline(&rng)
            let layout = try TimelineLayout(breaks: tl.breaks)
            var cs = (0..<200).map { _ in Double.random(in: 0...max(tl.contentDuration, 1), using: &rng) }
            cs += layout.breaks.indices.flatMap { i in
                let p = layout.contentPosition(ofBreakAt: i)
                return [p, p.nextDown, p.nextUp]
            }
            let ss = cs.filter { $0 >= 0 }.sorted().map { layout.streamTime(forContentTime: $0) }
            for i in ss.indices.dropFirst() where ss[i] < ss[i - 1] {
                Issue.record("seed \(seed): stream time goes back from \(ss[i - 1]) to \(ss[i])")
            }
        }
    }

    /// A reference that walks every break: obviously right, O(n). Built from the breaks in stream order.
    struct NaiveLayout {
        var starts: [Double] = [], durations: [Double] = [], ids: [String] = []
        init(sorted breaks: [AdBreak]) {
            for b in breaks { starts.append(b.start); durations.append(b.duration); ids.append(b.id) }
        }
        func contentTime(_ s: Double) -> Double {
            var ads = 0.0
            for i in starts.indices {
                if s < starts[i] { break }
                if s < starts[i] + durations[i] { return starts[i] - ads }
                ads += durations[i]
            }
            return s - ads
        }
        func streamTime(_ c: Double) -> Double {
            var ads = 0.0
            for i in starts.indices {
                if starts[i] - ads > c { break }
                ads += durations[i]
            }
            return c + ads
        }
        func previous(_ s: Double) -> String? {
            var found: String?
            for i in starts.indices {
                if starts[i] > s { break }
                found = ids[i]
            }
            return found
        }
        func next(_ s: Double) -> String? {
            for i in starts.indices where starts[i] > s { return ids[i] }
            return nil
        }
        func containing(_ s: Double) -> String? {
            for i in starts.indices {
                if starts[i] > s { break }
                if s < starts[i] + durations[i] { return ids[i] }
            }
            return nil
        }
    }

    /// The O(log n) look-ups against the O(n) reference, for 10 and for 100,000 breaks. Times are multiples
    /// of 1/1024 s so that every sum is exact and both must agree to the bit (rounding is the business of
    /// the round-trip and monotonicity properties above).
    @Test(arguments: [10, 100_000])
    func conversionsAgreeWithANaiveReference(breakCount: Int) throws {
        var rng = SplitMix64(seed: UInt64(breakCount))
        func grid(_ range: ClosedRange<Double>) -> Double {
            (Double.random(in: range, using: &rng) * 1024).rounded() / 1024
        }
        var breaks: [AdBreak] = []
        breaks.reserveCapacity(breakCount)
        var t = 0.0
        for i in 0..<breakCount {
            t += rng.chance(0.1) ? 0 : grid(0.5...600)
            let d = grid(1...120)
            breaks.append(AdBreak(id: "b\(i)", start: t, duration: d))
            t += d
        }
        let naive = NaiveLayout(sorted: breaks)
        breaks.shuffle(using: &rng)
        let layout = try TimelineLayout(breaks: breaks)
        #expect(layout.count == breakCount)
        for _ in 0..<40 {
            let s = grid(0...t)
            #expect(layout.contentTime(forStreamTime: s) == naive.contentTime(s), "stream \(s)")
            #expect(layout.previousBreak(atOrBefore: s)?.id == naive.previous(s))
            #expect(layout.nextBreak(after: s)?.id == naive.next(s))
            #expect(layout.breakContaining(s)?.id == naive.containing(s))
            let c = grid(0...(t - layout.totalAdTime))
            #expect(layout.streamTime(forContentTime: c) == naive.streamTime(c), "content \(c)")
        }
        // Exactly on boundaries.
        for _ in 0..<10 {
            let i = Int.random(in: 0..<breakCount, using: &rng)
            let b = layout.breaks[i]
            for s in [b.start, b.end] {
                #expect(layout.contentTime(forStreamTime: s) == naive.contentTime(s), "stream \(s)")
                #expect(layout.previousBreak(atOrBefore: s)?.id == naive.previous(s))
            }
            let p = layout.contentPosition(ofBreakAt: i)
            #expect(layout.streamTime(forContentTime: p) == naive.streamTime(p), "content \(p)")
        }
    }

    // MARK: Random event sequences

    /// A random session: on-demand stitched, live or ad rules, random policy, maybe a bookmark.
    static func randomConfiguration(_ rng: inout SplitMix64) -> SessionConfiguration {
        var p = AdPolicy(preset: rng.pick(AdPolicy.Preset.allCases))
        p.skippedBreakChoice = rng.pick(AdPolicy.SkippedBreakChoice.allCases)
        p.seekGate = rng.pick(AdPolicy.SeekGate.allCases)
        p.enforceBackwardSeeks = rng.chance(0.3)
        p.returnToTarget = rng.pick(AdPolicy.ReturnToTarget.allCases)
        p.landingInUnwatchedBreak = rng.pick(AdPolicy.LandingInBreak.allCases)
        p.skipWatchedBreakOnLanding = rng.chance(0.7)
        p.watchedWhen = rng.pick(AdPolicy.WatchedWhen.allCases)
        p.refuseSeeksDuringUnwatchedBreak = rng.chance(0.7)
        p.watchedBreakOnPlayback = rng.pick(AdPolicy.WatchedBreakOnPlayback.allCases)
        p.snapbackLandingOffset = rng.pick([0, 0.1, 1, 500])
        p.cooldown = rng.pick([0, 0, 60, 300])
        p.trickPlayAsSeek = rng.chance(0.7)
        p.trickPlaySkippedBreaks = rng.pick(AdPolicy.TrickPlaySkippedBreaks.allCases)
        p.resumeBreaks = rng.pick(AdPolicy.ResumeBreaks.allCases)
        p.prerollDisabled = rng.chance(0.15)
        p.midrollsDisabled = rng.chance(0.15)
        p.liveSnapback = rng.chance(0.5)
        p.liveBookmarks = rng.chance(0.5)
        p.maxSnapbacksPerBreak = Int.random(in: 1...4, using: &rng)
        p.coverageTolerance = rng.pick([0, 0.5, 2])
        p.bookmarkInterval = rng.pick([0, 10, 30])
        p.finishedMargin = rng.pick([0, 30, 120])

        let tl = RandomTimeline(&rng, maxCount: 12)
        var c = SessionConfiguration(contentDuration: tl.contentDuration, breaks: tl.breaks, policy: p)
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1:
            c.kind = .live
            c.contentDuration = nil
        case 2, 3:
            let d = Double.random(in: 600...7200, using: &rng)
            c.contentDuration = d
            c.adRules = AdRules(
                preroll: rng.chance(0.7),
                midrollTimes: (0..<Int.random(in: 0...6, using: &rng)).map { _ in Double.random(in: 1..<d, using: &rng) },
                midrollEvery: rng.chance(0.3) ? Double.random(in: 300...1800, using: &rng) : 0,
                postroll: rng.chance(0.7), breakDuration: rng.pick([0, 15, 30, 60]))
        default:
            break
        }
        if rng.chance(0.3) { c.resumeContentTime = Double.random(in: 0...(tl.contentDuration + 60), using: &rng) }
        c.previouslyWatchedBreakIds = Set(tl.breaks.filter { _ in rng.chance(0.2) }.map(\.id))
        if rng.chance(0.2) { c.lastBreakCompletedAt = Double.random(in: 700...1000, using: &rng) }
        return c
    }

    /// A random event, biased towards times on break boundaries and towards following the session's
    /// commands (a player that obeys), so that deep states are reached.
    static func randomEvent(
        _ rng: inout SplitMix64, _ s: TimelineSession, follow: Double?, end: Double,
        mayClose: Bool = true
    ) -> TimelineEvent {
        let breaks = s.layout.breaks
        func time() -> Double {
            switch Int.random(in: 0..<20, using: &rng) {
            case 0: return rng.pick([-1, .nan, .infinity, -.infinity])
            case 1...8 where !breaks.isEmpty:
                let b = rng.pick(breaks)
                return rng.pick([b.start, b.end, b.start + 0.5, b.end - 0.5, b.end + 1, b.start - 1]).magnitude
            default: return Double.random(in: 0...(end * 1.1 + 1), using: &rng)
            }
        }
        func id() -> String { breaks.isEmpty || rng.chance(0.05) ? "zz" : rng.pick(breaks).id }
        if let t = follow, rng.chance(0.5) {
            return .playheadReported(streamTime: t, rate: 1, playing: true)
        }
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<30:
            return .playheadReported(streamTime: time(), rate: rng.pick([1, 1, 1, 0, 2, -2, .nan]), playing: rng.chance(0.85))
        case 30..<36: return .seekStarted(from: time())
        case 36..<48: return .seekEnded(from: time(), to: time())
        case 48..<56: return .adBreakStarted(breakId: id())
        case 56..<64: return .adBreakEnded(breakId: id())
        case 64..<67: return .adStarted(breakId: id(), index: Int.random(in: -1...3, using: &rng))
        case 67..<70: return .adEnded(breakId: id(), index: Int.random(in: -1...3, using: &rng))
        case 70..<74: return .trickPlayStarted(streamTime: time(), rate: rng.pick([-8, 2, 8, 16, 0.5, 1, 0]))
        case 74..<78: return .trickPlayEnded(streamTime: time())
        case 78: return rng.chance(0.25) ? .contentCompleted : .paused(streamTime: time())
        case 79..<81:
            let start = Double.random(in: 0...(end * 1.5 + 10), using: &rng)
            return .breaksUpdated([
                AdBreak(
                    id: rng.chance(0.3) ? id() : "n\(rng.next() % 1000)", start: start,
                    duration: rng.pick([0, 10, 30, -1]))
            ])
        case 81..<87: return .paused(streamTime: time())
        case 87..<98: return .timerFired(rng.pick(TimelineTimer.allCases))
        default:
            guard mayClose else { return .timerFired(rng.pick(TimelineTimer.allCases)) }
            return rng.chance(0.5) ? .playerDisconnected : .closed
        }
    }

    @Test(arguments: seeds)
    func randomEventSequencesNeverTrapAndKeepEveryInvariant(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let config = Self.randomConfiguration(&rng)
        var s: TimelineSession
        do {
            s = try TimelineSession(config)
        } catch {
            Issue.record("seed \(seed): a valid random configuration was rejected: \(error)")
            return
        }
        let end = s.streamEnd ?? (s.layout.breaks.last?.end ?? 0) + 600
        var now = 1000.0
        var follow: Double?

        func check(_ actions: [TimelineAction], after event: String) {
            for a in actions {
                switch a.kind {
                case .seek(let t, _):
                    #expect(t.isFinite && t >= 0, "seed \(seed): \(event) → \(a)")
                    if let streamEnd = s.streamEnd {
                        #expect(t <= streamEnd, "seed \(seed): \(event) → \(a) beyond \(streamEnd)")
                    }
                    follow = t
                case .saveBookmark(let c, let st, _):
                    #expect(c.isFinite && c >= 0 && st.isFinite && st >= 0, "seed \(seed): \(event) → \(a)")
                    if let d = config.contentDuration { #expect(c <= d, "seed \(seed): \(event) → \(a)") }
                    if let b = s.layout.breakContaining(st), !s.layout.isIdentity {
                        #expect(c == s.layout.contentTime(forStreamTime: b.start), "seed \(seed): bookmark inside a break")
                    }
                case .scheduleTimer(_, let d):
                    #expect(d.isFinite && d >= now, "seed \(seed): \(event) → \(a)")
                case .breakWatched(let id), .breakCompleted(let id), .playBreak(let id), .breakSkipped(let id, _):
                    #expect(s.layout.breakWith(id: id) != nil, "seed \(seed): \(event) → \(a)")
                case .allAdsCompleted, .clearBookmark, .cancelTimer, .noEffect:
                    break
                }
                #expect(!a.reason.description.isEmpty)
            }
            let snap = s.snapshot(at: now)
            if snap.phase == .inBreak {
                #expect(snap.breaks.contains { $0.id == snap.currentBreakId }, "seed \(seed): in an unknown break")
            }
        }

        check(s.opened(at: now), after: "opened")
        for step in 0..<400 {
            // Closing is kept for the end of the sequence, so that most of it runs on an open session.
            let event = Self.randomEvent(&rng, s, follow: follow, end: end, mayClose: step >= 380)
            let at = rng.chance(0.01) ? Double.nan : now + Double.random(in: 0...5, using: &rng)
            let wasClosed = s.isClosed
            let before = s.snapshot(at: now)
            do {
                let actions = try s.handle(event, at: at)
                if at.isFinite { now = at }
                #expect(!wasClosed, "seed \(seed) step \(step): \(event.name) accepted after close")
                if case .playheadReported = event { follow = nil }
                check(actions, after: "step \(step) \(event.name)")
            } catch {
                // Typed throws: every error is a TimelineError; a refused event changes nothing.
                #expect(
                    s.snapshot(at: now) == before, "seed \(seed) step \(step): refused \(event) (\(error)) changed the session")
                if wasClosed { #expect(error == .sessionClosed) }
            }
        }
    }

    /// `handle(_:at:into:)` — the daemon's allocation-free form — appends exactly what `handle(_:at:)`
    /// returns, leaves the buffer as it was when the event is refused, and moves the session the same way.
    @Test(arguments: seeds.prefix(100))
    func handleIntoABufferMatchesHandle(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        guard var a = try? TimelineSession(Self.randomConfiguration(&rng)) else { return }
        var b = a
        let end = a.streamEnd ?? (a.layout.breaks.last?.end ?? 0) + 600
        var now = 1000.0
        var follow: Double?
        _ = a.opened(at: now)
        _ = b.opened(at: now)
        let sentinel = TimelineAction(.allAdsCompleted, reason: .noPostroll)
        var buffer: [TimelineAction] = []
        for step in 0..<400 {
            let event = Self.randomEvent(&rng, a, follow: follow, end: end, mayClose: step >= 380)
            let at = rng.chance(0.01) ? Double.nan : now + Double.random(in: 0...5, using: &rng)
            buffer.removeAll(keepingCapacity: true)
            buffer.append(sentinel)
            let expected: Result<[TimelineAction], TimelineError>
            do { expected = .success(try a.handle(event, at: at)) } catch { expected = .failure(error) }
            var got: TimelineError?
            do { try b.handle(event, at: at, into: &buffer) } catch { got = error }
            switch expected {
            case .success(let actions):
                #expect(got == nil, "seed \(seed) step \(step): \(event.name)")
                #expect(buffer == [sentinel] + actions, "seed \(seed) step \(step): \(event.name)")
                follow = actions.last { $0.isSeek }.flatMap { if case .seek(let t, _) = $0.kind { t } else { nil } } ?? follow
                if case .playheadReported = event { follow = nil }
            case .failure(let error):
                #expect(got.map { same($0, error) } == true, "seed \(seed) step \(step): \(event.name)")
                #expect(buffer == [sentinel], "seed \(seed) step \(step): a refused \(event.name) left actions")
            }
            if at.isFinite { now = at }
            #expect(a.snapshot(at: now) == b.snapshot(at: now), "seed \(seed) step \(step): \(event.name)")
        }
    }
}
