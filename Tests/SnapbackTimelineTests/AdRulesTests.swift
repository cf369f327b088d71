// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Ad-rules mode (IMA client-side ad rules, seed 004): breaks scheduled on content time, the content paused
/// while a break plays, play-break actions instead of seeks. Rules unless told: a 30-second pre-roll,
/// mid-rolls at 600 and 1200, a post-roll; 30-minute program.
@Suite struct AdRulesTests {
    static let rules = AdRules(preroll: true, midrollTimes: [600, 1200], postroll: true, breakDuration: 30)

    func session(
        _ rules: AdRules = rules, contentDuration: Double? = 1800, policy: AdPolicy = AdPolicy(),
        resume: Double? = nil
    ) throws -> (TimelineSession, [TimelineAction]) {
        try Factory.session(breaks: [], contentDuration: contentDuration, policy: policy, resume: resume, adRules: rules)
    }

    /// The pre-roll played, the content playing at `t`.
    func playing(at t: Double, policy: AdPolicy = AdPolicy()) throws -> TimelineSession {
        var (s, _) = try session(policy: policy)
        try s.playBreak("preroll", at: 1000, duration: 30)
        try s.report(t, at: 1031)
        return s
    }

    @Test func thePreRollPlaysOnOpen() throws {
        let (s, opened) = try session()
        #expect(opened.played == ["preroll"])
        #expect(opened.seeks == [])
        // Its expected duration plus twice the coverage tolerance.
        #expect(opened.timers == [Timer(.breakEnd, 1034)])
        #expect(s.snapshot(at: 1000).currentBreakId == "preroll")
    }

    @Test func theContentResumesAfterThePreRoll() throws {
        var (s, _) = try session()
        let ended = try s.playBreak("preroll", at: 1000, duration: 30)
        #expect(ended.watched == ["preroll"])
        #expect(ended.seeks == [])
        #expect(ended.played == [])
        #expect(s.snapshot(at: 1030).phase == .content)
    }

    @Test func thePreRollDoesNotPlayAgainWhenTheContentReportsZero() throws {
        var (s, _) = try session()
        try s.playBreak("preroll", at: 1000, duration: 30)
        #expect(try s.report(0, at: 1031, playing: false).played == [])
        #expect(try s.report(0, at: 1032).played == [])
        #expect(s.snapshot(at: 1032).phase == .content)
    }

    @Test func theContentReachingAMidRollPlaysIt() throws {
        var s = try playing(at: 590)
        let actions = try s.report(600.5, at: 1041)
        #expect(actions.played == ["midroll-600"])
        #expect(actions.seeks == [])
    }

    @Test func theContentReachingExactlyAMidRollTimePlaysIt() throws {
        var s = try playing(at: 590)
        #expect(try s.report(600, at: 1041).played == ["midroll-600"])
    }

    @Test func theContentIsPausedWhileABreakPlays() throws {
        var s = try playing(at: 590)
        try s.report(600.5, at: 1041)
        #expect(try s.report(600.5, at: 1042) == [])
        #expect(try s.report(1300, at: 1043) == [])
        #expect(s.snapshot(at: 1043).currentBreakId == "midroll-600")
    }

    @Test func thePostRollIsNotPlayedByThePlayhead() throws {
        var s = try playing(at: 1790)
        #expect(try s.report(1800, at: 1041).played == [])
    }

    @Test func midRollsEveryNSecondsOfContent() throws {
        let (s, _) = try session(AdRules(preroll: true, midrollEvery: 600, postroll: true))
        #expect(s.snapshot(at: 1000).breaks.map(\.id) == ["preroll", "midroll-600", "midroll-1200", "postroll"])
    }

    /// Seed 004: "play a one-minute ad break every 30 minutes of content".
    @Test func aOneMinuteBreakEveryThirtyMinutesOfContent() throws {
        var (s, _) = try session(
            AdRules(preroll: false, midrollEvery: 1800, postroll: false, breakDuration: 60),
            contentDuration: 5400)
        #expect(s.snapshot(at: 1000).breaks.map(\.id) == ["midroll-1800", "midroll-3600"])
        try s.report(1790, at: 1000)
        let actions = try s.report(1800.5, at: 1010)
        #expect(actions.played == ["midroll-1800"])
        #expect(actions.deadline(of: .breakEnd) == 1074)
    }

    @Test func midRollTimesAndIntervalsMerge() throws {
        let (s, _) = try session(AdRules(preroll: false, midrollTimes: [600, 900], midrollEvery: 600, postroll: false))
        #expect(s.snapshot(at: 1000).breaks.map(\.id) == ["midroll-600", "midroll-900", "midroll-1200"])
    }

    /// Seed 004: after a seek over several mid-rolls only the last one plays, then the content resumes at
    /// the seek target.
    @Test func aSeekOverSeveralMidRollsPlaysTheLastThenResumesAtTheTarget() throws {
        var s = try playing(at: 100)
        let actions = try s.seek(from: 100, to: 1500, at: 1032)
        #expect(actions.played == ["midroll-1200"])
        #expect(actions.seeks == [])
        #expect(s.snapshot(at: 1032).pendingReturn == 1500)
        let ended = try s.playBreak("midroll-1200", at: 1033, duration: 30)
        #expect(ended.seeks == [Seek(1500, .resumeAfterSnapback)])
        #expect(ended.savedBookmarks == [Bookmark(1500, 1500, .snapbackReturn)])
    }

