// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// The timeline service: it owns every session's `TimelineSession`, answers the RPCs of the `.proto`
/// services, executes the timeline's actions (pushes, timers, bookmark saves) and closes a player's
/// sessions when it goes away. It makes no timeline decision of its own: it maps requests to events and
/// actions to frames.
///
/// A final class confined to one thread — the libuv loop's in the daemon, the caller's with an
/// `EmbeddedPeer` — that checks it at every entry. Not an actor: nothing ever awaits it, because
/// decode → timeline → encode must run on the loop thread with no executor hop (a hop costs as much
/// as a whole round trip), and entering an actor synchronously from a libuv callback took either a
/// bit cast stripping its isolation or the runtime's `assumeIsolated` check (about 700 instructions
/// per frame, a tenth of the daemon's work on the snapback round trip). The thread check is one
/// `pthread_self` and a compare (`==` on glibc's integer `pthread_t`, which is all its `pthread_equal`
/// does: the call was a page of code of its own on every round trip).
///
/// It talks to players through ``PeerPort`` and to time through ``ServiceClock``, so the same code
/// serves the socket and runs in process under tests and the fuzzer.
public final class TimelineService {
    let clock: any ServiceClock
    let logger: Logger
    let store: any ViewerStateStore
    /// The configuration in force: the policy of new sessions, the allow-list and the limits. Replaced
    /// by ``apply(_:)`` (SIGHUP); what is open keeps what it got.
    var configuration: DaemonConfiguration
    /// Preset of sessions that name none.
    var defaultPreset: AdPolicy.Preset { configuration.defaultPreset }
    /// Monotonic time the service started (uptime).
    let startedAt: Double
    /// The wall clock's steps during this run: the store's wall-dated rows judged by the clock that
    /// wrote them (see ``wallNow()``).
    var wallSteps: WallClockSteps
    /// Monotonic time a break last completed in any session (the box-wide cooldown). From the store at
    /// start: a time from a previous run, on the wall clock then, unless it is ahead of the wall clock.
    var lastBreakCompleted: Double?
    /// Monotonic time watched breaks were last pruned from the store.
    var lastPrune: Double?
    /// How often watched breaks past their retention are pruned from the store.
    static let pruneInterval = 3600.0
    private let owner: pthread_t
    /// The periodic bookmarks' shared tick (see ``TickTimers``).
    let bookmarkTicks: TickTimers

    var sessions = SessionTable()
    /// Ad breaks across every open session, held under `configuration.maxBreaks`.
    var breakCount = 0
    lazy var memory = MemoryReturn(clock: clock)
    /// Admitted connections (refused ones are not counted), in total and by peer uid.
    var connectionCount = 0
    var connectionsByUid: [UInt32: Int] = [:]
    var requestCount: UInt64 = 0
    var pushCount: UInt64 = 0
    /// Reused for every encoded body: no allocation per message once warm.
    var scratch: [UInt8] = []
    /// Reused for every event's actions (see `apply`).
    var actionBuffer: [TimelineAction] = []
    /// Decodes the large requests off this thread (see ``offThreadDecodeBytes``); nil: every request is
    /// decoded here. Closed first thing at shutdown.
    public var requestDecoder: (any RequestDecoding)?
    /// Bodies from this size up go to the ``requestDecoder``: an OpenSession or UpdateBreaks of a few
    /// hundred breaks and up, whose decoding (a thousand instructions a break) would otherwise hold every
    /// other player's requests. Below it, handing over costs more than it saves. (The fuzzer lowers it.)
    public var offThreadDecodeBytes = 16 * 1024
    /// WatchDecisions subscribers, in subscription order.
    var watchers: [Watcher] = [] {
        didSet { watching = !watchers.isEmpty }
    }
    /// Sync/WatchChanges streams, in subscription order (off the per-event path: the store's commits
    /// drive them).
    var changeWatchers: [ChangeWatcher] = []
    /// Whether anyone watches: the one thing the per-event path reads of watching.
    private(set) var watching = false
    /// The counters (Control/GetMetrics, docs/telemetry.md), cumulative across restarts.
    public let metrics = DaemonMetrics()
    let identity: MetricsIdentity
    /// Wall time the stored counters began (the first start on this store).
    var metricsSince = 0.0
    /// The store's commits and failures counted by earlier runs.
    var storeCountsBase = StoreWriteCounts()
    /// The one timer that writes the counters, armed by the first count after a write.
    var metricsTimer: (any ServiceTimer)?

