// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc
import SnapbackTimeline

/// A failed SQLite call of the outbox.
public struct OutboxError: Error, CustomStringConvertible {
    public var description: String
}

/// The agent's durable state (`<state-directory>/outbox.db`, SQLite): this box's changes waiting to go out,
/// and the last change of snapbackd's stream they include (the cursor). Changes and cursor are written in
/// one transaction, committed before the agent reads on: after a crash or a power cut the agent resumes
/// from the cursor, and every change after it is either in the outbox or read again.
///
/// One entry per bucket key: a newer record of a key replaces the waiting one (it carries the key's
/// latest state, which is all the bucket keeps), watched breaks join the waiting entry of their content.
/// Either moves the entry to the end. Entries go out oldest first and leave only once the server has
/// acknowledged them (``remove(id:)``).
public final class Outbox {
    private let db: OpaquePointer
    public let path: String

    public struct Entry: Equatable, Sendable {
        public var id: Int64
        public var key: String
        public var value: [UInt8]
    }

    public init(path: String) throws(OutboxError) {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(
            path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let handle { sqlite3_close(handle) }
            throw OutboxError(description: "\(path): \(message)")
        }
        db = handle
        self.path = path
        sqlite3_busy_timeout(db, 5000)
        try exec(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,
                value BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            """)
    }

    deinit { sqlite3_close(db) }

    /// Ties the outbox to the configured household and bucket. Its entries are keys of one household in
    /// one bucket, and its cursor says what was sent there: when either changed since the last run,
    /// the entries are dropped and the cursor goes back to 0, so that this box's records all go to the
    /// new place (snapbackd sends each key's latest state again from the start). Returns whether it did.
    @discardableResult
    public func bind(to place: String) throws(OutboxError) -> Bool {
        let hash = Int64(bitPattern: Self.fnv1a(place))
        let current = try query("SELECT value FROM state WHERE name = 'place'", []) { sqlite3_column_int64($0, 0) }.first
        if current == hash { return false }
        try exec("BEGIN IMMEDIATE")
        do throws(OutboxError) {
            try run("DELETE FROM outbox", [])
            try run(
                "INSERT INTO state (name, value) VALUES ('cursor', 0) ON CONFLICT(name) DO UPDATE SET value = 0", [])
            try run(
                "INSERT INTO state (name, value) VALUES ('place', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                [.int(hash)])
            try exec("COMMIT")
        } catch {
            _ = try? exec("ROLLBACK")
            throw error
        }
        return current != nil
    }

    /// FNV-1a, 64 bits: a stable digest of the household and bucket names (not a secret).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// The store the cursor's change numbers belong to (a digest of the id snapbackd's store minted); nil
    /// before the first stream, or in an outbox an agent filled before it kept one.
    public func store() throws(OutboxError) -> Int64? {
        try query("SELECT value FROM state WHERE name = 'store'", []) { sqlite3_column_int64($0, 0) }.first
    }

    /// Another store's changes (or an older copy's) are read from the start: the cursor goes back to 0 and
    /// the outbox is tied to `store`, in one transaction. The waiting entries stay: they are changes this
    /// box made that did not go out yet.
    public func restart(store: Int64) throws(OutboxError) {
        try setState([("cursor", 0), ("store", store)])
    }

    /// A number the agent keeps in the outbox's state (the bucket's stream identity); nil when unset.
    public func state(_ name: String) throws(OutboxError) -> Int64? {
        try query("SELECT value FROM state WHERE name = ?", [.text(name)]) { sqlite3_column_int64($0, 0) }.first
    }

    public func setState(_ values: [(name: String, value: Int64)]) throws(OutboxError) {
        try exec("BEGIN IMMEDIATE")
        do throws(OutboxError) {
            for (name, value) in values {
                try run(
                    "INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    [.text(name), .int(value)])
            }
            try exec("COMMIT")
        } catch {
            _ = try? exec("ROLLBACK")
            throw error
        }
    }

    /// The changes up to this number are read again for a repair: every record among them goes out,
    /// whichever box made it (nil: no repair under way).
    public func repairUntil() throws(OutboxError) -> Int64? { try state("repair_until") }

    /// Starts a repair: the changes read so far are read again from 0, and every record among them is
    /// sent (the bucket lost them, or holds older ones). In one transaction with the cursor's move.
    public func startRepair() throws(OutboxError) {
        let until = max(try cursor(), try repairUntil() ?? 0)
        try setState([("repair_until", until), ("cursor", 0)])
    }

    /// The digest an outbox keeps of a store's id.
    public static func storeDigest(_ storeId: String) -> Int64 { Int64(bitPattern: fnv1a(storeId)) }

    /// The last change of snapbackd's stream whose effect is in the outbox (0: none yet).
    public func cursor() throws(OutboxError) -> Int64 {
        try query("SELECT value FROM state WHERE name = 'cursor'", []) { statement in sqlite3_column_int64(statement, 0) }
            .first ?? 0
    }

    /// Adds entries and moves the cursor to `cursor`, in one transaction. `entries` are (key, value) in
    /// stream order; a watched-breaks entry is merged with the waiting entry of its key by `combine`.
    /// A repair under way ends with the transaction that moves the cursor to its end (`repairDone`).
    public func append(
        _ entries: [(key: String, value: [UInt8])], cursor: Int64, repairDone: Bool = false,
        combine: ([UInt8], [UInt8]) -> [UInt8] = { _, new in new }
    ) throws(OutboxError) {
        try exec("BEGIN IMMEDIATE")
        do throws(OutboxError) {
            for entry in entries {
                let waiting = try query("SELECT value FROM outbox WHERE key = ?", [.text(entry.key)]) { statement in
                    Self.blob(statement, 0)
                }.first
                let value = waiting.map { combine($0, entry.value) } ?? entry.value
                try run("DELETE FROM outbox WHERE key = ?", [.text(entry.key)])
                try run("INSERT INTO outbox (key, value) VALUES (?, ?)", [.text(entry.key), .blob(value)])
            }
            try run(
                "INSERT INTO state (name, value) VALUES ('cursor', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                [.int(cursor)])
            if repairDone { try run("DELETE FROM state WHERE name = 'repair_until'", []) }
            try exec("COMMIT")
        } catch {
            _ = try? exec("ROLLBACK")
            throw error
        }
    }

    /// The oldest entries, up to `limit`.
    public func first(_ limit: Int = 1) throws(OutboxError) -> [Entry] {
        try query("SELECT id, key, value FROM outbox ORDER BY id LIMIT ?", [.int(Int64(limit))]) { statement in
            Entry(
                id: sqlite3_column_int64(statement, 0), key: String(cString: sqlite3_column_text(statement, 1)),
                value: Self.blob(statement, 2))
        }
    }

    /// Removes an entry the server acknowledged; an entry replaced since it was read (another id) stays.
    public func remove(id: Int64) throws(OutboxError) {
        try run("DELETE FROM outbox WHERE id = ?", [.int(id)])
    }

    public func count() throws(OutboxError) -> Int {
        try query("SELECT count(*) FROM outbox", []) { Int(sqlite3_column_int64($0, 0)) }.first ?? 0
    }

    // MARK: SQLite

    enum Value {
        case int(Int64)
        case text(String)
        case blob([UInt8])
    }

    private func error(_ what: String) -> OutboxError {
        OutboxError(description: "\(path): \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    private func exec(_ sql: String) throws(OutboxError) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    private func run(_ sql: String, _ values: [Value]) throws(OutboxError) {
        _ = try query(sql, values) { _ in () }
    }

    private func query<T>(_ sql: String, _ values: [Value], _ row: (OpaquePointer) -> T) throws(OutboxError) -> [T] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw error(sql) }
        defer { sqlite3_finalize(statement) }
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .int(let n): rc = sqlite3_bind_int64(statement, index, n)
            case .text(let s): rc = snapback_sqlite3_bind_text(statement, index, s, -1)
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { snapback_sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
            }
            guard rc == SQLITE_OK else { throw error(sql) }
        }
        var rows: [T] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                rows.append(row(statement))
            } else if rc == SQLITE_DONE {
                return rows
            } else {
                throw error(sql)
            }
        }
    }

    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let base = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