    @Test func aSeekToExactlyAMidRollTimePlaysItOnce() throws {
        var s = try playing(at: 100)
        #expect(try s.seek(from: 100, to: 600, at: 1032).played == ["midroll-600"])
        #expect(try s.playBreak("midroll-600", at: 1033, duration: 30).seeks == [Seek(600, .resumeAfterSnapback)])
        #expect(try s.report(600, at: 1064).played == [])
        #expect(try s.report(601, at: 1065).played == [])
    }

    @Test func aSeekBackwardPlaysNoMidRoll() throws {
        var s = try playing(at: 1500)
        #expect(try s.seek(from: 1500, to: 100, at: 1032).played == [])
    }

    @Test func aSeekDuringAnUnwatchedBreakIsRefused() throws {
        let (s0, _) = try session()
        var s = s0
        #expect(try s.seek(from: 0, to: 500, at: 1001).seeks == [Seek(0, .seekRefusedDuringAd)])
        #expect(s.snapshot(at: 1001).currentBreakId == "preroll")
    }

    @Test func contentCompletePlaysThePostRollThenAllAdsComplete() throws {
        var s = try playing(at: 1700)
        let complete = try s.handle(.contentCompleted, at: 1041)
        #expect(complete.played == ["postroll"])
        #expect(complete.clearsBookmark)
        #expect(!complete.allAdsCompleted)
        let ended = try s.playBreak("postroll", at: 1042, duration: 30)
        #expect(ended.allAdsCompleted)
        #expect(ended.watched == ["postroll"])
    }

    @Test func afterAllAdsCompletedTheSessionIsFinished() throws {
        var s = try playing(at: 1790)
        _ = try s.handle(.contentCompleted, at: 1041)
        try s.playBreak("postroll", at: 1042, duration: 30)
        #expect(s.snapshot(at: 1072).phase == .finished)
    }

    @Test func contentCompleteWithoutAPostRollCompletesAllAdsAtOnce() throws {
        var (s, _) = try session(AdRules(preroll: false, midrollTimes: [600], postroll: false))
        let complete = try s.handle(.contentCompleted, at: 1041)
        #expect(complete.allAdsCompleted)
        #expect(s.snapshot(at: 1041).phase == .finished)
    }

    @Test func aMissingAdBreakEndedCompletesTheBreakAtItsExpectedEnd() throws {
        var (s, _) = try session()
        let fired = try s.handle(.timerFired(.breakEnd), at: 1034)
        #expect(fired.watched == ["preroll"])
        #expect(s.snapshot(at: 1034).phase == .content)
    }

    @Test func aDisabledPreRollDoesNotPlay() throws {
        let (s, opened) = try session(policy: Factory.policy { $0.prerollDisabled = true })
        #expect(opened.played == [])
        #expect(s.snapshot(at: 1000).phase == .content)
    }

    @Test func conversionsAreTheIdentity() throws {
        let s = try playing(at: 900)
        #expect(s.snapshot(at: 1031).contentTime == 900)
        #expect(s.layout.streamTime(forContentTime: 900) == 900)
    }

    @Test func aResumePlaysTheLastMidRollBeforeItThenGoesToTheBookmark() throws {
        var (s, opened) = try session(resume: 900)
        #expect(opened.played == ["midroll-600"])
        #expect(try s.playBreak("midroll-600", at: 1001, duration: 30).seeks == [Seek(900, .resumeFromBookmark)])
    }

    @Test func aResumeWithNoBreaksGoesStraightToTheBookmark() throws {
        let (_, opened) = try session(policy: Factory.policy { $0.resumeBreaks = .none }, resume: 900)
        #expect(opened.played == [])
        #expect(opened.seeks == [Seek(900, .resumeFromBookmark)])
    }

    // MARK: Bad rules

    @Test func aMidRollAtOrAfterTheContentEndIsRejected() {
        expectRejected(
            SessionConfiguration(contentDuration: 1800, adRules: AdRules(midrollTimes: [1800])),
            with: .breakOutOfRange(id: "midroll-1800", start: 1800))
    }

    @Test func midRollsEveryNSecondsNeedTheContentDuration() {
        expectRejected(
            SessionConfiguration(adRules: AdRules(midrollEvery: 600)),
            with: .notSupported("mid-rolls every N seconds without a content duration"))
    }

    @Test func aPostRollOnALiveStreamIsRejected() {
        expectRejected(
            SessionConfiguration(kind: .live, adRules: AdRules()), with: .notSupported("a post-roll on a live stream"))
    }