    /// Call on the thread that will drive it.
    ///
    /// - Parameter bookmarkTick: seconds of the grid periodic bookmarks are aligned to, so that the
    ///   saves of all playing sessions fall on a few shared ticks — 6 per 30-second interval — and
    ///   each tick's saves are one transaction in the store. 0: each session on its own timer
    ///   (`snapback-bench store`'s baseline).
    public init(
        clock: any ServiceClock, logger: Logger, configuration: DaemonConfiguration,
        store: any ViewerStateStore, bookmarkTick: Double = 5
    ) {
        self.clock = clock
        bookmarkTicks = TickTimers(clock: clock, tick: bookmarkTick.isFinite ? max(0, bookmarkTick) : 0)
        self.logger = logger
        self.store = store
        self.configuration = configuration
        let wall = clock.now()
        let monotonic = clock.monotonic()
        startedAt = monotonic
        wallSteps = WallClockSteps(wall: wall, monotonic: monotonic)
        if let stored = store.lastBreakCompletedAt(), stored.isFinite, stored <= wall {
            lastBreakCompleted = stored - wallSteps.offset
        }
        owner = pthread_self()
        identity = MetricsIdentity.make(startTime: wall)
        scratch.reserveCapacity(4096)
        actionBuffer.reserveCapacity(16)
        startCounting()
    }

    /// The daemon's service: the loop's clocks, on the loop thread.
    public convenience init(context: DaemonContext, store: any ViewerStateStore) {
        self.init(
            clock: LoopClock(loop: context.loop), logger: context.logger, configuration: context.configuration,
            store: store)
        requestDecoder = RequestDecodeThread(loop: context.loop)
        context.loop.metrics = metrics
    }

    /// A copy of a session's timeline, for tests and the fuzzer's invariants (seeks within the stream).
    public func timeline(ofSession id: UInt64) -> TimelineSession? {
        checkThread()
        return sessions[id]?.timeline
    }

    /// The wall time, having noted a step of the wall clock since the last reading (logged). Read where
    /// a wall time is written or shown, never on the per-event path, which runs on monotonic time.
    func wallNow() -> Double {
        let wall = clock.now()
        if let step = wallSteps.observe(wall: wall, monotonic: clock.monotonic()) {
            logger.notice(
                "wall clock stepped \(step > 0 ? "forward" : "back") by \(Seconds(abs(step))): durations run on the monotonic clock; stored times are judged by the clock that wrote them"
            )
        }
        return wall
    }

    /// The wall-time ranges the watched breaks of the last `retention` seconds are dated in.
    func watchedRanges(retention: Double, at now: Double) -> [ClosedRange<Double>] {
        _ = wallNow()
        return wallSteps.wallRanges(last: retention, at: now)
    }

    /// Prunes the store's watched breaks past the retention (at least a day: a reload that lengthens
    /// the retention finds the rows still there): when a break is first marked watched, then at most
    /// once per `pruneInterval`.
    func pruneWatchedIfDue(at now: Double) {
        if let last = lastPrune, now - last < Self.pruneInterval { return }
        lastPrune = now
        store.pruneWatched(keeping: watchedRanges(retention: max(configuration.watchedRetention, 24 * 3600), at: now))
    }

    /// A session's state for a reply: its times are monotonic, the cooldown's end goes out in wall time.
    func snapshot(_ entry: SessionEntry, at now: Double, breaks window: Range<Int>? = nil) -> TimelineSnapshot {
        var snapshot = entry.timeline.snapshot(at: now, breaks: window ?? 0..<entry.timeline.layout.count)
        if let until = snapshot.cooldownUntil {
            let wall = wallNow()
            snapshot.cooldownUntil = wall + (until - now)
        }
        return snapshot
    }

    @inline(__always)
    func checkThread() {
        precondition(pthread_self() == owner, "TimelineService entered off its thread")
    }
}

/// The daemon's entry points, each on the service's thread.
extension TimelineService: ConnectionHandler, ConfigurationReloading {
    public func connectionOpened(_ connection: any PeerPort) {
        checkThread()
        admit(connection)
    }

    /// The body points into the connection's read buffer and is used only during this call.
    public func frameReceived(_ header: FrameHeader, body: UnsafeRawBufferPointer, on connection: any PeerPort) {
        checkThread()
        handle(header, body: body, on: connection)
    }

    public func oversizedFrame(_ header: FrameHeader, on connection: any PeerPort) {
        checkThread()
        oversized(header, on: connection)
    }

