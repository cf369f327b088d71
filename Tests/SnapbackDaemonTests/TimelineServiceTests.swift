// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackEmbedded
import SnapbackTimeline
import SnapbackWire
import Testing

/// The timeline service's protocol in process: the real service behind an ``EmbeddedPeer``, a manual clock
/// and an in-memory store (``EmbeddedDaemon``); the same calls as over the socket, answered at once.
@Suite struct TimelineServiceTests {
    /// The reply's last_push_seq names the last push the event caused, written before the reply.
    @Test func eventReplyCarriesTheSeqOfItsLastPush() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        let reply: SnapbackV1.EventReply = try player.call(.event(sessionId: session, .seekEnded(from: 300, to: 900)))
        let pushes = player.takePushes()
        #expect(pushes.last?.seq == reply.lastPushSeq)
        #expect(reply.lastPushSeq == 1)
        // An event that causes no push answers 0, not the session's latest seq.
        let quiet: SnapbackV1.EventReply = try player.call(.event(sessionId: session, .adBreakStarted(breakId: "b1")))
        #expect(player.takePushes().isEmpty)
        #expect(quiet.lastPushSeq == 0)
    }

    /// IMA bookmarks (seed 002) through the daemon: the viewer stops; the same content reopened with ads
    /// of other lengths resumes at the same content time.
    @Test func bookmarkResumesAtTheSameContentPointWithOtherAdLengths() throws {
        let daemon = EmbeddedDaemon()
        let first = try daemon.player()
        let breaks = [AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "b1", start: 630, duration: 60)]
        var open = Streams.seed(contentId: "movie", profile: "anna", breaks: breaks)
        let s1 = try first.openSession(open).sessionId
        try first.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: s1)
        var paused = try first.send(.paused(streamTime: 1000), session: s1)
        while paused.savedBookmarks.isEmpty { paused.append(try first.nextPush()) }
        // 1000 − 30 − 60 = 910 s of content.
        #expect(paused.savedBookmarks == [910])
        try first.closeSession(s1)

        let stored: Bookmark = try first.call(.getBookmark(profile: "anna", contentId: "movie"))
        #expect(stored.contentTime == 910)
        #expect(stored.streamTime == 1000)

        let second = try daemon.player()
        var noBreakFirst = PolicyOverrides()
        noBreakFirst.resumeBreaks = AdPolicy.ResumeBreaks.none
        open = Streams.seed(
            contentId: "movie", profile: "anna", useBookmark: true,
            breaks: [AdBreak(id: "pre", start: 0, duration: 15), AdBreak(id: "b1", start: 615, duration: 120)],
            overrides: noBreakFirst)
        let reopened = try second.openSession(open)
        #expect(reopened.resumedFromBookmark)
        #expect(reopened.resumeContentTime == 910)
        // 910 + 15 + 120 = 1045 in the new layout.
        #expect(reopened.startStreamTime == 1045)
        #expect(second.takePushes().seeks.map(\.0) == [1045])
    }

    /// 100 players at once, interleaved: each gets its own snapback, and only its own.
    @Test func hundredPlayersAtOnce() throws {
        let daemon = EmbeddedDaemon()
        var players: [(EmbeddedPlayer, UInt64)] = []
        for i in 0..<100 {
            let p = try daemon.player("player-\(i)")
            let open = Streams.seed(contentId: "c\(i)", breaks: [AdBreak(id: "b\(i)", start: Double(100 + i), duration: 30)])
            players.append((p, try p.openSession(open).sessionId))
        }
        for (p, s) in players { try p.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: s) }
        for (i, (p, s)) in players.enumerated() {
            let pushes = try p.send(.seekEnded(from: 10, to: 1000), session: s)
            #expect(pushes.seekTargets == [Double(100 + i)])
            #expect(pushes.allSatisfy { $0.sessionId == s })
        }
        let status: SnapbackV1.StatusReply = try players[0].0.call(.getStatus)
        #expect(status.sessions == 100)
        #expect(status.connections >= 100)
    }

    @Test func conversionsAndStateQueries() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        let content: SnapbackV1.ContentTimeReply = try player.call(
            .contentTimeForStreamTime(sessionId: session, streamTime: 1200))
        #expect(content.contentTime == 1140)
        let inBreak: SnapbackV1.ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 630))
        #expect(inBreak.contentTime == 600)
        let stream: SnapbackV1.StreamTimeReply = try player.call(.streamTimeForContentTime(sessionId: session, contentTime: 600))
        #expect(stream.streamTime == 660)
        let around: SnapbackV1.BreakAtReply = try player.call(.breakAt(sessionId: session, streamTime: 700))
        #expect(around.previous?.id == "b1")
        #expect(around.next == nil)
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.seekEnded(from: 300, to: 900), session: session)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.currentBreakId == "b1")
        #expect(state.pendingReturn == 900)
    }
}

