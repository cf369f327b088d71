// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// What the anchors lack: no snapback loop when the watched flag never flips, the break-end timer when
/// AD_BREAK_ENDED is missing, and bad input answered with a specific error that leaves the session as it
/// was. Stream unless told: one break b1 600–660 in a 30-minute program.
@Suite struct RobustnessTests {
    // MARK: Snapback loops

    /// The viewer seeks over b1; the player arrives at the break, then is back before it without having
    /// played it (no event, no seek report); repeat.
    @discardableResult
    func snapBackAndLeave(_ s: inout TimelineSession, at now: Double) throws -> [TimelineAction] {
        let actions = try s.seek(from: 300, to: 900, at: now)
        if actions.seeks.first?.reason == .snapback {
            try s.report(600, at: now + 1)
            try s.report(300, at: now + 2)
        }
        return actions
    }

    @Test func repeatedSnapbacksToABreakThatNeverPlaysAreBounded() throws {
        var s = try Factory.playing(at: 300)
        for i in 0..<3 {
            #expect(try snapBackAndLeave(&s, at: 1001 + Double(i) * 10).seeks == [Seek(600, .snapback)])
        }
        let released = try snapBackAndLeave(&s, at: 1031)
        #expect(released.seeks == [])
        #expect(released.watched == ["b1"])
        #expect(
            released.first { $0.kind == .breakWatched(breakId: "b1") }?.reason.description
                == "snapback loop guard: 3 snapbacks to b1 already")
        #expect(released.bookmarks == [840])
        #expect(try snapBackAndLeave(&s, at: 1041).seeks == [])
    }

    @Test func theLoopBoundIsAPolicySetting() throws {
        var s = try Factory.playing(at: 300, policy: Factory.policy { $0.maxSnapbacksPerBreak = 1 })
        #expect(try snapBackAndLeave(&s, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(try snapBackAndLeave(&s, at: 1011).seeks == [])
    }

    @Test func theLoopGuardBoundsSeeksOutOfABreakThatAreAllowed() throws {
        var s = try Factory.playing(at: 300, policy: Factory.policy { $0.refuseSeeksDuringUnwatchedBreak = false })
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(try s.seek(from: 600, to: 900, at: 1002).seeks == [Seek(600, .snapback)])
        #expect(try s.seek(from: 600, to: 900, at: 1003).seeks == [Seek(600, .snapback)])
        #expect(try s.seek(from: 600, to: 900, at: 1004).seeks == [])
    }

    /// Released inside the break it was held to: the bookmark (the break's content position) and the
    /// break-end timer both come out — the bookmark used to be recorded as saved but never emitted.
    @Test func theLoopGuardReleasingAViewerInsideTheBreakSavesTheBookmarkAndWatchesTheBreakEnd() throws {
        var s = try Factory.playing(
            at: 300,
            policy: Factory.policy {
                $0.refuseSeeksDuringUnwatchedBreak = false
                $0.maxSnapbacksPerBreak = 1
            })
        #expect(try s.seek(from: 300, to: 615, at: 1001).seeks == [Seek(600, .startOfBreak)])
        let released = try s.seek(from: 600, to: 615, at: 1002)
        #expect(released.seeks == [])
        #expect(released.watched == ["b1"])
        #expect(released.savedBookmarks == [Bookmark(600, 615, .seek)])
        #expect(released.timers.map(\.timer) == [.breakEnd])
        #expect(s.snapshot(at: 1002).currentBreakId == "b1")
    }

    @Test func theLoopGuardReleasesWithoutMarkingWatchedWhenBreaksAreNeverWatched() throws {
        var s = try Factory.playing(
            at: 300,
            policy: Factory.policy {
                $0.watchedWhen = .never
                $0.maxSnapbacksPerBreak = 1
            })
        try snapBackAndLeave(&s, at: 1001)
        let released = try snapBackAndLeave(&s, at: 1011)
        #expect(released.seeks == [])
        #expect(released.watched == [])
        #expect(!s.isWatched("b1"))
    }

    @Test func thePlayheadCoveringASnappedBackBreakCountsAsWatchingIt() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        try s.report(600, at: 1002)
        try s.report(630, at: 1032)
        let end = try s.report(660.25, at: 1062)
        #expect(end.watched == ["b1"])
        #expect(end.seeks == [Seek(900, .resumeAfterSnapback)])
    }

    // MARK: Reports crossing our commands

    /// A report the player sent before it executed our snapback (still at the seek target) is not the
    /// playhead covering the break.
    @Test func aStaleReportPastASnappedBackBreakDoesNotCompleteIt() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        #expect(try s.report(900.5, at: 1001.2) == [])
        #expect(!s.isWatched("b1"))
        #expect(s.snapshot(at: 1001.2).currentBreakId == "b1")
        try s.report(600, at: 1001.5)
        #expect(try s.report(660.5, at: 1062).watched == ["b1"])
    }

    @Test func aStaleReportBeforeTheBreakPlayingBeforeAResumeDoesNotLeaveIt() throws {
        var (s, opened) = try Factory.session(resume: 900)
        #expect(opened.seeks == [Seek(630, .breakBeforeResume)])
        #expect(try s.report(0, at: 1000.1) == [])
        #expect(try s.report(630, at: 1000.5) == [])
        #expect(s.snapshot(at: 1000.5).currentBreakId == "b1")
        #expect(try s.report(690.5, at: 1061).seeks == [Seek(990, .resumeFromBookmark)])
        #expect(!s.isWatched("pre"))
    }

    @Test func aPlayerLandingOffTargetInsideTheBreakHasArrived() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        // A keyframe 3.5 s into the break, beyond the coverage tolerance of the target, still in the break.
        try s.report(603.5, at: 1002)
        #expect(try s.report(660.5, at: 1059).watched == ["b1"])
    }

    @Test func theEchoOfASnapbackReportedOffTargetKeepsTheViewerInTheBreak() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        #expect(try s.handle(.seekEnded(from: 900, to: 598.5), at: 1002).seeks == [Seek(600, .seekRefusedDuringAd)])
        #expect(s.snapshot(at: 1002).currentBreakId == "b1")
    }

    @Test func aPlayerThatNeverArrivesIsBoundedByTheBreakEndTimer() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        #expect(try s.report(910, at: 1011) == [])
        #expect(try s.handle(.timerFired(.breakEnd), at: 1065).seeks == [Seek(900, .resumeAfterSnapback)])
        #expect(s.snapshot(at: 1065).phase == .content)
    }

    @Test func aPlayerIgnoringARefusalIsStillBoundedByTheBreakEndTimer() throws {
        var s = try Factory.playing(at: 590)
        try s.report(600.5, at: 1010)
        _ = try s.handle(.seekStarted(from: 610), at: 1020)
        // The break-end timer fires while the viewer seeks: nothing to do yet.
        #expect(try s.handle(.timerFired(.breakEnd), at: 1065) == [])
        #expect(try s.handle(.seekEnded(from: 610, to: 900), at: 1066).seeks == [Seek(610, .seekRefusedDuringAd)])
        // The player stays at 900: its reports are not the break's, and the timer is armed again.
        let report = try s.report(900, at: 1067)
        #expect(report.seeks == [] && report.watched == [])
        #expect(report.timers.map(\.timer) == [.breakEnd])
        #expect(s.snapshot(at: 1067).currentBreakId == "b1")
    }

    // MARK: Missing AD_BREAK_ENDED

    @Test func aSnapbackArmsTheBreakEndTimer() throws {
        var s = try Factory.playing(at: 300)
        // 60 s of break plus twice the coverage tolerance.
        #expect(try s.seek(from: 300, to: 900, at: 1001).deadline(of: .breakEnd) == 1065)
    }

    @Test func theBreakEndTimerCompletesABreakWhoseEndWasNeverReported() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        let fired = try s.handle(.timerFired(.breakEnd), at: 1065)
        #expect(fired.watched == ["b1"])
        #expect(fired.seeks == [Seek(900, .resumeAfterSnapback)])
    }

    @Test func theBreakEndTimerWaitsForABreakThatCannotHaveEnded() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        _ = try s.handle(.paused(streamTime: 610), at: 1011)
        let fired = try s.handle(.timerFired(.breakEnd), at: 1065)
        #expect(fired.watched == [])
        #expect(fired.timers == [Timer(.breakEnd, 1119)])
        #expect(s.snapshot(at: 1065).currentBreakId == "b1")
    }

    @Test func aStaleBreakEndTimerInContentDoesNothing() throws {
        var s = try Factory.playing(at: 300)
        #expect(try s.handle(.timerFired(.breakEnd), at: 1010) == [])
    }

    // MARK: Bad times

    static let badTimes: [Double] = [-1, -.ulpOfOne, .nan, .infinity, -.infinity]

    static func timeEvents(_ t: Double) -> [(TimelineEvent, String)] {
        [
            (.playheadReported(streamTime: t, rate: 1, playing: true), "playhead"),
            (.seekStarted(from: t), "seek origin"),
            (.seekEnded(from: t, to: 400), "seek origin"),
            (.seekEnded(from: 300, to: t), "seek target"),
            (.paused(streamTime: t), "pause position"),
            (.trickPlayStarted(streamTime: t, rate: 8), "trick play start"),
            (.trickPlayEnded(streamTime: t), "trick play end")
        ]
    }

    @Test(arguments: badTimes)
    func aNegativeOrNonFiniteTimeIsRefused(_ t: Double) throws {
        for (event, field) in Self.timeEvents(t) {
            var s = try Factory.playing(at: 300)
            expectRefused(&s, event, at: 1001, with: .invalidTime(field: field, value: t))
        }
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNonFiniteWallTimeIsRefused(_ now: Double) throws {
        var s = try Factory.playing(at: 300)
        expectRefused(&s, .paused(streamTime: 310), at: now, with: .invalidTime(field: "wall time", value: now))
    }

    @Test(arguments: [Double.nan, .infinity])
    func aNonFiniteRateIsRefused(_ rate: Double) throws {
        var s = try Factory.playing(at: 300)
        expectRefused(&s, .playheadReported(streamTime: 310, rate: rate, playing: true), at: 1001, with: .invalidRate(rate))
    }

    // MARK: Unknown breaks

    @Test(arguments: [
        TimelineEvent.adBreakStarted(breakId: "zz"), .adBreakEnded(breakId: "zz"), .adStarted(breakId: "zz", index: 0),
        .adEnded(breakId: "zz", index: 0)
    ])
    func anEventForAnUnknownBreakIsRefused(_ event: TimelineEvent) throws {
        var s = try Factory.playing(at: 300)
        expectRefused(&s, event, at: 1001, with: .unknownBreak("zz"))
    }

    @Test func anAdIndexOutsideTheBreakIsRefused() throws {
        var s = try Factory.playing(at: 590, breaks: [AdBreak(id: "b1", start: 600, duration: 60, adDurations: [20, 20, 20])])
        expectRefused(
            &s, .adStarted(breakId: "b1", index: 3), at: 1001,
            with: .notSupported("ad index 3 in break b1 of 3 ads"))
        expectRefused(
            &s, .adEnded(breakId: "b1", index: -1), at: 1001,
            with: .notSupported("ad index -1 in break b1 of 3 ads"))
    }

    // MARK: Events out of order or twice

    @Test func adBreakEndedWithoutAStartIsRefused() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .adBreakEnded(breakId: "b1"), at: 1001,
            with: .unexpectedEvent(event: "ad-break-ended b1", state: "playing content"))
    }

    /// A repeated start confirms the visit: OK, no second effect (issue #11, tolerant events).
    @Test func adBreakStartedTwiceIsAConfirmation() throws {
        var s = try Factory.playing(at: 590)
        _ = try s.handle(.adBreakStarted(breakId: "b1"), at: 1010)
        let before = s.snapshot(at: 1011)
        let actions = try s.handle(.adBreakStarted(breakId: "b1"), at: 1011)
        #expect(actions.map(\.kind) == [.noEffect])
        #expect(s.snapshot(at: 1011) == before)
    }

    /// A second end confirms what the first concluded: OK, no second effect.
    @Test func adBreakEndedTwiceIsAConfirmation() throws {
        var s = try Factory.playing(at: 590)
        try s.playBreak("b1", at: 1010)
        let before = s.snapshot(at: 1071)
        let actions = try s.handle(.adBreakEnded(breakId: "b1"), at: 1071)
        #expect(actions.map(\.kind) == [.noEffect])
        #expect(s.snapshot(at: 1071) == before)
    }

    @Test func anotherBreakStartingInsideABreakIsRefused() throws {
        var s = try Factory.playing(at: 590, breaks: Factory.threeBreaks)
        _ = try s.handle(.adBreakStarted(breakId: "m1"), at: 1010)
        expectRefused(
            &s, .adBreakStarted(breakId: "m2"), at: 1011,
            with: .unexpectedEvent(event: "ad-break-started m2", state: "in ad break m1"))
    }

    @Test func aLaterAdStartingOutsideItsBreakIsRefused() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .adStarted(breakId: "b1", index: 1), at: 1001,
            with: .unexpectedEvent(event: "ad-started b1#1", state: "playing content"))
    }

    @Test func seekStartedTwiceIsRefused() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.seekStarted(from: 300), at: 1001)
        expectRefused(&s, .seekStarted(from: 300), at: 1002, with: .unexpectedEvent(event: "seek-started", state: "seeking"))
    }

    @Test func contentCompleteTwiceIsRefused() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.contentCompleted, at: 1001)
        expectRefused(
            &s, .contentCompleted, at: 1002,
            with: .unexpectedEvent(event: "content-complete", state: "after content complete"))
    }

    // MARK: After close

    static let everyEvent: [TimelineEvent] = [
        .playheadReported(streamTime: 310, rate: 1, playing: true), .seekStarted(from: 310),
        .seekEnded(from: 310, to: 900), .adBreakStarted(breakId: "b1"), .adBreakEnded(breakId: "b1"),
        .adStarted(breakId: "b1", index: 0), .adEnded(breakId: "b1", index: 0),
        .trickPlayStarted(streamTime: 310, rate: 8), .trickPlayEnded(streamTime: 900), .contentCompleted,
        .breaksUpdated([AdBreak(id: "b2", start: 1200, duration: 30)]), .midrollsScheduled([1200]),
        .paused(streamTime: 310), .closed,
        .playerDisconnected, .timerFired(.bookmark), .timerFired(.breakEnd)
    ]

    @Test(arguments: everyEvent)
    func everyEventAfterCloseIsRefused(_ event: TimelineEvent) throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.closed, at: 1001)
        expectRefused(&s, event, at: 1002, with: .sessionClosed)
        #expect(s.isClosed)
    }

    @Test(arguments: everyEvent)
    func everyEventMethodAfterCloseIsRefused(_ event: TimelineEvent) throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.closed, at: 1001)
        let before = s.snapshot(at: 1002)
        do {
            var actions: [TimelineAction] = []
            switch event {
            case .playheadReported(let t, let r, let p):
                try s.playheadReported(streamTime: t, rate: r, playing: p, at: 1002, into: &actions)
            case .seekStarted(let f): try s.seekStarted(from: f, at: 1002)
            case .seekEnded(let f, let t): try s.seekEnded(from: f, to: t, at: 1002, into: &actions)
            case .adBreakStarted(let id, _): try s.adBreakStarted(id: id, at: 1002, into: &actions)
            case .adBreakEnded(let id, _): try s.adBreakEnded(id: id, at: 1002, into: &actions)
            case .adStarted(let id, let i, _): try s.adStarted(breakId: id, index: i, at: 1002, into: &actions)
            case .adEnded(let id, let i, _): try s.adEnded(breakId: id, index: i, at: 1002, into: &actions)
            case .trickPlayStarted(let t, let r): try s.trickPlayStarted(streamTime: t, rate: r, at: 1002, into: &actions)
            case .trickPlayEnded(let t): try s.trickPlayEnded(streamTime: t, at: 1002, into: &actions)
            case .contentCompleted: try s.contentCompleted(at: 1002, into: &actions)
            case .breaksChanged(.breaks(let b)): try s.breaksUpdated(b, at: 1002)
            case .breaksChanged(.midrollTimes(let times)): try s.midrollsScheduled(times, at: 1002)
            case .paused(let t): try s.paused(streamTime: t, at: 1002, into: &actions)
            case .closed, .playerDisconnected, .timerFired: return  // only through handle(_:at:)
            }
            Issue.record("\(event.name) after close was accepted: \(actions)")
        } catch {
            #expect(error == .sessionClosed)
        }
        #expect(s.snapshot(at: 1002) == before)
    }
}
