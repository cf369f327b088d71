// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc
import SnapbackTimeline

/// Viewer state in SQLite (`<state dir>/snapback.db`): bookmarks, watched breaks and the device-wide
/// last-break time, crash- and power-cut-safe.
///
/// **Durability rule.** WAL mode with `synchronous=FULL`: the WAL is fsynced at every commit, so a
/// write whose completion reported success survives a crash and a power cut. A completion runs only
/// after its transaction committed; what a crash or a power cut can lose is only writes that had not
/// completed yet (for a bookmark: one whose BookmarkSaved was not pushed).
///
/// **Threads, as types.** This front runs on the loop thread (every method but `init`'s caller is the
/// thread `post` runs closures on; checked in debug builds). It composes three parts, each with one
/// thread: a ``StoreReader`` (loop thread: its own query-only connection, as WAL readers never wait for
/// the writer), a ``StoreWriter`` (its own thread: the write connection, commits, eviction, pruning)
/// and the ``StoreWriteQueue`` between them, the only shared, locked part.
///
/// **Group commit.** Writes are queued and released to the writer once per loop turn (the release is
/// posted to run after the turn): every write made in one turn — the periodic saves of all the
/// sessions due in the same tick — goes into one transaction, one fdatasync, up to `maxBatch` writes;
/// what queues up during a commit goes in the next. Completions run on the loop thread, in the order
/// the writes were made, once their transaction committed.
///
/// **Health.** A file that is not a database, fails `PRAGMA quick_check`, or was written by a newer
/// schema is renamed aside (`snapback.db.corrupt-<unix time>` or `snapback.db.newer-<unix time>`,
/// with its -wal and -shm) and a fresh database is started; the event is logged and kept in
/// `lastError`. Disk full fails writes with `.full`, a read-only directory or an I/O error with
/// `.unavailable` (every write of the failing transaction); later writes succeed once the cause is
/// gone (a store that could not open at all tries again at each batch).
///
/// `close()` drains the writer; call it before letting go of the store.
public final class SQLiteViewerStateStore: SyncingStore {
    /// Runs a closure on the loop thread (soon, in the order posted), from any thread.
    public typealias Post = @Sendable (@escaping @Sendable () -> Void) -> Void

    public enum LogLevel: Sendable { case error, warning, notice, info, debug }
    public typealias Log = @Sendable (LogLevel, String) -> Void

    public struct Configuration: Sendable {
        /// The most bookmarks kept; the least recently saved are evicted first.
        public var capacity = 10_000
        /// The most writes committed in one transaction: enough for the periodic saves of every
        /// session due in one tick (1 makes each write its own transaction: the baseline of
        /// `snapback-bench store`).
        public var maxBatch = 1000
        /// How long the writer waits for a lock held by another process (the database is its own).
        public var writerBusyTimeoutMilliseconds: Int32 = 5000
        /// How long a read on the loop thread may wait (only in rare WAL recovery moments).
        public var readerBusyTimeoutMilliseconds: Int32 = 100
        /// How long `close()` waits for the writer to commit what is queued.
        public var closeTimeoutSeconds: Double = 10
        /// `PRAGMA max_page_count` for the writer (tests: a database-size limit); nil: none.
        public var maxPageCount: Int64?
        /// The name this box signs its changes with in household sync; nil: the id the database minted
        /// when it was created (16 hex digits).
        public var deviceId: DeviceID?
        /// How far past this box's wall time a stamp from another box may move its clock
        /// (`HybridLogicalClock.maxAheadMilliseconds`, docs/sync.md).
        public var maxClockAheadMilliseconds = HybridLogicalClock.defaultMaxAheadMilliseconds
        /// The most tombstones kept (deleted and cleared bookmarks, so that an older write from another
        /// box does not bring them back); the oldest go first. Their own bound, not the bookmarks':
        /// clearing one profile must not evict another's bookmarks (docs/sync.md).
        public var tombstoneCapacity = 10_000

        public init() {}
    }

    public static let fileName = "snapback.db"

