// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// The seek policy: which break a seek is held to and where the viewer goes. Stream unless told: three
/// unwatched one-minute mid-rolls, m1 600–660, m2 1200–1260, m3 1800–1860 (`Factory.threeBreaks`).
@Suite struct SnapbackPolicyTests {
    /// A three-break session playing at stream time `at`.
    func playing(at t: Double, policy: AdPolicy = AdPolicy(), watched: Set<String> = []) throws -> TimelineSession {
        var s = try Factory.threeBreakSession(policy: policy, watched: watched)
        try s.report(t, at: 1000)
        return s
    }

    // MARK: Which break plays (skippedBreakChoice)

    @Test func lastUnwatchedPlaysTheLastOfSeveralSkippedBreaks() throws {
        var s = try playing(at: 300)
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == [Seek(1800, .snapback)])
    }

    @Test func lastUnwatchedLooksBackPastAWatchedBreak() throws {
        var s = try playing(at: 300, watched: ["m3"])
        let actions = try s.seek(from: 300, to: 2000, at: 1001)
        #expect(actions.seeks == [Seek(1200, .snapback)])
        #expect(actions.first(where: \.isSeek)?.reason.description == "seek 300→2000 skipped unwatched break m2 at 1200")
    }

    @Test func nearestOnlyPlaysNothingWhenTheNearestSkippedBreakIsWatched() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skippedBreakChoice = .nearestOnly }, watched: ["m3"])
        let actions = try s.seek(from: 300, to: 2000, at: 1001)
        #expect(actions.seeks == [])
        // 2000 − 180 s of ads.
        #expect(actions.bookmarks == [1820])
    }

    @Test func nearestOnlyPlaysTheNearestSkippedBreak() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skippedBreakChoice = .nearestOnly })
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == [Seek(1800, .snapback)])
    }

    @Test func firstPlaysTheFirstSkippedBreak() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skippedBreakChoice = .first })
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == [Seek(600, .snapback)])
    }

    @Test func firstLooksPastWatchedBreaks() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skippedBreakChoice = .first }, watched: ["m1"])
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == [Seek(1200, .snapback)])
    }

    // MARK: Which breaks a seek can be held to (seekGate)

    @Test func crossedGateIgnoresAnUnwatchedBreakBeforeTheSeekOrigin() throws {
        var s = try playing(at: 700)
        let actions = try s.seek(from: 700, to: 900, at: 1001)
        #expect(actions.seeks == [])
        #expect(actions.bookmarks == [840])
    }

    @Test func allBreaksBeforeTargetGateHoldsASeekToAnUnwatchedBreakBeforeItsOrigin() throws {
        var s = try playing(at: 700, policy: Factory.policy { $0.seekGate = .allBreaksBeforeTarget })
        #expect(try s.seek(from: 700, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1001).pendingReturn == 900)
    }

    @Test func aSeekFromExactlyABreakStartCrossesThatBreak() throws {
        var s = try playing(at: 590)
        #expect(try s.seek(from: 600, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
    }

    @Test func aSeekToExactlyABreakStartLandsInThatBreak() throws {
        var s = try playing(at: 300)
        #expect(try s.seek(from: 300, to: 600, at: 1001).seeks == [Seek(600, .startOfBreak)])
    }

    @Test func aSeekToExactlyABreakEndHasSkippedIt() throws {
        var s = try playing(at: 300)
        #expect(try s.seek(from: 300, to: 660, at: 1001).seeks == [Seek(600, .snapback)])
    }

    @Test func aSeekOverBackToBackBreaksPlaysTheSecondThenReturns() throws {
        var s = try Factory.playing(
            at: 300,
            breaks: [
                AdBreak(id: "a", start: 600, duration: 30), AdBreak(id: "b", start: 630, duration: 30)
            ])
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(630, .snapback)])
        #expect(try s.playBreak("b", at: 1002, duration: 30).seeks == [Seek(900, .resumeAfterSnapback)])
    }

    @Test func firstChoiceOverBackToBackBreaksPlaysTheFirstThenTheSecondByPlayback() throws {
        var s = try Factory.playing(
            at: 300,
            breaks: [
                AdBreak(id: "a", start: 600, duration: 30), AdBreak(id: "b", start: 630, duration: 30)
            ],
            policy: Factory.policy {
                $0.skippedBreakChoice = .first
                $0.returnToTarget = .never
            })
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        try s.report(600, at: 1002)
        #expect(try s.report(630.5, at: 1033).watched == ["a"])
        #expect(s.snapshot(at: 1033).currentBreakId == "b")
    }

    // MARK: Backward seeks (enforceBackwardSeeks)

    @Test func backwardSeeksAreNotHeldByDefault() throws {
        var s = try playing(at: 2000)
        let actions = try s.seek(from: 2000, to: 900, at: 1001)
        #expect(actions.seeks == [])
        #expect(actions.bookmarks == [840])
    }

    @Test func enforcedBackwardSeekPlaysTheUnwatchedBreakBeforeTheTargetThenReturns() throws {
        var s = try playing(at: 2000, policy: Factory.policy { $0.enforceBackwardSeeks = true })
        #expect(try s.seek(from: 2000, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(try s.playBreak("m1", at: 1002).seeks == [Seek(900, .resumeAfterSnapback)])
    }

    @Test func enforcedBackwardSeekBeforeEveryBreakPlaysNothing() throws {
        var s = try playing(at: 2000, policy: Factory.policy { $0.enforceBackwardSeeks = true })
        #expect(try s.seek(from: 2000, to: 300, at: 1001).seeks == [])
    }

    // MARK: Return to the target (returnToTarget)

    @Test func afterTheBreakTheViewerReturnsToATargetBeyondIt() throws {
        var s = try playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        let ended = try s.playBreak("m1", at: 1002)
        #expect(ended.seeks == [Seek(900, .resumeAfterSnapback)])
        #expect(ended.first(where: \.isSeek)?.reason.description == "break m1 done, on to the seek target 900")
    }

    @Test func ifBeyondBreakDoesNotReturnToATargetAtTheBreakEnd() throws {
        var s = try playing(at: 300)
        try s.seek(from: 300, to: 660, at: 1001)
        #expect(s.snapshot(at: 1001).pendingReturn == 660)
        #expect(try s.playBreak("m1", at: 1002).seeks == [])
    }

    @Test func alwaysReturnsEvenToATargetAtTheBreakEnd() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.returnToTarget = .always })
        try s.seek(from: 300, to: 660, at: 1001)
        #expect(try s.playBreak("m1", at: 1002).seeks == [Seek(660, .resumeAfterSnapback)])
    }

    @Test func neverReturnsToTheTarget() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.returnToTarget = .never })
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1001).pendingReturn == nil)
        let ended = try s.playBreak("m1", at: 1002)
        #expect(ended.seeks == [])
        #expect(ended.watched == ["m1"])
    }

    // MARK: Landing inside a break (landingInUnwatchedBreak, skipWatchedBreakOnLanding)

    @Test func aSeekIntoAnUnwatchedBreakGoesToTheBreakStart() throws {
        var s = try playing(at: 300)
        let actions = try s.seek(from: 300, to: 630, at: 1001)
        #expect(actions.seeks == [Seek(600, .startOfBreak)])
        #expect(s.snapshot(at: 1001).currentBreakId == "m1")
    }

    @Test func adStartLandingGoesToTheStartOfTheAdTheSeekLandedIn() throws {
        var s = try Factory.playing(
            at: 300, breaks: [AdBreak(id: "b1", start: 600, duration: 60, adDurations: [15, 15, 30])],
            policy: Factory.policy { $0.landingInUnwatchedBreak = .adStart })
        #expect(try s.seek(from: 300, to: 620, at: 1001).seeks == [Seek(615, .startOfBreak)])
    }

    @Test func adStartLandingWithoutAdDurationsGoesToTheBreakStart() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.landingInUnwatchedBreak = .adStart })
        #expect(try s.seek(from: 300, to: 620, at: 1001).seeks == [Seek(600, .startOfBreak)])
    }

    @Test func aSeekLandingInAnUnwatchedBreakAfterCrossingAnotherPlaysTheOneItLandedIn() throws {
        var s = try playing(at: 300)
        #expect(try s.seek(from: 300, to: 1230, at: 1001).seeks == [Seek(1200, .startOfBreak)])
    }

    @Test func firstChoicePlaysTheCrossedBreakThenReturnsToTheStartOfTheOneItLandedIn() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skippedBreakChoice = .first })
        #expect(try s.seek(from: 300, to: 1230, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1001).pendingReturn == 1200)
        #expect(try s.playBreak("m1", at: 1002).seeks == [Seek(1200, .resumeAfterSnapback)])
        #expect(s.snapshot(at: 1062).currentBreakId == "m2")
    }

    @Test func aSeekIntoAWatchedBreakGoesToItsEnd() throws {
        var s = try playing(at: 300, watched: ["m1"])
        let actions = try s.seek(from: 300, to: 630, at: 1001)
        #expect(actions.seeks == [Seek(660, .skipWatchedBreak)])
        #expect(actions.bookmarks == [600])
    }

    @Test func withoutSkipOnLandingASeekIntoAWatchedBreakStaysThere() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.skipWatchedBreakOnLanding = false }, watched: ["m1"])
        #expect(try s.seek(from: 300, to: 630, at: 1001).seeks == [])
        #expect(s.snapshot(at: 1001).currentBreakId == "m1")
    }

    @Test func aSeekOverAnUnwatchedBreakIntoAWatchedOneReturnsAfterTheWatchedOne() throws {
        var s = try playing(at: 300, watched: ["m2"])
        #expect(try s.seek(from: 300, to: 1230, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(s.snapshot(at: 1001).pendingReturn == 1260)
    }

    // MARK: Seeks during a break (refuseSeeksDuringUnwatchedBreak)

    /// Playing m1 from its start, entered by the playhead.
    func inFirstBreak(policy: AdPolicy = AdPolicy(), watched: Set<String> = []) throws -> TimelineSession {
        var s = try playing(at: 590, policy: policy, watched: watched)
        try s.report(601, at: 1011)
        #expect(s.snapshot(at: 1011).currentBreakId == "m1")
        return s
    }

    @Test func aSeekOutOfAnUnwatchedBreakIsRefused() throws {
        var s = try inFirstBreak()
        let actions = try s.seek(from: 610, to: 900, at: 1020)
        #expect(actions.seeks == [Seek(610, .seekRefusedDuringAd)])
        #expect(actions.first(where: \.isSeek)?.reason.description == "seek 610→900 refused: unwatched break m1 is playing")
        #expect(s.snapshot(at: 1020).currentBreakId == "m1")
    }

    @Test func aSeekWithinAnUnwatchedBreakIsRefusedBackToWhereTheViewerWas() throws {
        var s = try inFirstBreak()
        #expect(try s.seek(from: 640, to: 655, at: 1050).seeks == [Seek(640, .seekRefusedDuringAd)])
    }

    @Test func aRefusedSeekWhoseOriginIsOutsideTheBreakKeepsTheViewerInTheBreak() throws {
        var s = try inFirstBreak()
        // The origin reported lies past the break: the viewer goes back to where the session has it (601),
        // not to the break's end.
        #expect(try s.seek(from: 700, to: 900, at: 1020).seeks == [Seek(601, .seekRefusedDuringAd)])
    }

    @Test func aSeekOutOfAnUnwatchedBreakIsAllowedWhenNotRefused() throws {
        var s = try inFirstBreak(policy: Factory.policy { $0.refuseSeeksDuringUnwatchedBreak = false })
        let actions = try s.seek(from: 610, to: 900, at: 1020)
        #expect(actions.seeks == [])
        #expect(actions.bookmarks == [840])
        #expect(s.snapshot(at: 1020).phase == .content)
    }

    @Test func aSeekOutOfAWatchedBreakIsAllowed() throws {
        var s = try inFirstBreak(watched: ["m1"])
        #expect(try s.seek(from: 610, to: 900, at: 1020).seeks == [])
        #expect(s.snapshot(at: 1020).phase == .content)
    }

    // MARK: Playback reaching a watched break (watchedBreakOnPlayback)

    @Test func playbackReplaysAWatchedBreakByDefault() throws {
        var s = try playing(at: 590, watched: ["m1"])
        #expect(try s.report(601, at: 1011).seeks == [])
        #expect(s.snapshot(at: 1011).currentBreakId == "m1")
    }

    @Test func playbackSkipsAWatchedBreakWhenThePolicySaysSo() throws {
        var s = try playing(at: 590, policy: Factory.policy { $0.watchedBreakOnPlayback = .skip }, watched: ["m1"])
        #expect(try s.report(601, at: 1011).seeks == [Seek(660, .skipWatchedBreak)])
    }

    // MARK: Landing offset (snapbackLandingOffset)

    @Test(arguments: [(0.0, 600.0), (1, 601), (0.1, 600.1), (100, 659.999)])
    func snapbackLandsAtTheBreakStartPlusTheOffsetWithinTheBreak(offset: Double, landing: Double) throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.snapbackLandingOffset = offset })
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(landing, .snapback)])
    }

    // MARK: Failover (prerollDisabled, midrollsDisabled)

    @Test func aDisabledPreRollIsSkippedOnOpen() throws {
        let (_, opened) = try Factory.session(policy: Factory.policy { $0.prerollDisabled = true })
        #expect(opened.seeks == [Seek(30, .skipDisabledBreak)])
    }

    @Test func anEnabledPreRollPlaysFromTheFirstReport() throws {
        var (s, opened) = try Factory.session(policy: Factory.policy { $0.midrollsDisabled = true })
        #expect(opened.seeks == [])
        #expect(try s.report(0, at: 1000).seeks == [])
        #expect(s.snapshot(at: 1000).currentBreakId == "pre")
    }

    @Test func playbackSkipsADisabledMidRoll() throws {
        var s = try playing(at: 590, policy: Factory.policy { $0.midrollsDisabled = true })
        #expect(try s.report(601, at: 1011).seeks == [Seek(660, .skipDisabledBreak)])
    }

    @Test func aSeekOverADisabledMidRollIsNotHeld() throws {
        var s = try playing(at: 300, policy: Factory.policy { $0.midrollsDisabled = true })
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == [])
    }

    @Test func midRollsDisabledStillPlaysThePostRoll() throws {
        var s = try Factory.playing(
            at: 1850, breaks: [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)],
            policy: Factory.policy { $0.midrollsDisabled = true })
        #expect(try s.report(1860.5, at: 1011).seeks == [])
        #expect(s.snapshot(at: 1011).currentBreakId == "post")
    }

    // MARK: Echoes

    @Test func theEchoOfACommandedSeekIsNotAViewerSeek() throws {
        var s = try playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        #expect(try s.handle(.seekEnded(from: 900, to: 600), at: 1002) == [])
        #expect(s.snapshot(at: 1002).currentBreakId == "m1")
        #expect(s.snapshot(at: 1002).pendingReturn == 900)
    }

    @Test func anUnreportedJumpOverABreakIsHandledAsASeek() throws {
        var s = try playing(at: 300)
        let actions = try s.report(900, at: 1001)
        #expect(actions.seeks == [Seek(600, .snapback)])
        #expect(actions.first(where: \.isSeek)?.reason.description == "jump 300→900 skipped unwatched break m1 at 600")
    }
}
