// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Live sessions: breaks that replace content (content time is stream time outside them), breaks arriving
/// as the stream goes on, no snapback and no bookmarks by default. Stream: one break b1 at 600 (60 s).
@Suite struct LiveTests {
    func live(policy: AdPolicy = AdPolicy(), watched: Set<String> = [], resume: Double? = nil) throws
        -> (TimelineSession, [TimelineAction])
    {
        try Factory.session(
            breaks: Factory.oneBreak, kind: .live, contentDuration: nil, policy: policy,
            resume: resume, watched: watched)
    }

    func playing(at t: Double, policy: AdPolicy = AdPolicy(), watched: Set<String> = []) throws -> TimelineSession {
        var (s, _) = try live(policy: policy, watched: watched)
        try s.report(t, at: 1000)
        return s
    }

    /// A live break replaces the content it covers (no offset given): content time is stream time around
    /// it, and inside it the content time where the content stopped (a bookmark is never inside an ad).
    @Test func contentTimeIsStreamTimeOutsideBreaks() throws {
        var s = try playing(at: 590)
        #expect(s.snapshot(at: 1000).contentTime == 590)
        try s.report(630, at: 1040)
        #expect(s.snapshot(at: 1040).contentTime == 600)
        try s.report(700, at: 1110)
        #expect(s.snapshot(at: 1110).contentTime == 700)
        #expect(s.streamEnd == nil)
    }

    @Test func noSnapbackByDefault() throws {
        var s = try playing(at: 300)
        let actions = try s.seek(from: 300, to: 900, at: 1001)
        #expect(actions.seeks == [])
        #expect(actions.savedBookmarks == [])
    }

    @Test func snapbackCanBeEnabled() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.liveSnapback = true })
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
    }

    @Test func playbackStillEntersBreaks() throws {
        var s = try playing(at: 590)
        try s.report(600.5, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "b1")
        #expect(try s.report(660.5, at: 1070).watched == ["b1"])
    }

    @Test func newBreaksArriveAsTheStreamGoesOn() throws {
        var s = try playing(at: 1100)
        #expect(try s.handle(.breaksUpdated([AdBreak(id: "b2", start: 1200, duration: 30)]), at: 1001) == [])
        #expect(s.snapshot(at: 1001).breaks.map(\.id) == ["b1", "b2"])
        try s.report(1199, at: 1100)
        try s.report(1200.5, at: 1101)
        #expect(s.snapshot(at: 1101).currentBreakId == "b2")
    }

    @Test func aRepeatedUpdateIsIdempotent() throws {
        var s = try playing(at: 300)
        let update = [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "b2", start: 1200, duration: 30)]
        _ = try s.handle(.breaksUpdated(update), at: 1001)
        let before = s.snapshot(at: 1002)
        #expect(try s.handle(.breaksUpdated(update), at: 1002) == [])
        #expect(s.snapshot(at: 1002) == before)
    }

    /// The session's limit counts the breaks it would hold: the known ones sent again add nothing, and an
    /// update that would take it past the limit is refused whole.
    @Test func anUpdateIsHeldToTheSessionsLimitCountingOnlyNewBreaks() throws {
        var configuration = SessionConfiguration(kind: .live, breaks: Factory.oneBreak)
        configuration.maxBreaks = 2
        var s = try TimelineSession(configuration)
        _ = s.opened(at: 1000)
        let b2 = AdBreak(id: "b2", start: 1200, duration: 30), b3 = AdBreak(id: "b3", start: 1800, duration: 30)
        _ = try s.handle(.breaksUpdated(Factory.oneBreak + [b2]), at: 1001)
        expectRefused(&s, .breaksUpdated([b3]), at: 1002, with: .sessionFull(holding: 3, limit: 2))
        #expect(s.snapshot(at: 1002).breaks.map(\.id) == ["b1", "b2"])
        #expect(try s.handle(.breaksUpdated(Factory.oneBreak + [b2]), at: 1003) == [])
    }

    @Test func anUpdateChangingAKnownBreakIsRefused() throws {
        var s = try playing(at: 300)
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "b1", start: 600, duration: 90)]), at: 1001,
            with: .closedBreakChanged("b1"))
    }

    @Test func anUpdateOverlappingAKnownBreakIsRefused() throws {
        var s = try playing(at: 300)
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "x", start: 650, duration: 30)]), at: 1001,
            with: .overlappingBreaks("b1", "x"))
    }

    @Test func anUpdateWithABadTimeIsRefused() throws {
        var s = try playing(at: 300)
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "x", start: -1, duration: 30)]), at: 1001,
            with: .invalidTime(field: "break x start", value: -1))
    }

    @Test func breakUpdatesOnAnOnDemandStreamAreRefused() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "x", start: 1200, duration: 30)]), at: 1001,
            with: .notSupported("breaks updated on an on-demand stream"))
    }

    /// TVSDK: live replays even watched breaks.
    @Test func playbackReplaysAWatchedBreakEvenWhenThePolicySkipsThem() throws {
        var s = try playing(at: 590, policy: Factory.policy { $0.watchedBreakOnPlayback = .skip }, watched: ["b1"])
        #expect(try s.report(600.5, at: 1010).seeks == [])
        #expect(s.snapshot(at: 1010).currentBreakId == "b1")
    }

    @Test func contentCompleteIsRefused() throws {
        var s = try playing(at: 300)
        expectRefused(&s, .contentCompleted, at: 1001, with: .notSupported("content complete on a live stream"))
    }

    @Test func aBookmarkIsNotResumedByDefault() throws {
        let (_, opened) = try live(resume: 900)
        #expect(opened == [])
    }

    @Test func noPeriodicBookmarkByDefault() throws {
        var (s, _) = try live()
        #expect(try s.report(300, at: 1000).timers == [])
    }
}
