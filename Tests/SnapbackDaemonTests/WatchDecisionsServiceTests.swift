// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

/// Control/WatchDecisions, ListSessions and GetSession against the real service in process
/// (EmbeddedPeer, ManualClock, MemoryViewerStateStore): who may call them, what a watcher receives, and
/// that a watcher that stops reading is dropped while the players are answered as before.
@Suite struct WatchDecisionsServiceTests {
    final class Box {
        let daemon: EmbeddedDaemon
        var clock: ManualClock { daemon.clock }

        init(_ configure: (inout DaemonConfiguration) -> Void = { _ in }) {
            daemon = EmbeddedDaemon {
                $0.access.anyone = true
                configure(&$0)
            }
        }

        /// A connected peer that said Hello.
        func peer(uid: UInt32 = 0, gid: UInt32 = 0, groups: [UInt32] = [], name: String = "peer") -> EmbeddedPeer {
            let p = daemon.connect(uid: uid, gid: gid, groups: groups)
            let hello = WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: name))
            p.receive(.request(callId: 1, method: hello.method.rawValue), body: hello.encoded())
            _ = p.takeSent()
            return p
        }

        /// Sends `request`; returns every frame the peer was sent meanwhile.
        @discardableResult
        func send(_ request: WireRequest, on p: EmbeddedPeer, callId: UInt32) -> [Frame] {
            p.receive(.request(callId: callId, method: request.method.rawValue), body: request.encoded())
            return p.takeSent()
        }

        /// Opens the seed session (an unwatched break at 10:00) and returns its id.
        func openSeed(on p: EmbeddedPeer, content: String = "movie", callId: UInt32 = 2) throws -> UInt64 {
            let open = OpenSessionRequest(
                streamId: "s-\(content)", contentId: content, profile: "kids",
                breaks: [AdBreak(id: "b1", start: 600, duration: 30)], contentDuration: 1800)
            let frames = send(.openSession(open), on: p, callId: callId)
            let reply = try #require(frames.last { $0.header.type == .response })
            #expect(reply.header.status == 0)
            return try SnapbackV1.OpenSessionReply.decode(reply.body).sessionId
        }

        /// The snapback: a seek from 5:00 to 15:00 over the break.
        func snapback(_ session: UInt64, on p: EmbeddedPeer, callId: UInt32) -> [Frame] {
            send(.event(sessionId: session, .playheadReported(streamTime: 300, rate: 1, playing: true)), on: p, callId: callId)
            return send(.event(sessionId: session, .seekEnded(from: 300, to: 900)), on: p, callId: callId + 1)
        }
    }

    static func decisions(_ frames: [Frame]) throws -> [SnapbackV1.Decision] {
        try frames.filter { $0.header.type == .push }.map { frame in
            #expect(frame.header.method == WireMethod.watchDecisions.rawValue)
            return try SnapbackV1.Decision.decode(frame.body)
        }
    }

    @Test func aWatcherSeesAnotherPlayersSnapbackWithItsReason() throws {
        let box = Box()
        let watcher = box.peer(name: "watch")
        let started = box.send(.watchDecisions(sessionId: 0, contentId: ""), on: watcher, callId: 5)
        #expect(started.count == 1 && started[0].header.type == .response && started[0].header.status == 0)
        #expect(started[0].body.isEmpty)

        let player = box.peer(uid: 1000, gid: 1000, name: "player")
        let session = try box.openSeed(on: player)
        let frames = box.snapback(session, on: player, callId: 3)
        // The player's own answer is as without a watcher: the seek push, then the reply.
        #expect(frames.map(\.header.type) == [.push, .response])

        let pushed = watcher.takeSent()
        // The stream's frames carry the WatchDecisions call's id.
        #expect(!pushed.isEmpty && pushed.allSatisfy { $0.header.callId == 5 })
        let seen = try Self.decisions(pushed)
        let seek = try #require(seen.first { DecisionKind(proto: $0.kind) == .seek })
        #expect(seek.sessionId == session)
        #expect(seek.contentId == "movie" && seek.profile == "kids" && seek.streamId == "s-movie")
        #expect(seek.streamTime == 600 && SeekReason(proto: seek.seekReason) == .snapback)
        #expect(seek.reason.contains("b1"), "\(seek.reason)")
        #expect(seek.at == box.clock.now())
        #expect(seen.map(\.seq) == Array(1...UInt64(seen.count)))
    }

    @Test func filtersBySessionAndContent() throws {
        let box = Box()
        let player = box.peer(uid: 1000, gid: 1000)
        let a = try box.openSeed(on: player, content: "a", callId: 2)
        let b = try box.openSeed(on: player, content: "b", callId: 3)
        let bySession = box.peer()
        box.send(.watchDecisions(sessionId: b, contentId: ""), on: bySession, callId: 2)
        let byContent = box.peer()
        box.send(.watchDecisions(sessionId: 0, contentId: "a"), on: byContent, callId: 2)
        _ = box.snapback(a, on: player, callId: 10)
        _ = box.snapback(b, on: player, callId: 20)
        let forB = try Self.decisions(bySession.takeSent())
        let forA = try Self.decisions(byContent.takeSent())
        #expect(!forB.isEmpty && forB.allSatisfy { $0.sessionId == b })
        #expect(!forA.isEmpty && forA.allSatisfy { $0.sessionId == a && $0.contentId == "a" })
        #expect(forA.map(\.seq) == Array(1...UInt64(forA.count)))
    }

    @Test func onlyRootAndTheAdminGroupsMayWatch() throws {
        let box = Box { $0.access.adminGroups = [500] }
        let stranger = box.peer(uid: 1000, gid: 1000, groups: [44])
        let refused = box.send(.watchDecisions(sessionId: 0, contentId: ""), on: stranger, callId: 2)
        #expect(refused.first?.header.status == StatusCode.permissionDenied.rawValue)
        let bySupplementary = box.peer(uid: 1001, gid: 1001, groups: [44, 500])
        #expect(box.send(.watchDecisions(sessionId: 0, contentId: ""), on: bySupplementary, callId: 2).first?.header.status == 0)
        let byPrimary = box.peer(uid: 1002, gid: 500)
        #expect(box.send(.watchDecisions(sessionId: 0, contentId: ""), on: byPrimary, callId: 2).first?.header.status == 0)
        // One stream per connection.
        let again = box.send(.watchDecisions(sessionId: 0, contentId: ""), on: byPrimary, callId: 3)
        #expect(again.first?.header.status == StatusCode.failedPrecondition.rawValue)
    }

    @Test func aWatcherThatStopsReadingIsDroppedAndPlayersAreAnsweredAsBefore() throws {
        let box = Box { $0.maxWatchQueueBytes = 4096 }
        let slow = box.peer(name: "slow")
        box.send(.watchDecisions(sessionId: 0, contentId: ""), on: slow, callId: 2)
        let reading = box.peer(name: "reading")
        box.send(.watchDecisions(sessionId: 0, contentId: ""), on: reading, callId: 2)
        let player = box.peer(uid: 1000, gid: 1000)
        let session = try box.openSeed(on: player)
        var readingSeen: [SnapbackV1.Decision] = []
        for round in 0..<200 {
            // Each round: a playhead report and a seek over the (watched, after the first round) break.
            let callId = UInt32(10 + 2 * round)
            box.send(
                .event(sessionId: session, .playheadReported(streamTime: 300, rate: 1, playing: true)), on: player, callId: callId
            )
            let frames = box.send(.event(sessionId: session, .seekEnded(from: 300, to: 900)), on: player, callId: callId + 1)
            let reply = try #require(frames.last)
            #expect(reply.header.type == .response && reply.header.callId == callId + 1 && reply.header.status == 0)
            readingSeen += try Self.decisions(reading.takeSent())
        }
        // The slow watcher was dropped: asked to close, and sent nothing past its bound.
        #expect(slow.state != .open)
        #expect(slow.queuedOutboundBytes <= 4096)
        // The reading one kept every decision, in order.
        #expect(readingSeen.count >= 200)
        #expect(readingSeen.map(\.seq) == Array(1...UInt64(readingSeen.count)))
    }

    @Test func listAndGetShowEveryoneToAdminsAndOwnSessionsToOthers() throws {
        let box = Box()
        let alice = box.peer(uid: 1000, gid: 1000, name: "alice-player")
        let bob = box.peer(uid: 2000, gid: 2000, name: "bob-player")
        let a = try box.openSeed(on: alice, content: "a")
        let b = try box.openSeed(on: bob, content: "b")
        _ = box.snapback(a, on: alice, callId: 3)

        let root = box.peer()
        let all = try SnapbackV1.ListSessionsReply.decode(try #require(box.send(.listSessions(), on: root, callId: 2).first).body)
        #expect(all.sessions.map(\.sessionId) == [a, b])
        let first = all.sessions[0]
        #expect(first.contentId == "a" && first.clientName == "alice-player" && first.peerUid == 1000)
        #expect(first.policyPreset == "snapback" && SessionKind(proto: first.kind) == .onDemand && first.breakCount == 1)
        #expect(first.state?.breaks.isEmpty == true)
        #expect(first.pushes >= 1)

        let own = try SnapbackV1.ListSessionsReply.decode(
            try #require(box.send(.listSessions(), on: box.peer(uid: 2000, gid: 2000), callId: 2).first).body)
        #expect(own.sessions.map(\.sessionId) == [b])

        let info = try SnapbackV1.SessionInfo.decode(
            try #require(box.send(.getSession(sessionId: a), on: root, callId: 3).first).body)
        let state = SessionStateReply(proto: try #require(info.state))
        #expect(state.breaks.map(\.id) == ["b1"])
        #expect(state.phase == .inBreak || state.phase == .content)
        #expect(state.pendingReturn == 900)
        let hidden = try #require(box.send(.getSession(sessionId: a), on: box.peer(uid: 2000, gid: 2000), callId: 2).first)
        #expect(hidden.header.status == StatusCode.notFound.rawValue)
        let missing = try #require(box.send(.getSession(sessionId: 99), on: root, callId: 4).first)
        #expect(missing.header.status == StatusCode.notFound.rawValue)
    }
}
