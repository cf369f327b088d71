// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc
import SnapbackTimeline

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
    /// The hybrid logical clock that stamps this box's changes (docs/sync.md), loaded with the
    /// statements.
    private var hlc: HybridLogicalClock?
    /// The last number of the change sequence handed out.
    private var changeSeq: Int64 = 0
    /// What `sync_state` holds: above the clock's physical time and the change sequence, so that a
    /// restart resumes from them after everything issued. Moved ahead by a step when reached, in the
    /// transaction that reaches it, so that most commits do not write one more page to the WAL.
    private var bounds = SyncBounds(clock: 0, change: 0)
    /// Bounds written by the transaction in progress, kept once it commits.
    private var boundsInFlight: SyncBounds?

    struct SyncBounds: Equatable {
        var clock: Int64
        var change: Int64
        /// A restart may start the clock this far ahead of the stamps issued before it: no more than a
        /// stamp from another box may move it (the default cap).
        static let clockStep: Int64 = HybridLogicalClock.defaultMaxAheadMilliseconds
        static let changeStep: Int64 = 1000
    }

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
        var device: DeviceID?
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
                let clock = try loadSyncState(statements)
                result.device = clock.device
                hlc = clock
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

    /// The clock and the change sequence resumed from their bounds; the device is the configured one,
    /// else the one the database minted.
    private func loadSyncState(_ w: WriterStatements) throws(SQLiteError) -> HybridLogicalClock {
        let s = w.loadSyncState
        defer { s.reset() }
        guard try s.step() else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "sync_state has no row")
        }
        let stored = s.text(0)
        guard let device = configuration.deviceId ?? (try? DeviceID(stored)) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "sync_state holds an invalid device id")
        }
        // Held far below Int64.max (a damaged file): the sequence and the bounds add to them.
        bounds = SyncBounds(clock: min(max(0, s.int64(1)), SyncStamp.maxPhysical), change: min(max(0, s.int64(2)), 1 << 62))
        changeSeq = bounds.change
        return HybridLogicalClock(
            device: device, maxAheadMilliseconds: configuration.maxClockAheadMilliseconds, physical: bounds.clock)
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
                report.device = opened.device
                log(.notice, "bookmark store: \(path) is open again")
            } else {
                let error = StoreError.unavailable(opened.error ?? "cannot open \(path)")
                report.results = Array(repeating: .failure(error), count: ops.count)
                return report
            }
        }
        guard let w = statements, hlc != nil else { return report }
        do {
            report.results = try transaction(w) { () throws(SQLiteError) in
                var results: [Result<Int, StoreError>] = []
                results.reserveCapacity(ops.count)
                for op in ops { results.append(.success(try apply(op, w))) }
                report.count = try finish(w, ops)
                return results
            }
            report.commits = 1
            confirmBounds()
        } catch {
            boundsInFlight = nil
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
                        confirmBounds()
                        report.results.append(.success(value))
                    } catch {
                        boundsInFlight = nil
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
            // A change made here: stamped after the record the box holds for the key, whatever it is.
            let previous = try storedRecord(w, b.profile, b.contentId)
            try writeBookmark(w, SyncedBookmark(b), profile: b.profile, contentId: b.contentId, stamp: stamp(after: previous))
            return 1
        case .delete(let profile, let contentId):
            guard let previous = try storedBookmarkStamp(w, profile, contentId) else { return 0 }
            try writeTombstone(w, .deleted, profile: profile, contentId: contentId, stamp: stamp(after: previous))
            return 1
        case .clear(let profile):
            // A tombstone per bookmark the profile holds here, each stamped after the bookmark it ends.
            var held: [(String, SyncStamp?)] = []
            let s = w.profileStamps
            do {
                defer { s.reset() }
                try s.bind(1, profile)
                while try s.step() { held.append((s.text(0), try? SyncRows.stamp(s, at: 1))) }
            }
            for (contentId, previous) in held {
                try writeTombstone(w, .cleared, profile: profile, contentId: contentId, stamp: stamp(after: previous))
            }
            return held.count
        case .merge(let remote):
            return try merge(remote, w) ? 1 : 0
        case .mergeWatched(let breaks):
            var changed = 0
            let s = w.mergeWatched
            for (breakId, at) in breaks.watchedAt.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                defer { s.reset() }
                try s.bind(1, breaks.contentId)
                try s.bind(2, breakId)
                try s.bind(3, at)
                try s.bind(4, nextChange())
                try s.run()
                changed += w.db.changes
            }
            return changed > 0 ? 1 : 0
        case .watched(let contentId, let breakId, let at):
            let s = w.markWatched
            defer { s.reset() }
            try s.bind(1, contentId)
            try s.bind(2, breakId)
            try s.bind(3, at)
            try s.bind(4, nextChange())
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
        case .metrics(let metrics):
            let s = w.upsertMetric
            // In key order: the rows go into the table's b-tree in order.
            for (series, value) in metrics.values.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                defer { s.reset() }
                try s.bind(1, series)
                // SQLite's integers are signed: the bits of the UInt64, read back the same way.
                try s.bind(2, Int64(bitPattern: value))
                try s.run()
            }
            if let since = metrics.since {
                let d = w.setDeviceValue
                defer { d.reset() }
                try d.bind(1, SQLiteSchema.metricsSinceKey)
                try d.bind(2, since)
                try d.run()
            }
            return 1
        }
    }

    // MARK: Sync (docs/sync.md)

    private func nextChange() -> Int64 {
        changeSeq += 1
        return changeSeq
    }

    /// The stamp for a change made on this box to a key whose record is stamped `previous`.
    private func stamp(after previous: SyncStamp?) -> SyncStamp {
        // `commit` applies writes only with the clock loaded (`open` loads it with the statements).
        hlc!.stamp(now: clock(), after: previous)
    }

    /// The stamp of the record the key holds (a bookmark or a tombstone); nil if it holds none, or a row
    /// that does not decode (logged; the change then takes a fresh stamp).
    private func storedRecord(_ w: WriterStatements, _ profile: String, _ contentId: String) throws(SQLiteError) -> SyncStamp? {
        switch try SyncRows.record(
            profile: profile, contentId: contentId, bookmark: w.storedBookmark, tombstone: w.storedTombstone)
        {
        case .success(let record): return record.stamp
        case .failure(let error):
            log(.warning, "bookmark store: the stored sync record of \(contentId) is invalid (\(error)); stamping afresh")
            return nil
        case nil: return nil
        }
    }

    /// The stamp of the key's bookmark if it holds one (not a tombstone): what a delete ends.
    private func storedBookmarkStamp(_ w: WriterStatements, _ profile: String, _ contentId: String) throws(SQLiteError)
        -> SyncStamp??
    {
        let s = w.storedBookmark
        defer { s.reset() }
        try s.bind(1, profile)
        try s.bind(2, contentId)
        guard try s.step() else { return nil }
        return .some(try? SyncRows.stamp(s, at: 5))
    }

    private func writeBookmark(
        _ w: WriterStatements, _ b: SyncedBookmark, profile: String, contentId: String, stamp: SyncStamp
    ) throws(SQLiteError) {
        let s = w.upsertBookmark
        do {
            defer { s.reset() }
            try s.bind(1, profile)
            try s.bind(2, contentId)
            try s.bind(3, b.contentTime)
            try s.bind(4, b.streamTime)
            try s.bind(5, b.streamId)
            try s.bind(6, b.updatedAt)
            try s.bind(7, b.finished)
            try bindStamp(s, 8, stamp)
            try s.bind(11, nextChange())
            try s.run()
        }
        try removeKey(w.deleteTombstone, profile, contentId)
    }

    private func writeTombstone(
        _ w: WriterStatements, _ kind: TombstoneKind, profile: String, contentId: String, stamp: SyncStamp
    ) throws(SQLiteError) {
        let s = w.upsertTombstone
        do {
            defer { s.reset() }
            try s.bind(1, profile)
            try s.bind(2, contentId)
            try s.bind(3, Int64(kind.rawValue))
            try bindStamp(s, 4, stamp)
            try s.bind(7, nextChange())
            try s.run()
        }
        try removeKey(w.deleteBookmark, profile, contentId)
    }

    private func bindStamp(_ s: SQLiteStatement, _ at: Int32, _ stamp: SyncStamp) throws(SQLiteError) {
        try s.bind(at, stamp.physical)
        try s.bind(at + 1, Int64(stamp.counter))
        try s.bind(at + 2, stamp.device.text)
    }

    private func removeKey(_ s: SQLiteStatement, _ profile: String, _ contentId: String) throws(SQLiteError) {
        defer { s.reset() }
        try s.bind(1, profile)
        try s.bind(2, contentId)
        try s.run()
    }

    /// Applies a record from another box under the rule: it replaces the key's record only if it wins
    /// over it (`SyncRecord.supersedes`). The clock hears its stamp either way (within its cap). Returns
    /// whether the local record changed. A stored row that does not decode loses to any valid record.
    private func merge(_ remote: SyncRecord, _ w: WriterStatements) throws(SQLiteError) -> Bool {
        hlc!.receive(remote.stamp, now: clock())
        let local = try SyncRows.record(
            profile: remote.profile, contentId: remote.contentId, bookmark: w.storedBookmark, tombstone: w.storedTombstone)
        if case .success(let local) = local, !remote.supersedes(local) { return false }
        switch remote.value {
        case .bookmark(let b):
            try writeBookmark(w, b, profile: remote.profile, contentId: remote.contentId, stamp: remote.stamp)
        case .tombstone(let kind):
            try writeTombstone(w, kind, profile: remote.profile, contentId: remote.contentId, stamp: remote.stamp)
        }
        return true
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
        try saveSyncState(w)
        guard ops.contains(where: \.changesBookmarks) else { return nil }
        try boundTombstones(w)
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

    /// Moves the bounds ahead in the batch's transaction if the clock or the sequence reached them.
    private func saveSyncState(_ w: WriterStatements) throws(SQLiteError) {
        guard let hlc else { return }
        var next = bounds
        if hlc.physical >= next.clock { next.clock = hlc.physical + SyncBounds.clockStep }
        if changeSeq >= next.change { next.change = changeSeq + SyncBounds.changeStep }
        guard next != bounds else { return }
        let s = w.saveSyncState
        defer { s.reset() }
        try s.bind(1, next.clock)
        try s.bind(2, next.change)
        try s.run()
        boundsInFlight = next
    }

    /// The transaction committed: the bounds it wrote are the database's.
    private func confirmBounds() {
        if let boundsInFlight { bounds = boundsInFlight }
        boundsInFlight = nil
    }

    /// Drops the oldest tombstones (by change order) beyond their own bound.
    private func boundTombstones(_ w: WriterStatements) throws(SQLiteError) {
        let c = w.countTombstones
        let count: Int64
        do {
            defer { c.reset() }
            count = try c.step() ? c.int64(0) : 0
        }
        guard count > Int64(configuration.tombstoneCapacity) else { return }
        let s = w.evictTombstones
        defer { s.reset() }
        try s.bind(1, count - Int64(max(0, configuration.tombstoneCapacity)))
        try s.run()
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
