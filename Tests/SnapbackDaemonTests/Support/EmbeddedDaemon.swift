// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// The real service in process — no binary, no socket — for tests of protocol behaviour: an
/// ``EmbeddedPeer`` per player, a ``ManualClock`` and an in-memory store. Calls answer at once.
/// Tests of the socket, signals, systemd and the SQLite store use ``DaemonHarness`` and the binary.
final class EmbeddedDaemon {
    let clock: ManualClock
    let store: MemoryViewerStateStore
    let service: TimelineService
    private var nextPeer: UInt64 = 1

    /// By default monotonic time is apart from the wall clock, as on a box (seconds since boot), so that
    /// a duration measured on the wrong clock shows.
    init(
        bookmarkTick: Double = 5, clock: ManualClock = ManualClock(at: 1_800_000_000, monotonic: 5_000),
        store: MemoryViewerStateStore = MemoryViewerStateStore(), _ change: (inout DaemonConfiguration) -> Void = { _ in }
    ) {
        self.clock = clock
        self.store = store
        var configuration = DaemonConfiguration()
        change(&configuration)
        service = TimelineService(
            clock: clock, logger: Logger(level: .error), configuration: configuration, store: store,
            bookmarkTick: bookmarkTick)
    }

    /// A connected peer that has not said Hello (for tests of the Hello gate).
    func connect(uid: UInt32 = 0, gid: UInt32 = 0, groups: [UInt32] = []) -> EmbeddedPeer {
        let credentials = PeerCredentials(pid: Int32(truncatingIfNeeded: 1000 + nextPeer), uid: uid, gid: gid, groups: groups)
        let peer = EmbeddedPeer(id: nextPeer, peer: credentials, handler: service, logger: Logger(level: .error))
        nextPeer += 1
        peer.connect()
        return peer
    }

    /// A connected player that has said Hello, with the peer credentials the access checks see.
    func player(_ name: String = "embedded", uid: UInt32 = 0, gid: UInt32 = 0) throws(SnapbackClientError) -> EmbeddedPlayer {
        let player = EmbeddedPlayer(peer: connect(uid: uid, gid: gid), store: store, clock: clock)
        let _: SnapbackV1.HelloReply = try player.call(
            .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: name)))
        return player
    }

    /// Moves the clock on: timers due fire (break ends, periodic bookmarks), then store writes complete.
    func advance(by seconds: Double) {
        clock.advance(by: seconds)
        _ = store.completeWrites()
    }
}

/// One player of an ``EmbeddedDaemon``, with the calls of ``SnapbackClient`` so a protocol test reads the
/// same in process as over the socket: typed calls throwing ``SnapbackClientError``, the pushes they caused.
final class EmbeddedPlayer {
    let peer: EmbeddedPeer
    let store: MemoryViewerStateStore
    let clock: ManualClock
    private var callId: UInt32 = 0
    private var pushes: [WirePushMessage] = []
    private var decisions: [SnapbackV1.Decision] = []

    init(peer: EmbeddedPeer, store: MemoryViewerStateStore, clock: ManualClock) {
        self.peer = peer
        self.store = store
        self.clock = clock
    }

    /// The reply decoded as `Reply`. Store writes made by the call complete before it returns (their
    /// acknowledgements are among the pushes).
    @discardableResult
    func call<Reply: WireMessage>(_ request: WireRequest, as _: Reply.Type = Reply.self) throws(SnapbackClientError) -> Reply {
        let body = try rawCall(method: request.method.rawValue, body: request.encoded())
        do {
            return try body.withUnsafeBytes { (raw) throws(WireError) in try Reply.decode(raw) }
        } catch {
            throw .malformedReply("\(request.method.name): \(error)")
        }
    }

    /// Any method and body; the OK reply's body, or its status thrown as ``SnapbackClientError/status(_:_:)``.
    func rawCall(method: UInt16, body: [UInt8]) throws(SnapbackClientError) -> [UInt8] {
        callId += 1
        peer.receive(.request(callId: callId, method: method), body: body)
        _ = store.completeWrites()
        var reply: Frame?
        for frame in try collect() where frame.header.callId == callId || frame.header.callId == 0 {
            reply = frame
        }
        guard let reply else {
            throw .socket(peer.isOpen ? .timedOut : .closedByPeer)
        }
        guard reply.header.status == StatusCode.ok.rawValue else {
            let message = (try? WireStatus.decode(reply.body))?.message ?? ""
            throw .status(StatusCode(rawValue: reply.header.status) ?? .unknown, message)
        }
        return reply.body
    }

    /// Takes what the service sent: pushes and decisions are kept, responses returned.
    private func collect() throws(SnapbackClientError) -> [Frame] {
        var responses: [Frame] = []
        for frame in peer.takeSent() {
            guard frame.header.type == .push else {
                responses.append(frame)
                continue
            }
            do {
                if frame.header.method == WireMethod.watchDecisions.rawValue {
                    decisions.append(try SnapbackV1.Decision.decode(frame.body))
                } else {
                    pushes.append(try WirePushMessage.decode(frame.body))
                }
            } catch {
                throw .malformedReply("push: \(error)")
            }
        }
        return responses
    }

    func openSession(_ request: OpenSessionRequest) throws(SnapbackClientError) -> SnapbackV1.OpenSessionReply {
        try call(.openSession(request))
    }

    @discardableResult
    func send(_ event: TimelineEvent, session: UInt64) throws(SnapbackClientError) -> [WirePushMessage] {
        let _: SnapbackV1.EventReply = try call(.event(sessionId: session, event))
        return takePushes()
    }

    @discardableResult
    func closeSession(_ session: UInt64) throws(SnapbackClientError) -> [WirePushMessage] {
        let _: SnapbackV1.EventReply = try call(.closeSession(sessionId: session))
        return takePushes()
    }

    func takePushes() -> [WirePushMessage] {
        defer { pushes = [] }
        return pushes
    }

    /// The next push already sent (after completing store writes): nothing happens later in process
    /// unless the test moves the clock, so there is nothing to wait for.
    func nextPush() throws(SnapbackClientError) -> WirePushMessage {
        _ = store.completeWrites()
        _ = try collect()
        guard !pushes.isEmpty else { throw .socket(.timedOut) }
        return pushes.removeFirst()
    }

    /// Every push sent so far, after completing the store's writes.
    func nextPushes() throws(SnapbackClientError) -> [WirePushMessage] {
        _ = store.completeWrites()
        _ = try collect()
        return takePushes()
    }

    func watchDecisions(sessionId: UInt64 = 0, contentId: String = "") throws(SnapbackClientError) {
        _ = try rawCall(
            method: WireMethod.watchDecisions.rawValue,
            body: WireRequest.watchDecisions(sessionId: sessionId, contentId: contentId).encoded())
    }

    /// Decisions sent to this watcher so far, in order.
    func takeDecisions() throws(SnapbackClientError) -> [SnapbackV1.Decision] {
        _ = try collect()
        defer { decisions = [] }
        return decisions
    }
}
