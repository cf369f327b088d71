// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Trick play (rate < 0 or > 1): ads are skipped while it lasts, then it is handled as one seek from where
/// it started to where it ended (TVSDK). Stream: one break b1 600–660 in a 30-minute program.
@Suite struct TrickPlayTests {
    @Test func fastForwardOverAnUnwatchedBreakSnapsBackWhenItEnds() throws {
        var s = try Factory.playing(at: 300)
        let started = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        #expect(started.cancelledTimers == [.bookmark])
        #expect(s.snapshot(at: 1001).phase == .trickPlay)
        let ended = try s.handle(.trickPlayEnded(streamTime: 900), at: 1076)
        #expect(ended.seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1076).pendingReturn == 900)
        #expect(try s.playBreak("b1", at: 1077).seeks == [Seek(900, .resumeAfterSnapback)])
    }

    @Test func playheadReportsDuringTrickPlayDoNotEnterBreaks() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        #expect(try s.report(630, at: 1042, rate: 8) == [])
        #expect(s.snapshot(at: 1042).phase == .trickPlay)
    }

    @Test func rewindOverABreakIsNotHeldByDefault() throws {
        var s = try Factory.playing(at: 900)
        _ = try s.handle(.trickPlayStarted(streamTime: 900, rate: -8), at: 1001)
        let ended = try s.handle(.trickPlayEnded(streamTime: 300), at: 1076)
        #expect(ended.seeks == [])
        #expect(ended.bookmarks == [300])
    }

    @Test func rewindIsHeldWhenBackwardSeeksAre() throws {
        var s = try Factory.playing(at: 900, policy: Factory.policy { $0.enforceBackwardSeeks = true })
        _ = try s.handle(.trickPlayStarted(streamTime: 900, rate: -8), at: 1001)
        #expect(try s.handle(.trickPlayEnded(streamTime: 700), at: 1026).seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1026).pendingReturn == 700)
    }

    @Test func trickPlayNotTreatedAsASeekIsNotHeld() throws {
        var s = try Factory.playing(at: 300, policy: Factory.policy { $0.trickPlayAsSeek = false })
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        let ended = try s.handle(.trickPlayEnded(streamTime: 900), at: 1076)
        #expect(ended.seeks == [])
        #expect(ended.bookmarks == [840])
    }

    @Test func trickPlayInsideAnUnwatchedBreakIsRefused() throws {
        var s = try Factory.playing(at: 590)
        try s.report(601, at: 1011)
        let actions = try s.handle(.trickPlayStarted(streamTime: 610, rate: 8), at: 1020)
        #expect(actions.seeks == [Seek(610, .seekRefusedDuringAd)])
        #expect(s.snapshot(at: 1020).currentBreakId == "b1")
    }

    @Test func trickPlayInsideAWatchedBreakIsAllowed() throws {
        var s = try Factory.playing(at: 590, watched: ["b1"])
        try s.report(601, at: 1011)
        #expect(try s.handle(.trickPlayStarted(streamTime: 610, rate: 8), at: 1020).seeks == [])
        #expect(s.snapshot(at: 1020).phase == .trickPlay)
    }

    /// TVSDK: trick play over two breaks plays the last one skipped, then goes to the trick-play position.
    @Test func tvsdkTrickPlayPlaysTheLastBreakSkippedThenGoesToTheTrickPlayPosition() throws {
        var s = try Factory.threeBreakSession(policy: AdPolicy(preset: .tvsdk))
        try s.report(300, at: 1000)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 16), at: 1001)
        #expect(try s.handle(.trickPlayEnded(streamTime: 1500), at: 1076).seeks == [Seek(1200, .snapback)])
        #expect(try s.playBreak("m2", at: 1077).seeks == [Seek(1500, .resumeAfterSnapback)])
    }

    // MARK: Bad trick play events

    @Test(arguments: [1.0, 0, .nan, .infinity, -.infinity])
    func aRateThatIsNotTrickPlayIsRefused(_ rate: Double) throws {
        var s = try Factory.playing(at: 300)
        expectRefused(&s, .trickPlayStarted(streamTime: 300, rate: rate), at: 1001, with: .invalidRate(rate))
    }

    @Test func trickPlayEndedWithoutAStartIsRefused() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .trickPlayEnded(streamTime: 900), at: 1001,
            with: .unexpectedEvent(event: "trick-play-ended", state: "playing content"))
    }

    @Test func trickPlayStartedTwiceIsRefused() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        expectRefused(
            &s, .trickPlayStarted(streamTime: 310, rate: 16), at: 1002,
            with: .unexpectedEvent(event: "trick-play-started", state: "in trick play"))
    }

    @Test func aSeekEndingDuringTrickPlayIsRefused() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        expectRefused(
            &s, .seekEnded(from: 300, to: 900), at: 1002,
            with: .unexpectedEvent(event: "seek-ended", state: "in trick play"))
    }
}