    public let path: String
    public let configuration: Configuration
    private let post: Post
    private let log: Log
    private let owner = ThreadOwner()
    private let reader: StoreReader
    private let queue = StoreWriteQueue()
    private var writerThread: pthread_t?

    /// Completions of queued writes, in queue order (nil for writes nobody waits for).
    private var pending = FIFO<((Result<Int, StoreError>) -> Void)?>()
    private var cachedCount = 0
    private var cachedLastBreak: Double?
    /// Why the store cannot serve now (it could not open the database); nil when it can.
    private var unavailableReason: String?
    /// The last write error; cleared by the next successful write.
    private var writeError: String?
    /// What happened to the database at open (moved aside); kept until the daemon restarts.
    private var recoveryNote: String?
    private var isClosed = false
    /// The name this box signs its changes with; nil until the database has opened.
    public private(set) var deviceId: DeviceID?
    /// Transactions committed since the store opened (each one fdatasync of the WAL).
    public private(set) var commits = 0
    /// Writes whose transaction failed since the store opened.
    private var failedWrites: UInt64 = 0
    /// Writes made whose completion has not run yet.
    public var unfinishedWrites: Int { pending.count }
    /// Runs after each delivery of committed batches (the Sync service's change stream).
    public var onCommit: (() -> Void)?

    /// Opens (creating it if needed) `directory/snapback.db` and starts the writer thread. Never
    /// throws: a database that cannot be opened leaves the store unavailable (`lastError` says why)
    /// and the writer retries at each batch.
    ///
    /// - Parameters:
    ///   - post: runs a closure on the loop thread; releases and completions reach the loop through it.
    ///   - log: where the store's log lines go (any thread).
    ///   - clock: wall time in seconds since the epoch (for the names of files moved aside).
    public init(
        directory: String, configuration: Configuration = Configuration(), post: @escaping Post,
        log: @escaping Log = { _, _ in }, clock: @escaping @Sendable () -> Double = wallClockNow
    ) {
        self.path = (directory.hasSuffix("/") ? directory : directory + "/") + Self.fileName
        self.configuration = configuration
        self.post = post
        self.log = log
        reader = StoreReader(path: path, busyTimeoutMilliseconds: configuration.readerBusyTimeoutMilliseconds)

        let writer = StoreWriter(path: path, configuration: configuration, log: log, clock: clock)
        let opened = writer.open()
        recoveryNote = opened.note
        if let error = opened.error {
            unavailableReason = error
            log(.error, "bookmark store: \(error); writes are refused until it can be opened")
        } else {
            cachedCount = opened.count
            deviceId = opened.device
            openReader()
        }
        queue.onReports = { [weak self] in self?.deliver() }
        let queue = queue
        do {
            writerThread = try writer.start(queue: queue, notify: { post { queue.onReports() } })
        } catch {
            unavailableReason = "\(error)"
            log(.error, "\(error)")
            queue.writerFinished()
        }
    }

    public var description: String {
        "sqlite \(path) (WAL, synchronous=FULL: a saved bookmark survives a power cut)"
    }
    public var kind: String { "sqlite" }
    public var bookmarkCount: Int { cachedCount }
    public var lastError: String? { writeError ?? unavailableReason.map { "unavailable: \($0)" } ?? recoveryNote }

    // MARK: Reads

    private func readable() throws(StoreError) {
        owner.check("the store")
        if isClosed { throw .unavailable("the store is closed") }
        guard reader.isOpen else { throw .unavailable(unavailableReason ?? "the database is not open") }
    }

    public func bookmark(profile: String, contentId: String) throws(StoreError) -> Bookmark? {
        // Read your writes: a save or delete still queued for the writer is what the next session sees
        // (a player that reconnects at once resumes at its latest position). Its push still waits for
        // the commit.
        if let queued = unsaved[UnsavedKey(profile: profile, contentId: contentId)] { return queued.bookmark }
        try readable()
        do {
            return try reader.bookmark(profile: profile, contentId: contentId)
        } catch {
            throw readFailed(error)
        }
    }

