// SPDX-License-Identifier: Apache-2.0
import SnapbackStore

/// What applying a report did.
package enum FleetOutcome: Equatable, Sendable {
    /// Its increase over the box's last report was added to the totals (the first report of a box: all of it).
    case applied
    /// A new `counting_since`: the box's store was made afresh, its counters began again at 0; all of
    /// the report was added.
    case reset
    /// Its seq is at or below the last applied: a re-publish, or a report older than one applied. Nothing.
    case duplicate
}

/// The fleet's state (SQLite, `database` in fleet.conf): per box, the last report applied (its
/// counting_since, seq and each series' value, one row), per series the fleet's totals, summed over boxes by the
/// operator's labels and the metric's own, and the consumer's position in the stream. A batch of
/// reports is applied in ONE transaction with the position: after a crash either all of a batch counts
/// or none, and the reports are then delivered again, and counted once (their seq is then the last
/// applied).
///
/// The rule per series of a box (a series absent from a report is 0): same counting_since, delta =
/// max(0, new − last) (a daemon stopped uncleanly resumes from its last flush: what it counted since is
/// lost, at most `flush_interval` seconds of counts, and never counted twice); a new counting_since,
/// delta = new.
package final class FleetStore {
    let db: SQLiteConnection
    private let findBox: SQLiteStatement
    private let putBox: SQLiteStatement
    private let addSeries: SQLiteStatement
    private let addTotal: SQLiteStatement
    private let putState: SQLiteStatement
    /// Every series key a box has reported, by its id in `series` (a box's values name series by id).
    private var seriesIds: [String: UInt32] = [:]

    package init(path: String) throws(SQLiteError) {
        db = try SQLiteConnection(path: path, create: true)
        db.busyTimeout(milliseconds: 5000)
        // One row per box: its last report's identity and its values, (series id, value) pairs in a blob
        // (12 bytes a series: a box of the daemon's ~250 series is 3 KB, one read and one write a report).
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE IF NOT EXISTS boxes (box TEXT PRIMARY KEY, counting_since REAL NOT NULL,
                seq INTEGER NOT NULL, start_id TEXT NOT NULL, firmware TEXT NOT NULL, model TEXT NOT NULL,
                region TEXT NOT NULL, time REAL NOT NULL, vals BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS totals (series TEXT PRIMARY KEY, value REAL NOT NULL,
                changed INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            """)
        findBox = try db.prepare("SELECT counting_since, seq, vals FROM boxes WHERE box = ?")
        putBox = try db.prepare(
            """
            INSERT INTO boxes (box, counting_since, seq, start_id, firmware, model, region, time, vals)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(box) DO UPDATE SET counting_since = excluded.counting_since,
            seq = excluded.seq, start_id = excluded.start_id, firmware = excluded.firmware, model = excluded.model,
            region = excluded.region, time = excluded.time, vals = excluded.vals
            """)
        addSeries = try db.prepare("INSERT INTO series (id, key) VALUES (?, ?)")
        addTotal = try db.prepare(
            """
            INSERT INTO totals (series, value, changed) VALUES (?, ?, 1)
            ON CONFLICT(series) DO UPDATE SET value = value + excluded.value, changed = 1
            """)
        putState = try db.prepare(
            "INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        let all = try db.prepare("SELECT id, key FROM series")
        while try all.step() { seriesIds[all.text(1)] = UInt32(truncatingIfNeeded: all.int64(0)) }
    }

    /// The stream sequence of the last report applied (0: none).
    package func position() throws(SQLiteError) -> UInt64 {
        UInt64(clamping: try db.integer("SELECT value FROM state WHERE name = 'stream_seq'"))
    }

    /// Applies a batch of reports (each with its stream sequence) and moves the position, in one
    /// transaction; the outcome of each, in order. The batch's increases are summed per total first:
    /// one write per total a batch, however many boxes added to it.
    package func apply(_ batch: [(streamSeq: UInt64, report: FleetReport)]) throws(SQLiteError) -> [FleetOutcome] {
        try db.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            var outcomes: [FleetOutcome] = []
            var position = try self.position()
            var increases: [String: Double] = [:]
            for (streamSeq, report) in batch {
                outcomes.append(try apply(report, into: &increases))
                position = max(position, streamSeq)
            }
            for (series, delta) in increases.sorted(by: { $0.key < $1.key }) {
                try addTotal.bind(1, series)
                try addTotal.bind(2, delta)
                try addTotal.run()
            }
            try putState.bind(1, "stream_seq")
            try putState.bind(2, Int64(clamping: position))
            try putState.run()
            try db.execute("COMMIT")
            return outcomes
        } catch {
            try? db.execute("ROLLBACK")
            // The ids made in the transaction are gone with it.
            seriesIds = [:]
            if let all = try? db.prepare("SELECT id, key FROM series") {
                while (try? all.step()) == true { seriesIds[all.text(1)] = UInt32(truncatingIfNeeded: all.int64(0)) }
            }
            throw error
        }
    }

    private func id(of series: String) throws(SQLiteError) -> UInt32 {
        if let id = seriesIds[series] { return id }
        let id = UInt32(seriesIds.count + 1)
        try addSeries.bind(1, Int64(id))
        try addSeries.bind(2, series)
        try addSeries.run()
        seriesIds[series] = id
        return id
    }

    private func apply(_ report: FleetReport, into increases: inout [String: Double]) throws(SQLiteError) -> FleetOutcome {
        try findBox.bind(1, report.boxId)
        var last: (countingSince: Double, seq: UInt64)?
        var values: [UInt32: Double] = [:]
        if try findBox.step() {
            last = (findBox.double(0), UInt64(clamping: findBox.int64(1)))
            values = Self.values(findBox.blob(2))
        }
        findBox.reset()
        if let last, report.seq <= last.seq { return .duplicate }
        let reset = last.map { $0.countingSince != report.countingSince } ?? false
        // A new counting_since: the box's counters began again at 0.
        if reset { values = [:] }
        let extra = report.operatorLabels
        // A series absent from a report is 0 (the agent leaves out the series that counted nothing): the
        // box's values are the report's alone, and a series that comes to be present counts all of its
        // value. One that goes from present to absent (an unclean stop took it back to 0) adds nothing,
        // and counts from 0 on, as a lower value does.
        var reported: [UInt32: Double] = [:]
        reported.reserveCapacity(report.samples.count)
        for sample in report.samples {
            let id = try id(of: sample.series())
            let delta = max(0, sample.value - (values[id] ?? 0))
            reported[id] = sample.value
            if delta > 0 { increases[sample.series(extra: extra), default: 0] += delta }
        }
        values = reported
        try putBox.bind(1, report.boxId)
        try putBox.bind(2, report.countingSince)
        try putBox.bind(3, Int64(clamping: report.seq))
        try putBox.bind(4, report.startId)
        try putBox.bind(5, report.firmware)
        try putBox.bind(6, report.model)
        try putBox.bind(7, report.region)
        try putBox.bind(8, report.time)
        try putBox.bind(9, Self.blob(values))
        try putBox.run()
        return reset ? .reset : .applied
    }

    /// A box's values as stored: (series id UInt32, value Double) little-endian pairs, by id.
    static func blob(_ values: [UInt32: Double]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 12)
        for (id, value) in values.sorted(by: { $0.key < $1.key }) {
            withUnsafeBytes(of: id.littleEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: value.bitPattern.littleEndian) { out.append(contentsOf: $0) }
        }
        return out
    }

    static func values(_ blob: [UInt8]) -> [UInt32: Double] {
        var values: [UInt32: Double] = [:]
        values.reserveCapacity(blob.count / 12)
        blob.withUnsafeBytes { raw in
            var at = 0
            while at + 12 <= raw.count {
                let id = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                let bits = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 4, as: UInt64.self))
                values[id] = Double(bitPattern: bits)
                at += 12
            }
        }
        return values
    }

    /// The totals, every one or those changed since the last ``markWritten()``, as (series, value).
    package func totals(changedOnly: Bool) throws(SQLiteError) -> [(series: String, value: Double)] {
        let statement = try db.prepare(
            "SELECT series, value FROM totals" + (changedOnly ? " WHERE changed = 1" : "") + " ORDER BY series")
        var rows: [(String, Double)] = []
        while try statement.step() { rows.append((statement.text(0), statement.double(1))) }
        return rows
    }

    /// The changed totals are in the metrics store.
    package func markWritten() throws(SQLiteError) {
        try db.execute("UPDATE totals SET changed = 0 WHERE changed = 1")
    }

    /// Boxes known.
    package func boxCount() throws(SQLiteError) -> Int { Int(try db.integer("SELECT count(*) FROM boxes")) }
}

/// The metrics store's import text (the Prometheus exposition format, each sample with its timestamp in
/// milliseconds): the same series, timestamp and value written twice is one sample (the write is
/// idempotent).
package enum FleetExport {
    /// The fleet's series are the daemon's, renamed: `snapbackd_…` → `snapback_fleet_…`.
    package static func name(_ series: String) -> String {
        series.hasPrefix("snapbackd_") ? "snapback_fleet_" + series.dropFirst("snapbackd_".count) : series
    }

    package static func text(_ totals: [(series: String, value: Double)], milliseconds: Int64) -> String {
        var out = ""
        for (series, value) in totals {
            let number = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
            out += "\(name(series)) \(number) \(milliseconds)\n"
        }
        return out
    }
}
