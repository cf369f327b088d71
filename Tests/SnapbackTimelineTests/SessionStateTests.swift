// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// What the session's state keeps through the moves the older tests do not reach: the viewer's progress
/// following its break across a live update, the watched flags in the break queries, the state before
/// opening, and leaving a post-roll after the content's end.
@Suite struct SessionStateTests {
    @Test func eventsBeforeOpeningAreRefusedButClosingIsNot() throws {
        var s = try TimelineSession(SessionConfiguration(contentDuration: 1800, breaks: Factory.oneBreak))
        expectRefused(
            &s, .playheadReported(streamTime: 10, rate: 1, playing: true), at: 1000,
            with: .unexpectedEvent(event: "playhead", state: "not opened"))
        expectRefused(
            &s, .seekEnded(from: 10, to: 900), at: 1000,
            with: .unexpectedEvent(event: "seek-ended", state: "not opened"))
        #expect(try s.handle(.closed, at: 1000).isEmpty)
        #expect(s.isClosed)
        #expect(s.opened(at: 1001).isEmpty, "a closed session does not open")
    }

    /// A live update inserts a break before one the viewer watched: the watched flag and the loop guard's
    /// count stay with their break, not with its old index.
    @Test func aLiveUpdateKeepsEachBreaksProgress() throws {
        let policy = Factory.policy {
            $0.liveSnapback = true; $0.maxSnapbacksPerBreak = 2
        }
        var (s, _) = try Factory.session(
            breaks: [
                AdBreak(id: "b2", start: 1200, duration: 60),
                AdBreak(id: "b3", start: 1800, duration: 60)
            ],
            kind: .live, contentDuration: nil, policy: policy)
        try s.report(1100, at: 1000)
        try s.playBreak("b2", at: 1001)
        #expect(s.isWatched("b2"))
        // Two snapbacks to b3, each left by going back before it (not completed): the guard counts 2.
        for k in 0..<2 {
            let now = 1100 + Double(k) * 10
            #expect(try s.seek(from: 1300, to: 1900, at: now).seeks == [Seek(1800, .snapback)])
            _ = try s.handle(.seekEnded(from: 1800, to: 1800), at: now + 1)  // the echo
            try s.report(1300, at: now + 2)
            #expect(s.snapshot(at: now + 2).phase == .content)
        }
        _ = try s.handle(.breaksUpdated([AdBreak(id: "b1", start: 600, duration: 60)]), at: 1200)
        #expect(s.snapshot(at: 1200).breaks.map(\.id) == ["b1", "b2", "b3"])
        #expect(!s.isWatched("b1") && s.isWatched("b2") && !s.isWatched("b3"))
        #expect(s.previousBreak(atOrBefore: 1250)?.watched == true)
        #expect(s.nextBreak(after: 1250)?.id == "b3")
        // The third snapback to b3 is over the guard's two: the viewer is let go.
        let released = try s.seek(from: 1300, to: 1900, at: 1201)
        #expect(released.seeks == [])
        #expect(released.watched == ["b3"])
    }

    /// The watched flags come from the viewer's progress, whatever the configured breaks said.
    @Test func breakQueriesCarryTheWatchedFlags() throws {
        var (s, _) = try Factory.session(breaks: Factory.seedBreaks, watched: ["b1"])
        #expect(s.previousBreak(atOrBefore: 700)?.watched == true)
        #expect(s.nextBreak(after: 700)?.watched == false)
        #expect(s.layout.breaks.allSatisfy { !$0.watched }, "the layout is geometry only")
        try s.report(1200, at: 1000)
        try s.report(1290, at: 1090)
        _ = try s.handle(.adBreakEnded(breakId: "b2"), at: 1180)
        #expect(s.nextBreak(after: 700)?.watched == true)
    }

    /// A post-roll left mid-way after content complete leaves the session finished, not playing content.
    @Test func leavingThePostrollAfterTheEndFinishes() throws {
        let breaks = [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)]
        var (s, _) = try Factory.session(breaks: breaks, contentDuration: 1800, watched: ["b1"])
        try s.report(1850, at: 1000)
        try s.report(1870, at: 1020)  // inside the post-roll, past its start: not seen from the start
        #expect(s.snapshot(at: 1020).phase == .inBreak)
        _ = try s.handle(.contentCompleted, at: 1021)
        #expect(s.snapshot(at: 1021).phase == .inBreak, "the post-roll still plays")
        _ = try s.handle(.adBreakEnded(breakId: "post"), at: 1030)
        #expect(s.snapshot(at: 1030).phase == .finished)
        #expect(!s.isWatched("post"))
    }

    /// A window of the snapshot holds those breaks and their states, clamped to the session's, and the rest
    /// of the snapshot unchanged: GetSessionState's pages cost their own breaks.
    @Test func aSnapshotWindowIsThatSliceOfTheWholeSnapshot() throws {
        let breaks = (0..<10).map { AdBreak(id: "b\($0)", start: 600 + 600 * Double($0), duration: 30) }
        var (s, _) = try Factory.session(breaks: breaks, contentDuration: 7200)
        _ = try s.handle(.seekEnded(from: 0, to: 1300), at: 1001)
        let whole = s.snapshot(at: 1002)
        for window in [0..<10, 2..<5, 8..<20, 10..<12, 0..<0] {
            let part = s.snapshot(at: 1002, breaks: window)
            let clamped = window.clamped(to: 0..<10)
            #expect(part.breaks == Array(whole.breaks[clamped]))
            #expect(part.breakStates == Array(whole.breakStates[clamped]))
            var rest = part
            rest.breaks = whole.breaks
            rest.breakStates = whole.breakStates
            #expect(rest == whole)
        }
    }
}
