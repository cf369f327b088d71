import CSQLite
import Glibc

/// The SQLite store's writer: the write connection and everything done with it — opening (and moving
/// a bad file aside), committing batches, evicting, pruning — on its own thread.
///
/// **Thread.** Built and first opened on the thread that creates the store (the loop, at start-up,
/// so that the loop's read connection finds a database), then handed to its own thread by
/// ``start(queue:notify:)`` and used only there; ``ThreadOwner`` checks it in debug builds. It takes
/// released writes from the ``StoreWriteQueue`` as batches, commits each batch in one transaction,
/// and hands a ``BatchReport`` back through the queue; `notify` tells the loop a report is waiting.
final class StoreWriter {
    private let path: String
    private let configuration: SQLiteViewerStateStore.Configuration
    private let log: SQLiteViewerStateStore.Log
    private let clock: @Sendable () -> Double
    private var owner = ThreadOwner()

    private var statements: WriterStatements?
    /// Writes are failing: logged once when they start and once when they work again.
    private var failing = false

    init(
        path: String, configuration: SQLiteViewerStateStore.Configuration, log: @escaping SQLiteViewerStateStore.Log,
        clock: @escaping @Sendable () -> Double
    ) {
        self.path = path
        self.configuration = configuration
        self.log = log
        self.clock = clock
    }

    struct Opened {
        var count = 0
        var error: String?
        var note: String?
    }

    /// Opens the write connection, moving a corrupt or newer file aside once.
    func open() -> Opened {
        owner.check("the store's writer")
        var result = Opened()
        for attempt in 0..<2 {
            do {
                let db = try SQLiteSchema.openWriter(
                    path: path, busyTimeout: configuration.writerBusyTimeoutMilliseconds,
                    maxPageCount: configuration.maxPageCount)
                let statements = try WriterStatements(db)
                result.count = try statements.count()
                self.statements = statements
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
                    result.note =
                        "database has schema version \(version), newer than this snapbackd's \(SQLiteSchema.version): "
                        + "moved aside to \(aside), started a fresh one"
                    log(.error, "bookmark store: \(result.note!)")
                case .corrupt(let why, _):
                    result.error = "database still corrupt after a fresh start: \(why)"
                case .newer(let version, _):
                    result.error = "database has schema version \(version) after a fresh start"
                case .failed(let error):
                    // Logged by the caller once: the writer retries at each batch and logs only the first failure.
                    result.error = "cannot open \(path): \(error)"
                    failing = true
                    return result
                }
            } catch let error as SQLiteError {
                result.error = "cannot prepare statements on \(path): \(error)"
                log(.error, "bookmark store: \(result.error!)")
                failing = true
                return result
            } catch {
                result.error = "\(error)"
                failing = true
                return result
            }
        }
        if let error = result.error {
            log(.error, "bookmark store: \(error)")
            failing = true
        }
        return result
    }

    /// Starts the writer's thread; the thread keeps the writer until the queue stops. Returns the
    /// thread to join.
    func start(queue: StoreWriteQueue, notify: @escaping @Sendable () -> Void) throws(StoreError) -> pthread_t {
        final class Context {
            let writer: StoreWriter
            let queue: StoreWriteQueue
            let notify: @Sendable () -> Void
            init(_ writer: StoreWriter, _ queue: StoreWriteQueue, _ notify: @escaping @Sendable () -> Void) {
                self.writer = writer
                self.queue = queue
                self.notify = notify
            }
        }
        let context = Unmanaged.passRetained(Context(self, queue, notify)).toOpaque()
        var id = pthread_t()
        let rc = pthread_create(
            &id, nil,
            { raw in
                let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
                context.writer.run(context.queue, notify: context.notify)
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            throw .unavailable("cannot start the writer thread: \(String(cString: strerror(rc)))")
        }
        return id
    }

    /// The thread's body: commit released batches until the queue stops, then close the connection.
    private func run(_ queue: StoreWriteQueue, notify: @Sendable () -> Void) {
        owner.adopt()
        var batch: [WriteOp] = []
        while queue.nextBatch(&batch, limit: configuration.maxBatch) {
            let report = commit(batch)
            batch.removeAll(keepingCapacity: true)
            if queue.deliver(report) { notify() }
        }
        // Closing the last connection checkpoints the WAL into the database file.
        statements = nil
        queue.writerFinished()
    }

    /// Commits `ops` in one transaction. When that fails for a reason of the whole database (disk
    /// full, I/O error, read-only, busy), every op fails with that error: retrying each alone would
    /// only repeat the failing write. When it fails for one op's own reason, each op is retried in its
    /// own transaction, so that the failure is that op's alone.
    func commit(_ ops: [WriteOp]) -> BatchReport {
        owner.check("the store's writer")
        var report = BatchReport()
        if statements == nil {
            let opened = open()
            report.note = opened.note
            if opened.error == nil {
                report.reopened = true
                report.count = opened.count
                log(.notice, "bookmark store: \(path) is open again")
            } else {
                let error = StoreError.unavailable(opened.error ?? "cannot open \(path)")
                report.results = Array(repeating: .failure(error), count: ops.count)
                return report
            }
        }
        guard let w = statements else { return report }
        do {
            report.results = try transaction(w) { () throws(SQLiteError) in
                var results: [Result<Int, StoreError>] = []
                results.reserveCapacity(ops.count)
                for op in ops { results.append(.success(try apply(op, w))) }
                report.count = try finish(w, ops)
                return results
            }
            report.commits = 1
        } catch {
            report.count = nil
            if ops.count == 1 || !error.isStatementSpecific {
                report.results = Array(repeating: .failure(error.storeError), count: ops.count)
            } else {
                for op in ops {
                    do {
                        let value = try transaction(w) { () throws(SQLiteError) in
                            let value = try apply(op, w)
                            report.count = try finish(w, [op]) ?? report.count
                            return value
                        }
                        report.commits += 1
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
        case .pruneWatched(let ranges):
            return try prune(w, keeping: ranges)
        }
    }

    /// Deletes the watched breaks dated before the last range and outside every range: one statement
    /// per gap (below the first range, between two ranges). Rows after the last range are left.
    private func prune(_ w: WriterStatements, keeping ranges: [ClosedRange<Double>]) throws(SQLiteError) -> Int {
        let s = w.pruneWatched
        var pruned = 0
        var below = -Double.greatestFiniteMagnitude
        for range in ranges {
            defer { s.reset() }
            try s.bind(1, below)
            try s.bind(2, range.lowerBound)
            try s.run()
            pruned += w.db.changes
            below = range.upperBound
        }
        if pruned > 0 { log(.debug, "bookmark store: pruned \(pruned) watched break(s) past the retention") }
        return pruned
    }

    /// Inside the transaction, after the writes: evicts the least recently saved bookmarks beyond the
    /// bound. Returns the bookmark count if bookmarks changed.
    private func finish(_ w: WriterStatements, _ ops: [WriteOp]) throws(SQLiteError) -> Int? {
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

    /// Logs when writes start failing and when they work again (not every failure).
    private func noteHealth(_ report: BatchReport) {
        let failure = report.results.lazy.compactMap { if case .failure(let e) = $0 { e } else { nil } }.first
        if let failure, !failing {
            failing = true
            log(.error, "bookmark store: writes failing: \(failure)")
        } else if failure == nil, failing, !report.results.isEmpty {
            failing = false
            log(.notice, "bookmark store: writes succeed again")
        }
    }
}
