// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Bookmarks: saved as content time on pause, close, disconnect, after a seek settles and periodically;
/// never a position inside a break; cleared near the end or when the post-roll starts; none for live by
/// default. Stream: the seeds' layout, pre 0–30, b1 630–690 (content 600), b2 1290–1380 (content 1200),
/// content 1800 (stream end 1980).
@Suite struct BookmarkTests {
    func playing(at t: Double, policy: AdPolicy = AdPolicy()) throws -> TimelineSession {
        try Factory.playing(at: t, breaks: Factory.seedBreaks, policy: policy)
    }

    @Test func pauseSavesTheContentTime() throws {
        var s = try playing(at: 400)
        let actions = try s.handle(.paused(streamTime: 400), at: 1005)
        #expect(actions.savedBookmarks == [Bookmark(370, 400, .paused)])
        #expect(actions.cancelledTimers == [.bookmark])
    }

    @Test func closeSavesWhereThePlayheadIsNow() throws {
        var s = try playing(at: 400)
        // Ten seconds of playback since the last report.
        #expect(try s.handle(.closed, at: 1010).savedBookmarks == [Bookmark(380, 410, .closed)])
    }

    @Test func disconnectSavesWhereThePlayheadIsNow() throws {
        var s = try playing(at: 400)
        #expect(try s.handle(.playerDisconnected, at: 1010).savedBookmarks == [Bookmark(380, 410, .disconnected)])
        #expect(s.isClosed)
    }

    @Test func closeWhileSeekingSavesTheSeekOrigin() throws {
        var s = try playing(at: 400)
        _ = try s.handle(.seekStarted(from: 400), at: 1005)
        #expect(try s.handle(.closed, at: 1010).savedBookmarks == [Bookmark(370, 400, .closed)])
    }

    @Test func aSettledSeekSavesWhereItLanded() throws {
        var s = try playing(at: 400)
        #expect(try s.seek(from: 400, to: 500, at: 1005).savedBookmarks == [Bookmark(470, 500, .seek)])
    }

    @Test func theReturnAfterASnapbackSavesTheTarget() throws {
        var s = try Factory.playing(at: 300)
        try s.seek(from: 300, to: 900, at: 1001)
        #expect(try s.playBreak("b1", at: 1002).savedBookmarks == [Bookmark(840, 900, .snapbackReturn)])
    }

    @Test func playbackArmsThePeriodicBookmark() throws {
        var (s, _) = try Factory.session()
        #expect(try s.report(400, at: 1000).timers == [Timer(.bookmark, 1030)])
        // Already armed: a later report does not re-arm it.
        #expect(try s.report(401, at: 1001).timers == [])
    }

    @Test func thePeriodicBookmarkSavesWhereThePlayheadIsAndReArms() throws {
        var s = try playing(at: 400)
        let fired = try s.handle(.timerFired(.bookmark), at: 1030)
        #expect(fired.savedBookmarks == [Bookmark(400, 430, .periodic)])
        #expect(fired.timers == [Timer(.bookmark, 1060)])
    }

    @Test func theBookmarkIntervalIsAPolicySetting() throws {
        var (s, _) = try Factory.session(policy: Factory.policy { $0.bookmarkInterval = 10 })
        #expect(try s.report(400, at: 1000).timers == [Timer(.bookmark, 1010)])
    }

    @Test func aZeroBookmarkIntervalMeansNoPeriodicBookmark() throws {
        var (s, _) = try Factory.session(policy: Factory.policy { $0.bookmarkInterval = 0 })
        #expect(try s.report(400, at: 1000).timers == [])
    }

    @Test func aPausedPlayerIsNotBookmarkedPeriodically() throws {
        var s = try playing(at: 400)
        _ = try s.handle(.paused(streamTime: 400), at: 1005)
        #expect(try s.handle(.timerFired(.bookmark), at: 1030) == [])
    }

    @Test func aPlayheadThatDidNotMoveIsNotSavedTwice() throws {
        var s = try playing(at: 400)
        #expect(try s.handle(.paused(streamTime: 400), at: 1005).bookmarks == [370])
        #expect(try s.handle(.paused(streamTime: 400), at: 1006).bookmarks == [])
    }

