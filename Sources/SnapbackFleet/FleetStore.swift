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
    /// The report of a box not yet known, with ``FleetStore/maxBoxes`` boxes known: nothing of it kept.
    case tooManyBoxes
    /// It would make more series than ``FleetStore/maxSeries``, more label sets than
    /// ``FleetStore/maxLabelSets`` or more totals than ``FleetStore/maxTotals``: nothing of it applied,
    /// its box left as it was.
    case tooManySeries
}

/// The fleet's state: per box, the last report applied (its counting_since, seq and each series' value),
/// per label set the fleet's totals (summed over boxes by the operator's labels and the metric's own),
/// and the consumer's position in the stream. All of it is in memory, read from the database (SQLite,
/// `database` in fleet.conf) when the store opens; the database is only written: a batch of reports in
/// ONE transaction with the position. After a crash either all of a batch counts or none, and the
/// reports are then delivered again, and counted once (their seq is then the last applied). A commit
/// that fails is rolled back and the memory read again from the database: memory never runs ahead of
/// what is on disk.
///
/// The rule per series of a box: same counting_since, delta = max(0, new − last) (a daemon stopped
/// uncleanly resumes from its last flush: what it counted since is lost, at most `flush_interval`
/// seconds of counts, and never counted twice); a new counting_since, delta = new. A series a report
/// leaves out is 0.
///
/// Series are named by numbers: a series' key (`name{a="x"}`, without the operator's labels) gets an id
/// once (`series`), the operator's three labels a label set id once (`label_sets`); a label set's totals
/// are one row (`label_totals`: (series id, value) pairs), rewritten in the transaction of a batch that
/// changed them. A report's keys are found by their bytes' hash, so that a report makes no string but its
/// label set's.
///
/// The boxes' state is a log (`box_log`): a batch's commit inserts ONE row, the entries of the boxes it
/// changed (an entry: the box's 128 bits, counting_since, seq and its (series id, value) pairs, a
/// box twice in the batch once, its last state), so that a batch's boxes are written one after the other
/// into a few pages, not each into a page of its own. A box's entry in a newer row supersedes its older
/// ones: memory knows each box's row and each row's live entries, and a row whose entries are all
/// superseded is deleted in the same transaction. A box that stops reporting keeps its entry in an old
/// row among superseded ones; so that the log stays bounded, a batch after which the log would hold more
/// than 2 × boxes + 2 × the batch's own entries also takes the live entries of the oldest rows, up to 2 ×
/// its own (rows in order, the last possibly in part: the rest stays there), and deletes the rows it
/// emptied. Such a pass goes over the log at twice the rate that batches supersede entries: the log holds
/// at most about 2.5 × boxes + 6 × a batch's entries, a row at most 3 × a batch's. Read, the rows are
/// taken in id order, each entry overriding its box's earlier one.
///
/// Every count a peer can grow is bounded: boxes (``maxBoxes``), series, label sets and totals; a report
/// that would pass one is decided on before anything of it is made (its box looked up, then its label
/// set and series, and only then the box made or changed).
package final class FleetStore {
    let db: SQLiteConnection
    package let maxBoxes: Int
    package let maxSeries: Int
    package let maxLabelSets: Int
    package let maxTotals: Int
    private let addLogRow: SQLiteStatement
    private let dropLogRow: SQLiteStatement
    private let readLogRow: SQLiteStatement
    private let addSeries: SQLiteStatement
    private let addLabelSet: SQLiteStatement
    private let putTotals: SQLiteStatement
    private let putState: SQLiteStatement
    private var seriesKeys = KeyTable()
    /// Each series' key split where the operator's labels go: the name, and the key's own labels.
    private var seriesParts: [(name: String, labels: String)] = [] {
        didSet {
            // The names as the metrics store is given them, made once a series.
            if seriesParts.count < exportNames.count { exportNames.removeAll() }
            for part in seriesParts[exportNames.count...] { exportNames.append(FleetExport.name(part.name)) }
        }
    }
    private var exportNames: [String] = []
    private var labelSetIds: [String: UInt32] = [:]
    /// The label sets a report found, by its three labels (no text made to find one).
    private var labelSetsByLabels: [OperatorLabels: UInt32] = [:]
    /// Each label set's text, `firmware="…",model="…",region="…"`, by id − 1.
    private var labelSetTexts: [String] = []
    /// Each label set's totals by series id, by label set id − 1.
    private var totalsBySet: [[UInt32: Double]] = []
    private var totalCount = 0
    private var boxes: [BoxKey: BoxState] = [:]
    /// The log's rows: by id, how many entries each holds and how many of them are live.
    private var logRows: [Int64: LogRow] = [:]
    /// The rows' ids, oldest first from `logHead` (ids of rows deleted since are skipped).
    private var logOrder: [Int64] = []
    private var logHead = 0
    /// Entries in the log's rows, live and superseded.
    private var logEntries = 0
    /// The id of the next row: the row of the batch being applied.
    private var nextLogRow: Int64 = 1
    /// The boxes the batch changed, each once, in order.
    private var batchBoxes: [BoxKey] = []
    /// Rows the batch left without a live entry: deleted with its commit.
    private var emptiedRows: [Int64] = []
    /// Off only in tests: a log that is never compacted, to compare with.
    var compacts = true
    private var streamPosition: UInt64 = 0
    /// Set when a failed commit's reload failed too: the next batch reads the database first.
    private var stale = false
    /// Totals changed since the last ``markWritten()``, with their values: what the next write carries.
    private var unwritten: [UInt64: Double] = [:]
    /// A batch's changes, until its commit.
    private var changed: [UInt64: Double] = [:]
    private var dirtySets: [UInt32] = []
    private var isDirty: [Bool] = []
    /// A report's series ids, in its order (kept between reports for their capacity).
    private var ids: [(id: UInt32, value: Double)] = []
    private var increases: [(UInt32, Double)] = []
    /// The values of a box's last report by series id while a report is merged with it: those where
    /// `lastMarks[id] == mark` (set for this report; nothing cleared between reports).
    private var lastValues: [Double] = []
    private var lastMarks: [UInt32] = []
    private var mark: UInt32 = 0

    package static let defaultMaxBoxes = 2_000_000
    /// SQLite's page cache: a compaction reads the log's oldest rows back, and deleting a row walks its
    /// overflow pages; a few batches' rows fit in it.
    package static let cacheKiB = 64 * 1024
    /// The entries of a row made from an earlier layout's boxes (the default batch's).
    static let migratedRowEntries = 256

    package init(
        path: String, maxBoxes: Int = FleetStore.defaultMaxBoxes, maxSeries: Int = 20_000, maxLabelSets: Int = 100_000,
        maxTotals: Int = 10_000_000
    ) throws(SQLiteError) {
        self.maxBoxes = maxBoxes
        self.maxSeries = maxSeries
        self.maxLabelSets = maxLabelSets
        self.maxTotals = maxTotals
        db = try SQLiteConnection(path: path, create: true)
        db.busyTimeout(milliseconds: 5000)
        // The boxes' log: a row a batch, its entries back to back in one blob (``LogEntry``), written one
        // after the other over the row's overflow pages.
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            PRAGMA cache_size = -\(Self.cacheKiB);
            CREATE TABLE IF NOT EXISTS box_log (id INTEGER PRIMARY KEY, entries BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS label_sets (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS label_totals (label_set INTEGER PRIMARY KEY, vals BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            """)
        addLogRow = try db.prepare("INSERT INTO box_log (id, entries) VALUES (?, ?)")
        dropLogRow = try db.prepare("DELETE FROM box_log WHERE id = ?")
        readLogRow = try db.prepare("SELECT entries FROM box_log WHERE id = ?")
        addSeries = try db.prepare("INSERT INTO series (id, key) VALUES (?, ?)")
        addLabelSet = try db.prepare("INSERT INTO label_sets (id, labels) VALUES (?, ?)")
        putTotals = try db.prepare(
            "INSERT INTO label_totals (label_set, vals) VALUES (?, ?) ON CONFLICT(label_set) DO UPDATE SET vals = excluded.vals")
        putState = try db.prepare(
            "INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        try migrate()
        try load()
    }

    private func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(name)'") > 0
    }

    /// The state as earlier versions kept it, moved once, in one transaction: the totals into
    /// `label_totals` from `totals` (a row per series, by its whole text) and `fleet_totals` (a row per
    /// (label set, series), the two ids in one integer), rows past the bounds left out; the boxes into
    /// the log from `boxes` (a row per box by its id's text) and `box_state` (a row per box by number),
    /// ``migratedRowEntries`` boxes a row.
    private func migrate() throws(SQLiteError) {
        let text = try tableExists("totals")
        let numbered = try tableExists("fleet_totals")
        var boxTables: [String] = []
        for name in ["boxes", "box_state"] where try tableExists(name) { boxTables.append(name) }
        guard text || numbered || !boxTables.isEmpty else { return }
        try db.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            if !boxTables.isEmpty {
                var row = try db.integer("SELECT coalesce(max(id), 0) FROM box_log") + 1
                var entries: [UInt8] = []
                var count = 0
                func flush() throws(SQLiteError) {
                    guard count > 0 else { return }
                    try addLogRow.bind(1, row)
                    try addLogRow.bind(2, entries)
                    try addLogRow.run()
                    row += 1
                    entries.removeAll(keepingCapacity: true)
                    count = 0
                }
                // `box_state` after `boxes`: a box in both (never made so) is box_state's.
                for table in boxTables {
                    let rows = try db.prepare("SELECT box, counting_since, seq, vals FROM \(table)")
                    while try rows.step() {
                        guard let key = BoxKey(rows.text(0)) else { continue }
                        var vals = rows.blob(3)
                        vals.removeLast(vals.count % 12)
                        let state = BoxState(
                            countingSince: rows.double(1), seq: UInt64(clamping: rows.int64(2)), vals: vals, row: row)
                        LogEntry.append(key, state, to: &entries)
                        count += 1
                        if count == Self.migratedRowEntries { try flush() }
                    }
                    rows.reset()
                    try db.execute("DROP TABLE \(table)")
                }
                try flush()
            }
            try loadNames()
            try loadTotals()
            if numbered {
                let rows = try db.prepare("SELECT key, value FROM fleet_totals")
                while try rows.step() {
                    let key = UInt64(bitPattern: rows.int64(0))
                    add(set: UInt32(truncatingIfNeeded: key >> 32), series: UInt32(truncatingIfNeeded: key), rows.double(1))
                }
                try db.execute("DROP TABLE fleet_totals")
            }
            if text {
                let rows = try db.prepare("SELECT series, value FROM totals")
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
                    let hash = key.withUnsafeBufferPointer { FleetReport.keyHash($0) }
                    var series = key.withUnsafeBufferPointer { seriesKeys.find($0, hash: hash) }
                    if series == nil, seriesParts.count < maxSeries {
                        series = try key.withUnsafeBufferPointer { (k) throws(SQLiteError) in try makeSeries(k, hash: hash) }
                    }
                    var set = labelSetIds[labels]
                    if set == nil, labelSetTexts.count < maxLabelSets { set = try makeLabelSet(labels) }
                    guard let series, let set else { continue }
                    add(set: set, series: series, rows.double(1))
                }
                try db.execute("DROP TABLE totals")
            }
            try writeDirtySets()
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        changed = [:]
    }

    /// Adds `value` to a total (made when new, within the bounds; a total past them is left out).
    private func add(set: UInt32, series: UInt32, _ value: Double) {
        guard set >= 1, Int(set) <= labelSetTexts.count, series >= 1, Int(series) <= seriesParts.count else { return }
        let s = Int(set) - 1
        let old = totalsBySet[s][series]
        if old == nil {
            guard totalCount < maxTotals else { return }
            totalCount += 1
        }
        let now = (old ?? 0) + value
        totalsBySet[s][series] = now
        changed[UInt64(set) << 32 | UInt64(series), default: 0] = now
        if !isDirty[s] {
            isDirty[s] = true
            dirtySets.append(set)
        }
    }

    /// Everything in memory from the database: names, totals, boxes, position (at the start, and after
    /// a commit that failed). The log's rows in id order, each entry overriding its box's earlier one; a
    /// row left with no live entry (none readable) is deleted.
    private func load() throws(SQLiteError) {
        try loadNames()
        try loadTotals()
        boxes = [:]
        logRows = [:]
        logOrder = []
        logHead = 0
        logEntries = 0
        nextLogRow = 1
        batchBoxes.removeAll(keepingCapacity: true)
        emptiedRows.removeAll(keepingCapacity: true)
        let known = UInt32(seriesParts.count)
        let rows = try db.prepare("SELECT id, entries FROM box_log ORDER BY id")
        while try rows.step() {
            let row = rows.int64(0)
            nextLogRow = max(nextLogRow, row &+ 1)
            var entries = 0
            var live = 0
            let blob = rows.blob(1)
            blob.withUnsafeBytes { raw in
                LogEntry.forEach(in: raw) { entry in
                    entries += 1
                    if let last = boxes[entry.box]?.row {
                        if last == row { live -= 1 } else { logRows[last]?.live -= 1 }
                    }
                    let vals = UnsafeRawBufferPointer(rebasing: raw[entry.vals])
                    var kept: [UInt8]
                    if stride(from: 0, to: vals.count, by: 12).contains(where: {
                        UInt32(littleEndian: vals.loadUnaligned(fromByteOffset: $0, as: UInt32.self)) > known
                    }) {
                        // Series past the bound (a database of larger bounds): left out.
                        kept = []
                        for at in stride(from: 0, to: vals.count, by: 12)
                        where UInt32(littleEndian: vals.loadUnaligned(fromByteOffset: at, as: UInt32.self)) <= known {
                            kept.append(contentsOf: vals[at..<(at + 12)])
                        }
                    } else {
                        kept = Array(vals)
                    }
                    boxes[entry.box] = BoxState(countingSince: entry.countingSince, seq: entry.seq, vals: kept, row: row)
                    live += 1
                    return true
                }
            }
            logRows[row] = LogRow(entries: entries, live: live)
            logOrder.append(row)
            logEntries += entries
        }
        rows.reset()
        let empty = logOrder.filter { logRows[$0]?.live == 0 }
        for row in empty {
            try dropLogRow.bind(1, row)
            try dropLogRow.run()
            logEntries -= logRows.removeValue(forKey: row)?.entries ?? 0
        }
        streamPosition = UInt64(clamping: try db.integer("SELECT value FROM state WHERE name = 'stream_seq'"))
        changed = [:]
        stale = false
    }

    /// The series keys and label sets, at most ``maxSeries`` and ``maxLabelSets`` of them (the ids are
    /// made in order: a row past the bound is one past every id in memory).
    private func loadNames() throws(SQLiteError) {
        seriesKeys = KeyTable()
        seriesParts = []
        let all = try db.prepare("SELECT id, key FROM series ORDER BY id")
        while try all.step(), seriesParts.count < maxSeries {
            guard all.int64(0) == Int64(seriesParts.count + 1) else { break }
            let key = Array(all.text(1).utf8)
            key.withUnsafeBufferPointer { seriesKeys.insert($0, hash: FleetReport.keyHash($0)) }
            seriesParts.append(Self.parts(key))
        }
        all.reset()
        labelSetIds = [:]
        labelSetsByLabels = [:]
        labelSetTexts = []
        let sets = try db.prepare("SELECT id, labels FROM label_sets ORDER BY id")
        while try sets.step(), labelSetTexts.count < maxLabelSets {
            guard sets.int64(0) == Int64(labelSetTexts.count + 1) else { break }
            labelSetTexts.append(sets.text(1))
            labelSetIds[sets.text(1)] = UInt32(labelSetTexts.count)
        }
        sets.reset()
        // Rows past the bounds (a database of larger bounds): gone, so that an id made again is free (and
        // a box's value of a series gone is dropped as it is read: an id made again starts from 0).
        try db.execute("DELETE FROM series WHERE id > \(seriesParts.count)")
        try db.execute("DELETE FROM label_sets WHERE id > \(labelSetTexts.count)")
        try db.execute("DELETE FROM label_totals WHERE label_set > \(labelSetTexts.count)")
    }

    private func loadTotals() throws(SQLiteError) {
        totalsBySet = Array(repeating: [:], count: labelSetTexts.count)
        isDirty = Array(repeating: false, count: labelSetTexts.count)
        dirtySets = []
        totalCount = 0
        let rows = try db.prepare("SELECT label_set, vals FROM label_totals")
        while try rows.step() {
            let set = rows.int64(0)
            guard set >= 1, set <= Int64(labelSetTexts.count) else { continue }
            let vals = rows.blob(1)
            var totals: [UInt32: Double] = [:]
            vals.withUnsafeBytes { raw in
                var at = 0
                while at + 12 <= raw.count, totalCount < maxTotals {
                    let id = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                    let value = Double(
                        bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 4, as: UInt64.self)))
                    at += 12
                    guard id >= 1, Int(id) <= seriesParts.count, totals[id] == nil else { continue }
                    totals[id] = value
                    totalCount += 1
                }
            }
            totalsBySet[Int(set) - 1] = totals
        }
    }

    static func parts(_ key: [UInt8]) -> (name: String, labels: String) {
        guard let brace = key.firstIndex(of: 0x7b) else { return (String(decoding: key, as: UTF8.self), "") }
        return (
            String(decoding: key[..<brace], as: UTF8.self), String(decoding: key[(brace + 1)..<(key.count - 1)], as: UTF8.self)
        )
    }

    /// The stream sequence of the last report applied (0: none).
    package func position() -> UInt64 { streamPosition }

    /// Applies a batch of reports (each with its stream sequence) and moves the position, in one
    /// transaction; the outcome of each, in order. The totals a batch changed are written once each, a
    /// row per label set; the boxes it changed are one row of the log.
    package func apply(_ batch: [(streamSeq: UInt64, report: FleetReport)]) throws(SQLiteError) -> [FleetOutcome] {
        if stale { try load() }
        try db.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            var outcomes: [FleetOutcome] = []
            outcomes.reserveCapacity(batch.count)
            var position = streamPosition
            for (streamSeq, report) in batch {
                outcomes.append(try apply(report))
                position = max(position, streamSeq)
            }
            try writeLog()
            try writeDirtySets()
            try putState.bind(1, "stream_seq")
            try putState.bind(2, Int64(clamping: position))
            try putState.run()
            try db.execute("COMMIT")
            streamPosition = position
            for (key, value) in changed { unwritten[key] = value }
            changed.removeAll(keepingCapacity: true)
            return outcomes
        } catch {
            addLogRow.reset()
            dropLogRow.reset()
            readLogRow.reset()
            putTotals.reset()
            try? db.execute("ROLLBACK")
            do { try load() } catch { stale = true }
            throw error
        }
    }

    /// The batch's row of the log: the entries of the boxes it changed, and when the log holds too many
    /// superseded entries, those of the oldest rows' live ones (``compact(into:budget:)``); the rows left
    /// with no live entry deleted.
    private func writeLog() throws(SQLiteError) {
        guard !batchBoxes.isEmpty else { return }
        let row = nextLogRow
        var entries: [UInt8] = []
        for box in batchBoxes {
            guard let state = boxes[box] else { continue }
            LogEntry.append(box, state, to: &entries)
        }
        var count = batchBoxes.count
        if compacts, logEntries + count > 2 * boxes.count + 2 * count {
            count += try compact(into: &entries, budget: 2 * count)
        }
        for emptied in emptiedRows {
            try dropLogRow.bind(1, emptied)
            try dropLogRow.run()
        }
        try addLogRow.bind(1, row)
        try addLogRow.bind(2, entries)
        try addLogRow.run()
        logRows[row] = LogRow(entries: count, live: count)
        logOrder.append(row)
        logEntries += count
        nextLogRow = row &+ 1
        batchBoxes.removeAll(keepingCapacity: true)
        emptiedRows.removeAll(keepingCapacity: true)
        // The ids of rows deleted out of order, dropped once they are most of the list.
        if logOrder.count - logHead > 2 * logRows.count + 64 {
            logOrder = logOrder[logHead...].filter { logRows[$0] != nil }
            logHead = 0
        }
    }

    /// Moves up to about `budget` live entries of the oldest rows into the batch's row (`entries`): rows
    /// in order, each read back for its boxes, the last possibly in part; the rows it empties are
    /// deleted with the batch. The entries moved.
    private func compact(into entries: inout [UInt8], budget: Int) throws(SQLiteError) -> Int {
        let row = nextLogRow
        var moved = 0
        while moved < budget, logHead < logOrder.count {
            let old = logOrder[logHead]
            guard let oldRow = logRows[old] else {
                logHead += 1
                continue
            }
            try readLogRow.bind(1, old)
            let blob = try readLogRow.step() ? readLogRow.blob(0) : []
            readLogRow.reset()
            var live = oldRow.live
            var full = false
            blob.withUnsafeBytes { raw in
                LogEntry.forEach(in: raw) { entry in
                    guard moved < budget else {
                        full = true
                        return false
                    }
                    guard let state = boxes[entry.box], state.row == old else { return true }
                    LogEntry.append(entry.box, state, to: &entries)
                    boxes[entry.box]?.row = row
                    live -= 1
                    moved += 1
                    return true
                }
            }
            guard !full || live <= 0 else {
                logRows[old]?.live = live
                break
            }
            // Every live entry it held is in the batch's row now.
            logRows[old] = nil
            logEntries -= oldRow.entries
            emptiedRows.append(old)
            logHead += 1
        }
        return moved
    }

    /// The rows of the label sets whose totals changed, (series id, value) pairs.
    private func writeDirtySets() throws(SQLiteError) {
        for set in dirtySets {
            let totals = totalsBySet[Int(set) - 1]
            var blob = [UInt8](repeating: 0, count: totals.count * 12)
            blob.withUnsafeMutableBytes { out in
                for (i, (id, value)) in totals.enumerated() {
                    out.storeBytes(of: id.littleEndian, toByteOffset: i * 12, as: UInt32.self)
                    out.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: i * 12 + 4, as: UInt64.self)
                }
            }
            try putTotals.bind(1, Int64(set))
            try putTotals.bind(2, blob)
            try putTotals.run()
            isDirty[Int(set) - 1] = false
        }
        dirtySets.removeAll(keepingCapacity: true)
    }

    /// A new series' id (the caller found none), written.
    private func makeSeries(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) throws(SQLiteError) -> UInt32 {
        let id = UInt32(seriesParts.count + 1)
        try addSeries.bind(1, Int64(id))
        try addSeries.bind(2, String(decoding: key, as: UTF8.self))
        try addSeries.run()
        seriesKeys.insert(key, hash: hash)
        seriesParts.append(Self.parts(Array(key)))
        return id
    }

    private func makeLabelSet(_ text: String) throws(SQLiteError) -> UInt32 {
        let id = UInt32(labelSetTexts.count + 1)
        try addLabelSet.bind(1, Int64(id))
        try addLabelSet.bind(2, text)
        try addLabelSet.run()
        labelSetTexts.append(text)
        labelSetIds[text] = id
        totalsBySet.append([:])
        isDirty.append(false)
        return id
    }

    private func apply(_ report: FleetReport) throws(SQLiteError) -> FleetOutcome {
        // Read only, until the report is known to fit: the box, its label set, its series.
        // (A checked report's box id is 32 hex digits: never refused here.)
        guard let box = BoxKey(report.boxId) else { return .tooManyBoxes }
        let last = boxes[box]
        if let last, report.seq <= last.seq { return .duplicate }
        if last == nil, boxes.count >= maxBoxes { return .tooManyBoxes }
        let operatorLabels = OperatorLabels(firmware: report.firmware, model: report.model, region: report.region)
        var knownSet = labelSetsByLabels[operatorLabels]
        var labelText = ""
        if knownSet == nil {
            // Not yet found by its labels since the store was read: by its text, then kept by its labels.
            labelText = "firmware=\"\(report.firmware)\",model=\"\(report.model)\",region=\"\(report.region)\""
            knownSet = labelSetIds[labelText]
            if let knownSet { labelSetsByLabels[operatorLabels] = knownSet }
        }
        if knownSet == nil, labelSetTexts.count >= maxLabelSets { return .tooManySeries }
        ids.removeAll(keepingCapacity: true)
        var newSeries = 0
        report.keys.withUnsafeBufferPointer { keys in
            for series in report.series {
                let key = UnsafeBufferPointer(rebasing: keys[Int(series.start)..<Int(series.start + series.count)])
                let id = seriesKeys.find(key, hash: series.hash) ?? 0
                if id == 0 { newSeries += 1 }
                ids.append((id, series.value))
            }
        }
        if seriesParts.count + newSeries > maxSeries { return .tooManySeries }
        // Totals it could make: each series new to its label set (counted one by one only near the bound).
        if totalCount + ids.count > maxTotals {
            let set = knownSet.map { totalsBySet[Int($0) - 1] } ?? [:]
            let made = ids.reduce(0) { $0 + ($1.id == 0 || set[$1.id] == nil ? 1 : 0) }
            if totalCount + made > maxTotals { return .tooManySeries }
        }
        // It fits: what is new is made.
        let labels: UInt32
        if let knownSet {
            labels = knownSet
        } else {
            labels = try makeLabelSet(labelText)
            labelSetsByLabels[operatorLabels] = labels
        }
        if newSeries > 0 {
            try report.keys.withUnsafeBufferPointer { (keys) throws(SQLiteError) in
                for (i, series) in report.series.enumerated() where ids[i].id == 0 {
                    let key = UnsafeBufferPointer(rebasing: keys[Int(series.start)..<Int(series.start + series.count)])
                    ids[i].id = try makeSeries(key, hash: series.hash)
                }
            }
        }
        let reset = last.map { $0.countingSince != report.countingSince } ?? false
        // A new counting_since: the box's counters began again at 0.
        let old = reset ? [] : last?.vals ?? []
        // A series absent from the report is 0 since its counting_since (the agent leaves zeros out): its
        // last value is not kept, so that what it counts after an unclean stop took it back to 0 is
        // counted from 0, and a series that appears is counted whole. The last values are spread by id
        // (neither list is sorted: a sparse report's ids are in the order its series were first seen).
        if lastMarks.count <= seriesParts.count {
            lastMarks.append(contentsOf: repeatElement(0, count: seriesParts.count + 1 - lastMarks.count))
            lastValues.append(contentsOf: repeatElement(0, count: seriesParts.count + 1 - lastValues.count))
        }
        mark &+= 1
        if mark == 0 {
            for i in lastMarks.indices { lastMarks[i] = 0 }
            mark = 1
        }
        var blob = [UInt8](repeating: 0, count: ids.count * 12)
        increases.removeAll(keepingCapacity: true)
        let current = mark
        lastMarks.withUnsafeMutableBufferPointer { marks in
            lastValues.withUnsafeMutableBufferPointer { values in
                old.withUnsafeBytes { previous in
                    for at in stride(from: 0, to: previous.count - 11, by: 12) {
                        let id = Int(UInt32(littleEndian: previous.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                        guard id < marks.count else { continue }
                        marks[id] = current
                        values[id] = Double(
                            bitPattern: UInt64(littleEndian: previous.loadUnaligned(fromByteOffset: at + 4, as: UInt64.self)))
                    }
                }
                blob.withUnsafeMutableBytes { out in
                    for (i, (id, value)) in ids.enumerated() {
                        let lastValue = marks[Int(id)] == current ? values[Int(id)] : 0
                        if value > lastValue { increases.append((id, value - lastValue)) }
                        out.storeBytes(of: id.littleEndian, toByteOffset: i * 12, as: UInt32.self)
                        out.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: i * 12 + 4, as: UInt64.self)
                    }
                }
            }
        }
        // The box's entry goes in the batch's row (written at its end): one in an earlier row is superseded.
        let row = nextLogRow
        if last?.row != row {
            batchBoxes.append(box)
            if let earlier = last?.row { supersede(earlier) }
        }
        for (id, delta) in increases { add(set: labels, series: id, delta) }
        boxes[box] = BoxState(countingSince: report.countingSince, seq: report.seq, vals: blob, row: row)
        return reset ? .reset : .applied
    }

    /// One entry of `row` is superseded; a row left with none live is deleted with the batch.
    private func supersede(_ row: Int64) {
        guard var r = logRows[row] else { return }
        r.live -= 1
        if r.live > 0 {
            logRows[row] = r
        } else {
            logRows[row] = nil
            logEntries -= r.entries
            emptiedRows.append(row)
        }
    }

    /// A total's series text: `name{firmware="…",model="…",region="…",own labels}`.
    private func seriesText(_ key: UInt64) -> String {
        let labels = labelSetTexts[Int(key >> 32) - 1]
        let (name, own) = seriesParts[Int(key & 0xffff_ffff) - 1]
        return own.isEmpty ? name + "{" + labels + "}" : name + "{" + labels + "," + own + "}"
    }

    /// The totals, every one or those changed since the last ``markWritten()``, as (series, value).
    package func totals(changedOnly: Bool) -> [(series: String, value: Double)] {
        if changedOnly { return unwritten.map { (seriesText($0.key), $0.value) } }
        var rows: [(String, Double)] = []
        rows.reserveCapacity(totalCount)
        for (s, totals) in totalsBySet.enumerated() {
            for (id, value) in totals { rows.append((seriesText(UInt64(s + 1) << 32 | UInt64(id)), value)) }
        }
        return rows
    }

    /// The totals (every one, or those changed since the last ``markWritten()``) as the metrics store's
    /// import text, each stamped `milliseconds`, and how many: the bytes of ``FleetExport/text(_:milliseconds:)``
    /// of ``totals(changedOnly:)``, written from the names in memory without a string a total.
    package func importText(changedOnly: Bool, milliseconds: Int64) -> (text: [UInt8], count: Int) {
        var out: [UInt8] = []
        var stamp: [UInt8] = [0x20]
        FleetReport.appendInteger(milliseconds, to: &stamp)
        stamp.append(0x0a)
        func line(_ key: UInt64, _ value: Double) {
            let series = Int(key & 0xffff_ffff) - 1
            out.append(contentsOf: exportNames[series].utf8)
            out.append(0x7b)
            out.append(contentsOf: labelSetTexts[Int(key >> 32) - 1].utf8)
            let own = seriesParts[series].labels
            if !own.isEmpty {
                out.append(0x2c)
                out.append(contentsOf: own.utf8)
            }
            out.append(0x7d)
            out.append(0x20)
            if value == value.rounded(), abs(value) < 1e15 {
                FleetReport.appendInteger(Int64(value), to: &out)
            } else {
                out.append(contentsOf: "\(value)".utf8)
            }
            out.append(contentsOf: stamp)
        }
        var count = 0
        if changedOnly {
            out.reserveCapacity(unwritten.count * 160)
            for (key, value) in unwritten { line(key, value) }
            count = unwritten.count
        } else {
            out.reserveCapacity(totalCount * 160)
            for (s, totals) in totalsBySet.enumerated() {
                for (id, value) in totals { line(UInt64(s + 1) << 32 | UInt64(id), value) }
                count += totals.count
            }
        }
        return (out, count)
    }

    /// The changed totals are in the metrics store. (A restart writes every total first, so that what was
    /// unwritten at a stop is not lost.)
    package func markWritten() { unwritten = [:] }

    /// Boxes known.
    package func boxCount() -> Int { boxes.count }

    /// The log's rows and entries (live and superseded).
    var logSize: (rows: Int, entries: Int) { (logRows.count, logEntries) }

    /// Each box's last report applied (its row in the log included).
    var boxStates: [BoxKey: BoxState] { boxes }

    /// Series, label sets and totals known.
    package var sizes: (series: Int, labelSets: Int, totals: Int) { (seriesParts.count, labelSetTexts.count, totalCount) }
}

/// A box id, 32 hex digits, as 128 bits (the key of the boxes in memory: no string kept, none hashed).
struct BoxKey: Hashable {
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init?(_ id: String) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var n = 0
        for c in id.utf8 {
            let digit: UInt8
            switch c {
            case 0x30...0x39: digit = c - 0x30
            case 0x61...0x66: digit = c - 0x61 + 10
            default: return nil
            }
            if n < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
            n += 1
            if n > 32 { return nil }
        }
        guard n == 32 else { return nil }
        self.high = high
        self.low = low
    }
}

/// A label set as a report names it.
struct OperatorLabels: Hashable {
    var firmware: String
    var model: String
    var region: String
}

/// A box's last report applied: its identity, and its values as the database keeps them ((series id,
/// value) pairs, in the report's order).
struct BoxState: Equatable {
    var countingSince: Double
    var seq: UInt64
    var vals: [UInt8]
    /// The row of the log that holds its live entry.
    var row: Int64
}

/// A row of the log in memory.
struct LogRow {
    /// Its entries, live and superseded.
    var entries: Int
    /// Its entries that are their box's last.
    var live: Int
}

/// A box's entry in a row of the log (`box_log.entries`, entries back to back), little-endian: the box
/// (two UInt64, the id's first 16 hex digits then the last 16), counting_since (a Double's bits), seq
/// (UInt64), the count of (series id, value) pairs (UInt32), then the pairs (UInt32, a Double's
/// bits: 12 bytes each).
enum LogEntry {
    static let headerBytes = 36

    static func append(_ box: BoxKey, _ state: BoxState, to out: inout [UInt8]) {
        let at = out.count
        out.append(contentsOf: repeatElement(0, count: headerBytes))
        out.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: box.high.littleEndian, toByteOffset: at, as: UInt64.self)
            raw.storeBytes(of: box.low.littleEndian, toByteOffset: at + 8, as: UInt64.self)
            raw.storeBytes(of: state.countingSince.bitPattern.littleEndian, toByteOffset: at + 16, as: UInt64.self)
            raw.storeBytes(of: state.seq.littleEndian, toByteOffset: at + 24, as: UInt64.self)
            raw.storeBytes(of: UInt32(state.vals.count / 12).littleEndian, toByteOffset: at + 32, as: UInt32.self)
        }
        out.append(contentsOf: state.vals[..<(state.vals.count - state.vals.count % 12)])
    }

    /// Calls `body` with each entry of a row in order, until it returns false; a short entry (a corrupt
    /// or cut row) ends the row.
    static func forEach(
        in raw: UnsafeRawBufferPointer,
        _ body: (_ entry: (box: BoxKey, countingSince: Double, seq: UInt64, vals: Range<Int>)) -> Bool
    ) {
        var at = 0
        while raw.count - at >= headerBytes {
            let box = BoxKey(
                high: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                low: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)))
            let since = Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self)))
            let seq = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 24, as: UInt64.self))
            let pairs = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 32, as: UInt32.self)))
            let start = at + headerBytes
            guard pairs <= (raw.count - start) / 12 else { return }
            at = start + pairs * 12
            guard body((box, since, seq, start..<at)) else { return }
        }
    }
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
