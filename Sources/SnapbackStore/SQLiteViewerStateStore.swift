import CSQLite
import Glibc

/// Viewer state in SQLite (`<state dir>/snapback.db`): bookmarks, watched breaks and the device-wide
/// last-break time, crash- and power-cut-safe.
///
/// **Durability rule.** WAL mode with `synchronous=FULL`: the WAL is fsynced at every commit, so a
/// write whose completion reported success survives a crash and a power cut. A completion runs only
/// after its transaction committed; what a crash or a power cut can lose is only writes that had not
/// completed yet (for a bookmark: one whose BookmarkSaved was not pushed).
///
/// **Threads.** Writes never run on the loop thread. They are queued (under a pthread mutex) for a
/// writer thread with its own connection, which commits what is queued in small transactions (up to
/// `maxBatch` writes each; what queues up during a commit goes in the next) and hands the results back
/// through `post`, which runs a closure on the loop thread; there the completions run, in commit
/// order, which is the order the writes were made. Reads run on the loop thread on a second
/// connection (WAL readers do not wait for the writer), as indexed point queries or one page.
///
/// **Health.** A file that is not a database, fails `PRAGMA quick_check`, or was written by a newer
/// schema is renamed aside (`snapback.db.corrupt-<unix time>` or `snapback.db.newer-<unix time>`,
/// with its -wal and -shm) and a fresh database is started; the event is logged and kept in
/// `lastError`. Disk full fails writes with `.full`, a read-only directory or an I/O error with
/// `.unavailable`; later writes succeed once the cause is gone (a store that could not open at all
/// tries again at each write).
///
/// Every method except `init` is called on the loop thread, the thread `post` runs closures on.
/// `close()` drains the writer; call it before letting go of the store.
public final class SQLiteViewerStateStore: ViewerStateStore, @unchecked Sendable {
    /// Runs a closure on the loop thread (soon, in the order posted), from any thread.
    public typealias Post = @Sendable (@escaping @Sendable () -> Void) -> Void

    public enum LogLevel: Sendable { case error, warning, notice, info, debug }
    public typealias Log = @Sendable (LogLevel, String) -> Void

    public struct Configuration: Sendable {
        /// The most bookmarks kept; the least recently updated are evicted first.
        public var capacity = 10_000
        /// Watched breaks older than this are pruned (the service asks for the last 24 h).
        public var watchedRetention: Double = 24 * 3600
        /// How often (seconds, at most) the writer prunes old watched breaks.
        public var pruneInterval: Double = 3600
        /// The most writes committed in one transaction.
        public var maxBatch = 64
        /// How long the writer waits for a lock held by another process (the database is its own).
        public var writerBusyTimeoutMilliseconds: Int32 = 5000
        /// How long a read on the loop thread may wait (only in rare WAL recovery moments).
        public var readerBusyTimeoutMilliseconds: Int32 = 100
        /// How long `close()` waits for the writer to commit what is queued.
        public var closeTimeoutSeconds: Double = 10
        /// `PRAGMA max_page_count` for the writer (tests: a database-size limit); nil: none.
        public var maxPageCount: Int64?

        public init() {}
    }

    public static let fileName = "snapback.db"

    public let path: String
    public let configuration: Configuration
    private let post: Post
    private let log: Log
    private let clock: @Sendable () -> Double

    // MARK: Loop thread only

    private var reader: ReaderStatements?
    /// Completions of queued writes, in queue order (nil for writes nobody waits for).
    private var pending: [((Result<Int, StoreError>) -> Void)?] = []
    private var pendingHead = 0
    private var cachedCount = 0
    private var cachedLastBreak: Double?
    /// Why the store cannot serve now (it could not open the database); nil when it can.
    private var unavailableReason: String?
    /// The last write error; cleared by the next successful write.
    private var writeError: String?
    /// What happened to the database at open (moved aside); kept until the daemon restarts.
    private var recoveryNote: String?
    private var isClosed = false

    // MARK: Shared, under `mutex`

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when a write is queued or the store closes.
    private let workReady: UnsafeMutablePointer<pthread_cond_t>
    /// Signalled when the writer thread has finished.
    private let writerDone: UnsafeMutablePointer<pthread_cond_t>
    private var queue: [WriteOp] = []
    private var outbox: [BatchReport] = []
    private var deliveryPosted = false
    private var stopping = false
    private var writerExited = false
    /// The writer waits for work: only then does a new write need to signal it.
    private var writerWaiting = false

