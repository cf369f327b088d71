// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc
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
/// The rule per series of a box: same counting_since, delta = max(0, new − last) (a daemon stopped
/// uncleanly resumes from its last flush: what it counted since is lost, at most `flush_interval`
/// seconds of counts, and never counted twice); a new counting_since, delta = new. A series a report
/// leaves out is 0.
///
/// Series are named by numbers: a series' key (`name{a="x"}`, without the operator's labels) gets an id
/// once (`series`), the operator's three labels a label set id once (`label_sets`), and a total is
/// (label set, series) as one integer (`fleet_totals`); the keys and label sets are kept in memory, and
/// a report's keys are found by their bytes' hash, so that a report makes no string but its box id.
package final class FleetStore {
    let db: SQLiteConnection
    private let findBox: SQLiteStatement
    private let putBox: SQLiteStatement
    private let addSeries: SQLiteStatement
    private let addLabelSet: SQLiteStatement
    private let addTotal: SQLiteStatement
    private let putState: SQLiteStatement
    private var seriesKeys = KeyTable()
    /// Each series' key split where the operator's labels go: the name, and the key's own labels.
    private var seriesParts: [(name: String, labels: String)] = []
    private var labelSetIds: [String: UInt32] = [:]
    /// Each label set's text, `firmware="…",model="…",region="…"`, by id − 1.
    private var labelSetTexts: [String] = []
    /// Totals changed since the last ``markWritten()``, with their values: what the next write carries.
    private var unwritten: [UInt64: Double] = [:]

    package init(path: String) throws(SQLiteError) {
        db = try SQLiteConnection(path: path, create: true)
        db.busyTimeout(milliseconds: 5000)
        // One row per box: its last report's identity and its values, (series id, value) pairs by id in a
        // blob (12 bytes a series: a box of the daemon's ~280 series is 3 KB, one read and one write a report).
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE IF NOT EXISTS boxes (box TEXT PRIMARY KEY, counting_since REAL NOT NULL,
                seq INTEGER NOT NULL, start_id TEXT NOT NULL, firmware TEXT NOT NULL, model TEXT NOT NULL,
                region TEXT NOT NULL, time REAL NOT NULL, vals BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS label_sets (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS fleet_totals (key INTEGER PRIMARY KEY, value REAL NOT NULL);
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
        addLabelSet = try db.prepare("INSERT INTO label_sets (id, labels) VALUES (?, ?)")
        addTotal = try db.prepare(
            """
            INSERT INTO fleet_totals (key, value) VALUES (?, ?)
            ON CONFLICT(key) DO UPDATE SET value = value + excluded.value RETURNING value
            """)
        putState = try db.prepare(
            "INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        try migrateTextTotals()
        try loadNames()
    }

    /// The fleet's totals as an earlier version kept them (`totals`, by their whole series text), moved
    /// into `fleet_totals` once, in one transaction.
    private func migrateTextTotals() throws(SQLiteError) {
        guard try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'totals'") > 0 else { return }
        try db.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            try loadNames()
            let rows = try db.prepare("SELECT series, value FROM totals")
            var moved: [(UInt64, Double)] = []
            while try rows.step() {
                // name{firmware="…",model="…",region="…"[,own labels]}
                let text = Array(rows.text(0).utf8)
                guard let brace = text.firstIndex(of: 0x7b) else { continue }
                var commas = 0
                var end = brace + 1
                while end < text.count - 1, commas < 3 {
                    if text[end] == 0x2c { commas += 1 }
                    if commas < 3 { end += 1 }
                }
                let labels = String(decoding: text[(brace + 1)..<min(end, text.count - 1)], as: UTF8.self)
                let own = end < text.count - 1 ? Array(text[(end + 1)..<(text.count - 1)]) : []
                let key = Array(text[..<brace]) + (own.isEmpty ? [] : [0x7b] + own + [0x7d])
                let series = try key.withUnsafeBufferPointer { (k) throws(SQLiteError) in
                    try id(of: k, hash: FleetReport.fnv1a(k))
                }
                moved.append((UInt64(try labelSet(labels)) << 32 | UInt64(series), rows.double(1)))
            }
            for (key, value) in moved {
                try addTotal.bind(1, Int64(bitPattern: key))
                try addTotal.bind(2, value)
                try addTotal.run()
            }
            try db.execute("DROP TABLE totals")
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// The series keys and label sets in memory (again after a rollback: the ids made in it are gone).
    private func loadNames() throws(SQLiteError) {
        seriesKeys = KeyTable()
        seriesParts = []
        let all = try db.prepare("SELECT id, key FROM series ORDER BY id")
        while try all.step() {
            let key = Array(all.text(1).utf8)
            key.withUnsafeBufferPointer { seriesKeys.insert($0, hash: FleetReport.fnv1a($0)) }
            seriesParts.append(Self.parts(key))
        }
        labelSetIds = [:]
        labelSetTexts = []
        let sets = try db.prepare("SELECT id, labels FROM label_sets ORDER BY id")
        while try sets.step() {
            labelSetTexts.append(sets.text(1))
            labelSetIds[sets.text(1)] = UInt32(labelSetTexts.count)
        }
    }

    static func parts(_ key: [UInt8]) -> (name: String, labels: String) {
        guard let brace = key.firstIndex(of: 0x7b) else { return (String(decoding: key, as: UTF8.self), "") }
        return (
            String(decoding: key[..<brace], as: UTF8.self), String(decoding: key[(brace + 1)..<(key.count - 1)], as: UTF8.self)
        )
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
            outcomes.reserveCapacity(batch.count)
            var position = try self.position()
            var increases: [UInt64: Double] = [:]
            for (streamSeq, report) in batch {
                outcomes.append(try apply(report, into: &increases))
                position = max(position, streamSeq)
            }
            var written: [(UInt64, Double)] = []
            written.reserveCapacity(increases.count)
            for (key, delta) in increases {
                try addTotal.bind(1, Int64(bitPattern: key))
                try addTotal.bind(2, delta)
                guard try addTotal.step() else { throw db.error(SQLITE_ERROR) }
                written.append((key, addTotal.double(0)))
                addTotal.reset()
            }
            try putState.bind(1, "stream_seq")
            try putState.bind(2, Int64(clamping: position))
            try putState.run()
            try db.execute("COMMIT")
            for (key, value) in written { unwritten[key] = value }
            return outcomes
        } catch {
            addTotal.reset()
            try? db.execute("ROLLBACK")
            try? loadNames()
            throw error
        }
    }

    /// The id of the series whose key is `key`, made (and written) when it is new.
    private func id(of key: UnsafeBufferPointer<UInt8>, hash: UInt64) throws(SQLiteError) -> UInt32 {
        if let id = seriesKeys.find(key, hash: hash) { return id }
        let id = UInt32(seriesParts.count + 1)
        try addSeries.bind(1, Int64(id))
        try addSeries.bind(2, String(decoding: key, as: UTF8.self))
        try addSeries.run()
        seriesKeys.insert(key, hash: hash)
        seriesParts.append(Self.parts(Array(key)))
        return id
    }

    private func labelSet(_ text: String) throws(SQLiteError) -> UInt32 {
        if let id = labelSetIds[text] { return id }
        let id = UInt32(labelSetTexts.count + 1)
        try addLabelSet.bind(1, Int64(id))
        try addLabelSet.bind(2, text)
        try addLabelSet.run()
        labelSetTexts.append(text)
        labelSetIds[text] = id
        return id
    }

    private func apply(_ report: FleetReport, into increases: inout [UInt64: Double]) throws(SQLiteError) -> FleetOutcome {
        try findBox.bind(1, report.boxId)
        var last: (countingSince: Double, seq: UInt64)?
        var old: [UInt8] = []
        if try findBox.step() {
            last = (findBox.double(0), UInt64(clamping: findBox.int64(1)))
            old = findBox.blob(2)
        }
        findBox.reset()
        if let last, report.seq <= last.seq { return .duplicate }
        let reset = last.map { $0.countingSince != report.countingSince } ?? false
        // A new counting_since: the box's counters began again at 0.
        if reset { old = [] }
        let labels = UInt64(
            try labelSet("firmware=\"\(report.firmware)\",model=\"\(report.model)\",region=\"\(report.region)\""))
        var next: [(id: UInt32, value: Double)] = []
        next.reserveCapacity(report.series.count)
        try report.keys.withUnsafeBufferPointer { (keys) throws(SQLiteError) in
            for series in report.series {
                let key = UnsafeBufferPointer(rebasing: keys[Int(series.start)..<Int(series.start + series.count)])
                next.append((try id(of: key, hash: series.hash), series.value))
            }
        }
        // In the catalog's order the ids mostly are already (they were made in it).
        if !zip(next, next.dropFirst()).allSatisfy({ $0.id < $1.id }) { next.sort { $0.id < $1.id } }
        // A series absent from the report is 0 since its counting_since (the agent leaves zeros out): its
        // last value is not kept, so that what it counts after an unclean stop took it back to 0 is
        // counted from 0, and a series that appears is counted whole. Both lists are by id: one merge.
        var blob = [UInt8](repeating: 0, count: next.count * 12)
        old.withUnsafeBytes { previous in
            blob.withUnsafeMutableBytes { out in
                var at = 0
                for (i, (id, value)) in next.enumerated() {
                    var lastValue = 0.0
                    while at + 12 <= previous.count {
                        let oldId = UInt32(littleEndian: previous.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                        if oldId > id { break }
                        if oldId == id {
                            let bits = UInt64(littleEndian: previous.loadUnaligned(fromByteOffset: at + 4, as: UInt64.self))
                            lastValue = Double(bitPattern: bits)
                        }
                        at += 12
                    }
                    if value > lastValue { increases[labels << 32 | UInt64(id), default: 0] += value - lastValue }
                    out.storeBytes(of: id.littleEndian, toByteOffset: i * 12, as: UInt32.self)
                    out.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: i * 12 + 4, as: UInt64.self)
                }
            }
        }
        try putBox.bind(1, report.boxId)
        try putBox.bind(2, report.countingSince)
        try putBox.bind(3, Int64(clamping: report.seq))
        try putBox.bind(4, report.startId)
        try putBox.bind(5, report.firmware)
        try putBox.bind(6, report.model)
        try putBox.bind(7, report.region)
        try putBox.bind(8, report.time)
        try putBox.bind(9, blob)
        try putBox.run()
        return reset ? .reset : .applied
    }

    /// A total's series text: `name{firmware="…",model="…",region="…",own labels}`.
    private func seriesText(_ key: UInt64) -> String {
        let labels = labelSetTexts[Int(key >> 32) - 1]
        let (name, own) = seriesParts[Int(key & 0xffff_ffff) - 1]
        return own.isEmpty ? name + "{" + labels + "}" : name + "{" + labels + "," + own + "}"
    }

    /// The totals, every one or those changed since the last ``markWritten()``, as (series, value).
    package func totals(changedOnly: Bool) throws(SQLiteError) -> [(series: String, value: Double)] {
        if changedOnly { return unwritten.map { (seriesText($0.key), $0.value) } }
        let statement = try db.prepare("SELECT key, value FROM fleet_totals")
        var rows: [(String, Double)] = []
        while try statement.step() { rows.append((seriesText(UInt64(bitPattern: statement.int64(0))), statement.double(1))) }
        return rows
    }

    /// The changed totals are in the metrics store. (A restart writes every total first, so that what was
    /// unwritten at a stop is not lost.)
    package func markWritten() { unwritten = [:] }

    /// Boxes known.
    package func boxCount() throws(SQLiteError) -> Int { Int(try db.integer("SELECT count(*) FROM boxes")) }
}

/// The series keys in memory: their bytes back to back, found by hash (open addressing), ids from 1.
struct KeyTable {
    private var bytes: [UInt8] = []
    private var spans: [(start: Int, count: Int, hash: UInt64)] = []
    private var slots: [UInt32] = [UInt32](repeating: 0, count: 1024)

    func find(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> UInt32? {
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] != 0 {
            let id = slots[slot]
            let span = spans[Int(id) - 1]
            if span.hash == hash, span.count == key.count,
                bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress! + span.start, key.baseAddress!, key.count) == 0 })
            {
                return id
            }
            slot = (slot + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Adds a key not in the table; its id is the next.
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) {
        spans.append((bytes.count, key.count, hash))
        bytes.append(contentsOf: key)
        if spans.count * 2 > slots.count {
            slots = [UInt32](repeating: 0, count: slots.count * 2)
            for (i, span) in spans.enumerated() { place(UInt32(i + 1), span.hash) }
        } else {
            place(UInt32(spans.count), hash)
        }
    }

    private mutating func place(_ id: UInt32, _ hash: UInt64) {
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = id
    }
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