/// What the daemon acknowledges it keeps: a watched break is pushed only once the store committed it.
@Suite struct WatchedAcknowledgementTests {
    /// The seed story up to the break's end, with the store's commits held back; returns the pushes sent
    /// before any commit completed.
    func endTheBreak(_ daemon: EmbeddedDaemon) throws -> (EmbeddedPlayer, pushesBeforeCommit: [WirePushMessage]) {
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.seekEnded(from: 300, to: 900), session: session)
        try player.send(.adBreakStarted(breakId: "b1"), session: session)
        try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: session)
        let ended = WireRequest.event(sessionId: session, .adBreakEnded(breakId: "b1"))
        player.peer.receive(.request(callId: 100, method: ended.method.rawValue), body: ended.encoded())
        let before = try player.peer.takeSent().filter { $0.header.type == .push }.map { try WirePushMessage.decode($0.body) }
        return (player, before)
    }

    @Test func breakWatchedFollowsTheCommitOfTheWatchedMark() throws {
        let daemon = EmbeddedDaemon()
        let (player, before) = try endTheBreak(daemon)
        // The return seek is not held back; the watched break is.
        #expect(before.seeks.map(\.0) == [900])
        #expect(before.watchedBreaks.isEmpty)
        let after = try player.nextPushes()
        #expect(after.watchedBreaks == ["b1"])
        #expect(try daemon.store.watchedBreaks(contentId: "seed", within: [0...1e12]) == ["b1"])
        // Numbered in the order sent, without a gap (the snapback's seek was 1).
        #expect((before + after).map(\.seq) == Array(2...UInt64(1 + before.count + after.count)))
    }

    @Test func aWatchedMarkNotKeptIsSaidThenTheBreakCountsInThisSession() throws {
        let daemon = EmbeddedDaemon()
        daemon.store.failWrites = .unavailable("disk full")
        let (player, before) = try endTheBreak(daemon)
        #expect(before.watchedBreaks.isEmpty)
        let after = try player.nextPushes()
        let errorIndex = after.firstIndex { if case .sessionError = $0.kind { true } else { false } }
        let watchedIndex = after.firstIndex { if case .breakWatched = $0.kind { true } else { false } }
        #expect(errorIndex != nil && watchedIndex != nil && errorIndex! < watchedIndex!)
        if let errorIndex, case .sessionError(_, let message) = after[errorIndex].kind {
            #expect(message.contains("watched break b1 not kept"), "\(message)")
        }
        #expect(try daemon.store.watchedBreaks(contentId: "seed", within: [0...1e12]).isEmpty)
    }
}

