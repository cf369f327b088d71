import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// The timeline service end to end: the real snapbackd binary, a real socket, the typed client.
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

    /// The reply's last_push_seq names the last push the event caused, written before the reply.
    @Test func eventReplyCarriesTheSeqOfItsLastPush() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        let reply: EventReply = try player.call(.event(sessionId: session, .seekEnded(from: 300, to: 900)))
        let pushes = player.takePushes()
        #expect(pushes.last?.seq == reply.lastPushSeq)
        #expect(reply.lastPushSeq == 1)
        // An event that causes no push answers 0, not the session's latest seq.
        let quiet: EventReply = try player.call(.event(sessionId: session, .adBreakStarted(breakId: "b1")))
        #expect(player.takePushes().isEmpty)
        #expect(quiet.lastPushSeq == 0)
    }

    /// IMA bookmarks (seed 002) through the daemon: the viewer stops; the same content reopened with ads
    /// of other lengths resumes at the same content time.
    @Test func bookmarkResumesAtTheSameContentPointWithOtherAdLengths() throws {
        let daemon = try DaemonHarness()
        let first = try daemon.player()
        let breaks = [AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "b1", start: 630, duration: 60)]
        var open = Streams.seed(contentId: "movie", profile: "anna", breaks: breaks)
        let s1 = try first.openSession(open).sessionId
        try first.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: s1)
        var paused = try first.send(.paused(streamTime: 1000), session: s1)
        while paused.savedBookmarks.isEmpty { paused.append(try first.nextPush(timeout: .seconds(5))) }
        // 1000 − 30 − 60 = 910 s of content.
        #expect(paused.savedBookmarks == [910])
        try first.closeSession(s1)

        let stored: WireBookmark = try first.call(.getBookmark(profile: "anna", contentId: "movie"))
        #expect(stored.contentTime == 910)
        #expect(stored.streamTime == 1000)

        let second = try daemon.player()
        var noBreakFirst = PolicyOverrides()
        noBreakFirst.resumeBreaks = AdPolicy.ResumeBreaks.none
        open = Streams.seed(contentId: "movie", profile: "anna", useBookmark: true,
                            breaks: [AdBreak(id: "pre", start: 0, duration: 15), AdBreak(id: "b1", start: 615, duration: 120)],
                            overrides: noBreakFirst)
        let reopened = try second.openSession(open)
        #expect(reopened.resumedFromBookmark)
        #expect(reopened.resumeContentTime == 910)
        // 910 + 15 + 120 = 1045 in the new layout.
        #expect(reopened.startStreamTime == 1045)
        #expect(second.takePushes().seeks.map(\.0) == [1045])
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
        let stored: WireBookmark = try other.call(.getBookmark(profile: "p", contentId: "gone"))
        #expect(stored.contentTime >= 420 && stored.contentTime < 425)
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

    /// 100 players at once, interleaved: each gets its own snapback, and only its own.
    @Test func hundredPlayersAtOnce() throws {
        let daemon = try DaemonHarness(arguments: ["--log-level", "warning"])
        var players: [(SnapbackClient, UInt64)] = []
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
        let status: StatusReply = try players[0].0.call(.getStatus)
        #expect(status.sessions == 100)
        #expect(status.connections >= 100)
    }

    @Test func conversionsAndStateQueries() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        let content: ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 1200))
        #expect(content.contentTime == 1140)
        let inBreak: ContentTimeReply = try player.call(.contentTimeForStreamTime(sessionId: session, streamTime: 630))
        #expect(inBreak.contentTime == 600)
        let stream: StreamTimeReply = try player.call(.streamTimeForContentTime(sessionId: session, contentTime: 600))
        #expect(stream.streamTime == 660)
        let around: BreakAtReply = try player.call(.breakAt(sessionId: session, streamTime: 700))
        #expect(around.previous?.id == "b1")
        #expect(around.next == nil)
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.seekEnded(from: 300, to: 900), session: session)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.currentBreakId == "b1")
        #expect(state.pendingReturn == 900)
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
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        expectStatus(.unimplemented) { _ = try player.rawCall(method: 0x7F01, body: []) }
        let _: StatusReply = try player.call(.getStatus)
    }

    @Test func callBeforeHelloIsFailedPrecondition() throws {
        let daemon = try DaemonHarness()
        let socket = try daemon.connect()
        try socket.send(.request(callId: 7, method: WireMethod.getStatus.rawValue))
        let frame = try socket.readFrame()
        #expect(frame.header.callId == 7)
        #expect(frame.header.status == StatusCode.failedPrecondition.rawValue)
        #expect(try WireStatus.decode(frame.body).message.contains("Hello"))
        // Before Hello, an unknown method or a garbage body is refused the same way.
        try socket.send(.request(callId: 8, method: 0x7F7F), body: [0xFF, 0xFF])
        #expect(try socket.readFrame().header.status == StatusCode.failedPrecondition.rawValue)
    }

    @Test func incompatibleVersionIsRefusedAndClosed() throws {
        let daemon = try DaemonHarness()
        let socket = try daemon.connect()
        try socket.send(.request(callId: 1, method: WireMethod.hello.rawValue),
                        body: HelloRequest(protocolVersion: 99, clientName: "future").encoded())
        let frame = try socket.readFrame()
        #expect(frame.header.status == StatusCode.failedPrecondition.rawValue)
        let message = try WireStatus.decode(frame.body).message
        #expect(message.contains("99") && message.contains("1"))
        #expect(socket.waitForClose())
    }

    @Test func malformedBodyIsInvalidArgument() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        expectStatus(.invalidArgument) { _ = try player.rawCall(method: WireMethod.seekEnded.rawValue, body: [0x0A, 0xFF, 0x01]) }
        let _: StatusReply = try player.call(.getStatus)
    }

    @Test func sessionOfAnotherConnectionIsNotFound() throws {
        let daemon = try DaemonHarness()
        let owner = try daemon.player("owner")
        let intruder = try daemon.player("intruder")
        let session = try owner.openSession(Streams.seed()).sessionId
        expectStatus(.notFound) { try intruder.send(.paused(streamTime: 10), session: session) }
        expectStatus(.notFound) { try intruder.closeSession(session) }
        try owner.send(.paused(streamTime: 10), session: session)
    }

    @Test func impossibleTimelinesAreInvalidArgument() throws {
        let daemon = try DaemonHarness()
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
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        expectStatus(.notFound) { try player.send(.adBreakStarted(breakId: "nope"), session: session) }
        expectStatus(.failedPrecondition) { try player.send(.adBreakEnded(breakId: "b1"), session: session) }
        expectStatus(.failedPrecondition) { try player.send(.trickPlayEnded(streamTime: 10), session: session) }
        try player.closeSession(session)
        expectStatus(.notFound) { try player.send(.paused(streamTime: 10), session: session) }
    }

    @Test func updatingBreaksOfAnOnDemandStreamIsRefused() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        expectStatus(.invalidArgument) {
            try player.send(.breaksUpdated([AdBreak(id: "late", start: 1500, duration: 30)]), session: session)
        }
    }
}
