// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// The timeline service end to end: the real snapbackd binary, a real socket, the typed client, the
/// journal and SIGTERM. Protocol behaviour without them is tested in process (`TimelineServiceTests`).
@Suite struct TimelineRpcTests {
    /// Seeds 000/001 through the daemon: 5:00 → 15:00 over the unwatched break at 10:00 is snapped back to
    /// 10:00; when the break ends the viewer is returned to 15:00 and the bookmark is content time.
    @Test func seedStorySnapsBackThenReturnsToTheTarget() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)

        let seek = try player.send(.seekEnded(from: 300, to: 900), session: session)
        #expect(seek.count == 1)
        #expect(seek.seekTargets == [600])
        #expect(seek.first.map { $0.seq } == 1)
        #expect(seek.seeks.first?.1 == .snapback)
        #expect(seek.first?.reason == "seek 300→900 skipped unwatched break b1 at 600")

        try player.send(.adBreakStarted(breakId: "b1"), session: session)
        try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: session)
        var ended = try player.send(.adBreakEnded(breakId: "b1"), session: session)
        // BookmarkSaved follows the reply once the store committed (PROTOCOL.md, ordering guarantees).
        while ended.savedBookmarks.isEmpty { ended.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(ended.watchedBreaks == ["b1"])
        #expect(ended.seeks.map(\.0) == [900])
        #expect(ended.seeks.first?.1 == .resumeAfterSnapback)
        // Stream 900 with 60 s of ads before it is content 840.
        #expect(ended.savedBookmarks == [840])
        #expect(daemon.waitForLog(containing: "seek 300→900 skipped unwatched break b1 at 600"))
    }

    /// A break that replaces the content it covers (`content_resume_offset` = its duration), through the real
    /// binary: the snapback returns to 900 and the bookmark there is content 900, not 840; a live session's
    /// added break replaces content without being told.
    @Test func replacingBreaksThroughTheRealDaemon() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let breaks = [AdBreak(id: "r1", start: 600, duration: 60, contentResumeOffset: 60)]
        let session = try player.openSession(Streams.seed(contentId: "replaced", breaks: breaks)).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [600])
        try player.send(.adBreakStarted(breakId: "r1"), session: session)
        var ended = try player.send(.adBreakEnded(breakId: "r1"), session: session)
        while ended.savedBookmarks.isEmpty { ended.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(ended.seekTargets == [900])
        #expect(ended.savedBookmarks == [900])

        let live = try player.openSession(OpenSessionRequest(streamId: "live", contentId: "", kind: .live)).sessionId
        try player.send(.breaksUpdated([AdBreak(id: "l1", start: 1000, duration: 30)]), session: live)
        let content: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: live, streamTime: 1100))
        #expect(content.contentTime == 1100)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: live))
        #expect(state.breaks.map(\.contentResumeOffset) == [30])
    }

    /// A blackout that cuts more content than it lasts (30 s of slate for 300 s of the program), through the
    /// real binary: the bookmark after it counts the cut content (stream 700 is content 970), and the
    /// program opened again from that bookmark plays the break before it, then comes back at stream 700;
    /// content inside the cut converts to the break's end.
    @Test func aBreakCuttingMoreThanItLastsThroughTheRealDaemon() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let blackout = [AdBreak(id: "r", start: 600, duration: 30, contentResumeOffset: 300)]
        let first = try player.openSession(Streams.seed(contentId: "blackout", profile: "p", breaks: blackout)).sessionId
        let inCut: SnapbackV1.StreamTimeReply = try player.call(.streamTimeForContentTime(sessionId: first, contentTime: 750))
        #expect(inCut.streamTime == 630)
        try player.send(.playheadReported(streamTime: 700, rate: 1, playing: true), session: first)
        var paused = try player.send(.paused(streamTime: 700), session: first)
        while paused.savedBookmarks.isEmpty { paused.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(paused.savedBookmarks == [970])
        try player.closeSession(first)

        let reopened = try player.openSession(
            Streams.seed(contentId: "blackout", profile: "p", useBookmark: true, breaks: blackout))
        #expect(reopened.resumeContentTime == 970)
        var pushes = player.takePushes()
        while pushes.seekTargets.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(pushes.seekTargets == [600])
        try player.send(.adBreakStarted(breakId: "r"), session: reopened.sessionId)
        var ended = try player.send(.adBreakEnded(breakId: "r"), session: reopened.sessionId)
        while ended.seekTargets.isEmpty { ended.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(ended.seekTargets == [700])
    }

    /// A live stream's interstitial schedule (hls.js on a live playlist) through the real daemon: an
    /// ad-rules session opened live with its first mid-roll, the schedule grown by UpdateBreaks'
    /// midroll_times, the new mid-roll played when the content reaches it; a break list is refused there.
    @Test func aLiveAdRulesScheduleGrowsThroughTheRealDaemon() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let live = try player.openSession(
            OpenSessionRequest(
                streamId: "live-interstitials", contentId: "", kind: .live,
                adRules: AdRules(preroll: false, midrollTimes: [60], postroll: false, breakDuration: 15))
        ).sessionId
        try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: live)
        try player.send(.midrollsScheduled([60, 120]), session: live)
        var state: SessionStateReply = try player.call(.getSessionState(sessionId: live))
        #expect(state.breaks.map(\.id) == ["midroll-60", "midroll-120"])
        func played(_ pushes: [WirePushMessage]) -> [String] {
            pushes.compactMap { if case .playBreak(let id) = $0.kind { return id } else { return nil } }
        }
        #expect(
            played(try player.send(.playheadReported(streamTime: 60.5, rate: 1, playing: true), session: live)) == ["midroll-60"])
        try player.send(.adBreakEnded(breakId: "midroll-60"), session: live)
        #expect(played(try player.send(.playheadReported(streamTime: 119, rate: 1, playing: true), session: live)) == [])
        #expect(
            played(try player.send(.playheadReported(streamTime: 120.5, rate: 1, playing: true), session: live)) == [
                "midroll-120"
            ])
        #expect {
            try player.send(.breaksUpdated([AdBreak(id: "x", start: 300, duration: 30)]), session: live)
        } throws: { error in
            guard case SnapbackClientError.status(.invalidArgument, let message) = error else { return false }
            return message.contains("a break list on an ad-rules session")
        }
        state = try player.call(.getSessionState(sessionId: live))
        #expect(state.breaks.count == 2)
    }

    /// What a live manifest says of its breaks (issue #39), through the real binary: a JUMP-restricted
    /// open break holds a seek on a live session (which does not snap back by default), is extended and
    /// closed by UpdateBreaks while the viewer is in it, and the viewer returns to the target at its real
    /// end; a closed break cannot change; an unfilled break holds nothing and is listed with its flag.
    @Test func openUnfilledAndRestrictedBreaksThroughTheRealDaemon() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let live = try player.openSession(OpenSessionRequest(streamId: "live", contentId: "", kind: .live)).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: live)
        let open = AdBreak(id: "cue-1", start: 600, duration: 30, open: true, restrictJump: true)
        try player.send(.breaksUpdated([open]), session: live)
        let seek = try player.send(.seekEnded(from: 300, to: 900), session: live)
        #expect(seek.seekTargets == [600])
        #expect(seek.seeks.first?.1 == .snapback)
        try player.send(.playheadReported(streamTime: 600, rate: 1, playing: true), session: live)
        var extended = open
        extended.duration = 60
        try player.send(.breaksUpdated([extended]), session: live)
        #expect(try player.send(.playheadReported(streamTime: 640, rate: 1, playing: true), session: live).seekTargets == [])
        var closed = extended
        closed.duration = 75
        closed.open = false
        try player.send(.breaksUpdated([closed]), session: live)
        var state: SessionStateReply = try player.call(.getSessionState(sessionId: live))
        #expect(state.currentBreakId == "cue-1")
        #expect(state.breaks.map(\.duration) == [75])
        #expect(state.breaks.map(\.open) == [false])
        #expect(state.breaks.map(\.restrictJump) == [true])
        let back = try player.send(.playheadReported(streamTime: 675.5, rate: 1, playing: true), session: live)
        #expect(back.seekTargets == [900])
        #expect(back.seeks.first?.1 == .resumeAfterSnapback)

        var changed = closed
        changed.duration = 80
        #expect {
            try player.send(.breaksUpdated([changed]), session: live)
        } throws: { error in
            guard case SnapbackClientError.status(.invalidArgument, let message) = error else { return false }
            return message.contains("ad break cue-1 changed: a closed break cannot change")
        }

        let unfilled = AdBreak(id: "empty", start: 1200, duration: 30, unfilled: true)
        try player.send(.breaksUpdated([unfilled]), session: live)
        try player.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: live)
        #expect(try player.send(.seekEnded(from: 1000, to: 1210), session: live).seekTargets == [])
        state = try player.call(.getSessionState(sessionId: live))
        #expect((state.currentBreakId ?? "") == "")
        #expect(state.breaks.map(\.unfilled) == [false, true])
    }

    /// SKIP through the real binary: the tvsdk preset carries seeks out during ads, the manifest's SKIP
    /// refuses them for its break.
    @Test func aSkipRestrictionThroughTheRealDaemon() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        var open = Streams.seed(breaks: [AdBreak(id: "b1", start: 600, duration: 60, restrictSkip: true)])
        open.requestedPreset = .tvsdk
        let session = try player.openSession(open).sessionId
        try player.send(.playheadReported(streamTime: 610, rate: 1, playing: true), session: session)
        let refused = try player.send(.seekEnded(from: 615, to: 900), session: session)
        #expect(refused.seekTargets == [615])
        #expect(refused.seeks.first?.1 == .seekRefusedDuringAd)
    }

    /// A player that vanishes has its session closed as if it had sent close: the bookmark is taken.
    @Test func disconnectedPlayerKeepsItsBookmark() throws {
        let daemon = try DaemonHarness()
        var player: SnapbackClient? = try daemon.player()
        let session = try player!.openSession(Streams.seed(contentId: "gone", profile: "p")).sessionId
        try player!.send(.playheadReported(streamTime: 420, rate: 1, playing: true), session: session)
        player!.close()
        player = nil
        #expect(daemon.waitForLog(containing: "session \(session) closed: player disconnected"))
        let other = try daemon.player()
        let stored: Bookmark = try other.call(.getBookmark(profile: "p", contentId: "gone"))
        #expect(stored.contentTime >= 420 && stored.contentTime < 425)
    }

    /// Every session of a vanished player closes, each with its bookmark, and none is left open.
    @Test func disconnectedPlayerKeepsTheBookmarkOfEverySession() throws {
        let daemon = try DaemonHarness()
        var player: SnapbackClient? = try daemon.player()
        var sessions: [(id: UInt64, contentId: String, at: Double)] = []
        for (i, at) in [120.0, 240, 360, 480].enumerated() {
            let contentId = "gone-\(i)"
            let id = try player!.openSession(Streams.seed(contentId: contentId, profile: "p")).sessionId
            try player!.send(.playheadReported(streamTime: at, rate: 1, playing: true), session: id)
            sessions.append((id, contentId, at))
        }
        player!.close()
        player = nil
        for session in sessions {
            #expect(daemon.waitForLog(containing: "session \(session.id) closed: player disconnected"))
        }
        let other = try daemon.player()
        for session in sessions {
            let stored: Bookmark = try other.call(.getBookmark(profile: "p", contentId: session.contentId))
            #expect(stored.contentTime >= session.at && stored.contentTime < session.at + 5)
        }
        let status: SnapbackV1.StatusReply = try other.call(.getStatus)
        #expect(status.sessions == 0)
    }

    /// SIGTERM with live sessions: each session's final bookmark is saved and pushed, the player is told
    /// the daemon stops, and the daemon exits 0.
    @Test func sigtermClosesLiveSessionsWithTheirBookmarksAndExitsZero() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "sig")).sessionId
        var paused = try player.send(.paused(streamTime: 100), session: session)
        while paused.savedBookmarks.isEmpty { paused.append(try player.nextPush(timeout: .seconds(5))) }
        try player.send(.playheadReported(streamTime: 200, rate: 1, playing: false), session: session)
        daemon.terminate()
        var pushes: [WirePushMessage] = []
        while let push = try? player.nextPush(timeout: .seconds(5)) {
            pushes.append(push)
            if case .sessionError = push.kind { break }
        }
        #expect(pushes.savedBookmarks == [200])
        #expect(pushes.last.map { if case .sessionError(.unavailable, _) = $0.kind { true } else { false } } == true)
        #expect(daemon.waitForExit() == .exit(0))
    }
}
