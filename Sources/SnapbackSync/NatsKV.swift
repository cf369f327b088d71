// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

/// A failed NATS call: the library's status and its last error text.
public struct NatsError: Error, CustomStringConvertible {
    public var status: natsStatus
    public var text: String

    package init(_ status: natsStatus, _ what: String) {
        var last = natsStatus(0)
        let detail = nats_GetLastError(&last).map { String(cString: $0) } ?? ""
        let name = String(cString: natsStatus_GetText(status))
        self.detail = detail.isEmpty ? name : detail
        text = "\(what): \(self.detail)"
        self.status = status
    }

    /// The library's words alone.
    public var detail: String

    public var description: String { text }

    /// The server refused a compare-and-set: the key moved on since it was read.
    var isConflict: Bool { text.contains("wrong last sequence") || text.contains("key exists") }

    /// The call failed because the connection went, not because of the bucket or the server's answer: a
    /// server stopped while a call was out fails it so, and the agent is then connecting, not in error.
    var isConnectionLoss: Bool {
        [NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_NO_SERVER, NATS_STALE_CONNECTION, NATS_NOT_YET_CONNECTED]
            .contains(status)
    }
}

/// What libnats's threads tell the agent: errors the server reports asynchronously (a permissions
/// violation: the refused call itself only times out), the connection lost, back or closed, and why the
/// first connect failed until the connect retried in the background succeeds. Each wakes the agent's loop
/// (``Wakeup``), whose thread takes them and reads the connection's state: the agent waits for no timer of
/// its own to notice NATS.
///
/// The connection's state is kept here as the callbacks report it, not asked of the connection: while
/// libnats reconnects to a server that accepts the connection but does not answer, it holds the
/// connection's lock for as long as its connect timeout, and the agent's thread would wait with it.
final class NatsEvents: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var pending: [String] = []
    private var failure: String?
    private var up = false
    private var lostBecause = ""
    private var answers: [PublishAnswer] = []
    private var reconnectCount: UInt64 = 0
    let wake: Wakeup

    init(wake: Wakeup) {
        self.wake = wake
        pthread_mutex_init(&mutex, nil)
    }
    deinit { pthread_mutex_destroy(&mutex) }

    func add(_ text: String) {
        pthread_mutex_lock(&mutex)
        if pending.count < 16 { pending.append(text) }
        pthread_mutex_unlock(&mutex)
        wake.signal()
    }

    /// Why the first connect failed, in the server's words; nil once a connect succeeded.
    var firstFailure: String? {
        get {
            pthread_mutex_lock(&mutex)
            defer { pthread_mutex_unlock(&mutex) }
            return failure
        }
        set {
            pthread_mutex_lock(&mutex)
            failure = newValue
            pthread_mutex_unlock(&mutex)
            wake.signal()
        }
    }

    /// Whether the connection is up, as the callbacks last said.
    var isConnected: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return up
    }

    /// Why the connection was last lost, as libnats said when it was ("" if it did not).
    var lostReason: String {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return lostBecause
    }

    /// How many times libnats reconnected (its reconnected callback): counted here, not asked of the
    /// connection's statistics, whose lock a reconnect in progress holds.
    var reconnects: UInt64 {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return reconnectCount
    }

    func reconnected() {
        pthread_mutex_lock(&mutex)
        reconnectCount &+= 1
        pthread_mutex_unlock(&mutex)
        connection(up: true)
    }

    func connection(up: Bool, because reason: String = "") {
        pthread_mutex_lock(&mutex)
        self.up = up
        if !up { lostBecause = reason }
        pthread_mutex_unlock(&mutex)
        wake.signal()
    }

    /// An asynchronous publish answered (on libnats's thread): kept for the loop. Only the telemetry
    /// report publishes asynchronously, one at a time: a few answers at most wait here. A failure wakes
    /// the loop (it tries again, or makes the stream); an ack does not: nothing is to be done for it, and
    /// the loop takes it at its next turn, the next report's at the latest, before it looks at anything
    /// else of telemetry. A report costs the loop one wake-up, its timer's.
    func answered(_ answer: PublishAnswer) {
        pthread_mutex_lock(&mutex)
        if answers.count < 16 { answers.append(answer) }
        pthread_mutex_unlock(&mutex)
        if case .failed = answer.result { wake.signal() }
    }

    func takeAnswers() -> [PublishAnswer] {
        pthread_mutex_lock(&mutex)
        defer {
            answers = []
            pthread_mutex_unlock(&mutex)
        }
        return answers
    }

    func take() -> [String] {
        pthread_mutex_lock(&mutex)
        defer {
            pending = []
            pthread_mutex_unlock(&mutex)
        }
        return pending
    }

    static func of(_ closure: UnsafeMutableRawPointer?) -> NatsEvents? {
        closure.map { Unmanaged<NatsEvents>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// New libnats options with the servers, the connection's name, and a `.creds` file or a user and its
/// password (the agent's and snapback-fleet's connections); the caller sets the rest and destroys them.
package func natsOptions(
    servers: [String], name: String, credentialsFile: String?, user: String? = nil, password: String? = nil
) throws(NatsError) -> OpaquePointer {
    var made: OpaquePointer?
    var status = natsOptions_Create(&made)
    guard status == NATS_OK, let options = made else { throw NatsError(status, "options") }
    var urls = servers.map { strdup($0) }
    defer { urls.forEach { free($0) } }
    status = urls.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
            natsOptions_SetServers(options, $0, Int32(buffer.count))
        }
    }
    if status == NATS_OK { status = natsOptions_SetName(options, name) }
    guard status == NATS_OK else {
        natsOptions_Destroy(options)
        throw NatsError(status, "servers")
    }
    if let file = credentialsFile {
        status = natsOptions_SetUserCredentialsFromFiles(options, file, nil)
        guard status == NATS_OK else {
            natsOptions_Destroy(options)
            throw NatsError(status, "credentials-file \(file)")
        }
    }
    if let user {
        status = natsOptions_SetUserInfo(options, user, password ?? "")
        guard status == NATS_OK else {
            natsOptions_Destroy(options)
            throw NatsError(status, "user")
        }
    }
    return options
}