    public func connectionClosed(_ connection: any PeerPort) {
        checkThread()
        connectionGone(connection)
    }

    public func shutdown() {
        checkThread()
        closeAllForShutdown()
    }

    public func apply(_ configuration: DaemonConfiguration) {
        checkThread()
        use(configuration)
    }
}

/// One open session: its timeline, where its pushes go, and its timers.
final class SessionEntry {
    let id: UInt64
    var timeline: TimelineSession
    /// The connection that opened it; pushes travel there with `callId`. A strong reference (the cycle
    /// through `ConnectionState.sessions` is broken when the session or its connection closes): a weak
    /// one would give every `Connection` a side table and send each of its retains and releases down
    /// the runtime's slow path, a dozen times per message.
    var connection: (any PeerPort)?
    let callId: UInt32
    let profile: String
    let contentId: String
    let streamId: String
    /// For ListSessions and GetSession: what it plays under, when (wall time), and who opened it.
    let preset: String
    /// The preset's position in the counters' `preset` label.
    let presetIndex: Int
    let openedAt: Double
    let owner: PeerCredentials
    let clientName: String
    var pushSeq: UInt64 = 0
    /// Its first bookmark was kept: the player was told if its ids are too long to sync.
    var savedOnce = false
    /// The session's armed timers, one slot per `TimelineTimer`: no hashing on the per-event path.
    var bookmarkTimer: (any ServiceTimer)?
    var breakEndTimer: (any ServiceTimer)?

    func timer(_ timer: TimelineTimer) -> (any ServiceTimer)? {
        switch timer {
        case .bookmark: return bookmarkTimer
        case .breakEnd: return breakEndTimer
        }
    }

    func setTimer(_ timer: TimelineTimer, _ handle: any ServiceTimer) {
        switch timer {
        case .bookmark: bookmarkTimer = handle
        case .breakEnd: breakEndTimer = handle
        }
    }

    init(
        id: UInt64, timeline: TimelineSession, connection: any PeerPort, callId: UInt32, request: OpenSessionRequest,
        openedAt: Double, clientName: String
    ) {
        self.id = id
        self.timeline = timeline
        self.connection = connection
        self.callId = callId
        self.profile = request.profile
        self.contentId = request.contentId
        self.streamId = request.streamId
        self.preset = request.preset.rawValue
        self.presetIndex = request.preset.metricIndex
        self.openedAt = openedAt
        self.owner = connection.peer
        self.clientName = clientName
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

/// Per-connection state the service keeps in `PeerPort.serviceState`. Public only as a type: its
/// members are the service's.
public final class ConnectionState {
    /// The peer uid it was admitted under (counted in `connectionsByUid`).
    let uid: UInt32
    init(uid: UInt32) { self.uid = uid }
    var helloDone = false
    var clientName = ""
    /// The connection's WatchDecisions stream, once it subscribed.
    var watcher: Watcher?
    /// The connection's Sync/WatchChanges stream, once it subscribed.
    var changeWatcher: ChangeWatcher?
    /// The sessions this connection opened, sorted by id (ids grow, so opening appends): a request finds
    /// its session by binary search, and a connection gone closes them in opening order.
    private var entries: [SessionEntry] = []

    /// Where `id` is, or where it would go.
    private func index(of id: UInt64) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low &+ high) >> 1
            if entries[mid].id < id { low = mid &+ 1 } else { high = mid }
        }
        return low
    }

    func session(_ id: UInt64) -> SessionEntry? {
        let i = index(of: id)
        return i < entries.count && entries[i].id == id ? entries[i] : nil
    }

    var sessionCount: Int { entries.count }

    /// Empties the table and returns its ids in opening order: a connection gone closes them all, and
    /// removing them one by one from the front would move the rest each time (quadratic in the 65,536
    /// sessions a connection may be configured to hold).
    func takeSessionIds() -> [UInt64] {
        let taken = entries.map(\.id)
        entries = []
        return taken
    }

    func add(_ entry: SessionEntry) {
        let i = index(of: entry.id)
        if i < entries.count && entries[i].id == entry.id {
            entries[i] = entry
        } else {
            entries.insert(entry, at: i)
        }
    }

    func removeSession(_ id: UInt64) {
        let i = index(of: id)
        guard i < entries.count && entries[i].id == id else { return }
        entries.remove(at: i)
        // Emptied after holding many, the array lets its storage go.
        if entries.isEmpty { entries = [] }
    }

}
