// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc

/// The database layout, its forward migrations, and opening a database file: WAL, synchronous=FULL,
/// integrity and version checks, moving a bad file aside.
enum SQLiteSchema {
    /// `PRAGMA user_version` of a database this build writes.
    static let version: Int32 = 5

    /// `migrations[n]` takes a database from version n to n + 1. A fresh file (version 0) runs them all;
    /// an older one runs those it lacks, in one transaction. Never edit a step once shipped: add one.
    static let migrations: [String] = [
        // 1: the viewer state. Bookmarks by (profile, content); watched breaks by (content, break);
        // device-wide values by key.
        """
        CREATE TABLE bookmarks(
            profile      TEXT NOT NULL,
            content_id   TEXT NOT NULL,
            content_time REAL NOT NULL,
            stream_time  REAL NOT NULL,
            stream_id    TEXT NOT NULL,
            updated_at   REAL NOT NULL,
            PRIMARY KEY (profile, content_id)
        ) WITHOUT ROWID;
        CREATE TABLE watched_breaks(
            content_id TEXT NOT NULL,
            break_id   TEXT NOT NULL,
            watched_at REAL NOT NULL,
            PRIMARY KEY (content_id, break_id)
        ) WITHOUT ROWID;
        CREATE TABLE device_state(
            key   TEXT NOT NULL PRIMARY KEY,
            value REAL NOT NULL
        ) WITHOUT ROWID;
        """,
        // 2: the finished flag; indexes for paging a profile (most recent first), evicting the oldest
        // bookmarks and pruning old watched breaks.
        """
        ALTER TABLE bookmarks ADD COLUMN finished INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX bookmarks_by_profile_recent ON bookmarks(profile, updated_at DESC, content_id);
        CREATE INDEX bookmarks_by_age ON bookmarks(updated_at);
        CREATE INDEX watched_breaks_by_age ON watched_breaks(watched_at);
        """,
        // 3: bookmarks ordered by the order of their saves, not by their wall time: the wall clock is
        // stepped (a box that booted at 1970, a clock set back), and a row dated in the future would
        // stay "most recent", never evicted, for as long as the clock lags behind it. Existing rows are
        // numbered in the order their times gave.
        """
        ALTER TABLE bookmarks ADD COLUMN saved_seq INTEGER NOT NULL DEFAULT 0;
        UPDATE bookmarks SET saved_seq = ranked.n FROM
            (SELECT profile AS p, content_id AS c,
                row_number() OVER (ORDER BY updated_at, profile, content_id) AS n FROM bookmarks) AS ranked
            WHERE bookmarks.profile = ranked.p AND bookmarks.content_id = ranked.c;
        DROP INDEX bookmarks_by_profile_recent;
        DROP INDEX bookmarks_by_age;
        CREATE INDEX bookmarks_by_profile_recent ON bookmarks(profile, saved_seq DESC);
        CREATE UNIQUE INDEX bookmarks_by_save ON bookmarks(saved_seq);
        """,
        // 4: household sync (docs/sync.md). Every bookmark carries the stamp of the change that made it,
        // deletes and clears leave tombstones with theirs, and every row of the three tables a change
        // writes gets the next number of one change sequence ("changes since N"): a bookmark's saved_seq
        // (already the order of its writes, and indexed), the others' change_seq. The box's device id is
        // minted here, once; sync_state keeps bounds the clock and the sequence resume from (the writer
        // moves them ahead in steps, not at every commit). Existing rows are stamped with their wall time
        // and this box's id, the watched breaks numbered after the bookmarks in the order of their times;
        // the clock starts at 0 (a row saved while the wall clock ran years ahead must not pin it there).
        """
        CREATE TABLE sync_state(
            id             INTEGER PRIMARY KEY CHECK (id = 1),
            device_id      TEXT NOT NULL,
            clock_bound    INTEGER NOT NULL,
            change_bound   INTEGER NOT NULL
        );
        INSERT INTO sync_state VALUES (1, lower(hex(randomblob(8))), 0, 0);
        ALTER TABLE bookmarks ADD COLUMN stamp_physical INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE bookmarks ADD COLUMN stamp_counter INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE bookmarks ADD COLUMN stamp_device TEXT NOT NULL DEFAULT '';
        UPDATE bookmarks SET
            stamp_physical = CAST(max(0, min(updated_at, 253402300799.999)) * 1000 AS INTEGER),
            stamp_device = (SELECT device_id FROM sync_state);
        CREATE TABLE bookmark_tombstones(
            profile        TEXT NOT NULL,
            content_id     TEXT NOT NULL,
            kind           INTEGER NOT NULL,
            stamp_physical INTEGER NOT NULL,
            stamp_counter  INTEGER NOT NULL,
            stamp_device   TEXT NOT NULL,
            change_seq     INTEGER NOT NULL,
            PRIMARY KEY (profile, content_id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX bookmark_tombstones_by_change ON bookmark_tombstones(change_seq);
        ALTER TABLE watched_breaks ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
        UPDATE watched_breaks SET change_seq = ranked.n FROM
            (SELECT content_id AS c, break_id AS b,
                (SELECT coalesce(max(saved_seq), 0) FROM bookmarks)
                    + row_number() OVER (ORDER BY watched_at, content_id, break_id) AS n FROM watched_breaks) AS ranked
            WHERE watched_breaks.content_id = ranked.c AND watched_breaks.break_id = ranked.b;
        CREATE UNIQUE INDEX watched_breaks_by_change ON watched_breaks(change_seq);
        """,
        // 5: the daemon's cumulative counters (docs/telemetry.md), one row per series, keyed by its
        // OpenMetrics name so that a catalog that grows reads what an older one wrote. Their start is a
        // device_state row.
        """
        CREATE TABLE daemon_metrics(
            series TEXT NOT NULL PRIMARY KEY,
            value  INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
    ]

    static let lastBreakKey = "last_break_completed_at"
    /// device_state: the wall time the daemon's counters began.
    static let metricsSinceKey = "metrics_since"

    /// Why a database file was not usable as it is. A bad file comes with its connection still open:
    /// closing it first would let SQLite delete the -wal and -shm files that belong with it, so the
    /// caller renames the files aside, then lets the connection go.
    enum OpenProblem: Error {
        /// Not a database, or `quick_check` found damage.
        case corrupt(String, SQLiteConnection?)
        /// Written by a newer snapbackd: this one cannot know what its data means.
        case newer(Int32, SQLiteConnection?)
        /// Cannot be opened or written now (read-only directory, I/O error, disk full …).
        case failed(SQLiteError)
    }

    /// The writer's connection, ready: WAL, synchronous=FULL, checked, migrated.
    ///
    /// - Parameters:
    ///   - migrateTo: the version to migrate to (tests build older files with a smaller one).
    static func openWriter(
        path: String, busyTimeout: Int32, maxPageCount: Int64?,
        migrateTo target: Int32 = version
    ) throws(OpenProblem) -> SQLiteConnection {
        let db: SQLiteConnection
        do {
            db = try SQLiteConnection(path: path, create: true)
        } catch {
            throw error.isCorruption ? .corrupt(error.description, nil) : .failed(error)
        }
        do {
            db.busyTimeout(milliseconds: busyTimeout)
            // WAL: readers (the loop thread) never wait for the writer. FULL: the WAL is fsynced at every
            // commit, so a committed transaction survives a power cut, not just a crash.
            let mode = try db.texts("PRAGMA journal_mode=WAL").first ?? ""
            guard mode.lowercased() == "wal" else {
                throw OpenProblem.failed(SQLiteError(code: SQLITE_CANTOPEN, message: "journal_mode is \(mode), not wal"))
            }
            try db.execute("PRAGMA synchronous=FULL")
            // Keeps the WAL file from staying large after a checkpoint.
            try db.execute("PRAGMA journal_size_limit=4194304")
            let check = try db.texts("PRAGMA quick_check")
            guard check == ["ok"] else {
                throw OpenProblem.corrupt("quick_check: " + check.prefix(3).joined(separator: "; "), db)
            }
            let found = Int32(truncatingIfNeeded: try db.integer("PRAGMA user_version"))
            if found > target { throw OpenProblem.newer(found, db) }
            if found < target { try migrate(db, from: found, to: target) }
            if let maxPageCount {
                _ = try db.integer("PRAGMA max_page_count=\(maxPageCount)")
            }
        } catch let problem as OpenProblem {
            throw problem
        } catch let error as SQLiteError {
            throw error.isCorruption ? .corrupt(error.description, db) : .failed(error)
        } catch {
            throw .failed(SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
        return db
    }

    private static func migrate(_ db: SQLiteConnection, from: Int32, to target: Int32) throws(SQLiteError) {
        guard from >= 0 else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "negative user_version \(from)")
        }
        try db.execute("BEGIN IMMEDIATE")
        do {
            for step in Int(from)..<Int(target) {
                try db.execute(migrations[step])
            }
            try db.execute("PRAGMA user_version=\(target)")
            try db.execute("COMMIT")
        } catch {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            throw error
        }
    }

    /// A read connection on an existing database: query_only, a short busy timeout (it runs on the loop
    /// thread; WAL readers only wait in rare recovery moments).
    static func openReader(path: String, busyTimeout: Int32) throws(SQLiteError) -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, create: false)
        db.busyTimeout(milliseconds: busyTimeout)
        try db.execute("PRAGMA query_only=1")
        return db
    }

    /// Renames `path` and its -wal and -shm aside as `path.<label>-<unix time>` (plus `-wal`, `-shm`),
    /// with `.1`, `.2` … if that name is taken. Returns the new name of the database file.
    static func moveAside(_ path: String, label: String, now: Double) -> String {
        let base = "\(path).\(label)-\(Int64(now))"
        var target = base
        var n = 0
        while access(target, F_OK) == 0 || access(target + "-wal", F_OK) == 0 {
            n += 1
            target = "\(base).\(n)"
        }
        for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            if rename(path + suffix, target + suffix) != 0 {
                // Last resort: a file that cannot be renamed cannot be kept either.
                unlink(path + suffix)
            }
        }
        return target
    }
}

/// The writer thread's statements.
final class WriterStatements {
    let db: SQLiteConnection
    let begin, commit, rollback: SQLiteStatement
    let upsertBookmark, deleteBookmark, profileStamps, countBookmarks, evictOldest: SQLiteStatement
    let markWatched, mergeWatched, pruneWatched, setLastBreak: SQLiteStatement
    let storedBookmark, storedTombstone, upsertTombstone, deleteTombstone, countTombstones, evictTombstones: SQLiteStatement
    let loadSyncState, saveSyncState: SQLiteStatement
    let upsertMetric, setDeviceValue: SQLiteStatement

    init(_ db: SQLiteConnection) throws(SQLiteError) {
        self.db = db
        begin = try db.prepare("BEGIN IMMEDIATE")
        commit = try db.prepare("COMMIT")
        rollback = try db.prepare("ROLLBACK")
        upsertBookmark = try db.prepare(
            """
            INSERT INTO bookmarks(profile, content_id, content_time, stream_time, stream_id, updated_at, finished,
                stamp_physical, stamp_counter, stamp_device, saved_seq)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            ON CONFLICT(profile, content_id) DO UPDATE SET content_time = excluded.content_time,
                stream_time = excluded.stream_time, stream_id = excluded.stream_id,
                updated_at = excluded.updated_at, finished = excluded.finished, saved_seq = excluded.saved_seq,
                stamp_physical = excluded.stamp_physical, stamp_counter = excluded.stamp_counter,
                stamp_device = excluded.stamp_device
            """)
        deleteBookmark = try db.prepare("DELETE FROM bookmarks WHERE profile = ?1 AND content_id = ?2")
        profileStamps = try db.prepare(
            "SELECT content_id, stamp_physical, stamp_counter, stamp_device FROM bookmarks WHERE profile = ?1")
        countBookmarks = try db.prepare("SELECT count(*) FROM bookmarks")
        evictOldest = try db.prepare(
            """
            DELETE FROM bookmarks WHERE (profile, content_id) IN
                (SELECT profile, content_id FROM bookmarks ORDER BY saved_seq LIMIT ?1)
            """)
        markWatched = try db.prepare(
            """
            INSERT INTO watched_breaks(content_id, break_id, watched_at, change_seq) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(content_id, break_id) DO UPDATE SET watched_at = excluded.watched_at,
                change_seq = excluded.change_seq
            """)
        // Union, a break watched on both sides keeping the later time: a row changes only then.
        mergeWatched = try db.prepare(
            """
            INSERT INTO watched_breaks(content_id, break_id, watched_at, change_seq) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(content_id, break_id) DO UPDATE SET watched_at = excluded.watched_at,
                change_seq = excluded.change_seq
            WHERE excluded.watched_at > watched_breaks.watched_at
            """)
        // Rows before `lo` or between two kept ranges (`hi`, `lo`): run once per gap.
        pruneWatched = try db.prepare("DELETE FROM watched_breaks WHERE watched_at > ?1 AND watched_at < ?2")
        setLastBreak = try db.prepare(
            """
            INSERT INTO device_state(key, value) VALUES ('\(SQLiteSchema.lastBreakKey)', ?1)
            ON CONFLICT(key) DO UPDATE SET value = excluded.value
            """)
        storedBookmark = try db.prepare(
            """
            SELECT content_time, stream_time, stream_id, updated_at, finished, stamp_physical, stamp_counter,
                stamp_device FROM bookmarks WHERE profile = ?1 AND content_id = ?2
            """)
        storedTombstone = try db.prepare(
            """
            SELECT kind, stamp_physical, stamp_counter, stamp_device FROM bookmark_tombstones
            WHERE profile = ?1 AND content_id = ?2
            """)
        upsertTombstone = try db.prepare(
            """
            INSERT INTO bookmark_tombstones(profile, content_id, kind, stamp_physical, stamp_counter, stamp_device,
                change_seq)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(profile, content_id) DO UPDATE SET kind = excluded.kind,
                stamp_physical = excluded.stamp_physical, stamp_counter = excluded.stamp_counter,
                stamp_device = excluded.stamp_device, change_seq = excluded.change_seq
            """)
        deleteTombstone = try db.prepare("DELETE FROM bookmark_tombstones WHERE profile = ?1 AND content_id = ?2")
        countTombstones = try db.prepare("SELECT count(*) FROM bookmark_tombstones")
        evictTombstones = try db.prepare(
            """
            DELETE FROM bookmark_tombstones WHERE change_seq IN
                (SELECT change_seq FROM bookmark_tombstones ORDER BY change_seq LIMIT ?1)
            """)
        // The bounds, the change bound raised to the greatest number a table holds (after the migration,
        // rows are numbered and the bound is 0).
        loadSyncState = try db.prepare(
            """
            SELECT device_id, clock_bound, max(change_bound, (SELECT coalesce(max(saved_seq), 0) FROM bookmarks),
                (SELECT coalesce(max(change_seq), 0) FROM bookmark_tombstones),
                (SELECT coalesce(max(change_seq), 0) FROM watched_breaks))
            FROM sync_state
            """)
        saveSyncState = try db.prepare("UPDATE sync_state SET clock_bound = ?1, change_bound = ?2")
        upsertMetric = try db.prepare(
            """
            INSERT INTO daemon_metrics(series, value) VALUES (?1, ?2)
            ON CONFLICT(series) DO UPDATE SET value = excluded.value
            """)
        setDeviceValue = try db.prepare(
            """
            INSERT INTO device_state(key, value) VALUES (?1, ?2)
            ON CONFLICT(key) DO UPDATE SET value = excluded.value
            """)
    }

    func count() throws(SQLiteError) -> Int {
        defer { countBookmarks.reset() }
        return try countBookmarks.step() ? Int(countBookmarks.int64(0)) : 0
    }
}

/// The loop thread's statements: indexed point queries and one page of a profile.
final class ReaderStatements {
    let db: SQLiteConnection
    let getBookmark, firstPage, nextPage, watched, lastBreak, countBookmarks: SQLiteStatement
    let syncBookmark, syncTombstone, changes: SQLiteStatement
    /// The store's id and greatest change number, prepared at the first change stream (a box without
    /// sync never pays for it).
    var streamOrigin: SQLiteStatement?

    init(_ db: SQLiteConnection) throws(SQLiteError) {
        self.db = db
        getBookmark = try db.prepare(
            """
            SELECT content_time, stream_time, stream_id, updated_at, finished FROM bookmarks
            WHERE profile = ?1 AND content_id = ?2
            """)
        firstPage = try db.prepare(
            """
            SELECT content_id, content_time, stream_time, stream_id, updated_at, finished, saved_seq FROM bookmarks
            WHERE profile = ?1 ORDER BY saved_seq DESC LIMIT ?2
            """)
        // After the previous page's last row (its saved_seq), in the same order.
        nextPage = try db.prepare(
            """
            SELECT content_id, content_time, stream_time, stream_id, updated_at, finished, saved_seq FROM bookmarks
            WHERE profile = ?1 AND saved_seq < ?2 ORDER BY saved_seq DESC LIMIT ?3
            """)
        watched = try db.prepare(
            "SELECT break_id FROM watched_breaks WHERE content_id = ?1 AND watched_at >= ?2 AND watched_at <= ?3")
        lastBreak = try db.prepare("SELECT value FROM device_state WHERE key = '\(SQLiteSchema.lastBreakKey)'")
        countBookmarks = try db.prepare("SELECT count(*) FROM bookmarks")
        syncBookmark = try db.prepare(
            """
            SELECT content_time, stream_time, stream_id, updated_at, finished, stamp_physical, stamp_counter,
                stamp_device FROM bookmarks WHERE profile = ?1 AND content_id = ?2
            """)
        syncTombstone = try db.prepare(
            """
            SELECT kind, stamp_physical, stamp_counter, stamp_device FROM bookmark_tombstones
            WHERE profile = ?1 AND content_id = ?2
            """)
        // The rows changed after ?1, in change order, ?2 at most: bookmarks (kind 0), tombstones (their
        // kind), watched breaks (kind -1, the break id in the stream id's column, its time in updated_at's).
        changes = try db.prepare(
            """
            SELECT saved_seq, 0, profile, content_id, content_time, stream_time, stream_id, updated_at, finished,
                stamp_physical, stamp_counter, stamp_device FROM bookmarks WHERE saved_seq > ?1
            UNION ALL
            SELECT change_seq, kind, profile, content_id, 0, 0, '', 0, 0, stamp_physical, stamp_counter, stamp_device
                FROM bookmark_tombstones WHERE change_seq > ?1
            UNION ALL
            SELECT change_seq, -1, '', content_id, 0, 0, break_id, watched_at, 0, 0, 0, ''
                FROM watched_breaks WHERE change_seq > ?1
            ORDER BY 1 LIMIT ?2
            """)
    }

    /// The id the database minted when it was created (sync_state's device_id, whatever the configuration
    /// names the device) and the greatest change number its tables hold.
    func origin() throws(SQLiteError) -> SQLiteStatement {
        if let streamOrigin { return streamOrigin }
        let made = try db.prepare(
            """
            SELECT device_id, max((SELECT coalesce(max(saved_seq), 0) FROM bookmarks),
                (SELECT coalesce(max(change_seq), 0) FROM bookmark_tombstones),
                (SELECT coalesce(max(change_seq), 0) FROM watched_breaks))
            FROM sync_state
            """)
        streamOrigin = made
        return made
    }
}