    // MARK: Writer thread only

    private var writer: WriterStatements?
    private var lastPrune: Double = 0
    private var writerFailing = false
    private var thread: pthread_t?

    /// Opens (creating it if needed) `directory/snapback.db` and starts the writer thread. Never
    /// throws: a database that cannot be opened leaves the store unavailable (`lastError` says why)
    /// and the writer retries at each write.
    ///
    /// - Parameters:
    ///   - post: runs a closure on the loop thread; completions reach the loop through it.
    ///   - log: where the store's log lines go (any thread).
    ///   - clock: wall time in seconds since the epoch (for pruning and file names).
    public init(directory: String, configuration: Configuration = Configuration(), post: @escaping Post,
                log: @escaping Log = { _, _ in }, clock: @escaping @Sendable () -> Double = wallClockNow) {
        self.path = (directory.hasSuffix("/") ? directory : directory + "/") + Self.fileName
        self.configuration = configuration
        self.post = post
        self.log = log
        self.clock = clock
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        workReady = .allocate(capacity: 1)
        pthread_cond_init(workReady, nil)
        writerDone = .allocate(capacity: 1)
        pthread_cond_init(writerDone, nil)

        let opened = openWriterConnection()
        if let note = opened.note { recoveryNote = note }
        if let writer = opened.writer {
            self.writer = writer
            cachedCount = opened.count
            openReader()
        } else {
            unavailableReason = opened.error ?? "cannot open \(path)"
            log(.error, "bookmark store: \(unavailableReason!); writes are refused until it can be opened")
            writerFailing = true
        }
        startWriterThread()
    }

    deinit {
        pthread_cond_destroy(workReady)
        workReady.deallocate()
        pthread_cond_destroy(writerDone)
        writerDone.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public var description: String {
        "sqlite \(path) (WAL, synchronous=FULL: a saved bookmark survives a power cut)"
    }
    public var kind: String { "sqlite" }
    public var bookmarkCount: Int { cachedCount }
    public var lastError: String? { writeError ?? unavailableReason.map { "unavailable: \($0)" } ?? recoveryNote }

    // MARK: Reads (loop thread)

    private func readable() throws(StoreError) -> ReaderStatements {
        if isClosed { throw .unavailable("the store is closed") }
        guard let reader else { throw .unavailable(unavailableReason ?? "the database is not open") }
        return reader
    }

    public func bookmark(profile: String, contentId: String) throws(StoreError) -> Bookmark? {
        // Read your writes: a save or delete still queued for the writer is what the next session sees
        // (a player that reconnects at once resumes at its latest position). Its push still waits for
        // the commit.
        if let queued = unsaved[UnsavedKey(profile: profile, contentId: contentId)] { return queued.bookmark }
        let r = try readable()
        let s = r.getBookmark
        defer { s.reset() }
        do {
            try s.bind(1, profile)
            try s.bind(2, contentId)
            guard try s.step() else { return nil }
            return Bookmark(profile: profile, contentId: contentId, contentTime: s.double(0), streamTime: s.double(1),
                            streamId: s.text(2), updatedAt: s.double(3), finished: s.int64(4) != 0)
        } catch {
            throw readFailed(error)
        }
    }

    /// The page token is the last row's (updated_at, content_id): `<updated_at bits in hex>:<content id>`.
    /// A token that does not parse starts from the first page.
    public func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?) {
        let r = try readable()
        let n = max(1, limit)
        let cursor = after.flatMap(Self.parseToken)
        let s = cursor == nil ? r.firstPage : r.nextPage
        defer { s.reset() }
        var page: [Bookmark] = []
        var more = false
        do {
            try s.bind(1, profile)
            if let cursor {
                try s.bind(2, cursor.updatedAt)
                try s.bind(3, cursor.contentId)
                try s.bind(4, Int64(n + 1))
            } else {
                try s.bind(2, Int64(n + 1))
            }
            while try s.step() {
                if page.count == n {
                    more = true
                    break
                }
                page.append(Bookmark(profile: profile, contentId: s.text(0), contentTime: s.double(1), streamTime: s.double(2),
                                     streamId: s.text(3), updatedAt: s.double(4), finished: s.int64(5) != 0))
            }
        } catch {
            throw readFailed(error)
        }
        let next = more ? page.last.map { "\(String($0.updatedAt.bitPattern, radix: 16)):\($0.contentId)" } : nil
        return (page, next)
    }

