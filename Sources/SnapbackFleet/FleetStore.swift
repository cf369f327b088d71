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
/// Every count a peer can grow is bounded: boxes (``maxBoxes``), series, label sets and totals; a report
/// that would pass one is decided on before anything of it is made (its box looked up, then its label
/// set and series, and only then the box made or changed).
package final class FleetStore {
    let db: SQLiteConnection
    package let maxBoxes: Int
    package let maxSeries: Int
    package let maxLabelSets: Int
    package let maxTotals: Int
    private let addBox: SQLiteStatement
    private let putBox: SQLiteStatement
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
    /// The row number of the next box.
    private var nextBoxRow: Int64 = 1
    private var streamPosition: UInt64 = 0
    /// Set when a failed commit's reload failed too: the next batch reads the database first.
    private var stale = false
    /// Totals changed since the last ``markWritten()``, with their values: what the next write carries.
    private var unwritten: [UInt64: Double] = [:]
    /// A batch's changes, until its commit.
    private var changed: [UInt64: Double] = [:]
    private var dirtySets: [UInt32] = []
    private var isDirty: [Bool] = []
    /// A report's series ids, in its order, then by id (kept between reports for their capacity).
    private var ids: [(id: UInt32, value: Double)] = []
    private var increases: [(UInt32, Double)] = []

    package static let defaultMaxBoxes = 2_000_000
    /// SQLite's page cache: each report's upsert finds its box's row through the b-tree's pages, which
    /// the default 2 MiB would read again from the file for every report of a fleet of a few thousand
    /// boxes and more.
    package static let cacheKiB = 64 * 1024

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
        // One row per box: its last report's identity and its values, (series id, value) pairs by id in a
        // blob (12 bytes a series: a box of the daemon's ~280 series is 3 KB, one write a report), found by
        // its number (a table b-tree holds such a row in its leaf, where an index b-tree, a table WITHOUT
        // ROWID, keeps at most about a quarter of a page there and chains the rest over pages of their own).
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            PRAGMA cache_size = -\(Self.cacheKiB);
            CREATE TABLE IF NOT EXISTS box_state (id INTEGER PRIMARY KEY, box TEXT NOT NULL UNIQUE,
                counting_since REAL NOT NULL, seq INTEGER NOT NULL, start_id TEXT NOT NULL, firmware TEXT NOT NULL,
                model TEXT NOT NULL, region TEXT NOT NULL, time REAL NOT NULL, vals BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS label_sets (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
            CREATE TABLE IF NOT EXISTS label_totals (label_set INTEGER PRIMARY KEY, vals BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            """)
        addBox = try db.prepare(
            """
            INSERT INTO box_state (id, box, counting_since, seq, start_id, firmware, model, region, time, vals)
            VALUES (?10, ?9, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        putBox = try db.prepare(
            """
            UPDATE box_state SET counting_since = ?1, seq = ?2, start_id = ?3, firmware = ?4, model = ?5, region = ?6,
            time = ?7, vals = ?8 WHERE id = ?10
            """)
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
    /// `box_state` from `boxes` (by their id's text).
    private func migrate() throws(SQLiteError) {
        let text = try tableExists("totals")
        let numbered = try tableExists("fleet_totals")
        let keyedBoxes = try tableExists("boxes")
        guard text || numbered || keyedBoxes else { return }
        try db.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            if keyedBoxes {
                // The boxes as earlier versions kept them, by their id's text (WITHOUT ROWID).
                try db.execute(
                    """
                    INSERT INTO box_state (box, counting_since, seq, start_id, firmware, model, region, time, vals)
                    SELECT box, counting_since, seq, start_id, firmware, model, region, time, vals FROM boxes;
                    DROP TABLE boxes;
                    """)
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
    /// a commit that failed).
    private func load() throws(SQLiteError) {
        try loadNames()
        try loadTotals()
        boxes = [:]
        nextBoxRow = 1
        let rows = try db.prepare("SELECT box, counting_since, seq, vals, id FROM box_state")
        while try rows.step() {
            guard let key = BoxKey(rows.text(0)) else { continue }
            var vals = rows.blob(3)
            vals.removeLast(vals.count % 12)
            let known = UInt32(seriesParts.count)
            if vals.withUnsafeBytes({ raw in
                stride(from: 0, to: raw.count, by: 12).contains {
                    UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: UInt32.self)) > known
                }
            }) {
                vals = stride(from: 0, to: vals.count, by: 12).filter { at in
                    vals.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) <= known }
                }.flatMap { vals[$0..<($0 + 12)] }
            }
            let row = rows.int64(4)
            nextBoxRow = max(nextBoxRow, row &+ 1)
            boxes[key] = BoxState(countingSince: rows.double(1), seq: UInt64(clamping: rows.int64(2)), vals: vals, row: row)
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
    /// row per label set.
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
            addBox.reset()
            putBox.reset()
            putTotals.reset()
            try? db.execute("ROLLBACK")
            do { try load() } catch { stale = true }
            throw error
        }
    }

    /// The rows of the label sets whose totals changed, (series id, value) pairs by id.
    private func writeDirtySets() throws(SQLiteError) {
        for set in dirtySets {
            let totals = totalsBySet[Int(set) - 1]
            var blob = [UInt8](repeating: 0, count: totals.count * 12)
            blob.withUnsafeMutableBytes { out in
                for (i, (id, value)) in totals.sorted(by: { $0.key < $1.key }).enumerated() {
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
        // In the catalog's order the ids mostly are already (they were made in it).
        if !zip(ids, ids.dropFirst()).allSatisfy({ $0.id < $1.id }) { ids.sort { $0.id < $1.id } }
        // A series absent from the report is 0 since its counting_since (the agent leaves zeros out): its
        // last value is not kept, so that what it counts after an unclean stop took it back to 0 is
        // counted from 0, and a series that appears is counted whole. Both lists are by id: one merge.
        var blob = [UInt8](repeating: 0, count: ids.count * 12)
        increases.removeAll(keepingCapacity: true)
        old.withUnsafeBytes { previous in
            blob.withUnsafeMutableBytes { out in
                var at = 0
                for (i, (id, value)) in ids.enumerated() {
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
                    if value > lastValue { increases.append((id, value - lastValue)) }
                    out.storeBytes(of: id.littleEndian, toByteOffset: i * 12, as: UInt32.self)
                    out.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: i * 12 + 4, as: UInt64.self)
                }
            }
        }
        // A known box's row is updated by its number; a new one's is made (its id text written once).
        let row = last?.row ?? nextBoxRow
        let write = last == nil ? addBox : putBox
        try write.bind(1, report.countingSince)
        try write.bind(2, Int64(clamping: report.seq))
        try write.bind(3, report.startId)
        try write.bind(4, report.firmware)
        try write.bind(5, report.model)
        try write.bind(6, report.region)
        try write.bind(7, report.time)
        try write.bind(8, blob)
        if last == nil { try write.bind(9, report.boxId) }
        try write.bind(10, row)
        try write.run()
        if last == nil { nextBoxRow &+= 1 }
        for (id, delta) in increases { add(set: labels, series: id, delta) }
        boxes[box] = BoxState(countingSince: report.countingSince, seq: report.seq, vals: blob, row: row)
        return reset ? .reset : .applied
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

    /// Series, label sets and totals known.
    package var sizes: (series: Int, labelSets: Int, totals: Int) { (seriesParts.count, labelSetTexts.count, totalCount) }
}

/// A box id, 32 hex digits, as 128 bits (the key of the boxes in memory: no string kept, none hashed).
struct BoxKey: Hashable {
    var high: UInt64
    var low: UInt64

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
/// value) pairs by id).
struct BoxState {
    var countingSince: Double
    var seq: UInt64
    var vals: [UInt8]
    /// Its row in `box_state`.
    var row: Int64
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