/// One entry the watcher delivered, copied out of the library's memory.
public struct KVEntry: Sendable {
    public var key: String
    /// Empty for a delete or purge marker.
    public var value: [UInt8]
    public var revision: UInt64
    public var deleted: Bool
    /// The server's time of the message (nanoseconds since the epoch): the same on every box.
    public var created: Int64
}

/// The agent's connection to NATS and its key-value bucket, over the C client (libnats 3.4). The client
/// connects and reconnects by itself in its own threads (with `retry` and unlimited reconnects, a server
/// that is down at start is retried like one lost later).
///
/// Two threads of the agent use it, each its own part (docs/sync.md "The agent"). The bucket's requests —
/// binding it, get, create/update, the stream's info, making and closing the watcher — wait for the
/// server's answer, and are made on the worker (``KVWorker``, `snapback-kv`) alone: the bound bucket
/// (`store`) is the worker's, so no call is under way on a store another thread frees. The loop takes the
/// watcher's entries, asks for the bucket to be bound again (``forgetBucket()``) or for a new watcher
/// (``closeWatcher()``), and reads the connection's state from the callbacks (``NatsEvents``); what both
/// threads see (the watcher, the requests) is behind `mutex`. ``highestRevision`` and the watcher's
/// failure are the loop's.
final class NatsKV: @unchecked Sendable {
    private var connection: OpaquePointer?
    private(set) var jetStream: OpaquePointer?
    /// The bound bucket: the worker's alone.
    private var store: OpaquePointer?
    private let configuration: SyncConfiguration
    /// Guards what follows, which the loop and the worker both read.
    private var mutex = pthread_mutex_t()
    private var watcher: WatcherPump?
    /// Whether the loop compared the watcher's stream with the one it knew (``watcherChecked()``): until
    /// then it takes none of its entries, so that what the new watcher delivers does not move the highest
    /// revision the comparison is made against.
    private var watcherReady = false
    /// The loop's requests, counted: a new watcher (``closeWatcher()``), the bucket bound again
    /// (``forgetBucket()``); and how far the worker followed them. Counts, not flags, so that a request made
    /// while the worker is making a watcher is not lost.
    private var freshWanted: UInt64 = 0
    private var watcherFresh: UInt64 = 0
    private var forgetWanted: UInt64 = 0
    private var forgotten: UInt64 = 0
    /// The reconnect count when the watcher was made: a reconnect makes a new one (its replay of the
    /// household's current values is merged again, which changes nothing that is already merged).
    private var watcherReconnects: UInt64 = 0
    /// The watcher's failure, delivered after the entries that came before it (the loop's).
    private var watcherFailure: NatsError?
    /// The watcher's heartbeat (nanoseconds): the server sends one when it has sent nothing for as long.
    static let watcherHeartbeatNanoseconds: Int64 = 30_000_000_000
    /// The highest revision (stream sequence) the agent saw, delivered or written: a stream whose last
    /// sequence is below it lost messages (the loop's: the worker returns the revisions it wrote).
    var highestRevision: UInt64 = 0
    /// What libnats's threads report (kept alive until the connection's closed callback).
    let events: NatsEvents

