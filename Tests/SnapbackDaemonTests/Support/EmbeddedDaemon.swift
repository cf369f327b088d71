import SnapbackDaemon
import SnapbackStore
import SnapbackWire

/// The real service in process — no binary, no socket — for tests of protocol behaviour: an
/// ``EmbeddedPeer`` per player, a ``ManualClock`` and an in-memory store. Calls answer at once.
final class EmbeddedDaemon {
    let clock = ManualClock()
    let store = MemoryViewerStateStore()
    let service: TimelineService
    private var nextPeer: UInt64 = 1

    init(bookmarkTick: Double = 5, _ change: (inout DaemonConfiguration) -> Void = { _ in }) {
        var configuration = DaemonConfiguration()
        change(&configuration)
        service = TimelineService(clock: clock, logger: Logger(level: .error), configuration: configuration, store: store,
                                  bookmarkTick: bookmarkTick)
    }

    /// A connected player that has said Hello.
    func player() throws -> EmbeddedPlayer {
        let peer = EmbeddedPeer(id: nextPeer, handler: service, logger: Logger(level: .error))
        nextPeer += 1
        peer.connect()
        let player = EmbeddedPlayer(peer: peer, store: store)
        _ = try player.call(.hello(HelloRequest(clientName: "embedded")))
        return player
    }
}

/// One player of an ``EmbeddedDaemon``: typed calls, the pushes they caused.
final class EmbeddedPlayer {
    let peer: EmbeddedPeer
    let store: MemoryViewerStateStore
    private var callId: UInt32 = 0
    private(set) var pushes: [WirePushMessage] = []

    init(peer: EmbeddedPeer, store: MemoryViewerStateStore) {
        self.peer = peer
        self.store = store
    }

    /// The reply's body, or the call's status as a thrown `WireStatus`. Store writes made by the call
    /// complete before it returns (their acknowledgements are among the pushes).
    @discardableResult
    func call(_ request: WireRequest) throws -> [UInt8] {
        callId += 1
        peer.receive(.request(callId: callId, method: request.method.rawValue), body: request.encoded())
        store.completeWrites()
        var reply: Frame?
        for frame in peer.takeSent() {
            if frame.header.type == .push {
                pushes.append(try WirePushMessage.decode(frame.body))
            } else if frame.header.callId == callId {
                reply = frame
            }
        }
        guard let reply else { throw WireStatus(code: .unknown, message: "no reply to call \(callId)") }
        guard reply.header.status == StatusCode.ok.rawValue else { throw try WireStatus.decode(reply.body) }
        return reply.body
    }

    func openSession(_ request: OpenSessionRequest) throws -> UInt64 {
        try OpenSessionReply.decode(try call(.openSession(request))).sessionId
    }

    func takePushes() -> [WirePushMessage] {
        defer { pushes = [] }
        return pushes
    }
}
