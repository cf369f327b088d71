// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackCommandLine
import SnapbackDaemon
import SnapbackFleet
import SnapbackStore
import SnapbackSync
import SnapbackWire

/// `snapback-bench fleet`: snapback-fleet's aggregator on one core (pin it with taskset), reports per
/// second through the path of every fetched batch (``FleetService/apply(_:to:counts:log:)``: each report
/// decoded and checked, the batch folded into the totals with the consumer's position in one SQLite
/// transaction, WAL, synchronous=FULL), then the changed totals read and rendered as the metrics store's
/// import text (the POST itself is left out). In the same run, on the same bytes, batch by batch: the
/// decoding and checks alone, and a bare SQLite upsert of each report as one row per box in one
/// transaction per batch (the floor of a store that writes each box's last report as a row of its own:
/// the fleet's log of a row a batch writes less).
///
/// The reports are the agent's: the daemon's catalog (Metric.catalog) encoded by the same SnapbackWire
/// encoder snapback-sync publishes with, from simulated boxes with distinct box ids, each with its own
/// counts, over firmware × model × region, with clean and unclean restarts, stores made afresh and
/// re-published reports among them, over 60 operator label sets (7 firmware versions in use, 3 models, 5
/// regions), 90 % of the counts in 24 series (what a box counts most). Checked at the end: the fleet's
/// totals are the simulated boxes' counts.
struct FleetBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "snapback-fleet's aggregator: reports/s on one core, beside decoding alone and a bare SQLite upsert.",
        discussion: prose(
            """
            Simulated boxes report --rounds times each, shuffled into batches of --batch reports as the \
            stream delivers them. `full` reports carry every series of the catalog with their help text; \
            `sparse` ones leave out the help text and the zero series, as the agent sends them. The database is \
            in a new directory under /tmp, removed after.
            """))

    @Option(name: .long, help: ArgumentHelp("Distinct boxes.", valueName: "n")) var boxes = 20_000
    @Option(name: .long, help: ArgumentHelp("Reports per box.", valueName: "n")) var rounds = 3
    @Option(name: .long, help: ArgumentHelp("Reports per batch (fleet.conf's batch).", valueName: "n")) var batch = 256
    @Option(name: .long, help: ArgumentHelp("The reports' form: full, sparse or both.", valueName: "form"))
    var form = "both"
    @Option(
        name: .long, help: ArgumentHelp("Write a few encoded reports and their truncations there, and exit.", valueName: "dir"))
    var writeSeeds: String?

    func validate() throws {
        try checkRange(boxes, "--boxes", 10...10_000_000)
        try checkRange(rounds, "--rounds", 1...1000)
        try checkRange(batch, "--batch", FleetConfiguration.batchRange.lowerBound...FleetConfiguration.batchRange.upperBound)
        guard ["full", "sparse", "both"].contains(form) else { throw ValidationError("--form is full, sparse or both") }
    }

    func run() throws {
        if let writeSeeds {
            try Self.writeSeeds(writeSeeds)
            return
        }
        say("snapback-fleet aggregator, one core, in-process: \(boxes) boxes × \(rounds) reports, batches of \(batch)")
        for sparse in form == "both" ? [false, true] : [form == "sparse"] {
            try Self.measure(boxes: boxes, rounds: rounds, batch: batch, sparse: sparse)
        }
    }

    /// The thread's CPU time: what the aggregator costs the core it runs on, whatever else shares it (the
    /// waits for the disk, each commit's fsync, are counted apart, as wall time).
    static func cpu() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func wall() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func measure(boxes: Int, rounds: Int, batch: Int, sparse: Bool) throws {
        let directory = try Processes.makeTemporaryDirectory("snapback-bench-fleet")
        defer { Processes.removeTree(directory) }
        let store = try FleetStore(path: directory + "/fleet.db")
        let bare = try BareUpsert(path: directory + "/bare.db")
        var fleet = SimulatedFleet(boxes: boxes, sparse: sparse)
        var counts: FleetService.Counts = (0, 0, 0, 0)
        var timed = (path: 0.0, export: 0.0, decode: 0.0, bare: 0.0)
        var walls = (path: 0.0, bare: 0.0)
        var reports = 0
        var bytes = 0
        var exported = 0
        var exportBytes = 0
        var streamSeq: UInt64 = 0
        var problems: [String] = []
        for round in 0..<rounds {
            let order = fleet.shuffledBoxes()
            var at = 0
            while at < order.count {
                let chunk = order[at..<min(at + batch, order.count)]
                at += chunk.count
                var delivered: [(bytes: [UInt8], streamSeq: UInt64, subject: String)] = []
                delivered.reserveCapacity(chunk.count + 4)
                for box in chunk {
                    for encoded in fleet.reports(of: box, round: round) {
                        streamSeq += 1
                        delivered.append((encoded, streamSeq, TelemetryConfiguration.subjectPrefix + fleet.boxIds[box]))
                        bytes += encoded.count
                    }
                }
                reports += delivered.count
                let w0 = wall()
                let t0 = cpu()
                try FleetService.apply(delivered, to: store, counts: &counts) { problems.append($0) }
                let t1 = cpu()
                let (text, count) = store.importText(changedOnly: true, milliseconds: 1_700_000_000_000)
                store.markWritten()
                let t2 = cpu()
                let w1 = wall()
                exported += count
                exportBytes += text.count
                for item in delivered { _ = try? FleetReport.parse(item.bytes) }
                let t3 = cpu()
                let w2 = wall()
                try bare.apply(delivered)
                let t4 = cpu()
                let w3 = wall()
                timed.path += t1 - t0
                timed.export += t2 - t1
                timed.decode += t3 - t2
                timed.bare += t4 - t3
                walls.path += w1 - w0
                walls.bare += w3 - w2
            }
        }
        guard problems.isEmpty else { throw CommandError("reports dropped: \(problems.prefix(3))") }
        // The totals are what the simulated boxes counted (every series but the histograms' sums).
        var total = 0.0
        for (series, value) in store.totals(changedOnly: false) where !series.contains("_sum{") && !series.hasSuffix("_sum") {
            total += value
        }
        guard total == fleet.expectedTotal else {
            throw CommandError("the fleet's totals sum to \(total), the boxes counted \(fleet.expectedTotal)")
        }
        guard counts.duplicate == fleet.republished, counts.reset == fleet.storesMadeAfresh else {
            throw CommandError(
                "\(counts.duplicate) duplicates and \(counts.reset) resets, against \(fleet.republished) re-published and \(fleet.storesMadeAfresh) stores made afresh"
            )
        }
        let boxCount = store.boxCount()
        let totalCount = store.totals(changedOnly: false).count
        let rate = Double(reports) / (timed.path + timed.export)
        let decodeRate = Double(reports) / timed.decode
        let bareRate = Double(reports) / timed.bare
        let form = sparse ? "sparse" : "full"
        say(
            "  \(form) reports (\(fixed(Double(bytes) / Double(reports) / 1024, 1)) KiB each; \(reports) in all: "
                + "\(counts.applied) applied, \(counts.reset) after a store reset, \(counts.duplicate) re-published; "
                + "\(boxCount) boxes, \(totalCount) totals, \(exported) written after the batches, \(exportBytes / 1024) KiB of import text)"
        )
        say("    reports per second of the core's time (CPU time of the thread):")
        say(
            "      fleet path (decode + check + fold + one transaction a batch, then the changed totals' text): "
                + "\(Int(rate)) (\(fixed(1e6 / rate, 1)) µs a report; the totals' text \(fixed(timed.export / (timed.path + timed.export) * 100, 0)) %)"
        )
        say("      baseline, decoding and checks alone:           \(Int(decodeRate)) (\(fixed(1e6 / decodeRate, 1)) µs)")
        say("      baseline, bare SQLite upsert a report per box: \(Int(bareRate)) (\(fixed(1e6 / bareRate, 1)) µs)")
        say(
            "    wall time, the disk's waits (an fsync a commit) and other processes' share of the core included: fleet path "
                + "\(Int(Double(reports) / walls.path)) reports/s, bare upsert \(Int(Double(reports) / walls.bare))")
        say(
            "  ratio \(form): fleet path / decoding alone = \(fixed(decodeRate / rate, 2)), fleet path / bare upsert = "
                + "\(fixed(bareRate / rate, 2)) (CPU time a report); fleet path = \(fixed(rate / 3_333, 1))× a million boxes "
                + "reporting every 5 minutes (3,333 reports/s), \(fixed(rate / 33_000, 2))× the 33,000 target")
    }

    /// A few reports of the simulated fleet, as snapback-sync encodes them, and truncations of each: the
    /// seed corpus of snapback-fuzz-fleet.
    static func writeSeeds(_ directory: String) throws {
        var fleet = SimulatedFleet(boxes: 4, sparse: false)
        var sparseFleet = SimulatedFleet(boxes: 4, sparse: true)
        var seeds: [[UInt8]] = []
        for round in 0..<2 {
            for box in 0..<4 {
                seeds += fleet.reports(of: box, round: round)
                seeds += sparseFleet.reports(of: box, round: round)
            }
        }
        let whole = seeds
        for seed in whole.prefix(4) {
            for cut in [1, 2, 17, 40, seed.count / 3, seed.count / 2, seed.count - 1] where cut < seed.count {
                seeds.append(Array(seed.prefix(cut)))
            }
        }
        for (i, seed) in seeds.enumerated() {
            let path = directory + "/seed-\(i < whole.count ? "report" : "truncated")-\(i)"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw CommandError("\(path): \(String(cString: strerror(errno)))") }
            let written = seed.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == seed.count else { throw CommandError("\(path): short write") }
        }
        say("wrote \(seeds.count) seeds into \(directory)")
    }
}