    static func parseToken(_ token: String) -> (updatedAt: Double, contentId: String)? {
        guard let colon = token.firstIndex(of: ":"), let bits = UInt64(token[..<colon], radix: 16) else { return nil }
        return (Double(bitPattern: bits), String(token[token.index(after: colon)...]))
    }

    public func watchedBreaks(contentId: String, since: Double) throws(StoreError) -> Set<String> {
        let r = try readable()
        let s = r.watched
        defer { s.reset() }
        var ids: Set<String> = []
        do {
            try s.bind(1, contentId)
            try s.bind(2, since)
            while try s.step() { ids.insert(s.text(0)) }
        } catch {
            throw readFailed(error)
        }
        return ids
    }

    public func lastBreakCompletedAt() -> Double? { cachedLastBreak }

    private func readFailed(_ error: SQLiteError) -> StoreError {
        log(.warning, "bookmark store: read failed: \(error)")
        return error.storeError
    }

    // MARK: Writes (loop thread; completions run on the loop thread after the commit)

    public func save(_ bookmark: Bookmark, completion: @escaping (Result<Void, StoreError>) -> Void) {
        let key = UnsavedKey(profile: bookmark.profile, contentId: bookmark.contentId)
        let generation = noteUnsaved(key, bookmark)
        enqueue(.save(bookmark)) { [weak self] result in
            self?.forgetUnsaved(key, generation)
            completion(result.map { _ in () })
        }
    }

    public func deleteBookmark(profile: String, contentId: String, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        let key = UnsavedKey(profile: profile, contentId: contentId)
        let generation = noteUnsaved(key, nil)
        enqueue(.delete(profile: profile, contentId: contentId)) { [weak self] result in
            self?.forgetUnsaved(key, generation)
            completion(result.map { $0 > 0 })
        }
    }

    private struct UnsavedKey: Hashable { var profile: String; var contentId: String }

    /// Saves and deletes queued for the writer, by bookmark, until their commit completes (loop thread).
    private var unsaved: [UnsavedKey: (bookmark: Bookmark?, generation: UInt64)] = [:]
    private var unsavedGeneration: UInt64 = 0

    private func noteUnsaved(_ key: UnsavedKey, _ bookmark: Bookmark?) -> UInt64 {
        guard !isClosed else { return 0 }
        unsavedGeneration &+= 1
        unsaved[key] = (bookmark, unsavedGeneration)
        return unsavedGeneration
    }

    /// Forgets a queued write once committed (or failed), unless a later one for the same bookmark is
    /// queued behind it.
    private func forgetUnsaved(_ key: UnsavedKey, _ generation: UInt64) {
        if unsaved[key]?.generation == generation { unsaved[key] = nil }
    }

    public func clearBookmarks(profile: String, completion: @escaping (Result<Int, StoreError>) -> Void) {
        for key in unsaved.keys where key.profile == profile { unsaved[key] = (nil, unsaved[key]!.generation) }
        enqueue(.clear(profile: profile), completion)
    }

    public func markWatched(contentId: String, breakId: String, at: Double, completion: @escaping (Result<Void, StoreError>) -> Void) {
        enqueue(.watched(contentId: contentId, breakId: breakId, at: at)) { completion($0.map { _ in () }) }
    }

    public func setLastBreakCompleted(at: Double) {
        cachedLastBreak = max(cachedLastBreak ?? at, at)
        enqueue(.lastBreak(at), nil)
    }

    private func enqueue(_ op: WriteOp, _ completion: ((Result<Int, StoreError>) -> Void)?) {
        guard !isClosed else {
            completion?(.failure(.unavailable("the store is closed")))
            return
        }
        pending.append(completion)
        pthread_mutex_lock(mutex)
        queue.append(op)
        // A busy writer takes this write with the next batch without a wake-up (no futex call here).
        if writerWaiting { pthread_cond_signal(workReady) }
        pthread_mutex_unlock(mutex)
    }