    init(configuration: SyncConfiguration, password: String?, wake: Wakeup) throws(NatsError) {
        self.configuration = configuration
        events = NatsEvents(wake: wake)
        pthread_mutex_init(&mutex, nil)
        let options = try natsOptions(
            servers: configuration.servers, name: "snapback-sync \(configuration.household)",
            credentialsFile: configuration.credentialsFile, user: configuration.user, password: password)
        defer { natsOptions_Destroy(options) }
        func check(_ status: natsStatus, _ what: String) throws(NatsError) {
            guard status == NATS_OK else { throw NatsError(status, what) }
        }
        var status = NATS_OK
        if configuration.tlsCA != nil || configuration.tlsCert != nil
            || configuration.servers.contains(where: { $0.hasPrefix("tls://") })
        {
            try check(natsOptions_SetSecure(options, true), "tls")
        }
        if let ca = configuration.tlsCA { try check(natsOptions_LoadCATrustedCertificates(options, ca), "tls-ca \(ca)") }
        if let cert = configuration.tlsCert, let key = configuration.tlsKey {
            try check(natsOptions_LoadCertificatesChain(options, cert, key), "tls-cert \(cert)")
        }
        // Offline first: a failed connect is retried in the background like a lost connection, for ever,
        // every 2 s (±1 s, so that a household's boxes do not come back in step after an outage).
        try check(natsOptions_SetTimeout(options, 5000), "timeout")
        try check(natsOptions_SetMaxReconnect(options, -1), "max reconnect")
        try check(natsOptions_SetReconnectWait(options, 2000), "reconnect wait")
        try check(natsOptions_SetReconnectJitter(options, 1000, 2000), "reconnect jitter")
        // Keep-alives: a server that stops answering (frozen, a link that drops without a reset) is
        // noticed when a ping went unanswered until the next, within 2 intervals: the status leaves
        // `connected` within 20 s, and reads offline within 30 s of the server's last answer
        // (snapback-sync(8)). Between pings the process sleeps.
        try check(natsOptions_SetPingInterval(options, Self.pingIntervalMilliseconds), "ping interval")
        try check(natsOptions_SetMaxPingsOut(options, Self.maxPingsOut), "max pings out")
        // A subject the server's permissions refuse makes the call time out; why comes here, on the
        // client's thread ("Permissions Violation for Publish to ...").
        // Retained for libnats, whose callbacks may run after this object is gone (the closed one does,
        // on its thread, after natsConnection_Destroy): released by that last callback.
        let closure = Unmanaged.passRetained(events).toOpaque()
        let errorHandler: natsErrHandler = { connection, _, status, closure in
            guard let events = NatsEvents.of(closure) else { return }
            var text: UnsafePointer<CChar>?
            if let connection { _ = natsConnection_GetLastError(connection, &text) }
            let detail = text.map { String(cString: $0) } ?? ""
            let name = String(cString: natsStatus_GetText(status))
            events.add(detail.isEmpty ? name : detail)
        }
        try check(natsOptions_SetErrorHandler(options, errorHandler, closure), "error handler")
        // The connection lost, back, or closed: noted, and the loop woken (on libnats's thread).
        let lost: natsConnectionHandler = { connection, closure in
            var text: UnsafePointer<CChar>?
            let status = connection.map { natsConnection_GetLastError($0, &text) } ?? NATS_OK
            let why = text.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            NatsEvents.of(closure)?.connection(
                up: false, because: why ?? (status == NATS_OK ? "" : String(cString: natsStatus_GetText(status))))
        }
        let back: natsConnectionHandler = { _, closure in NatsEvents.of(closure)?.reconnected() }
        try check(natsOptions_SetDisconnectedCB(options, lost, closure), "disconnected callback")
        try check(natsOptions_SetReconnectedCB(options, back, closure), "reconnected callback")
        let closed: natsConnectionHandler = { _, closure in
            guard let closure else { return }
            let events = Unmanaged<NatsEvents>.fromOpaque(closure)
            events.takeUnretainedValue().connection(up: false, because: "connection closed")
            events.release()
        }
        try check(natsOptions_SetClosedCB(options, closed, closure), "closed callback")
        // One attempt first, without retrying, so that a refusal is heard with its reason (with retry on
        // a failed connect, libnats keeps an authorization error from the error handler and the last
        // error); failing that, the connection that retries in the background.
        status = natsConnection_Connect(&connection, options)
        if status != NATS_OK {
            events.firstFailure = NatsError(status, "connect").detail
            connection = nil
            let connected: natsConnectionHandler = { _, closure in
                NatsEvents.of(closure)?.firstFailure = nil
                NatsEvents.of(closure)?.connection(up: true)
            }
            try check(natsOptions_SetRetryOnFailedConnect(options, true, connected, closure), "retry")
            status = natsConnection_Connect(&connection, options)
            // Connected at once this time: libnats calls back only for a connect it had to retry.
            if status == NATS_OK { events.firstFailure = nil }
        }
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, let connection else {
            throw NatsError(status, "connect")
        }
        // Before any callback could say otherwise, or after it did: either way the state is the last word.
        if natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED { events.connection(up: true) }
        var jsOptions = jsOptions()
        try check(jsOptions_Init(&jsOptions), "jetstream options")
        jsOptions.Wait = 5000
        // The stream's answer to an asynchronous publish (the telemetry report's), on libnats's thread.
        jsOptions.PublishAsync.AckHandler = publishAnswered
        jsOptions.PublishAsync.AckHandlerClosure = closure
        try check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "jetstream")
    }

    /// Runs once no call is under way: the worker holds this object for the call it makes.
    deinit {
        closeWatcherNow()
        if let store { kvStore_Destroy(store) }
        if let jetStream { jsCtx_Destroy(jetStream) }
        if let connection { natsConnection_Destroy(connection) }
        pthread_mutex_destroy(&mutex)
    }

    static let pingIntervalMilliseconds: Int64 = 10_000
    /// A ping unanswered when the next is due: the connection is stale.
    static let maxPingsOut: Int32 = 1
    /// How long after the server's last answer a server that stopped answering is found lost, at most:
    /// its last answer came before the ping it left unanswered, sent an interval before the next.
    static let staleWithin: Duration = .milliseconds(pingIntervalMilliseconds * Int64(maxPingsOut + 1))

    /// Whether the connection is up, as libnats's callbacks said (``NatsEvents``: never waiting for its lock).
    var isConnected: Bool { connection != nil && events.isConnected }

    /// Why the connection was lost (as libnats said then); until a first connect succeeds, why the first
    /// attempt failed.
    var connectionError: String {
        guard connection != nil else { return "" }
        return events.firstFailure ?? events.lostReason
    }

    var connectedURL: String {
        guard let connection else { return "" }
        var buffer = [CChar](repeating: 0, count: 512)
        guard natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) == NATS_OK else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bucket, bound (or created with the configuration's history and replicas when it does not
    /// exist) once connected; bound again, after closing the watcher, when the loop asked for it since.
    /// On the worker.
    func bucket() throws(NatsError) -> OpaquePointer {
        pthread_mutex_lock(&mutex)
        let forget = forgetWanted
        pthread_mutex_unlock(&mutex)
        if forget != forgotten {
            closeWatcherNow()
            if let store { kvStore_Destroy(store) }
            store = nil
            pthread_mutex_lock(&mutex)
            forgotten = forget
            pthread_mutex_unlock(&mutex)
        }
        if let store { return store }
        var kv: OpaquePointer?
        var status = js_KeyValue(&kv, jetStream, configuration.bucket)
        if status == NATS_NOT_FOUND {
            // Created only when it does not exist: on an existing bucket, creating sends a stream update,
            // which a device's permissions refuse.
            var config = kvConfig()
            kvConfig_Init(&config)
            status = configuration.bucket.withCString { name in
                config.Bucket = name
                config.History = UInt8(clamping: configuration.history)
                config.Replicas = Int32(clamping: configuration.replicas)
                config.StorageType = js_FileStorage
                return js_CreateKeyValue(&kv, jetStream, &config)
            }
            // Another box created it first: bind it.
            if status != NATS_OK { status = js_KeyValue(&kv, jetStream, configuration.bucket) }
        }
        guard status == NATS_OK, let kv else { throw NatsError(status, "bucket \(configuration.bucket)") }
        store = kv
        return kv
    }

    /// The bucket's stream as the server describes it: when it was created (nanoseconds) and its last
    /// sequence. A stream created at another time, or whose last sequence is below one the agent saw, is
    /// not the one the agent exchanged with: the server lost or rolled back its store, or the bucket
    /// was made again. On the worker.
    func streamIdentity() throws(NatsError) -> (created: Int64, lastSeq: UInt64) {
        _ = try bucket()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, jetStream, "KV_\(configuration.bucket)", nil, &code)
        guard status == NATS_OK, let info else { throw NatsError(status, "stream info KV_\(configuration.bucket)") }
        defer { jsStreamInfo_Destroy(info) }
        return (info.pointee.Created, info.pointee.State.LastSeq)
    }

    /// Asks for the bucket to be bound again (and the watcher made again) at the worker's next call: the
    /// bucket may be gone (the server lost its store) and be made again, by this box or another. On the
    /// loop; the watcher's entries are not taken meanwhile.
    func forgetBucket() {
        pthread_mutex_lock(&mutex)
        forgetWanted &+= 1
        freshWanted &+= 1
        pthread_mutex_unlock(&mutex)
    }

    /// The key's current value, revision and server time (nanoseconds); nil when it is absent or deleted.
    /// On the worker.
    func get(_ key: String) throws(NatsError) -> (value: [UInt8], revision: UInt64, created: Int64)? {
        let kv = try bucket()
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, kv, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else { throw NatsError(status, "get \(key)") }
        defer { kvEntry_Destroy(entry) }
        return (Self.value(of: entry), kvEntry_Revision(entry), kvEntry_Created(entry))
    }

    enum WriteResult {
        case written(revision: UInt64)
        /// Another write came first: read again and decide again.
        case conflict
    }

    /// Writes `value` if the key is still at `revision` (nil: if it is absent or deleted). On the worker.
    func write(_ key: String, _ value: [UInt8], expecting revision: UInt64?) throws(NatsError) -> WriteResult {
        let kv = try bucket()
        var written: UInt64 = 0
        let status = value.withUnsafeBytes { raw in
            if let revision {
                kvStore_Update(&written, kv, key, raw.baseAddress, Int32(clamping: raw.count), revision)
            } else {
                kvStore_Create(&written, kv, key, raw.baseAddress, Int32(clamping: raw.count))
            }
        }
        if status == NATS_OK { return .written(revision: written) }
        let error = NatsError(status, "write \(key)")
        if error.isConflict { return .conflict }
        throw error
    }

    /// Whether the watcher is there, checked, and made since the loop's last request and the last
    /// reconnection (the caller holds `mutex`).
    private func watcherCurrentLocked(reconnects: UInt64) -> Bool {
        watcher != nil && watcherReady && watcherFresh == freshWanted && forgotten == forgetWanted
            && watcherReconnects == reconnects
    }

    /// Whether a watcher must be made (and the stream checked): none, one the loop asked to replace, or
    /// one made before the last reconnection. On the loop, without waiting for the connection.
    var needsWatcher: Bool {
        let reconnects = events.reconnects
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return !watcherCurrentLocked(reconnects: reconnects)
    }

    /// Makes the watcher of `<household>.>` if ``needsWatcher``; true when it made one, which delivers
    /// nothing until the loop calls ``watcherChecked()``. On the worker.
    @discardableResult
    func ensureWatcher() throws(NatsError) -> Bool {
        let count = events.reconnects
        pthread_mutex_lock(&mutex)
        let current = watcherCurrentLocked(reconnects: count)
        let fresh = freshWanted
        pthread_mutex_unlock(&mutex)
        if current { return false }
        closeWatcherNow()
        _ = try bucket()
        // What kvStore_Watch makes (an ordered consumer of the household's keys, each key's last value
        // first, then every update), but for its heartbeat: libnats's watcher asks the server for one
        // every 5 s, which wakes the process 12 times a minute at idle; 30 s is enough for libnats to
        // make the consumer again if the server lost it (a reconnection makes a new watcher anyway).
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Ordered = true
        options.Config.DeliverPolicy = js_DeliverLastPerSubject
        options.Config.Heartbeat = Self.watcherHeartbeatNanoseconds
        var made: OpaquePointer?
        let subject = "$KV.\(configuration.bucket).\(configuration.household).>"
        var code = jsErrCode(0)
        let status = "KV_\(configuration.bucket)".withCString { stream in
            options.Stream = stream
            return js_SubscribeSync(&made, jetStream, subject, nil, &options, &code)
        }
        guard status == NATS_OK, let made else { throw NatsError(status, "watch \(configuration.household).>") }
        _ = natsSubscription_SetPendingLimits(made, -1, -1)
        let pump: WatcherPump
        do {
            pump = try WatcherPump(subscription: made, keyPrefix: "$KV.\(configuration.bucket).", wake: events.wake)
        } catch {
            natsSubscription_Destroy(made)
            throw error
        }
        pthread_mutex_lock(&mutex)
        watcher = pump
        watcherReady = false
        watcherFresh = fresh
        watcherReconnects = count
        pthread_mutex_unlock(&mutex)
        return true
    }

    /// The loop compared the new watcher's stream with the one it knew: its entries may be taken.
    func watcherChecked() {
        pthread_mutex_lock(&mutex)
        watcherReady = watcher != nil
        pthread_mutex_unlock(&mutex)
    }

    /// Asks for a new watcher (its replay merged again) at the worker's next call; until it is made, the
    /// loop takes no entries. On the loop: closing one waits for the server to delete its consumer.
    func closeWatcher() {
        pthread_mutex_lock(&mutex)
        freshWanted &+= 1
        pthread_mutex_unlock(&mutex)
        watcherFailure = nil
    }

    /// Stops and frees the watcher, on the worker (or when the connection goes).
    private func closeWatcherNow() {
        pthread_mutex_lock(&mutex)
        let old = watcher
        watcher = nil
        watcherReady = false
        pthread_mutex_unlock(&mutex)
        old?.stop()
    }

    /// Up to `limit` of the entries the watcher delivered, without waiting, and whether more are
    /// waiting. A watcher that failed is replaced at the worker's next call, and throws. On the loop.
    func entries(limit: Int) throws(NatsError) -> (entries: [KVEntry], more: Bool) {
        if let failure = watcherFailure {
            watcherFailure = nil
            throw failure
        }
        let reconnects = events.reconnects
        pthread_mutex_lock(&mutex)
        let pump = watcherCurrentLocked(reconnects: reconnects) ? watcher : nil
        pthread_mutex_unlock(&mutex)
        guard let pump else { return ([], false) }
        let (items, more) = pump.take(limit)
        var entries: [KVEntry] = []
        entries.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .entry(let entry):
                highestRevision = max(highestRevision, entry.revision)
                entries.append(entry)
            case .failed(let error):
                // The pump has stopped; the worker closes it and makes another.
                closeWatcher()
                // What came before the failure is taken; the error is the caller's at the next call.
                if entries.isEmpty { throw error }
                watcherFailure = error
                return (entries, true)
            }
        }
        return (entries, more)
    }

    private static func value(of entry: OpaquePointer) -> [UInt8] {
        let count = Int(kvEntry_ValueLen(entry))
        guard count > 0, let base = kvEntry_Value(entry) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}