/// The baseline: each report's bytes as its box's one row, upserted, one transaction a batch, the database
/// as the fleet's (WAL, synchronous=FULL, its page cache).
final class BareUpsert {
    let db: SQLiteConnection
    let put: SQLiteStatement

    init(path: String) throws {
        db = try SQLiteConnection(path: path, create: true)
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            PRAGMA cache_size = -\(FleetStore.cacheKiB);
            CREATE TABLE boxes (box TEXT PRIMARY KEY, seq INTEGER NOT NULL, report BLOB NOT NULL) WITHOUT ROWID;
            """)
        put = try db.prepare(
            "INSERT INTO boxes (box, seq, report) VALUES (?, ?, ?) ON CONFLICT(box) DO UPDATE SET seq = excluded.seq, report = excluded.report"
        )
    }

    func apply(_ batch: [(bytes: [UInt8], streamSeq: UInt64, subject: String)]) throws {
        try db.execute("BEGIN IMMEDIATE")
        for item in batch {
            try put.bind(1, item.subject)
            try put.bind(2, Int64(item.streamSeq))
            try put.bind(3, item.bytes)
            try put.run()
        }
        try db.execute("COMMIT")
    }
}

/// Boxes as the agent sees them: each with its daemon's counters (the catalog's slots), its identity
/// (counting_since, start id) and its report number, its operator labels; a round adds a box's five
/// minutes of viewing to its counters, and sometimes a restart.
struct SimulatedFleet {
    /// One family of the catalog, its series' labels, and where its slots begin.
    struct Family {
        var definition: MetricDefinition
        var labels: [[SnapbackV1.MetricLabel]]
        var firstSlot: Int
    }

    /// What a slot is: a counter's series, a histogram's bucket (its own count, cumulative in the report),
    /// its sum (milliseconds) or its count (the +Inf bucket's cumulative count).
    enum Role { case counter, bucket(first: Int), sum, count(first: Int) }

    let sparse: Bool
    let families: [Family]
    let roles: [Role]
    var slotCount: Int { roles.count }
    let boundCount = HistogramBuckets.bounds.count
    var boxIds: [String] = []
    var startIds: [String] = []
    var values: [[UInt64]] = []
    /// Each box's values two reports back: an unclean stop resumes from that flush, below what was reported.
    var older: [[UInt64]] = []
    var previous: [[UInt64]] = []
    /// Each series' last value as the fleet holds it (absent: 0), and the boxes' counts the fleet must have
    /// summed: every increase over that, nothing taken away for a decrease.
    var reported: [[UInt64]] = []
    var expectedTotal = 0.0
    var since: [Double] = []
    var seq: [UInt64] = []
    var labels: [(String, String, String)] = []
    var random = SplitMix64Bench(seed: 0xf1ee7)
    var republished = 0
    var storesMadeAfresh = 0
    var popular: [Int] = []

    init(boxes: Int, sparse: Bool) {
        self.sparse = sparse
        var families: [Family] = []
        var roles: [Role] = []
        for definition in Metric.catalog {
            let labels: [[SnapbackV1.MetricLabel]] =
                definition.kind == .counter
                ? (0..<definition.seriesCount).map { series in
                    definition.labelValues(ofSeries: series).map { SnapbackV1.MetricLabel(name: $0.name, value: $0.value) }
                } : [[]]
            let first = roles.count
            families.append(Family(definition: definition, labels: labels, firstSlot: first))
            switch definition.kind {
            case .counter: roles += Array(repeating: .counter, count: definition.seriesCount)
            case .histogram:
                roles += Array(repeating: .bucket(first: first), count: HistogramBuckets.bounds.count + 1)
                roles += [.sum, .count(first: first)]
            }
        }
        self.families = families
        self.roles = roles
        // A fleet's firmware versions in use at once (most boxes on the last two), its models and regions:
        // 60 operator label sets.
        let firmware = ["4.2.1", "4.2.1", "4.2.1", "4.3.0", "4.3.0", "4.1.7", "4.0.9"]
        let models = ["stb-x100", "stb-x200", "stick-s1"]
        let regions = ["eu-west", "eu-north", "us-east", "us-west", "ap-south"]
        // What a box counts most (a session opened and closed, its answers, its breaks played and watched,
        // seeks): 24 series take 90 % of the counts, the others the rest.
        popular = (0..<24).map { _ in random.below(roles.count) }
        for box in 0..<boxes {
            boxIds.append(random.hex(32))
            startIds.append(random.hex(32))
            var start = [UInt64](repeating: 0, count: roles.count)
            // A box that has run a while: some series counted already.
            for _ in 0..<30 { start[slotToCount()] += UInt64(1 + random.below(40)) }
            values.append(start)
            older.append(start)
            previous.append(start)
            reported.append([UInt64](repeating: 0, count: roles.count))
            since.append(1_700_000_000 + Double(random.below(10_000_000)))
            seq.append(0)
            labels.append(
                (firmware[random.below(firmware.count)], models[box % models.count], regions[random.below(regions.count)]))
        }
    }

    private mutating func slotToCount() -> Int {
        random.below(10) < 9 ? popular[random.below(popular.count)] : random.below(roles.count)
    }

    mutating func shuffledBoxes() -> [Int] {
        var order = Array(0..<boxIds.count)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, random.below(i + 1)) }
        return order
    }

    /// The box's report for `round` (a round's counts and events first), and sometimes the same report
    /// again (a re-publish after a lost ack: the fleet skips it by its seq).
    mutating func reports(of box: Int, round: Int) -> [[UInt8]] {
        if round > 0 {
            let event = random.below(1000)
            if event < 5 {
                // The box's store made afresh: a new counting_since, counting from 0.
                since[box] += 1
                startIds[box] = random.hex(32)
                values[box] = [UInt64](repeating: 0, count: slotCount)
                reported[box] = values[box]
                storesMadeAfresh += 1
            } else if event < 20 {
                // An unclean stop: the daemon resumes from an older flush, below what it reported.
                startIds[box] = random.hex(32)
                values[box] = older[box]
            } else if event < 50 {
                // A clean restart: the counts go on.
                startIds[box] = random.hex(32)
            }
            // Five minutes of viewing: a few sessions, seeks, breaks and answers counted.
            for _ in 0..<(4 + random.below(12)) { values[box][slotToCount()] += 1 }
        }
        older[box] = previous[box]
        previous[box] = values[box]
        seq[box] += 1
        for slot in 0..<slotCount {
            let value: UInt64
            switch roles[slot] {
            case .counter: value = values[box][slot]
            case .bucket(let first): value = values[box][first...slot].reduce(0, +)
            case .count(let first): value = values[box][first...(first + boundCount)].reduce(0, +)
            case .sum: continue
            }
            if value > reported[box][slot] { expectedTotal += Double(value - reported[box][slot]) }
            reported[box][slot] = value
        }
        let encoded = encode(box)
        if random.below(100) == 0 {
            republished += 1
            return [encoded, encoded]
        }
        return [encoded]
    }

    private func encode(_ box: Int) -> [UInt8] {
        var out: [SnapbackV1.MetricFamily] = []
        out.reserveCapacity(families.count)
        let v = values[box]
        for family in families {
            var samples: [SnapbackV1.MetricSample] = []
            let base = family.firstSlot
            switch family.definition.kind {
            case .counter:
                for (series, labels) in family.labels.enumerated() where !sparse || v[base + series] != 0 {
                    samples.append(SnapbackV1.MetricSample(labels: labels, value: v[base + series]))
                }
            case .histogram:
                var cumulative: UInt64 = 0
                var counts: [UInt64] = []
                for i in 0...boundCount {
                    cumulative += v[base + i]
                    counts.append(cumulative)
                }
                if !sparse || cumulative != 0 {
                    samples.append(
                        SnapbackV1.MetricSample(
                            bucketBounds: HistogramBuckets.bounds + [.infinity], sum: Double(v[base + boundCount + 1]) / 1000,
                            count: cumulative, bucketCounts: counts))
                }
            }
            if sparse && samples.isEmpty { continue }
            out.append(
                SnapbackV1.MetricFamily(
                    name: family.definition.name, help: sparse ? "" : family.definition.help, type: family.definition.kind.proto,
                    unit: family.definition.unit, series: samples))
        }
        let (firmware, model, region) = labels[box]
        return SnapbackV1.TelemetryReport(
            boxId: boxIds[box], seq: seq[box], startId: startIds[box], bootId: startIds[box], countingSince: since[box],
            starts: seq[box], uncleanStarts: 0, flushInterval: 60, firmware: firmware, model: model, region: region,
            time: since[box] + Double(seq[box]) * 300, families: out
        ).encoded()
    }
}

/// SplitMix64: the simulation's reproducible draws (the bench's, not the tests' SnapbackTestSupport).
struct SplitMix64Bench {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func hex(_ digits: Int) -> String {
        let alphabet = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        while out.count < digits {
            var word = next()
            for _ in 0..<16 where out.count < digits {
                out.append(alphabet[Int(word & 15)])
                word >>= 4
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
