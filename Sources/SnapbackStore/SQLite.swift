// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc

// A thin layer over SQLite's C API: a connection, prepared statements (bind, step, read columns,
// reset, finalize) and the error a failed call left. No ORM, no Foundation. Each connection is used by
// one thread at a time (opened with SQLITE_OPEN_NOMUTEX).

/// A failed SQLite call: the extended result code, SQLite's message and the OS errno behind it.
package struct SQLiteError: Error, CustomStringConvertible {
    /// Extended result code (`SQLITE_IOERR_WRITE`, …); `primary` is the basic code.
    package var code: Int32
    package var message: String
    /// errno of the last failed system call (`sqlite3_system_errno`), 0 if none.
    package var systemErrno: Int32 = 0

    package var primary: Int32 { code & 0xff }

    package var description: String {
        var text = "\(message) (\(String(cString: sqlite3_errstr(code))), code \(code)"
        if systemErrno != 0 { text += ", errno \(systemErrno) \(String(cString: strerror(systemErrno)))" }
        return text + ")"
    }

    /// The file is not a database, or its content is damaged.
    package var isCorruption: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }

    /// Out of space: the disk (SQLITE_FULL, or a write that failed with ENOSPC/EDQUOT) or the
    /// connection's `max_page_count`.
    package var isFull: Bool { primary == SQLITE_FULL || systemErrno == ENOSPC || systemErrno == EDQUOT }

    /// A failure of one statement's own data (a constraint, a value too big or of the wrong type), not
    /// of the database: the other writes of its transaction may still commit without it.
    package var isStatementSpecific: Bool {
        primary == SQLITE_CONSTRAINT || primary == SQLITE_TOOBIG || primary == SQLITE_MISMATCH || primary == SQLITE_RANGE
    }

    /// How the store reports it: full → RESOURCE_EXHAUSTED, anything else (read-only, cannot open, I/O
    /// error, busy, corrupt) → UNAVAILABLE.
    package var storeError: StoreError {
        isFull ? .full(description) : .unavailable(description)
    }
}

/// One database connection. Used by one thread at a time (the writer's is opened on the loop thread,
/// then handed to the writer thread), hence `@unchecked Sendable`.
package final class SQLiteConnection: @unchecked Sendable {
    package let handle: OpaquePointer
    package let path: String

    /// Opens `path`; `create` makes the file if it is missing. SQLite opens lazily: a file that is not a
    /// database is only noticed by the first statement.
    package init(path: String, create: Bool) throws(SQLiteError) {
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if create { flags |= SQLITE_OPEN_CREATE }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError(
                code: rc, message: db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open",
                systemErrno: db.map { sqlite3_system_errno($0) } ?? 0)
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        // _v2: statements still alive keep the connection as a zombie until they are finalized.
        sqlite3_close_v2(handle)
    }

    package func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), systemErrno: sqlite3_system_errno(handle))
    }

    package func busyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs SQL without results (one or more statements).
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            var failure = error(rc)
            if let message {
                failure.message = String(cString: message)
            }
            sqlite3_free(message)
            throw failure
        }
    }

    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        return SQLiteStatement(statement, connection: self)
    }

    /// Every row's first column as text (PRAGMA quick_check, journal_mode).
    package func texts(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() {
            rows.append(statement.text(0))
        }
        return rows
    }

    /// The first column of the first row as an integer (PRAGMA user_version, count(*)).
    package func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// True inside an explicit transaction.
    package var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}

/// A prepared statement. Bind, step until it returns false, read columns while it returns true; the
/// owner resets it after use (a statement left mid-way holds its read snapshot).
package final class SQLiteStatement {
    package let handle: OpaquePointer
    /// Keeps the connection open as long as the statement lives.
    private let connection: SQLiteConnection

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    package func bind(_ index: Int32, _ value: String) throws(SQLiteError) {
        var value = value
        let rc = value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // An empty buffer may have no base address; SQLite wants a non-null pointer for "".
                if let base = chars.baseAddress {
                    snapback_sqlite3_bind_text(handle, index, base, Int32(chars.count))
                } else {
                    snapback_sqlite3_bind_text(handle, index, "", 0)
                }
            }
        }
        if rc != SQLITE_OK { throw connection.error(rc) }
    }

    package func bind(_ index: Int32, _ value: Double) throws(SQLiteError) {
        let rc = sqlite3_bind_double(handle, index, value)
        if rc != SQLITE_OK { throw connection.error(rc) }
    }

    package func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        let rc = sqlite3_bind_int64(handle, index, value)
        if rc != SQLITE_OK { throw connection.error(rc) }
    }

    package func bind(_ index: Int32, _ value: [UInt8]) throws(SQLiteError) {
        let rc = value.withUnsafeBytes {
            snapback_sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count))
        }
        if rc != SQLITE_OK { throw connection.error(rc) }
    }

    package func bind(_ index: Int32, _ value: Bool) throws(SQLiteError) {
        try bind(index, Int64(value ? 1 : 0))
    }

    /// One step: true when a row is ready, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = connection.error(rc)
            sqlite3_reset(handle)
            throw failure
        }
    }

    /// Steps to the end (a statement without results).
    package func run() throws(SQLiteError) {
        defer { reset() }
        while try step() {}
    }

    /// Ready for new bindings; releases the statement's read snapshot.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    package func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    package func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
}