/// The bucket's watcher on a thread of its own: libnats 3.4 reads a subscription with a blocking call
/// (`natsSubscription_NextMsg`), so this thread blocks in it for as long as nothing comes — without a
/// timeout, so at idle it never runs (the consumer's heartbeats stay in libnats's read loop) — and hands
/// each entry to the agent's thread through a bounded queue, writing the loop's eventfd when the queue
/// stops being empty. When the queue is full (a catch-up the agent merges more slowly than it arrives) it
/// waits for room: libnats holds the rest.
final class WatcherPump: @unchecked Sendable {
    enum Item {
        case entry(KVEntry)
        /// The watcher failed; the pump has stopped.
        case failed(NatsError)
    }

    static let capacity = 1024
    /// natsSubscription_NextMsg takes a timeout: one no box waits out (libnats caps the deadline it makes
    /// of it).
    static let forever: Int64 = 1 << 50

    private let subscription: OpaquePointer
    /// `$KV.<bucket>.`: a message's subject is the key after it.
    private let keyPrefix: String
    private let wake: Wakeup
    private var mutex = pthread_mutex_t()
    private var room = pthread_cond_t()
    private var items: [Item] = []
    private var head = 0
    private var stopping = false
    private var thread = pthread_t()

    init(subscription: OpaquePointer, keyPrefix: String, wake: Wakeup) throws(NatsError) {
        self.subscription = subscription
        self.keyPrefix = keyPrefix
        self.wake = wake
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&room, nil)
        let retained = Unmanaged.passRetained(self).toOpaque()
        let made = pthread_create(
            &thread, nil,
            { argument in
                let pump = Unmanaged<WatcherPump>.fromOpaque(argument!).takeRetainedValue()
                pump.run()
                return nil
            }, retained)
        guard made == 0 else {
            Unmanaged<WatcherPump>.fromOpaque(retained).release()
            throw NatsError(NATS_SYS_ERROR, "watcher thread: \(String(cString: strerror(made)))")
        }
    }

    deinit {
        pthread_cond_destroy(&room)
        pthread_mutex_destroy(&mutex)
    }

    private func run() {
        // Named, so that it can be told from libnats's threads (ps -L, /proc/PID/task/*/comm).
        _ = snapback_name_thread("snapback-watch")
        while true {
            var message: OpaquePointer?
            let status = natsSubscription_NextMsg(&message, subscription, Self.forever)
            let item: Item
            if status == NATS_OK, let message {
                defer { natsMsg_Destroy(message) }
                guard let entry = entry(of: message) else { continue }
                item = .entry(entry)
            } else if status == NATS_TIMEOUT {
                continue
            } else {
                item = .failed(NatsError(status, "watch"))
            }
            pthread_mutex_lock(&mutex)
            while items.count - head >= Self.capacity, !stopping { pthread_cond_wait(&room, &mutex) }
            if stopping {
                pthread_mutex_unlock(&mutex)
                return
            }
            items.append(item)
            let first = items.count - head == 1
            pthread_mutex_unlock(&mutex)
            if first { wake.signal() }
            if case .failed = item { return }
        }
    }

    /// The key-value entry a message of the bucket's stream carries (as libnats's kvEntry reads it: the key
    /// is its subject after `$KV.<bucket>.`, its revision and server time are the stream's, a `KV-Operation`
    /// header marks a delete or a purge); nil for a message that is none (no stream metadata).
    private func entry(of message: OpaquePointer) -> KVEntry? {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return nil }
        defer { jsMsgMetaData_Destroy(meta) }
        let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
        let key = subject.hasPrefix(keyPrefix) ? String(subject.dropFirst(keyPrefix.utf8.count)) : subject
        var operation: UnsafePointer<CChar>?
        let deleted = natsMsgHeader_Get(message, "KV-Operation", &operation) == NATS_OK && operation != nil
        let count = Int(natsMsg_GetDataLength(message))
        let value: [UInt8] =
            count > 0
            ? natsMsg_GetData(message).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [] : []
        return KVEntry(
            key: key, value: value, revision: meta.pointee.Sequence.Stream, deleted: deleted,
            created: meta.pointee.Timestamp)
    }

    /// Up to `limit` items, oldest first, and whether more are waiting.
    func take(_ limit: Int) -> (items: [Item], more: Bool) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let end = min(items.count, head + limit)
        let taken = Array(items[head..<end])
        head = end
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= Self.capacity {
            items.removeFirst(head)
            head = 0
        }
        pthread_cond_signal(&room)
        return (taken, items.count > head)
    }

    /// Stops the watcher, waits for the thread to end, and frees the watcher.
    func stop() {
        pthread_mutex_lock(&mutex)
        stopping = true
        pthread_cond_broadcast(&room)
        pthread_mutex_unlock(&mutex)
        // Ends a natsSubscription_NextMsg under way (it returns an error the thread then drops), and
        // deletes the consumer on the server.
        _ = natsSubscription_Unsubscribe(subscription)
        pthread_join(thread, nil)
        natsSubscription_Destroy(subscription)
    }
}