    /// A live stream's interstitial schedule (hls.js on a live playlist): mid-rolls by time, no post-roll.
    func live(_ times: [Double] = [600], policy: AdPolicy = AdPolicy()) throws -> TimelineSession {
        var (s, _) = try Factory.session(
            breaks: [], kind: .live, contentDuration: nil, policy: policy,
            adRules: AdRules(preroll: false, midrollTimes: times, postroll: false, breakDuration: 30))
        try s.report(10, at: 1001)
        return s
    }

    @Test func aLiveStreamPlaysItsScheduledMidRolls() throws {
        var s = try live()
        #expect(s.snapshot(at: 1001).breaks.map(\.id) == ["midroll-600"])
        try s.report(590, at: 1581)
        #expect(try s.report(600.5, at: 1592).played == ["midroll-600"])
    }

    @Test func aLiveScheduleThatGrewAddsItsNewMidRollsAndKeepsTheKnownOnes() throws {
        var s = try live()
        try s.report(590, at: 1581)
        try s.report(600.5, at: 1592)
        try s.handle(.adBreakEnded(breakId: "midroll-600"), at: 1622)
        #expect(s.isWatched("midroll-600", at: 1622))
        // The schedule now: the known mid-roll again, moved within its millisecond (watched, it stays so),
        // a new one, a repeat of it.
        #expect(try s.handle(.midrollsScheduled([600.0004, 900, 900]), at: 1623) == [])
        #expect(s.snapshot(at: 1623).breaks.map(\.id) == ["midroll-600", "midroll-900"])
        #expect(s.isWatched("midroll-600", at: 1623))
        #expect(!s.isWatched("midroll-900", at: 1623))
        try s.report(890, at: 1913)
        #expect(try s.report(900.5, at: 1924).played == ["midroll-900"])
    }

    @Test func aSeekOverANewlyScheduledMidRollPlaysItWhereLiveSnapbackIsOn() throws {
        var s = try live(policy: Factory.policy { $0.liveSnapback = true })
        try s.handle(.midrollsScheduled([300]), at: 1002)
        let actions = try s.seek(from: 10, to: 400, at: 1003)
        #expect(actions.played == ["midroll-300"])
    }

    @Test func midRollTimesAreRefusedWhereTheyMeanNothing() throws {
        // A stitched live session: its breaks come as a list.
        var (stitched, _) = try Factory.session(breaks: [], kind: .live, contentDuration: nil)
        expectRefused(
            &stitched, .midrollsScheduled([600]), at: 1001,
            with: .notSupported("mid-roll times on a session without ad rules"))
        // An on-demand ad-rules session: its schedule was whole at the open.
        var (onDemand, _) = try session()
        expectRefused(
            &onDemand, .midrollsScheduled([900]), at: 1001,
            with: .notSupported("mid-roll times updated on an on-demand stream"))
        // A live ad-rules session takes no break list.
        var s = try live()
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "x", start: 900, duration: 30)]), at: 1002,
            with: .notSupported("a break list on an ad-rules session (its schedule changes by mid-roll times)"))
        expectRefused(
            &s, .midrollsScheduled([-1]), at: 1002, with: .invalidTime(field: "ad rules mid-roll time", value: -1))
        expectRefused(
            &s, .midrollsScheduled(Array(repeating: 5, count: Limits.adRulesMidrolls + 1)), at: 1002,
            with: .tooManyBreaks(limit: Limits.adRulesMidrolls))
    }

    @Test func invalidRuleTimesAreRejected() {
        expectRejected(
            SessionConfiguration(contentDuration: 1800, adRules: AdRules(breakDuration: .nan)),
            with: .invalidTime(field: "ad rules break duration", value: .nan))
        expectRejected(
            SessionConfiguration(contentDuration: 1800, adRules: AdRules(midrollTimes: [-5])),
            with: .invalidTime(field: "ad rules mid-roll time", value: -5))
        expectRejected(
            SessionConfiguration(contentDuration: 1800, adRules: AdRules(midrollEvery: -.infinity)),
            with: .invalidTime(field: "ad rules mid-roll interval", value: -.infinity))
    }

    /// Counted, not built, before the limit: the daemon fuzzer found a tiny interval over a long program
    /// inserting 100,000 mid-rolls before it was refused. Just over and just under the limit.
    @Test func tooManyMidRollsAreRefusedBeforeTheyAreMade() throws {
        expectRejected(
            SessionConfiguration(contentDuration: 1e8, adRules: AdRules(midrollEvery: 1e-300)),
            with: .tooManyBreaks(limit: Limits.adRulesMidrolls))
        expectRejected(
            SessionConfiguration(contentDuration: 600_600, adRules: AdRules(midrollEvery: 600)),
            with: .tooManyBreaks(limit: Limits.adRulesMidrolls))
        expectRejected(
            SessionConfiguration(contentDuration: 1e6, adRules: AdRules(midrollTimes: (1...1001).map(Double.init))),
            with: .tooManyBreaks(limit: Limits.adRulesMidrolls))
        // One every ten minutes for six days fits.
        let days = try TimelineSession(
            SessionConfiguration(
                contentDuration: 6 * 86_400,
                adRules: AdRules(preroll: false, midrollEvery: 600, postroll: false)))
        #expect(days.layout.count == 6 * 144 - 1)
    }
}
