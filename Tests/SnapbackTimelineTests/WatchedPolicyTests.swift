// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// When a break counts as watched (`AdPolicy.watchedWhen`) and how it becomes so: ad events, the playhead
/// covering it, previous sessions. Stream: one break b1 600–660 in a 30-minute program.
@Suite struct WatchedPolicyTests {
    func policy(_ when: AdPolicy.WatchedWhen) -> AdPolicy { Factory.policy { $0.watchedWhen = when } }

    @Test func onEndTheBreakIsWatchedWhenItsEndEventArrives() throws {
        var s = try Factory.playing(at: 590)
        #expect(try s.handle(.adBreakStarted(breakId: "b1"), at: 1010).watched == [])
        let ended = try s.handle(.adBreakEnded(breakId: "b1"), at: 1070)
        #expect(ended.watched == ["b1"])
        #expect(
            ended.first { $0.kind == .breakWatched(breakId: "b1") }?.reason.description
                == "break b1 completed: ad-break-ended event")
        #expect(s.isWatched("b1"))
    }

    @Test func onEndThePlayheadCoveringTheBreakCountsAsWatchingIt() throws {
        var s = try Factory.playing(at: 590)
        #expect(try s.report(600.5, at: 1010).watched == [])
        #expect(try s.report(630, at: 1040).watched == [])
        #expect(try s.report(660.2, at: 1070).watched == ["b1"])
        #expect(s.snapshot(at: 1070).phase == .content)
    }

    @Test func onEndAPlayheadThatEnteredMidBreakDoesNotMakeItWatched() throws {
        // The session opens with the player already 10 s into the break.
        var s = try Factory.playing(at: 610)
        #expect(s.snapshot(at: 1000).currentBreakId == "b1")
        #expect(try s.report(661, at: 1051).watched == [])
        #expect(!s.isWatched("b1"))
        #expect(s.snapshot(at: 1051).phase == .content)
    }

    @Test(arguments: [(2.0, true), (1.0, false)])
    func enteringWithinTheCoverageToleranceOfTheStartCountsAsFromTheStart(tolerance: Double, watched: Bool) throws {
        // First seen 1.5 s into the break (reports every second or so), then at its end.
        var s = try Factory.playing(at: 601.5, policy: Factory.policy { $0.coverageTolerance = tolerance })
        #expect(try s.report(660.5, at: 1059).watched == (watched ? ["b1"] : []))
    }

    @Test func playbackThroughBackToBackBreaksWatchesEach() throws {
        var s = try Factory.playing(
            at: 590,
            breaks: [
                AdBreak(id: "a", start: 600, duration: 30), AdBreak(id: "b", start: 630, duration: 30)
            ])
        try s.report(600.5, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "a")
        #expect(try s.report(630.5, at: 1040).watched == ["a"])
        #expect(s.snapshot(at: 1040).currentBreakId == "b")
        #expect(try s.report(660.5, at: 1070).watched == ["b"])
    }

    @Test func playbackExactlyAtTheBreakStartEntersIt() throws {
        var s = try Factory.playing(at: 590)
        try s.report(600, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "b1")
    }

    @Test func playbackExactlyAtTheBreakEndHasLeftIt() throws {
        var s = try Factory.playing(at: 590)
        try s.report(600, at: 1010)
        #expect(try s.report(660, at: 1070).watched == ["b1"])
        #expect(s.snapshot(at: 1070).phase == .content)
    }

    @Test func onEndAnEndEventForABreakEnteredMidWayDoesNotMakeItWatched() throws {
        var s = try Factory.playing(at: 610)
        #expect(try s.handle(.adBreakEnded(breakId: "b1"), at: 1050).watched == [])
        #expect(!s.isWatched("b1"))
    }

    @Test func onEndTheLastAdEndingCompletesTheBreak() throws {
        var s = try Factory.playing(at: 590, breaks: [AdBreak(id: "b1", start: 600, duration: 60, adDurations: [20, 20, 20])])
        _ = try s.handle(.adStarted(breakId: "b1", index: 0), at: 1010)
        #expect(try s.handle(.adEnded(breakId: "b1", index: 0), at: 1030).watched == [])
        _ = try s.handle(.adStarted(breakId: "b1", index: 1), at: 1030)
        #expect(try s.handle(.adEnded(breakId: "b1", index: 1), at: 1050).watched == [])
        #expect(try s.handle(.adEnded(breakId: "b1", index: 2), at: 1070).watched == ["b1"])
    }

    @Test func onBeginTheBreakIsWatchedAsSoonAsPlaybackEntersIt() throws {
        var s = try Factory.playing(at: 590, policy: policy(.onBegin))
        #expect(try s.report(600.5, at: 1010).watched == ["b1"])
    }

    @Test func onBeginASnappedBackBreakIsWatchedAtTheSnapback() throws {
        var s = try Factory.playing(at: 300, policy: policy(.onBegin))
        let actions = try s.seek(from: 300, to: 900, at: 1001)
        #expect(actions.seeks == [Seek(600, .snapback)])
        #expect(actions.watched == ["b1"])
        #expect(try s.handle(.adBreakEnded(breakId: "b1"), at: 1061).watched == [])
    }

    @Test func neverABreakIsNeverWatched() throws {
        var s = try Factory.playing(at: 590, policy: policy(.never))
        #expect(try s.playBreak("b1", at: 1010).watched == [])
        #expect(!s.isWatched("b1"))
    }

    @Test func neverABreakSnapsBackEveryTime() throws {
        var s = try Factory.playing(at: 300, policy: policy(.never))
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(try s.playBreak("b1", at: 1002).seeks == [Seek(900, .resumeAfterSnapback)])
        _ = try s.report(900, at: 1063)
        try s.seek(from: 900, to: 300, at: 1064)
        #expect(try s.seek(from: 300, to: 900, at: 1065).seeks == [Seek(600, .snapback)])
    }

    @Test func breaksWatchedInAnEarlierSessionAreWatched() throws {
        var s = try Factory.playing(at: 300, watched: ["b1"])
        #expect(s.isWatched("b1"))
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [])
    }

    @Test func aWatchedBreakIsReportedWatchedOnlyOnce() throws {
        var s = try Factory.playing(at: 590)
        #expect(try s.playBreak("b1", at: 1010).watched == ["b1"])
        try s.report(661, at: 1071)
        try s.seek(from: 661, to: 590, at: 1072)
        try s.report(590, at: 1072)
        try s.report(600.5, at: 1083)
        #expect(s.snapshot(at: 1083).currentBreakId == "b1")
        #expect(try s.report(660.5, at: 1143).watched == [])
    }
}
