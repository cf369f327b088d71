import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// The timeline actor: it owns every session's `TimelineSession`, answers the RPCs of the `.proto`
/// services, executes the timeline's actions (pushes, timers, bookmark saves) and closes a player's
/// sessions when it goes away.
///
/// Its executor is the libuv loop (`LoopExecutor`): libuv callbacks enter it with `assumeIsolated`, so
/// decode → timeline → encode runs on the loop thread with no executor hop per message (a hop costs as
/// much as a whole round trip; `../shared/reference/daemon-practice.md`). The service makes no timeline
/// decision of its own: it maps requests to events and actions to frames.
public actor TimelineService {
    nonisolated let loop: EventLoop
    nonisolated public var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    let options: DaemonOptions
    let logger: Logger
    let store: any ViewerStateStore
    /// The configuration in force: the policy of new sessions, the allow-list and the limits. Replaced
    /// by ``apply(_:)`` (SIGHUP); what is open keeps what it got.
    var configuration: DaemonConfiguration
    /// Preset of sessions that name none.
    var defaultPreset: AdPolicy.Preset { configuration.defaultPreset }
    let startedAt: Double

    var sessions = SessionTable()
    /// Created on the loop thread at the first session (its timer must be).
    lazy var memory = MemoryReturn(loop: loop)
    /// Admitted connections (refused ones are not counted), in total and by peer uid.
    var connectionCount = 0
    var connectionsByUid: [UInt32: Int] = [:]
    var requestCount: UInt64 = 0
    var pushCount: UInt64 = 0
    /// Reused for every encoded body: no allocation per message once warm.
    var scratch: [UInt8] = []
    /// Reused for every event's actions (see `apply`).
    var actionBuffer: [TimelineAction] = []

    public init(context: DaemonContext, store: any ViewerStateStore) {
        self.loop = context.loop
        self.options = context.options
        self.logger = context.logger
        self.store = store
        self.configuration = context.configuration
        self.startedAt = WallClock.now()
        scratch.reserveCapacity(4096)
        actionBuffer.reserveCapacity(16)
    }

    /// The `ConnectionHandler` the daemon calls; it enters this actor without a hop.
    public nonisolated func makeHandler() -> any ConnectionHandler { TimelineConnectionHandler(service: self) }
}

/// One open session: its timeline, where its pushes go, and its timers.
final class SessionEntry {
    let id: UInt64
    var timeline: TimelineSession
    /// The connection that opened it; pushes travel there with `callId`. A strong reference (the cycle
    /// through `ConnectionState.sessions` is broken when the session or its connection closes): a weak
    /// one would give every `Connection` a side table and send each of its retains and releases down
    /// the runtime's slow path, a dozen times per message.
    var connection: Connection?
    let callId: UInt32
    let profile: String
    let contentId: String
    let streamId: String
    var pushSeq: UInt64 = 0
    /// The session's armed timers, one slot per `TimelineTimer`: no hashing on the per-event path.
    var bookmarkTimer: LoopTimer?
    var breakEndTimer: LoopTimer?

    func timer(_ timer: TimelineTimer) -> LoopTimer? {
        switch timer {
        case .bookmark: return bookmarkTimer
        case .breakEnd: return breakEndTimer
        }
    }

    func setTimer(_ timer: TimelineTimer, _ handle: LoopTimer) {
        switch timer {
        case .bookmark: bookmarkTimer = handle
        case .breakEnd: breakEndTimer = handle
        }
    }

    init(id: UInt64, timeline: TimelineSession, connection: Connection, callId: UInt32, request: OpenSessionRequest) {
        self.id = id
        self.timeline = timeline
        self.connection = connection
        self.callId = callId
        self.profile = request.profile
        self.contentId = request.contentId
        self.streamId = request.streamId
    }

    /// Store writes started for this session and not yet completed.
    var pendingWrites = 0
    private var afterWrites: [() -> Void] = []

    /// Runs `body` once every store write started so far has completed (at once if none is pending).
    func whenWritesDone(_ body: @escaping () -> Void) {
        if pendingWrites == 0 { body() } else { afterWrites.append(body) }
    }

