// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

/// A failed NATS call: the library's status and its last error text.
public struct NatsError: Error, CustomStringConvertible {
    public var status: natsStatus
    public var text: String

    init(_ status: natsStatus, _ what: String) {
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
}

/// Errors the server reports asynchronously (a permissions violation: the refused call itself only times
/// out), as the client's threads hand them over; the agent's thread takes them. Also why the first connect
/// failed, until the connect retried in the background succeeds (libnats says so on its thread).
final class AsyncErrors: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var pending: [String] = []
    private var failure: String?

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func add(_ text: String) {
        pthread_mutex_lock(&mutex)
        if pending.count < 16 { pending.append(text) }
        pthread_mutex_unlock(&mutex)
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
        }
    }

    func take() -> [String] {
        pthread_mutex_lock(&mutex)
        defer {
            pending = []
            pthread_mutex_unlock(&mutex)
        }
        return pending
    }
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
/// that is down at start is retried like one lost later); this object is used from the agent's one thread.
final class NatsKV {
    private var connection: OpaquePointer?
    private var jetStream: OpaquePointer?
    private var store: OpaquePointer?
    private var watcher: OpaquePointer?
    private var statistics: OpaquePointer?
    private let configuration: SyncConfiguration
    /// The reconnect count when the watcher was made: a reconnect makes a new one (its replay of the
    /// household's current values is merged again, which changes nothing that is already merged).
    private var watcherReconnects: UInt64 = 0
    private(set) var watcherCaughtUp = false
    /// The highest revision (stream sequence) the agent saw, delivered or written: a stream whose last
    /// sequence is below it lost messages.
    var highestRevision: UInt64 = 0
    /// What the server reported asynchronously (kept alive as long as the connection that calls it).
    let asyncErrors = AsyncErrors()