    /// Runs the completions of the batches the writer finished, in order. Loop thread, via `post`.
    private func deliver() {
        pthread_mutex_lock(mutex)
        let reports = outbox
        outbox = []
        deliveryPosted = false
        pthread_mutex_unlock(mutex)
        for report in reports {
            if report.reopened {
                unavailableReason = nil
                if reader == nil { openReader() }
            }
            if let note = report.note { recoveryNote = note }
            if let count = report.count { cachedCount = count }
            if let failure = report.results.lazy.compactMap({ if case .failure(let e) = $0 { e } else { nil } }).first {
                writeError = failure.description
            } else if !report.results.isEmpty {
                writeError = nil
            }
            for result in report.results {
                let completion = pending[pendingHead]
                pending[pendingHead] = nil
                pendingHead += 1
                completion?(result)
            }
        }
        if pendingHead > 256 && pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    /// Lets the writer commit what is queued, runs those completions, stops the thread and closes the
    /// connections. Blocks the calling (loop) thread for as long as that takes — at most
    /// `closeTimeoutSeconds`: it is the last thing the daemon does with the store when it stops.
    /// Later writes fail with `.unavailable`.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        // The writer's connection is then the last one: closing it checkpoints the WAL there.
        reader = nil
        let queued = pending.count - pendingHead
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(workReady)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let timeout = max(0, configuration.closeTimeoutSeconds)
        deadline.tv_sec += Int(timeout)
        deadline.tv_nsec += Int((timeout - timeout.rounded(.down)) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        while !writerExited {
            if pthread_cond_timedwait(writerDone, mutex, &deadline) == ETIMEDOUT { break }
        }
        let exited = writerExited
        pthread_mutex_unlock(mutex)
        if let thread {
            if exited { pthread_join(thread, nil) } else { pthread_detach(thread) }
            self.thread = nil
        }
        deliver()
        var lost = 0
        while pendingHead < pending.count {
            let completion = pending[pendingHead]
            pending[pendingHead] = nil
            pendingHead += 1
            lost += 1
            completion?(.failure(.unavailable("snapbackd stopped before the write was committed")))
        }
        if lost > 0 {
            log(.error, "bookmark store: the writer did not finish within \(timeout) s: \(lost) write(s) not committed")
        } else {
            log(.info, "bookmark store closed (\(queued) queued write(s) committed on the way out)")
        }
    }

    // MARK: Opening

    private struct Opened {
        var writer: WriterStatements?
        var count = 0
        var error: String?
        var note: String?
    }

    /// Opens the writer's connection, moving a corrupt or newer file aside once. Any thread.
    private func openWriterConnection() -> Opened {
        var result = Opened()
        for attempt in 0..<2 {
            do {
                let db = try SQLiteSchema.openWriter(path: path, busyTimeout: configuration.writerBusyTimeoutMilliseconds,
                                                     maxPageCount: configuration.maxPageCount)
                let statements = try WriterStatements(db)
                result.count = try statements.count()
                result.writer = statements
                prune(statements, force: true)
                return result
            } catch let problem as SQLiteSchema.OpenProblem {
                switch problem {
                case .corrupt(let why, let db) where attempt == 0:
                    // Renamed while the connection is open (see OpenProblem), closed after.
                    let aside = withExtendedLifetime(db) { SQLiteSchema.moveAside(path, label: "corrupt", now: clock()) }
                    result.note = "database was corrupt (\(why)): moved aside to \(aside), started a fresh one"
                    log(.error, "bookmark store: \(result.note!)")
                case .newer(let version, let db) where attempt == 0:
                    let aside = withExtendedLifetime(db) { SQLiteSchema.moveAside(path, label: "newer", now: clock()) }
                    result.note = "database has schema version \(version), newer than this snapbackd's \(SQLiteSchema.version): "
                        + "moved aside to \(aside), started a fresh one"
                    log(.error, "bookmark store: \(result.note!)")
                case .corrupt(let why, _):
                    result.error = "database still corrupt after a fresh start: \(why)"
                case .newer(let version, _):
                    result.error = "database has schema version \(version) after a fresh start"
                case .failed(let error):
                    // Logged by the caller: the writer retries at each write and logs only the first failure.
                    result.error = "cannot open \(path): \(error)"
                    return result
                }
            } catch let error as SQLiteError {
                result.error = "cannot prepare statements on \(path): \(error)"
                log(.error, "bookmark store: \(result.error!)")
                return result
            } catch {
                result.error = "\(error)"
                return result
            }
        }
        if let error = result.error { log(.error, "bookmark store: \(error)") }
        return result
    }

    /// Loop thread.
    private func openReader() {
        do {
            let statements = try ReaderStatements(SQLiteSchema.openReader(
                path: path, busyTimeout: configuration.readerBusyTimeoutMilliseconds))
            let s = statements.lastBreak
            defer { s.reset() }
            if try s.step() {
                cachedLastBreak = max(cachedLastBreak ?? s.double(0), s.double(0))
            }
            reader = statements
        } catch {
            unavailableReason = "cannot open a read connection on \(path): \(error)"
            log(.error, "bookmark store: \(unavailableReason!)")
        }
    }

    // MARK: Writer thread

    private func startWriterThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var id = pthread_t()
        let rc = pthread_create(&id, nil, { raw in
            let store = Unmanaged<SQLiteViewerStateStore>.fromOpaque(raw!).takeRetainedValue()
            store.writerMain()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<SQLiteViewerStateStore>.fromOpaque(context).release()
            unavailableReason = "cannot start the writer thread: \(String(cString: strerror(rc)))"
            log(.error, "bookmark store: \(unavailableReason!)")
            writerExited = true
            writer = nil
            return
        }
        thread = id
    }

    private func writerMain() {
        var batch: [WriteOp] = []
        while true {
            pthread_mutex_lock(mutex)
            while queue.isEmpty && !stopping {
                writerWaiting = true
                pthread_cond_wait(workReady, mutex)
                writerWaiting = false
            }
            if queue.isEmpty {
                pthread_mutex_unlock(mutex)
                break
            }
            let n = min(queue.count, max(1, configuration.maxBatch))
            batch.append(contentsOf: queue[0..<n])
            queue.removeFirst(n)
            pthread_mutex_unlock(mutex)

            let report = commit(batch)
            batch.removeAll(keepingCapacity: true)

            pthread_mutex_lock(mutex)
            outbox.append(report)
            let needsPost = !deliveryPosted
            deliveryPosted = true
            pthread_mutex_unlock(mutex)
            if needsPost {
                post { self.deliver() }
            }
        }
        // Closing the last connection checkpoints the WAL into the database file.
        writer = nil
        pthread_mutex_lock(mutex)
        writerExited = true
        pthread_cond_broadcast(writerDone)
        pthread_mutex_unlock(mutex)
    }

    /// Commits `ops` in one transaction; if that fails, each op in its own, so that one op's failure is
    /// its own. Writer thread.
    private func commit(_ ops: [WriteOp]) -> BatchReport {
        var report = BatchReport()
        if writer == nil {
            let opened = openWriterConnection()
            report.note = opened.note
            if let statements = opened.writer {
                writer = statements
                report.reopened = true
                report.count = opened.count
                log(.notice, "bookmark store: \(path) is open again")
            } else {
                let error = StoreError.unavailable(opened.error ?? "cannot open \(path)")
                report.results = Array(repeating: .failure(error), count: ops.count)
                return report
            }
        }
        guard let w = writer else { return report }
        do {
            report.results = try transaction(w) { () throws(SQLiteError) in
                var results: [Result<Int, StoreError>] = []
                for op in ops { results.append(.success(try apply(op, w))) }
                report.count = try finish(w, ops)
                return results
            }
        } catch {
            report.count = nil
            if ops.count == 1 {
                report.results = [.failure(error.storeError)]
            } else {
                for op in ops {
                    do {
                        let value = try transaction(w) { () throws(SQLiteError) in
                            let value = try apply(op, w)
                            report.count = try finish(w, [op]) ?? report.count
                            return value
                        }
                        report.results.append(.success(value))
                    } catch {
                        report.results.append(.failure(error.storeError))
                    }
                }
            }
        }
        noteHealth(report)
        return report
    }

    private func transaction<T>(_ w: WriterStatements, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try w.begin.run()
        do {
            let value = try body()
            try w.commit.run()
            return value
        } catch {
            if w.db.inTransaction { try? w.rollback.run() }
            throw error
        }
    }

    /// One write; returns rows changed (the completion's value).
    private func apply(_ op: WriteOp, _ w: WriterStatements) throws(SQLiteError) -> Int {
        switch op {
        case .save(let b):
            let s = w.upsertBookmark
            defer { s.reset() }
            try s.bind(1, b.profile)
            try s.bind(2, b.contentId)
            try s.bind(3, b.contentTime)
            try s.bind(4, b.streamTime)
            try s.bind(5, b.streamId)
            try s.bind(6, b.updatedAt)
            try s.bind(7, b.finished)
            try s.run()
            return 1
        case .delete(let profile, let contentId):
            let s = w.deleteBookmark
            defer { s.reset() }
            try s.bind(1, profile)
            try s.bind(2, contentId)
            try s.run()
            return w.db.changes
        case .clear(let profile):
            let s = w.clearProfile
            defer { s.reset() }
            try s.bind(1, profile)
            try s.run()
            return w.db.changes
        case .watched(let contentId, let breakId, let at):
            let s = w.markWatched
            defer { s.reset() }
            try s.bind(1, contentId)
            try s.bind(2, breakId)
            try s.bind(3, at)
            try s.run()
            return 1
        case .lastBreak(let at):
            let s = w.setLastBreak
            defer { s.reset() }
            try s.bind(1, at)
            try s.run()
            return 1
        }
    }

    /// Inside the transaction, after the writes: evicts the oldest bookmarks beyond the bound and prunes
    /// old watched breaks now and then. Returns the bookmark count if bookmarks changed.
    private func finish(_ w: WriterStatements, _ ops: [WriteOp]) throws(SQLiteError) -> Int? {
        if ops.contains(where: { if case .watched = $0 { true } else { false } }) {
            prune(w, force: false)
        }
        guard ops.contains(where: \.changesBookmarks) else { return nil }
        var count = try w.count()
        if count > configuration.capacity {
            let s = w.evictOldest
            defer { s.reset() }
            try s.bind(1, Int64(count - configuration.capacity))
            try s.run()
            count -= w.db.changes
        }
        return count
    }

    private func prune(_ w: WriterStatements, force: Bool) {
        let now = clock()
        guard force || now - lastPrune >= configuration.pruneInterval else { return }
        lastPrune = now
        let s = w.pruneWatched
        defer { s.reset() }
        do {
            try s.bind(1, now - configuration.watchedRetention)
            try s.run()
            if w.db.changes > 0 { log(.debug, "bookmark store: pruned \(w.db.changes) watched break(s) older than the retention") }
        } catch {
            log(.warning, "bookmark store: pruning watched breaks failed: \(error)")
        }
    }

    /// Logs when writes start failing and when they work again (not every failure).
    private func noteHealth(_ report: BatchReport) {
        let failure = report.results.lazy.compactMap { if case .failure(let e) = $0 { e } else { nil } }.first
        if let failure, !writerFailing {
            writerFailing = true
            log(.error, "bookmark store: writes failing: \(failure)")
        } else if failure == nil, writerFailing, !report.results.isEmpty {
            writerFailing = false
            log(.notice, "bookmark store: writes succeed again")
        }
    }
}

/// A write for the writer thread.
enum WriteOp: Sendable {
    case save(Bookmark)
    case delete(profile: String, contentId: String)
    case clear(profile: String)
    case watched(contentId: String, breakId: String, at: Double)
    case lastBreak(Double)

    var changesBookmarks: Bool {
        switch self {
        case .save, .delete, .clear: true
        case .watched, .lastBreak: false
        }
    }
}

/// What the writer hands back to the loop for one batch: a result per write, in order.
struct BatchReport: Sendable {
    var results: [Result<Int, StoreError>] = []
    /// The bookmark count after the batch, if it changed bookmarks.
    var count: Int?
    /// The database was (re)opened by the writer: the loop opens its read connection.
    var reopened = false
    /// A recovery to keep in `lastError` (a file moved aside).
    var note: String?
}

/// Wall time, seconds since the epoch.
public func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