/// Bad input gets a clear status to that client, and the daemon goes on serving.
@Suite struct RpcErrorTests {
    func expectStatus(_ code: StatusCode, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected \(code.name), got OK", sourceLocation: sourceLocation)
        } catch let error as SnapbackClientError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func unknownMethodIsUnimplemented() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        expectStatus(.unimplemented) { _ = try player.rawCall(method: 0x7F01, body: []) }
        let _: SnapbackV1.StatusReply = try player.call(.getStatus)
    }

    @Test func callBeforeHelloIsFailedPrecondition() throws {
        let daemon = EmbeddedDaemon()
        let peer = daemon.connect()
        peer.receive(.request(callId: 7, method: WireMethod.getStatus.rawValue), body: [])
        let frame = try #require(peer.takeSent().first)
        #expect(frame.header.callId == 7)
        #expect(frame.header.status == StatusCode.failedPrecondition.rawValue)
        #expect(try WireStatus.decode(frame.body).message.contains("Hello"))
        // Before Hello, an unknown method or a garbage body is refused the same way.
        peer.receive(.request(callId: 8, method: 0x7F7F), body: [0xFF, 0xFF])
        #expect(peer.takeSent().first?.header.status == StatusCode.failedPrecondition.rawValue)
        #expect(peer.isOpen)
    }

    @Test func incompatibleVersionIsRefusedAndClosed() throws {
        let daemon = EmbeddedDaemon()
        let peer = daemon.connect()
        peer.receive(
            .request(callId: 1, method: WireMethod.hello.rawValue),
            body: SnapbackV1.HelloRequest(protocolVersion: 99, clientName: "future").encoded())
        let frame = try #require(peer.takeSent().first)
        #expect(frame.header.status == StatusCode.failedPrecondition.rawValue)
        let message = try WireStatus.decode(frame.body).message
        #expect(message.contains("99") && message.contains("1"))
        // Closed once the refusal is written.
        #expect(!peer.isOpen)
    }

    @Test func malformedBodyIsInvalidArgument() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        expectStatus(.invalidArgument) { _ = try player.rawCall(method: WireMethod.seekEnded.rawValue, body: [0x0A, 0xFF, 0x01]) }
        let _: SnapbackV1.StatusReply = try player.call(.getStatus)
    }

    @Test func sessionOfAnotherConnectionIsNotFound() throws {
        let daemon = EmbeddedDaemon()
        let owner = try daemon.player("owner")
        let intruder = try daemon.player("intruder")
        let session = try owner.openSession(Streams.seed()).sessionId
        expectStatus(.notFound) { try intruder.send(.paused(streamTime: 10), session: session) }
        expectStatus(.notFound) { try intruder.closeSession(session) }
        try owner.send(.paused(streamTime: 10), session: session)
    }

    /// A connection's sessions are found by id whatever order they close in (they are kept sorted, and a
    /// close moves the rest).
    @Test func aConnectionsSessionsAreFoundWhicheverCloseFirst() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let other = try daemon.player("other")
        var open: [UInt64] = []
        for i in 0..<9 {
            open.append(try player.openSession(Streams.seed(contentId: "c\(i)")).sessionId)
            // Ids interleaved with another connection's.
            _ = try other.openSession(Streams.seed(contentId: "o\(i)"))
        }
        var closed: [UInt64] = []
        for position in [4, 0, 6, 2, 4, 0, 1, 1, 0] {
            let session = open.remove(at: position)
            try player.closeSession(session)
            closed.append(session)
            for session in open { try player.send(.paused(streamTime: 10), session: session) }
            for session in closed { expectStatus(.notFound) { try player.send(.paused(streamTime: 10), session: session) } }
        }
        // Emptied, the connection opens again.
        let again = try player.openSession(Streams.seed(contentId: "again")).sessionId
        try player.send(.paused(streamTime: 10), session: again)
    }

    @Test func impossibleTimelinesAreInvalidArgument() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let overlapping = [AdBreak(id: "a", start: 100, duration: 60), AdBreak(id: "b", start: 130, duration: 30)]
        expectStatus(.invalidArgument) { _ = try player.openSession(Streams.seed(breaks: overlapping)) }
        let duplicate = [AdBreak(id: "a", start: 100, duration: 10), AdBreak(id: "a", start: 300, duration: 10)]
        expectStatus(.invalidArgument) { _ = try player.openSession(Streams.seed(breaks: duplicate)) }
        let negative = [AdBreak(id: "a", start: -5, duration: 10)]
        expectStatus(.invalidArgument) { _ = try player.openSession(Streams.seed(breaks: negative)) }
        let session = try player.openSession(Streams.seed()).sessionId
        expectStatus(.invalidArgument) { try player.send(.seekEnded(from: .nan, to: 10), session: session) }
    }

    @Test func eventsOutOfOrderOrForUnknownBreaksGetTheirStatus() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        expectStatus(.notFound) { try player.send(.adBreakStarted(breakId: "nope"), session: session) }
        expectStatus(.failedPrecondition) { try player.send(.adBreakEnded(breakId: "b1"), session: session) }
        expectStatus(.failedPrecondition) { try player.send(.trickPlayEnded(streamTime: 10), session: session) }
        try player.closeSession(session)
        expectStatus(.notFound) { try player.send(.paused(streamTime: 10), session: session) }
    }

    @Test func updatingBreaksOfAnOnDemandStreamIsRefused() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        expectStatus(.invalidArgument) {
            try player.send(.breaksUpdated([AdBreak(id: "late", start: 1500, duration: 30)]), session: session)
        }
    }
}