    init(configuration: SyncConfiguration, password: String?) throws(NatsError) {
        self.configuration = configuration
        var options: OpaquePointer?
        var status = natsOptions_Create(&options)
        guard status == NATS_OK, let options else { throw NatsError(status, "options") }
        defer { natsOptions_Destroy(options) }
        func check(_ status: natsStatus, _ what: String) throws(NatsError) {
            guard status == NATS_OK else { throw NatsError(status, what) }
        }
        var urls = configuration.servers.map { strdup($0) }
        defer { urls.forEach { free($0) } }
        status = urls.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                natsOptions_SetServers(options, $0, Int32(buffer.count))
            }
        }
        try check(status, "servers")
        try check(natsOptions_SetName(options, "snapback-sync \(configuration.household)"), "name")
        if let file = configuration.credentialsFile {
            try check(natsOptions_SetUserCredentialsFromFiles(options, file, nil), "credentials-file \(file)")
        }
        if let user = configuration.user {
            try check(natsOptions_SetUserInfo(options, user, password ?? ""), "user")
        }
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
        // noticed when two pings went unanswered, within 3 intervals: the status leaves `connected`
        // within 24 s (snapback-sync(8)).
        try check(natsOptions_SetPingInterval(options, Self.pingIntervalMilliseconds), "ping interval")
        try check(natsOptions_SetMaxPingsOut(options, Self.maxPingsOut), "max pings out")
        // A subject the server's permissions refuse makes the call time out; why comes here, on the
        // client's thread ("Permissions Violation for Publish to ...").
        let errorHandler: natsErrHandler = { connection, _, status, closure in
            guard let closure else { return }
            var text: UnsafePointer<CChar>?
            if let connection { _ = natsConnection_GetLastError(connection, &text) }
            let detail = text.map { String(cString: $0) } ?? ""
            let name = String(cString: natsStatus_GetText(status))
            Unmanaged<AsyncErrors>.fromOpaque(closure).takeUnretainedValue().add(detail.isEmpty ? name : detail)
        }
        try check(
            natsOptions_SetErrorHandler(options, errorHandler, Unmanaged.passUnretained(asyncErrors).toOpaque()),
            "error handler")
        // One attempt first, without retrying, so that a refusal is heard with its reason (with retry on
        // a failed connect, libnats keeps an authorization error from the error handler and the last
        // error); failing that, the connection that retries in the background.
        status = natsConnection_Connect(&connection, options)
        if status != NATS_OK {
            asyncErrors.firstFailure = NatsError(status, "connect").detail
            connection = nil
            let connected: natsConnectionHandler = { _, closure in
                guard let closure else { return }
                Unmanaged<AsyncErrors>.fromOpaque(closure).takeUnretainedValue().firstFailure = nil
            }
            try check(
                natsOptions_SetRetryOnFailedConnect(
                    options, true, connected, Unmanaged.passUnretained(asyncErrors).toOpaque()),
                "retry")
            status = natsConnection_Connect(&connection, options)
            // Connected at once this time: libnats calls back only for a connect it had to retry.
            if status == NATS_OK { asyncErrors.firstFailure = nil }
        }
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, connection != nil else {
            throw NatsError(status, "connect")
        }
        var jsOptions = jsOptions()
        try check(jsOptions_Init(&jsOptions), "jetstream options")
        jsOptions.Wait = 5000
        try check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "jetstream")
        try check(natsStatistics_Create(&statistics), "statistics")
    }

    deinit {
        closeWatcher()
        if let store { kvStore_Destroy(store) }
        if let jetStream { jsCtx_Destroy(jetStream) }
        if let connection { natsConnection_Destroy(connection) }
        if let statistics { natsStatistics_Destroy(statistics) }
    }

    static let pingIntervalMilliseconds: Int64 = 8_000
    static let maxPingsOut: Int32 = 2

    var isConnected: Bool {
        guard let connection else { return false }
        return natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED
    }

    /// Why the client last failed (an authorization violation, a refused connection), as it keeps it; until
    /// a first connect succeeds, why the first attempt failed.
    var connectionError: String {
        guard let connection else { return "" }
        if let firstFailure = asyncErrors.firstFailure { return firstFailure }
        var text: UnsafePointer<CChar>?
        let status = natsConnection_GetLastError(connection, &text)
        guard status != NATS_OK else { return "" }
        return text.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? String(cString: natsStatus_GetText(status))
    }

    var connectedURL: String {
        guard let connection else { return "" }
        var buffer = [CChar](repeating: 0, count: 512)
        guard natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) == NATS_OK else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private var reconnects: UInt64 {
        guard let connection, let statistics, natsConnection_GetStats(connection, statistics) == NATS_OK else { return 0 }
        var count: UInt64 = 0
        natsStatistics_GetCounts(statistics, nil, nil, nil, nil, &count)
        return count
    }

    /// The bucket, bound (or created with the configuration's history and replicas when it does not
    /// exist) once connected.
    func bucket() throws(NatsError) -> OpaquePointer {
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
    /// was made again.
    func streamIdentity() throws(NatsError) -> (created: Int64, lastSeq: UInt64) {
        _ = try bucket()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, jetStream, "KV_\(configuration.bucket)", nil, &code)
        guard status == NATS_OK, let info else { throw NatsError(status, "stream info KV_\(configuration.bucket)") }
        defer { jsStreamInfo_Destroy(info) }
        return (info.pointee.Created, info.pointee.State.LastSeq)
    }

    /// Forgets the bound bucket: the next call binds it again (creating it if it is gone).
    func forgetBucket() {
        closeWatcher()
        if let store { kvStore_Destroy(store) }
        store = nil
    }

    /// The key's current value, revision and server time (nanoseconds); nil when it is absent or deleted.
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

    /// Writes `value` if the key is still at `revision` (nil: if it is absent or deleted).
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
        if status == NATS_OK {
            highestRevision = max(highestRevision, written)
            return .written(revision: written)
        }
        let error = NatsError(status, "write \(key)")
        if error.isConflict { return .conflict }
        throw error
    }

    /// Makes the watcher of `<household>.>` if there is none or the connection came back since; true
    /// when it made one.
    @discardableResult
    func ensureWatcher() throws(NatsError) -> Bool {
        let count = reconnects
        if watcher != nil, count == watcherReconnects { return false }
        closeWatcher()
        let kv = try bucket()
        var options = kvWatchOptions()
        kvWatchOptions_Init(&options)
        var made: OpaquePointer?
        let status = kvStore_Watch(&made, kv, "\(configuration.household).>", &options)
        guard status == NATS_OK, let made else { throw NatsError(status, "watch \(configuration.household).>") }
        watcher = made
        watcherReconnects = count
        watcherCaughtUp = false
        return true
    }

    func closeWatcher() {
        if let watcher {
            kvWatcher_Stop(watcher)
            kvWatcher_Destroy(watcher)
        }
        watcher = nil
    }

    var hasWatcher: Bool { watcher != nil }

    /// The next entry of the watcher, waiting up to `milliseconds`; nil on time out or at the marker
    /// that ends the initial values (``watcherCaughtUp`` turns true).
    func next(waiting milliseconds: Int64) throws(NatsError) -> KVEntry? {
        guard let watcher else { return nil }
        var entry: OpaquePointer?
        // The client refuses a wait of 0.
        let status = kvWatcher_Next(&entry, watcher, max(1, milliseconds))
        if status == NATS_TIMEOUT { return nil }
        guard status == NATS_OK else {
            closeWatcher()
            throw NatsError(status, "watch")
        }
        guard let entry else {
            watcherCaughtUp = true
            return nil
        }
        defer { kvEntry_Destroy(entry) }
        highestRevision = max(highestRevision, kvEntry_Revision(entry))
        let operation = kvEntry_Operation(entry)
        return KVEntry(
            key: kvEntry_Key(entry).map { String(cString: $0) } ?? "", value: Self.value(of: entry),
            revision: kvEntry_Revision(entry), deleted: operation != kvOp_Put, created: kvEntry_Created(entry))
    }

    private static func value(of entry: OpaquePointer) -> [UInt8] {
        let count = Int(kvEntry_ValueLen(entry))
        guard count > 0, let base = kvEntry_Value(entry) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