    @Test func closingInsideABreakSavesTheBreaksContentPosition() throws {
        var s = try playing(at: 620)
        try s.report(631, at: 1011)
        #expect(s.snapshot(at: 1011).currentBreakId == "b1")
        #expect(try s.handle(.closed, at: 1020).savedBookmarks == [Bookmark(600, 631, .closed)])
    }

    @Test func aBreakStartingCancelsThePeriodicBookmark() throws {
        var s = try playing(at: 620)
        #expect(try s.report(631, at: 1011).cancelledTimers == [.bookmark])
    }

    // MARK: Finished

    @Test func theBookmarkIsClearedWithinTheFinishedMarginOfTheEnd() throws {
        // Stream 1951 − 180 s of ads = content 1771.
        var s = try playing(at: 1940)
        let actions = try s.report(1951, at: 1011)
        #expect(actions.clearsBookmark)
        #expect(
            actions.first { $0.kind == .clearBookmark }?.reason.description
                == "finished: content 1771 is within 30 s of the end 1800")
        #expect(actions.cancelledTimers == [.bookmark])
    }

    /// A seek that settles within the margin clears the bookmark and disarms the periodic one (the cancel
    /// used to be dropped while the timer was recorded as disarmed).
    @Test func aSeekIntoTheFinishedMarginClearsTheBookmarkAndItsTimer() throws {
        var s = try playing(at: 1500)
        let actions = try s.seek(from: 1500, to: 1951, at: 1011)
        #expect(actions.seeks == [])
        #expect(actions.clearsBookmark)
        #expect(actions.cancelledTimers == [.bookmark])
    }

    @Test func thePlayheadBeforeTheFinishedMarginKeepsTheBookmark() throws {
        var s = try playing(at: 1940)
        #expect(try !s.report(1949, at: 1009).clearsBookmark)
    }

    @Test func theFinishedMarginIsAPolicySetting() throws {
        var s = try playing(at: 1870, policy: Factory.policy { $0.finishedMargin = 100 })
        #expect(try s.report(1880, at: 1010).clearsBookmark)
    }

    @Test func noBookmarkIsSavedOnceItWasCleared() throws {
        var s = try playing(at: 1940)
        try s.report(1951, at: 1011)
        #expect(try s.handle(.paused(streamTime: 1952), at: 1012).savedBookmarks == [])
        #expect(try s.handle(.closed, at: 1013).savedBookmarks == [])
    }

    @Test func theBookmarkIsClearedWhenThePostRollStarts() throws {
        var s = try Factory.playing(
            at: 1850, breaks: [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)],
            policy: Factory.policy { $0.finishedMargin = 0 })
        #expect(try !s.report(1859, at: 1009).clearsBookmark)
        let actions = try s.report(1860, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "post")
        #expect(actions.clearsBookmark)
    }

    @Test func contentCompleteClearsTheBookmark() throws {
        var s = try playing(at: 1000)
        #expect(try s.handle(.contentCompleted, at: 1010).clearsBookmark)
        #expect(s.snapshot(at: 1010).phase == .finished)
    }

    @Test func aPostRollPlayingAtContentCompleteEndsFinished() throws {
        var s = try Factory.playing(
            at: 1850, breaks: [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)])
        try s.report(1860.5, at: 1011)
        _ = try s.handle(.contentCompleted, at: 1012)
        #expect(s.snapshot(at: 1012).currentBreakId == "post")
        #expect(try s.report(1890.2, at: 1041).watched == ["post"])
        #expect(s.snapshot(at: 1041).phase == .finished)
    }

    // MARK: Live

    @Test func liveSessionsTakeNoBookmarksByDefault() throws {
        var (s, _) = try Factory.session(breaks: Factory.oneBreak, kind: .live, contentDuration: nil)
        #expect(try s.report(400, at: 1000).timers == [])
        #expect(try s.handle(.paused(streamTime: 400), at: 1005).savedBookmarks == [])
        #expect(try s.handle(.closed, at: 1010).savedBookmarks == [])
    }

    @Test func liveBookmarksCanBeEnabled() throws {
        var (s, _) = try Factory.session(
            breaks: Factory.oneBreak, kind: .live, contentDuration: nil,
            policy: Factory.policy { $0.liveBookmarks = true })
        try s.report(400, at: 1000)
        #expect(try s.handle(.paused(streamTime: 400), at: 1005).savedBookmarks == [Bookmark(400, 400, .paused)])
    }
}