    func writeCompleted() {
        pendingWrites -= 1
        if pendingWrites == 0 {
            let waiting = afterWrites
            afterWrites = []
            for body in waiting { body() }
        }
    }

    func closeTimers() {
        bookmarkTimer?.close()
        breakEndTimer?.close()
        bookmarkTimer = nil
        breakEndTimer = nil
    }
}

extension TimelineService {
    /// `assumeIsolated` for the loop thread, with the thread check only. The service's executor *is* the
    /// loop thread, so being on it is exactly the isolation the compiler wants proven; the standard
    /// library's check goes through the concurrency runtime (the main-executor test first) and cost
    /// about 700 instructions per frame — a tenth of the daemon's work on the snapback round trip.
    ///
    /// `operation` must capture nothing (its inputs come in `arguments`): a closure that captures
    /// nothing has no context to allocate, whereas entering through `withoutActuallyEscaping` — which
    /// needs a heap context for its escape check — cost two heap objects per frame.
    @inline(__always)
    nonisolated func onLoop<Arguments>(_ arguments: Arguments,
                                       _ operation: @escaping (isolated TimelineService, Arguments) -> Void) {
        precondition(loop.isOnLoopThread, "TimelineService entered off the loop thread")
        unsafeBitCast(operation, to: ((TimelineService, Arguments) -> Void).self)(self, arguments)
    }
}

/// Per-connection state the service keeps in `Connection.handlerContext`.
final class ConnectionState {
    /// The peer uid it was admitted under (counted in `connectionsByUid`).
    let uid: UInt32
    init(uid: UInt32) { self.uid = uid }
    var helloDone = false
    var clientName = ""
    /// The sessions this connection opened: a request's session is found with one lookup.
    private var sessions: [UInt64: SessionEntry] = [:]
    /// The session the last request named: a player sends its events for one session at a time, and a
    /// hit skips the dictionary's hashing.
    private var lastUsed: SessionEntry?

    func session(_ id: UInt64) -> SessionEntry? {
        if let entry = lastUsed, entry.id == id { return entry }
        guard let entry = sessions[id] else { return nil }
        lastUsed = entry
        return entry
    }

    var sessionCount: Int { sessions.count }
    /// In opening order (ids grow).
    var sessionIds: [UInt64] { sessions.keys.sorted() }

    func add(_ entry: SessionEntry) {
        sessions[entry.id] = entry
    }

    func removeSession(_ id: UInt64) {
        sessions[id] = nil
        if lastUsed?.id == id { lastUsed = nil }
        // Emptied after holding many, the table lets its buckets go.
        if sessions.isEmpty { sessions = [:] }
    }

}

/// Bridges libuv callbacks into the actor: every call is already on the loop thread, so
/// `onLoop` (a cheaper `assumeIsolated`) enters the actor synchronously.
final class TimelineConnectionHandler: ConnectionHandler, ConfigurationReloading {
    let service: TimelineService
    init(service: TimelineService) { self.service = service }

    func connectionOpened(_ connection: Connection) {
        service.onLoop(connection) { service, connection in service.connectionOpened(connection) }
    }

    func frameReceived(_ header: FrameHeader, body: UnsafeRawBufferPointer, on connection: Connection) {
        // The body points into the connection's read buffer and is used only during this call.
        service.onLoop((header, body, connection)) { service, frame in service.handle(frame.0, body: frame.1, on: frame.2) }
    }

    func oversizedFrame(_ header: FrameHeader, on connection: Connection) {
        service.onLoop((header, connection)) { service, frame in service.oversized(frame.0, on: frame.1) }
    }

    func connectionClosed(_ connection: Connection) {
        service.onLoop(connection) { service, connection in service.connectionClosed(connection) }
    }

    func shutdown() {
        service.onLoop(()) { service, _ in service.shutdown() }
    }

    func apply(_ configuration: DaemonConfiguration) {
        service.onLoop(configuration) { service, configuration in service.apply(configuration) }
    }
}
