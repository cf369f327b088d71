// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// `AdBreak.content_resume_offset` through the socket protocol, in process (``EmbeddedDaemon``): breaks that
/// replace content on demand and live, the range check where the number enters, and the bookmark kept at
/// the resume point while a resume's break plays.
@Suite struct ContentResumeOffsetServiceTests {
    static let replacing = [AdBreak(id: "r1", start: 600, duration: 60, contentResumeOffset: 60)]

    @Test func aReplacingBreakIsHonouredByConversionsAndEchoedInTheState() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(breaks: Self.replacing)).sessionId
        let after: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 900))
        #expect(after.contentTime == 900)
        let inside: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 630))
        #expect(inside.contentTime == 600)
        let replaced: SnapbackV1.StreamTimeReply = try player.call(
            .streamTimeForContentTime(sessionId: session, contentTime: 630))
        #expect(replaced.streamTime == 660)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.breaks.map(\.contentResumeOffset) == [60])

        // A snapback over it returns to the target, and the bookmark there is content 900 (inserted: 840).
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [600])
        try player.send(.adBreakStarted(breakId: "r1"), session: session)
        var ended = try player.send(.adBreakEnded(breakId: "r1"), session: session)
        while ended.savedBookmarks.isEmpty { ended.append(try player.nextPush()) }
        #expect(ended.seekTargets == [900])
        #expect(ended.savedBookmarks == [900])
    }

    /// Media3's ad group of 200 s that resumes the content 400 s later (androidx/media
    /// `ServerSideAdInsertionUtilTest`): a break cutting more content than it lasts opens, converts both ways
    /// (the content it cut resolves to its end, never inside it) and is echoed in the state.
    @Test func aBreakCuttingMoreThanItLastsIsTakenAndHonoured() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let cut = [AdBreak(id: "ad3", start: 4300, duration: 200, contentResumeOffset: 400)]
        var open = Streams.seed(breaks: cut)
        open.contentDuration = 6000
        let session = try player.openSession(open).sessionId
        let after: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 4700))
        #expect(after.contentTime == 4900)
        for content in [4300.0, 4500, 4699] {
            let inCut: SnapbackV1.StreamTimeReply = try player.call(
                .streamTimeForContentTime(sessionId: session, contentTime: content))
            #expect(inCut.streamTime == 4500, "content \(content)")
        }
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.breaks.map(\.contentResumeOffset) == [400])
    }

    @Test(arguments: [1e8.nextUp, -1.0])
    func anOffsetOutOfRangeIsRefusedNamingTheField(offset: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let open = Streams.seed(breaks: [AdBreak(id: "r1", start: 600, duration: 60, contentResumeOffset: offset)])
        #expect {
            try player.openSession(open)
        } throws: { error in
            guard case SnapbackClientError.status(.invalidArgument, let message) = error else { return false }
            return message.contains("breaks[0].content_resume_offset must be a content resume offset from 0 to 1e8 seconds")
        }
        // UpdateBreaks checks it where it enters too; above the break's duration is taken there as well.
        let live = OpenSessionRequest(streamId: "live", contentId: "", kind: .live, breaks: [])
        let session = try player.openSession(live).sessionId
        #expect(throws: SnapbackClientError.self) {
            try player.send(
                .breaksUpdated([AdBreak(id: "x", start: 100, duration: 30, contentResumeOffset: offset)]),
                session: session)
        }
        try player.send(
            .breaksUpdated([AdBreak(id: "y", start: 100, duration: 30, contentResumeOffset: 90)]), session: session)
        let content: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 200))
        #expect(content.contentTime == 260)
    }

    /// A live stream goes on while its ads play: an added break replaces the content it covers (absent
    /// offset), so content time stays stream time around it; a bookmark inside it is where the content
    /// stopped. A break the player marks as inserted (offset 0) shifts the content after it.
    @Test func aLiveBreakReplacesContent() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        var bookmarks = PolicyOverrides()
        bookmarks.liveBookmarks = true
        let live = OpenSessionRequest(
            streamId: "live", contentId: "channel-1", kind: .live, breaks: [],
            overrides: bookmarks)
        let session = try player.openSession(live).sessionId
        try player.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: session)
        try player.send(.breaksUpdated([AdBreak(id: "live-1", start: 1100, duration: 60)]), session: session)
        let after: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 1200))
        #expect(after.contentTime == 1200)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.breaks.map(\.contentResumeOffset) == [60])
        try player.send(.playheadReported(streamTime: 1100, rate: 1, playing: true), session: session)
        var paused = try player.send(.paused(streamTime: 1130), session: session)
        while paused.savedBookmarks.isEmpty { paused.append(try player.nextPush()) }
        #expect(paused.savedBookmarks == [1100])

        try player.send(
            .breaksUpdated([AdBreak(id: "live-2", start: 1300, duration: 30, contentResumeOffset: 0)]),
            session: session)
        let shifted: SnapbackV1.ContentTimeReply = try player.call(
            .contentTimeForStreamTime(sessionId: session, streamTime: 1400))
        #expect(shifted.contentTime == 1370)
    }

    /// Found by the mpv integration test: a viewer resumes at content 900, the last break before it plays
    /// first, and the viewer pauses and quits in that break. The bookmark stays at 900.
    @Test func quittingInTheBreakBeforeTheResumePointKeepsTheResumePoint() throws {
        let daemon = EmbeddedDaemon()
        let first = try daemon.player()
        let s1 = try first.openSession(Streams.seed(contentId: "movie", profile: "anna")).sessionId
        try first.send(.playheadReported(streamTime: 960, rate: 1, playing: true), session: s1)
        var paused = try first.send(.paused(streamTime: 960), session: s1)
        while paused.savedBookmarks.isEmpty { paused.append(try first.nextPush()) }
        #expect(paused.savedBookmarks == [900])
        try first.closeSession(s1)

        let second = try daemon.player()
        let reopened = try second.openSession(Streams.seed(contentId: "movie", profile: "anna", useBookmark: true))
        #expect(reopened.resumeContentTime == 900)
        #expect(second.takePushes().seekTargets == [600])  // b1 plays first (resume policy: last before)
        try second.send(.playheadReported(streamTime: 600, rate: 1, playing: true), session: reopened.sessionId)
        var inBreak = try second.send(.paused(streamTime: 620), session: reopened.sessionId)
        while inBreak.savedBookmarks.isEmpty { inBreak.append(try second.nextPush()) }
        #expect(inBreak.savedBookmarks == [900])
        try second.closeSession(reopened.sessionId)
        let stored: Bookmark = try second.call(.getBookmark(profile: "anna", contentId: "movie"))
        #expect(stored.contentTime == 900)
        #expect(stored.streamTime == 960)
    }
}
