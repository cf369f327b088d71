// SPDX-License-Identifier: Apache-2.0
import CSQLite
import SnapbackTimeline

/// The SQLite store's reads: a second, query-only connection (WAL readers never wait for the writer)
/// answering indexed point queries and one page of a profile.
///
/// **Thread.** The loop thread only — it is built there with the store and every call comes from the
/// store's front; ``ThreadOwner`` checks it in debug builds. It may be closed (no connection) until the
/// writer has opened a database for it to read.
final class StoreReader {
    private let path: String
    private let busyTimeout: Int32
    private let owner = ThreadOwner()
    private var statements: ReaderStatements?

    init(path: String, busyTimeoutMilliseconds: Int32) {
        self.path = path
        self.busyTimeout = busyTimeoutMilliseconds
    }

    var isOpen: Bool { statements != nil }

    /// Opens the read connection on the database the writer opened. Returns the device-wide last-break
    /// time stored there.
    func open() throws(SQLiteError) -> Double? {
        owner.check("the store's reader")
        let opened = try ReaderStatements(SQLiteSchema.openReader(path: path, busyTimeout: busyTimeout))
        let s = opened.lastBreak
        defer { s.reset() }
        let lastBreak = try s.step() ? s.double(0) : nil
        statements = opened
        return lastBreak
    }

    /// Lets the connection go (the writer's is then the last one, and closing it checkpoints the WAL).
    func close() {
        owner.check("the store's reader")
        statements = nil
    }

    /// The statements; the front checks ``isOpen`` first, so the error is only a safety net.
    private func ready() throws(SQLiteError) -> ReaderStatements {
        owner.check("the store's reader")
        guard let statements else { throw SQLiteError(code: SQLITE_CANTOPEN, message: "the read connection is not open") }
        return statements
    }

    /// The daemon's stored counters, with their start. Read once, at start: its
    /// statements are not kept.
    func metrics() throws(SQLiteError) -> StoredMetrics {
        let r = try ready()
        var stored = StoredMetrics()
        let rows = try r.db.prepare("SELECT series, value FROM daemon_metrics")
        while try rows.step() { stored.values[rows.text(0)] = UInt64(bitPattern: rows.int64(1)) }
        let since = try r.db.prepare("SELECT value FROM device_state WHERE key = ?1")
        try since.bind(1, SQLiteSchema.metricsSinceKey)
        if try since.step() { stored.since = since.double(0) }
        return stored
    }

    func bookmark(profile: String, contentId: String) throws(SQLiteError) -> Bookmark? {
        let r = try ready()
        let s = r.getBookmark
        defer { s.reset() }
        try s.bind(1, profile)
        try s.bind(2, contentId)
        guard try s.step() else { return nil }
        return Bookmark(
            profile: profile, contentId: contentId, contentTime: s.double(0), streamTime: s.double(1),
            streamId: s.text(2), updatedAt: s.double(3), finished: s.int64(4) != 0)
    }

    /// Up to `rows` bookmarks of a profile, most recently saved first, saved before `cursor` (a row's
    /// `saved_seq`), each with its `saved_seq`.
    func page(profile: String, before cursor: Int64?, rows: Int) throws(SQLiteError) -> [(Bookmark, Int64)] {
        let r = try ready()
        let s = cursor == nil ? r.firstPage : r.nextPage
        defer { s.reset() }
        var page: [(Bookmark, Int64)] = []
        try s.bind(1, profile)
        if let cursor {
            try s.bind(2, cursor)
            try s.bind(3, Int64(rows))
        } else {
            try s.bind(2, Int64(rows))
        }
        while page.count < rows, try s.step() {
            let bookmark = Bookmark(
                profile: profile, contentId: s.text(0), contentTime: s.double(1), streamTime: s.double(2),
                streamId: s.text(3), updatedAt: s.double(4), finished: s.int64(5) != 0)
            page.append((bookmark, s.int64(6)))
        }
        return page
    }

    /// Break ids of `contentId` watched within one of `ranges`.
    func watchedBreaks(contentId: String, within ranges: [ClosedRange<Double>]) throws(SQLiteError) -> Set<String> {
        let r = try ready()
        let s = r.watched
        var ids: Set<String> = []
        for range in ranges {
            defer { s.reset() }
            try s.bind(1, contentId)
            try s.bind(2, range.lowerBound)
            try s.bind(3, range.upperBound)
            while try s.step() { ids.insert(s.text(0)) }
        }
        return ids
    }
}

extension StoreReader {
    func syncRecord(profile: String, contentId: String) throws(SQLiteError) -> SyncRecord? {
        let r = try ready()
        switch try SyncRows.record(profile: profile, contentId: contentId, bookmark: r.syncBookmark, tombstone: r.syncTombstone) {
        case .success(let record): return record
        case .failure(let error): throw SQLiteError(code: SQLITE_CORRUPT, message: "invalid sync record: \(error)")
        case nil: return nil
        }
    }

    /// The store's id (minted with the database) and the greatest change number it holds.
    func changeStreamOrigin() throws(SQLiteError) -> (storeId: String, lastSeq: Int64) {
        let s = try ready().origin()
        defer { s.reset() }
        guard try s.step() else { throw SQLiteError(code: SQLITE_CORRUPT, message: "sync_state has no row") }
        return (s.text(0), s.int64(1))
    }

    /// Up to `limit` changes numbered after `seq`, in order; a row that is not a valid record (an id over
    /// the Sync calls' bound) is passed to `invalid` (its number, why) and is an unsyncable change.
    func changes(
        after seq: Int64, limit: Int, invalid: (Int64, SyncInputError) -> Void
    ) throws(SQLiteError) -> [SyncChange] {
        let r = try ready()
        let s = r.changes
        defer { s.reset() }
        try s.bind(1, seq)
        try s.bind(2, Int64(limit))
        var changes: [SyncChange] = []
        while try s.step() {
            let n = s.int64(0)
            let kind = s.int64(1)
            do {
                let change: SyncChange.Change
                switch kind {
                case -1:
                    change = .watched(try WatchedBreaks(contentId: s.text(3), watchedAt: [s.text(6): s.double(7)]))
                case 0:
                    change = .record(try SyncRows.bookmarkRecord(profile: s.text(2), contentId: s.text(3), s, at: 4))
                default:
                    change = .record(
                        try SyncRows.tombstoneRecord(profile: s.text(2), contentId: s.text(3), s, kind: 1, stampAt: 9))
                }
                changes.append(SyncChange(seq: n, change: change))
            } catch {
                invalid(n, error)
                changes.append(SyncChange(seq: n, change: .unsyncable))
            }
        }
        return changes
    }
}