    /// The page token is the last row's `saved_seq`, in decimal. A token that does not parse starts
    /// from the first page.
    public func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?) {
        try readable()
        let n = max(1, limit)
        var page: [(Bookmark, Int64)]
        do {
            page = try reader.page(profile: profile, before: after.flatMap { Int64($0) }, rows: n + 1)
        } catch {
            throw readFailed(error)
        }
        let more = page.count > n
        if more { page.removeLast(page.count - n) }
        let next = more ? page.last.map { String($0.1) } : nil
        return (page.map(\.0), next)
    }

    public func watchedBreaks(contentId: String, within ranges: [ClosedRange<Double>]) throws(StoreError) -> Set<String> {
        try readable()
        do {
            return try reader.watchedBreaks(contentId: contentId, within: ranges)
        } catch {
            throw readFailed(error)
        }
    }

    public func lastBreakCompletedAt() -> Double? { cachedLastBreak }

    /// What the last run left; none when the database cannot be read (the counters start again from 0,
    /// and the next write replaces what could not be read).
    public func storedMetrics() -> StoredMetrics {
        guard reader.isOpen else { return StoredMetrics() }
        do {
            return try reader.metrics()
        } catch {
            log(.warning, "bookmark store: the daemon's counters could not be read: \(error)")
            return StoredMetrics()
        }
    }

    /// The marker is a file beside the database, `snapback.db.running`, created (and its directory
    /// synced) at start and removed at the clean stop.
    public var runningMarkerPath: String { path + ".running" }

    public func markRunning() -> Bool {
        let fd = open(runningMarkerPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { return errno == EEXIST }
        fsync(fd)
        Glibc.close(fd)
        syncDirectory()
        return false
    }

    public func clearRunning() {
        if unlink(runningMarkerPath) == 0 { syncDirectory() }
    }

    /// The directory's entries to disk: a marker made or removed survives a power cut.
    private func syncDirectory() {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }

    public var writeCounts: StoreWriteCounts { StoreWriteCounts(commits: UInt64(commits), failures: failedWrites) }

    /// The committed sync record of a key (its bookmark or tombstone, with its stamp); nil if the box
    /// holds neither.
    public func syncRecord(profile: String, contentId: String) throws(StoreError) -> SyncRecord? {
        try readable()
        do {
            return try reader.syncRecord(profile: profile, contentId: contentId)
        } catch {
            throw readFailed(error)
        }
    }

    /// Up to `limit` committed changes numbered after `seq` (0: from the start), in order: what a sync
    /// agent sends, resuming after a restart from the last number it handled.
    public func changes(after seq: Int64, limit: Int) throws(StoreError) -> [SyncChange] {
        try readable()
        do {
            return try reader.changes(after: seq, limit: max(1, limit)) { [log] row, error in
                log(.warning, "bookmark store: change \(row) is not a valid sync record (\(error)): it stays on this box")
            }
        } catch {
            throw readFailed(error)
        }
    }

    /// The id the database minted when it was created, and the greatest change number it holds: a store
    /// made afresh has another id, one restored from an older copy may hold fewer changes than an agent read.
    public func changeStreamOrigin() throws(StoreError) -> (storeId: String, lastSeq: Int64) {
        try readable()
        do {
            return try reader.changeStreamOrigin()
        } catch {
            throw readFailed(error)
        }
    }

    private func readFailed(_ error: SQLiteError) -> StoreError {
        log(.warning, "bookmark store: read failed: \(error)")
        return error.storeError
    }

    private func openReader() {
        do {
            // A value set before the reader could open is the later one.
            if let stored = try reader.open(), cachedLastBreak == nil { cachedLastBreak = stored }
        } catch {
            unavailableReason = "cannot open a read connection on \(path): \(error)"
            log(.error, "bookmark store: \(unavailableReason!)")
        }
    }

    // MARK: Writes (completions run on the loop thread after the commit)

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

    /// Saves and deletes queued for the writer, by bookmark, until their commit completes.
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

    public func markWatched(
        contentId: String, breakId: String, at: Double, completion: @escaping (Result<Void, StoreError>) -> Void
    ) {
        enqueue(.watched(contentId: contentId, breakId: breakId, at: at)) { completion($0.map { _ in () }) }
    }

    /// Applies a record from another box under the sync rule (docs/sync.md), in the writer's
    /// transaction like a save: completes once committed with whether it changed the box's record of the
    /// key (false: what the box held wins, or is the same).
    public func merge(_ record: SyncRecord, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        // Not noted in `unsaved`: its outcome is known only in the transaction. A local save queued
        // after it is stamped after whatever it leaves, so what `unsaved` shows for the key stays true.
        enqueue(.merge(record)) { completion($0.map { $0 > 0 }) }
    }

    /// Adds watched breaks from another box (union; a break known on both sides keeps the later
    /// time). Completes once committed with whether any row changed.
    public func mergeWatched(_ breaks: WatchedBreaks, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        enqueue(.mergeWatched(breaks)) { completion($0.map { $0 > 0 }) }
    }

    public func setLastBreakCompleted(at: Double) {
        cachedLastBreak = at
        enqueue(.lastBreak(at), nil)
    }

    public func saveMetrics(_ metrics: StoredMetrics) {
        enqueue(.metrics(metrics), nil)
    }

    public func pruneWatched(keeping ranges: [ClosedRange<Double>]) {
        guard !ranges.isEmpty else { return }
        enqueue(.pruneWatched(keeping: ranges), nil)
    }

    private func enqueue(_ op: WriteOp, _ completion: ((Result<Int, StoreError>) -> Void)?) {
        owner.check("the store")
        guard !isClosed else {
            completion?(.failure(.unavailable("the store is closed")))
            return
        }
        pending.append(completion)
        // The first write of this loop turn posts the release, which runs once the turn is over: the
        // turn's other writes join it in the writer's next batch.
        if queue.enqueue(op) {
            let queue = queue
            post { queue.release() }
        }
    }

    /// Runs the completions of the batches the writer finished, in order. Loop thread, via `post`.
    private func deliver() {
        owner.check("the store")
        var committed = false
        defer { if committed { onCommit?() } }
        for report in queue.takeReports() {
            if report.commits > 0 { committed = true }
            if report.reopened {
                unavailableReason = nil
                if let device = report.device { deviceId = device }
                if !reader.isOpen { openReader() }
            }
            if let note = report.note { recoveryNote = note }
            if let count = report.count { cachedCount = count }
            commits += report.commits
            if let failure = report.results.lazy.compactMap({ if case .failure(let e) = $0 { e } else { nil } }).first {
                writeError = failure.description
            } else if !report.results.isEmpty {
                writeError = nil
            }
            for result in report.results {
                if case .failure = result { failedWrites += 1 }
                if let completion = pending.popFirst() { completion?(result) }
            }
        }
    }

    /// Lets the writer commit what is queued, runs those completions, stops the thread and closes the
    /// connections. Blocks the calling (loop) thread for as long as that takes — at most
    /// `closeTimeoutSeconds`: it is the last thing the daemon does with the store when it stops.
    /// Later writes fail with `.unavailable`.
    public func close() {
        owner.check("the store")
        guard !isClosed else { return }
        isClosed = true
        // The writer's connection is then the last one: closing it checkpoints the WAL there.
        reader.close()
        let queued = unfinishedWrites
        queue.stop()
        let timeout = max(0, configuration.closeTimeoutSeconds)
        let exited = queue.waitForWriter(seconds: timeout)
        if let writerThread {
            if exited { pthread_join(writerThread, nil) } else { pthread_detach(writerThread) }
            self.writerThread = nil
        }
        deliver()
        var lost = 0
        while let completion = pending.popFirst() {
            lost += 1
            completion?(.failure(.unavailable("snapbackd stopped before the write was committed")))
        }
        if lost > 0 {
            log(.error, "bookmark store: the writer did not finish within \(timeout) s: \(lost) write(s) not committed")
        } else {
            log(.info, "bookmark store closed (\(queued) queued write(s) committed on the way out)")
        }
    }
}

/// Wall time, seconds since the epoch.
public func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
