// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Glibc
import SnapbackStore
import SnapbackSync
import SnapbackTestSupport
import SnapbackWire
import Testing

@testable import SnapbackFleet

/// A report's checks at the fleet's door, and the store's rule: deltas per box, a reset by a new
/// counting_since, duplicates by seq, one transaction per batch.
@Suite struct FleetTests {
    static let box = "0123456789abcdef0123456789abcdef"

    static func report(
        box: String = box, seq: UInt64, since: Double = 1_700_000_000, snapbacks: UInt64, skips: UInt64 = 0,
        firmware: String = "fw-1"
    ) -> SnapbackV1.TelemetryReport {
        let seeks = SnapbackV1.MetricFamily(
            name: "snapbackd_seeks_commanded", help: "Seeks", type: MetricType.counter.proto,
            series: [
                SnapbackV1.MetricSample(
                    labels: [.init(name: "reason", value: "snapback"), .init(name: "preset", value: "ima")], value: snapbacks),
                SnapbackV1.MetricSample(
                    labels: [.init(name: "reason", value: "resume-from-bookmark"), .init(name: "preset", value: "ima")],
                    value: 0)
            ])
        let skipped = SnapbackV1.MetricFamily(
            name: "snapbackd_breaks_skipped", help: "Skipped", type: MetricType.counter.proto,
            series: [SnapbackV1.MetricSample(labels: [.init(name: "preset", value: "ima")], value: skips)])
        let lag = SnapbackV1.MetricFamily(
            name: "snapbackd_loop_lag_seconds", help: "Lag", type: MetricType.histogram.proto, unit: "seconds",
            series: [SnapbackV1.MetricSample(bucketBounds: [0.001, .infinity], sum: 0.5, count: 3, bucketCounts: [2, 3])])
        return SnapbackV1.TelemetryReport(
            boxId: box, seq: seq, startId: "s", countingSince: since, firmware: firmware, model: "m", region: "eu",
            time: 1_700_000_100, families: [seeks, skipped, lag])
    }

    static func parsed(_ r: SnapbackV1.TelemetryReport) throws -> FleetReport { try FleetReport.parse(r.encoded()) }

    @Test func aReportBecomesSeriesWithTheirLabels() throws {
        let r = try Self.parsed(Self.report(seq: 1, snapbacks: 4))
        let series = r.samples.map { $0.series(extra: r.operatorLabels) }
        #expect(
            series.contains(
                "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\",preset=\"ima\"}")
        )
        #expect(series.contains("snapbackd_loop_lag_seconds_bucket{firmware=\"fw-1\",model=\"m\",region=\"eu\",le=\"+Inf\"}"))
        #expect(r.samples.first { $0.name == "snapbackd_loop_lag_seconds_sum" }?.value == 0.5)
        #expect(FleetExport.name("snapbackd_breaks_skipped_total{a=\"b\"}") == "snapback_fleet_breaks_skipped_total{a=\"b\"}")
    }

    @Test func malformedReportsAreRefusedWithAReason() throws {
        func reason(_ edit: (inout SnapbackV1.TelemetryReport) -> Void) -> String? {
            var r = Self.report(seq: 1, snapbacks: 1)
            edit(&r)
            do {
                _ = try Self.parsed(r)
                return nil
            } catch {
                return (error as? FleetReport.Rejection)?.reason
            }
        }
        #expect(reason { $0.boxId = "AA:BB:CC:DD:EE:FF" } == "box_id is not 32 hex digits")
        #expect(reason { $0.seq = 0 } == "seq 0")
        #expect(reason { $0.countingSince = .nan }?.contains("is not a time") == true)
        #expect(reason { $0.firmware = "fw 1" }?.hasPrefix("firmware is not") == true)
        #expect(reason { $0.families[0].series[0].labels[1].value = "movie/42 \"x\"" }?.contains("not a closed value") == true)
        #expect(reason { $0.families[0].series[0].labels[0].name = "firmware" }?.contains("refused") == true)
        #expect(reason { $0.families[0].name = "Bad-Name" }?.contains("not a metric name") == true)
        #expect(reason { $0.families.append($0.families[0]) }?.contains("twice") == true)
        #expect(reason { $0.families[0].series.append($0.families[0].series[0]) }?.contains("twice") == true)
        #expect(reason { $0.families[2].series[0].bucketBounds = [0.1, 0.01] }?.contains("ascending") == true)
        #expect(reason { $0.families[2].series[0].bucketCounts = [1] }?.contains("buckets") == true)
        // A family of a type this version does not know is left out; the report is read.
        var newer = Self.report(seq: 1, snapbacks: 1)
        newer.families[0].type = Snapback__V1__MetricType(rawValue: 9)
        #expect(try Self.parsed(newer).samples.allSatisfy { !$0.name.hasPrefix("snapbackd_seeks_commanded") })
        #expect(
            reason { r in
                r.families = (0..<65).map { SnapbackV1.MetricFamily(name: "f\($0)", type: MetricType.counter.proto) }
            }?.contains("families, more than 64") == true)
        #expect((try? FleetReport.parse([0xff, 0xff, 0xff])) == nil)
        #expect((try? FleetReport.parse([UInt8](repeating: 0, count: FleetReport.maxBytes + 1))) == nil)
    }

    static func total(_ store: FleetStore, _ prefix: String) throws -> Double {
        store.totals(changedOnly: false).filter { $0.series.hasPrefix(prefix) }.reduce(0) { $0 + $1.value }
    }

    @Test func deltasResetsAndDuplicates() throws {
        let path = "/tmp/snapback-fleet-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let store = try FleetStore(path: path)
        let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        // Two boxes; box A reports 3 then 5: the fleet has 5 + B's 2.
        let other = "fedcba9876543210fedcba9876543210"
        #expect(
            try store.apply([
                (1, try Self.parsed(Self.report(seq: 1, snapbacks: 3))),
                (2, try Self.parsed(Self.report(box: other, seq: 1, snapbacks: 2)))
            ]) == [.applied, .applied])
        #expect(try store.apply([(3, try Self.parsed(Self.report(seq: 2, snapbacks: 5)))]) == [.applied])
        #expect(try Self.total(store, seeks) == 7)
        // The same report again, and an older one: duplicates, nothing added.
        #expect(
            try store.apply([
                (4, try Self.parsed(Self.report(seq: 2, snapbacks: 5))),
                (5, try Self.parsed(Self.report(seq: 1, snapbacks: 3)))
            ]) == [.duplicate, .duplicate])
        #expect(try Self.total(store, seeks) == 7)
        // An unclean stop: the daemon resumed from its last flush, 4 < 5; nothing taken away, and the
        // counts after it are added from 4.
        #expect(try store.apply([(6, try Self.parsed(Self.report(seq: 3, snapbacks: 4)))]) == [.applied])
        #expect(try Self.total(store, seeks) == 7)
        #expect(try store.apply([(7, try Self.parsed(Self.report(seq: 4, snapbacks: 6)))]) == [.applied])
        #expect(try Self.total(store, seeks) == 9)
        // The box's store made afresh: a new counting_since, its 1 is new.
        #expect(
            try store.apply([(8, try Self.parsed(Self.report(seq: 5, since: 1_800_000_000, snapbacks: 1)))]) == [.reset])
        #expect(try Self.total(store, seeks) == 10)
        // A firmware upgrade: what is counted after it goes to the new firmware's series.
        #expect(
            try store.apply([(9, try Self.parsed(Self.report(seq: 6, since: 1_800_000_000, snapbacks: 3, firmware: "fw-2")))])
                == [.applied])
        #expect(try Self.total(store, seeks) == 10)
        #expect(try Self.total(store, "snapbackd_seeks_commanded_total{firmware=\"fw-2\"") == 2)
        #expect(store.position() == 9 && store.boxCount() == 2)
        // Histograms: buckets, sum and count summed too (A's 3, B's 3, A's 3 again after its reset).
        #expect(try Self.total(store, "snapbackd_loop_lag_seconds_count") == 9)
        #expect(try Self.total(store, "snapbackd_loop_lag_seconds_sum") == 1.5)

        // Changed totals until written; then none, and a reopened store holds the same.
        #expect(!store.totals(changedOnly: true).isEmpty)
        store.markWritten()
        #expect(store.totals(changedOnly: true).isEmpty)
        let reopened = try FleetStore(path: path)
        #expect(try Self.total(reopened, seeks) == 10 && reopened.position() == 9)
        // The import text made from memory is the totals' text.
        for changedOnly in [false, true] {
            let (bytes, count) = reopened.importText(changedOnly: changedOnly, milliseconds: 1234)
            let expected = FleetExport.text(reopened.totals(changedOnly: changedOnly), milliseconds: 1234)
            #expect(
                String(decoding: bytes, as: UTF8.self) == expected && count == reopened.totals(changedOnly: changedOnly).count)
        }
        _ = try reopened.apply([(10, try Self.parsed(Self.report(seq: 7, since: 1_800_000_000, snapbacks: 9, firmware: "fw-2")))])
        let (changed, count) = reopened.importText(changedOnly: true, milliseconds: 99)
        #expect(
            count > 0
                && String(decoding: changed, as: UTF8.self)
                    == FleetExport.text(reopened.totals(changedOnly: true), milliseconds: 99)
        )
        // The export text: series renamed, with the timestamp.
        let text = FleetExport.text([("snapbackd_starts_total{firmware=\"f\"}", 3)], milliseconds: 1234)
        #expect(text == "snapback_fleet_starts_total{firmware=\"f\"} 3 1234\n")
    }

    /// The agent leaves out the series that counted nothing: absent is 0, whether a series was never
    /// there, comes to be, or goes (an unclean stop took it back to 0).
    @Test func anAbsentFamilyIsZeroAndAnEmptyReportOfANewCountingSinceAddsNothing() throws {
        let path = "/tmp/snapback-fleet-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let store = try FleetStore(path: path)
        let skips = "snapbackd_breaks_skipped_total{"
        let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        func without(_ names: Set<String>, _ r: SnapbackV1.TelemetryReport) -> SnapbackV1.TelemetryReport {
            var r = r
            r.families.removeAll { names.contains($0.name) }
            return r
        }
        // Skips absent, then present with 2: all of the 2 counts.
        #expect(
            try store.apply([(1, try Self.parsed(without(["snapbackd_breaks_skipped"], Self.report(seq: 1, snapbacks: 3))))]) == [
                .applied
            ])
        #expect(try Self.total(store, skips) == 0)
        #expect(try store.apply([(2, try Self.parsed(Self.report(seq: 2, snapbacks: 3, skips: 2)))]) == [.applied])
        #expect(try Self.total(store, skips) == 2)
        // Seeks absent after 3 (an unclean stop took the counter back to 0): nothing taken away, and the
        // next 1 counts from 0.
        #expect(
            try store.apply([
                (3, try Self.parsed(without(["snapbackd_seeks_commanded"], Self.report(seq: 3, snapbacks: 0, skips: 2))))
            ]) == [.applied])
        #expect(try Self.total(store, seeks) == 3)
        #expect(try store.apply([(4, try Self.parsed(Self.report(seq: 4, snapbacks: 1, skips: 2)))]) == [.applied])
        #expect(try Self.total(store, seeks) == 4)
        // An empty report (nothing counted since a new counting_since): a reset, nothing added.
        #expect(
            try store.apply([
                (
                    5,
                    try Self.parsed(
                        without(
                            ["snapbackd_seeks_commanded", "snapbackd_breaks_skipped", "snapbackd_loop_lag_seconds"],
                            Self.report(seq: 5, since: 1_800_000_000, snapbacks: 0)))
                )
            ]) == [.reset])
        #expect(try Self.total(store, seeks) == 4 && Self.total(store, skips) == 2)
        #expect(
            try store.apply([(6, try Self.parsed(Self.report(seq: 6, since: 1_800_000_000, snapbacks: 2, skips: 1)))]) == [
                .applied
            ])
        #expect(try Self.total(store, seeks) == 6 && Self.total(store, skips) == 3)
    }

    /// A report without help text and without its zero series (the agent's smaller form): an absent
    /// series is 0 since the box's counting_since. Appearing, it is counted whole; going back to absent
    /// (an unclean stop took it back to 0) takes nothing away, and what it counts after is counted from 0.
    @Test func anAbsentSeriesIsZero() throws {
        let path = "/tmp/snapback-fleet-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let store = try FleetStore(path: path)
        func sparse(seq: UInt64, snapbacks: UInt64?) throws -> FleetReport {
            var r = Self.report(seq: seq, snapbacks: snapbacks ?? 0)
            for i in r.families.indices { r.families[i].help = "" }
            r.families[0].series.removeAll { $0.value == 0 }
            r.families.removeAll { $0.series.isEmpty }
            let parsed = try Self.parsed(r)
            #expect(parsed.samples.contains { $0.labels.contains { $0 == ("reason", "snapback") } } == (snapbacks != nil))
            return parsed
        }
        let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        #expect(try store.apply([(1, try sparse(seq: 1, snapbacks: nil))]) == [.applied])
        #expect(try Self.total(store, seeks) == 0)
        #expect(try store.apply([(2, try sparse(seq: 2, snapbacks: 3))]) == [.applied])
        #expect(try Self.total(store, seeks) == 3)
        #expect(try store.apply([(3, try sparse(seq: 3, snapbacks: nil))]) == [.applied])
        #expect(try Self.total(store, seeks) == 3)
        #expect(try store.apply([(4, try sparse(seq: 4, snapbacks: 2))]) == [.applied])
        #expect(try Self.total(store, seeks) == 5)
        // The full form after the sparse one: a zero present is a zero absent.
        #expect(try store.apply([(5, try Self.parsed(Self.report(seq: 5, snapbacks: 2)))]) == [.applied])
        #expect(try Self.total(store, seeks) == 5)
    }

    /// A bucket's `le` is written as Swift prints the bound, without making a string for the usual ones.
    @Test func bucketLabelsAreSwiftsShortestForm() {
        var random = SplitMix64(seed: 0x1e)
        var bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 1e-5, 1e20, -3, -0.5]
        for _ in 0..<5_000 {
            let digits = Double(Int.random(in: 1...999_999, using: &random))
            bounds.append(digits / [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7][Int.random(in: 0...7, using: &random)])
            bounds.append(Double(bitPattern: random.next() >> 2))
        }
        for bound in bounds where bound.isFinite {
            let expected = bound == bound.rounded() && abs(bound) < 1e15 ? String(Int64(bound)) : "\(bound)"
            #expect(FleetReport.bucketLabel(bound) == expected, "\(bound)")
        }
        #expect(FleetReport.bucketLabel(.infinity) == "+Inf")
    }

    /// A database of the earlier version (its totals by their whole series text) is read: moved once.
    @Test func anEarlierDatabasesTotalsAreMoved() throws {
        let path = "/tmp/snapback-fleet-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        do {
            let db = try SQLiteConnection(path: path, create: true)
            try db.execute(
                """
                CREATE TABLE totals (series TEXT PRIMARY KEY, value REAL NOT NULL, changed INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO totals VALUES ('snapbackd_seeks_commanded_total{firmware="fw-1",model="m",region="eu",reason="snapback",preset="ima"}', 7, 0);
                INSERT INTO totals VALUES ('snapbackd_starts_total{firmware="fw-1",model="m",region="eu"}', 2, 0);
                """)
        }
        let store = try FleetStore(path: path)
        let totals = store.totals(changedOnly: false).sorted { $0.series < $1.series }
        #expect(
            totals.map(\.series) == [
                "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\",preset=\"ima\"}",
                "snapbackd_starts_total{firmware=\"fw-1\",model=\"m\",region=\"eu\"}"
            ])
        #expect(totals.map(\.value) == [7, 2])
        // A box's report adds to the moved total.
        _ = try store.apply([(1, try Self.parsed(Self.report(seq: 1, snapbacks: 3)))])
        let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        #expect(try Self.total(store, seeks) == 10)
    }

    static func temporaryPath() -> String {
        "/tmp/snapback-fleet-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db"
    }

    static func remove(_ path: String) { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }

    /// A database as the previous version made it (a row per (label set, series) in `fleet_totals`, the
    /// two ids in one integer): its totals, boxes and position are read, and moved to a row per label set.
    @Test func aDatabaseOfThePreviousLayoutKeepsItsTotals() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let seeks = "snapbackd_seeks_commanded_total{reason=\"snapback\",preset=\"ima\"}"
        do {
            let db = try SQLiteConnection(path: path, create: true)
            try db.execute(
                """
                CREATE TABLE boxes (box TEXT PRIMARY KEY, counting_since REAL NOT NULL,
                    seq INTEGER NOT NULL, start_id TEXT NOT NULL, firmware TEXT NOT NULL, model TEXT NOT NULL,
                    region TEXT NOT NULL, time REAL NOT NULL, vals BLOB NOT NULL) WITHOUT ROWID;
                CREATE TABLE series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
                CREATE TABLE label_sets (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
                CREATE TABLE fleet_totals (key INTEGER PRIMARY KEY, value REAL NOT NULL);
                CREATE TABLE state (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO series VALUES (1, '\(seeks)'), (2, 'snapbackd_starts_total');
                INSERT INTO label_sets VALUES (1, 'firmware="fw-1",model="m",region="eu"'),
                    (2, 'firmware="fw-2",model="m",region="eu"');
                INSERT INTO fleet_totals VALUES (\(1 << 32 | 1), 7), (\(1 << 32 | 2), 2), (\(2 << 32 | 1), 4);
                INSERT INTO state VALUES ('stream_seq', 5);
                INSERT INTO boxes VALUES ('\(Self.box)', 1700000000, 1, 's', 'fw-1', 'm', 'eu', 1700000100,
                    X'010000000000000000000840');
                """)
        }
        let store = try FleetStore(path: path)
        let totals = store.totals(changedOnly: false).sorted { $0.series < $1.series }
        #expect(
            totals.map(\.series) == [
                "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\",preset=\"ima\"}",
                "snapbackd_seeks_commanded_total{firmware=\"fw-2\",model=\"m\",region=\"eu\",reason=\"snapback\",preset=\"ima\"}",
                "snapbackd_starts_total{firmware=\"fw-1\",model=\"m\",region=\"eu\"}"
            ])
        #expect(totals.map(\.value) == [7, 4, 2])
        #expect(store.position() == 5 && store.boxCount() == 1)
        #expect(try store.db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'fleet_totals'") == 0)
        #expect(try store.db.integer("SELECT count(*) FROM label_totals") == 2)
        #expect(try store.db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'boxes'") == 0)
        #expect(try store.db.integer("SELECT count(*) FROM box_log") == 1 && store.logSize == (1, 1))
        // The box's last value (3) is known: its 5 adds 2; its first report again is a duplicate.
        #expect(try store.apply([(6, try Self.parsed(Self.report(seq: 2, snapbacks: 5)))]) == [.applied])
        #expect(try store.apply([(7, try Self.parsed(Self.report(seq: 1, snapbacks: 5)))]) == [.duplicate])
        let fw1 = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        #expect(try Self.total(store, fw1) == 9)
        // Read again, the same; and with a bound of one label set, the second set's totals are left out.
        #expect(try Self.total(FleetStore(path: path), fw1) == 9)
        let bounded = try FleetStore(path: path, maxLabelSets: 1)
        #expect(bounded.totals(changedOnly: false).allSatisfy { $0.series.contains("fw-1") })
        #expect(try Self.total(bounded, fw1) == 9)
    }

    /// A report that would make a series, a label set or a total past the store's bounds changes nothing,
    /// its box included: the same report, once it fits, is applied (not a duplicate).
    @Test func reportsBeyondTheSeriesAndLabelSetBoundsAreNotApplied() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let first = try Self.parsed(Self.report(seq: 1, snapbacks: 3))
        // The report's series, and room for one more.
        let store = try FleetStore(path: path, maxSeries: first.series.count + 1, maxLabelSets: 1)
        #expect(try store.apply([(1, first)]) == [.applied])
        let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""
        // A second label set: refused, its box not made.
        let other = "fedcba9876543210fedcba9876543210"
        #expect(
            try store.apply([(2, try Self.parsed(Self.report(box: other, seq: 1, snapbacks: 2, firmware: "fw-2")))]) == [
                .tooManySeries
            ])
        #expect(store.boxCount() == 1 && store.sizes.labelSets == 1)
        // Two new series where one fits: refused, the box left at its first report.
        var wider = Self.report(seq: 2, snapbacks: 5)
        wider.families[1].series.append(SnapbackV1.MetricSample(labels: [.init(name: "preset", value: "b")], value: 1))
        wider.families[1].series.append(SnapbackV1.MetricSample(labels: [.init(name: "preset", value: "c")], value: 1))
        #expect(try store.apply([(3, try Self.parsed(wider))]) == [.tooManySeries])
        #expect(try Self.total(store, seeks) == 3 && store.sizes.series == first.series.count)
        // One new series fits; the box's seq 2 was never applied, so it is not a duplicate now.
        wider.families[1].series.removeLast()
        #expect(try store.apply([(4, try Self.parsed(wider))]) == [.applied])
        #expect(try Self.total(store, seeks) == 5 && store.sizes.series == first.series.count + 1)
        // The bound of totals the same way: a full store takes a report that makes none.
        let full = try FleetStore(path: Self.temporaryPath() + "-totals", maxTotals: 2)
        defer { Self.remove(full.db.path) }
        #expect(try full.apply([(1, first)]) == [.tooManySeries])
        #expect(full.boxCount() == 0 && full.sizes.totals == 0)
        // Through the service's path, each refusal is logged and dropped.
        var counts: FleetService.Counts = (0, 0, 0, 0)
        var logged: [String] = []
        try FleetService.apply(
            [
                (
                    Self.report(box: other, seq: 5, snapbacks: 1, firmware: "fw-3").encoded(), UInt64(9),
                    "snapback.telemetry.\(other)"
                )
            ],
            to: store, counts: &counts
        ) { logged.append($0) }
        #expect(counts.dropped == 1 && logged.count == 1 && logged[0].contains("label sets"))
    }

    /// `max-boxes`: the report of a box beyond it is dropped (logged, acked), the boxes known go on.
    @Test func aNewBoxBeyondMaxBoxesIsDropped() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try FleetStore(path: path, maxBoxes: 1)
        let other = "fedcba9876543210fedcba9876543210"
        var counts: FleetService.Counts = (0, 0, 0, 0)
        var logged: [String] = []
        func deliver(_ box: String, _ seq: UInt64, _ streamSeq: UInt64) throws {
            try FleetService.apply(
                [(Self.report(box: box, seq: seq, snapbacks: seq).encoded(), streamSeq, "snapback.telemetry.\(box)")],
                to: store, counts: &counts
            ) { logged.append($0) }
        }
        try deliver(Self.box, 1, 1)
        try deliver(other, 1, 2)
        try deliver(Self.box, 2, 3)
        #expect(counts.applied == 2 && counts.dropped == 1 && store.boxCount() == 1 && store.position() == 3)
        #expect(logged.count == 1 && logged[0].contains("max-boxes") && logged[0].contains(other))
        #expect(try FleetStore(path: path, maxBoxes: 1).boxCount() == 1)
        // A report under another subject than its box's (another box's, or its own and more): dropped.
        for subject in ["snapback.telemetry.\(other)", "snapback.telemetry.\(Self.box)0", "snapback.telemetr.\(Self.box)"] {
            try FleetService.apply(
                [(Self.report(seq: 3, snapbacks: 3).encoded(), UInt64(4), subject)], to: store, counts: &counts
            ) {
                logged.append($0)
            }
            #expect(logged.last?.contains("its box_id is not its subject's") == true, "\(subject)")
        }
        try FleetService.apply(
            [(Self.report(seq: 3, snapbacks: 3).encoded(), UInt64(4), "snapback.telemetry.\(Self.box)")], to: store,
            counts: &counts
        ) { logged.append($0) }
        #expect(counts.applied == 3 && counts.dropped == 4)
    }

    /// A batch whose commit fails leaves nothing in memory: the totals, boxes and position are the
    /// database's, and the batch delivered again is applied whole.
    @Test func aFailedCommitLeavesMemoryAsTheDatabase() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try FleetStore(path: path)
        let other = "fedcba9876543210fedcba9876543210"
        #expect(try store.apply([(1, try Self.parsed(Self.report(seq: 1, snapbacks: 3)))]) == [.applied])
        try store.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON box_log BEGIN SELECT RAISE(ABORT, 'refused'); END")
        let batch = [
            (UInt64(2), try Self.parsed(Self.report(seq: 2, snapbacks: 10))),
            (UInt64(3), try Self.parsed(Self.report(box: other, seq: 1, snapbacks: 2, firmware: "fw-9")))
        ]
        #expect(throws: SQLiteError.self) { try store.apply(batch) }
        let seeks = "snapbackd_seeks_commanded_total{"
        #expect(try Self.total(store, seeks) == 3 && store.position() == 1 && store.boxCount() == 1)
        #expect(store.sizes.labelSets == 1 && store.logSize == (1, 1) && store.boxStates.values.first?.seq == 1)
        try store.db.execute("DROP TRIGGER refuse")
        #expect(try store.apply(batch) == [.applied, .applied])
        #expect(try Self.total(store, seeks) == 12 && store.position() == 3)
        #expect(try Self.total(FleetStore(path: path), seeks) == 12)
    }

    @Test func fleetConfigurationIsReadAndBounded() throws {
        let c = try FleetConfiguration.parse(
            "servers = nats://h:4222\nbatch = 64\nexport-interval = 5\nimport-url = http://vm:8428/api/v1/import/prometheus\n",
            file: "fleet.conf")
        #expect(c.batch == 64 && c.exportInterval == 5 && c.importURL == "http://vm:8428/api/v1/import/prometheus")
        #expect(try FleetConfiguration.parse(c.render(), file: "rendered") == c)
        #expect(throws: (any Error).self) { try FleetConfiguration.parse("batch = 5\n", file: "f") }
        #expect(throws: (any Error).self) { try FleetConfiguration.parse("servers = nats://h\nbatch = 0\n", file: "f") }
        #expect(throws: (any Error).self) {
            try FleetConfiguration.parse("servers = nats://h\nimport-url = ftp://x\n", file: "f")
        }
        let user = try FleetConfiguration.parse(
            "servers = nats://h\nuser = snapback-fleet\npassword-file = /etc/snapback/fleet.password\nmax-boxes = 10\n",
            file: "f")
        #expect(user.user == "snapback-fleet" && user.passwordFile == "/etc/snapback/fleet.password" && user.maxBoxes == 10)
        #expect(try FleetConfiguration.parse(user.render(), file: "rendered") == user)
        for wrong in [
            "user = u\n", "password-file = /p\n", "user = u\npassword-file = /p\ncredentials-file = /c\n", "max-boxes = 0\n",
            "max-boxes = 50000001\n", "user = a b\npassword-file = /p\n"
        ] {
            #expect(throws: (any Error).self, "\(wrong)") {
                try FleetConfiguration.parse("servers = nats://h\n" + wrong, file: "f")
            }
        }
    }

    /// config/fleet.conf (installed as /etc/snapback/fleet.conf) sets `servers`, the one required key, to
    /// the hub's own NATS, and shows every other key, commented out, with its default: as installed it is
    /// valid, and uncommented it is the defaults.
    @Test func theInstalledFileSetsServersAndShowsEveryOtherKeyWithItsDefault() throws {
        let path = String(#filePath.dropLast("Tests/SnapbackFleetTests/FleetTests.swift".count)) + "config/fleet.conf"
        let text = try #require(readFile(path, limit: 1 << 20))
        let installed = try FleetConfiguration.parse(text, file: "config/fleet.conf")
        #expect(installed.servers == ["nats://127.0.0.1:4222"])
        var shown: [String] = []
        var uncommented = ""
        for line in text.split(separator: "\n") where line.contains(" =") && !line.hasPrefix("# ") {
            let body = line.hasPrefix("#") ? line.dropFirst() : line[...]
            shown.append(String(body.prefix(while: { $0 != " " })))
            if !body.hasSuffix("=") { uncommented += body + "\n" }
        }
        #expect(shown == FleetConfiguration.keyNames)
        var c = try FleetConfiguration.parse(uncommented, file: "config/fleet.conf")
        #expect(c == installed)
        c.servers = []
        #expect(c == FleetConfiguration())
    }

    /// Seeded random mutations of a valid report: each is refused with a reason or read within the bounds,
    /// never a trap (the fleet's decoder takes bytes from every box).
    @Test func mutatedReportsNeverTrap() throws {
        let valid = Self.report(seq: 7, snapbacks: 3, skips: 2).encoded()
        var random = SplitMix64(seed: 0x5eed_f1ee7)
        var read = 0
        for _ in 0..<20_000 {
            var bytes = valid
            for _ in 0...Int.random(in: 0...3, using: &random) { random.mutate(&bytes) }
            if let report = try? FleetReport.parse(bytes) {
                read += 1
                #expect(report.samples.count <= FleetReport.maxSamples)
                #expect(report.samples.allSatisfy { $0.labels.count <= FleetReport.maxLabels + 1 })
            }
        }
        #expect(read > 0 && read < 20_000)
    }
}

/// The boxes' log (`box_log`): a row a batch, superseded entries and rows gone, compaction, reading it
/// back, and the earlier layouts moved into it.
@Suite struct FleetLogTests {
    static let seeks = "snapbackd_seeks_commanded_total{firmware=\"fw-1\",model=\"m\",region=\"eu\",reason=\"snapback\""

    /// Box number `n` as 32 hex digits.
    static func box(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 32 - hex.count) + hex
    }

    static func report(_ n: Int, seq: UInt64, snapbacks: UInt64, since: Double = 1_700_000_000) throws -> FleetReport {
        try FleetTests.parsed(FleetTests.report(box: box(n), seq: seq, since: since, snapbacks: snapbacks))
    }

    /// The boxes' state without their rows (which differ between a log compacted and one not).
    static func states(_ store: FleetStore) -> [BoxKey: BoxState] {
        store.boxStates.mapValues { state in
            var state = state
            state.row = 0
            return state
        }
    }

    /// The deltas, resets and duplicates of ``FleetTests/deltasResetsAndDuplicates()`` with the store
    /// closed and opened again before each batch: what is read back is what the next report needs.
    @Test func deltasResetsAndDuplicatesAcrossReopens() throws {
        let path = FleetTests.temporaryPath()
        defer { FleetTests.remove(path) }
        let steps: [(batch: [(UInt64, FleetReport)], outcomes: [FleetOutcome], seeks: Double)] = [
            (
                [(1, try Self.report(1, seq: 1, snapbacks: 3)), (2, try Self.report(2, seq: 1, snapbacks: 2))],
                [.applied, .applied], 5
            ),
            ([(3, try Self.report(1, seq: 2, snapbacks: 5))], [.applied], 7),
            (
                [(4, try Self.report(1, seq: 2, snapbacks: 5)), (5, try Self.report(1, seq: 1, snapbacks: 3))],
                [.duplicate, .duplicate], 7
            ),
            ([(6, try Self.report(1, seq: 3, snapbacks: 4))], [.applied], 7),
            (
                [(7, try Self.report(1, seq: 4, snapbacks: 6)), (8, try Self.report(2, seq: 2, snapbacks: 2))],
                [.applied, .applied], 9
            ),
            ([(9, try Self.report(1, seq: 5, snapbacks: 1, since: 1_800_000_000))], [.reset], 10),
            (
                [(10, try Self.report(2, seq: 2, snapbacks: 9)), (11, try Self.report(1, seq: 6, snapbacks: 1))],
                [.duplicate, .reset], 11
            ),
            (
                [(12, try Self.report(1, seq: 7, snapbacks: 4)), (13, try Self.report(2, seq: 3, snapbacks: 3))],
                [.applied, .applied], 15
            )
        ]
        for (i, step) in steps.enumerated() {
            let store = try FleetStore(path: path)
            #expect(try store.apply(step.batch) == step.outcomes, "batch \(i)")
            #expect(try FleetTests.total(store, Self.seeks) == step.seeks, "batch \(i)")
        }
        let store = try FleetStore(path: path)
        #expect(try FleetTests.total(store, Self.seeks) == 15 && store.position() == 13 && store.boxCount() == 2)
        #expect(store.boxStates[BoxKey(Self.box(1))!]?.seq == 7 && store.boxStates[BoxKey(Self.box(2))!]?.seq == 3)
    }

    /// A box reported in batch after batch (twice in one) has one live entry: each earlier row it emptied
    /// is deleted, the row it shares with a box that did not report again is kept.
    @Test func aBoxReportedInManyBatchesLeavesOneLiveEntry() throws {
        let path = FleetTests.temporaryPath()
        defer { FleetTests.remove(path) }
        let store = try FleetStore(path: path)
        _ = try store.apply([(1, try Self.report(1, seq: 1, snapbacks: 1)), (2, try Self.report(2, seq: 1, snapbacks: 1))])
        for seq in UInt64(2)...50 { _ = try store.apply([(seq + 1, try Self.report(1, seq: seq, snapbacks: seq))]) }
        #expect(
            try store.apply([(52, try Self.report(1, seq: 51, snapbacks: 51)), (53, try Self.report(1, seq: 52, snapbacks: 60))])
                == [.applied, .applied])
        // The first row (box 2 live, box 1 superseded) and the last (box 1 once, its seq 52).
        #expect(store.logSize == (2, 3))
        #expect(try store.db.integer("SELECT count(*) FROM box_log") == 2)
        let vals = try #require(store.boxStates[BoxKey(Self.box(1))!]).vals
        #expect(vals.count % 12 == 0 && !vals.isEmpty)
        #expect(try store.db.integer("SELECT length(entries) FROM box_log ORDER BY id DESC LIMIT 1") == 36 + vals.count)
        #expect(try FleetTests.total(store, Self.seeks) == 61)
        let reopened = try FleetStore(path: path)
        #expect(reopened.logSize == (2, 3) && reopened.boxStates == store.boxStates)
        #expect(reopened.boxStates[BoxKey(Self.box(1))!]?.seq == 52 && reopened.boxStates[BoxKey(Self.box(2))!]?.seq == 1)
        #expect(try FleetTests.total(reopened, Self.seeks) == 61)
    }

    /// Most boxes stop reporting while a few go on, each batch with one box's last report: every row keeps
    /// a live entry among superseded ones. Compacted, the log stays within about 2.5 × boxes + 6 × a
    /// batch; never compacted, it grows with the batches. Both read back as the same boxes and totals.
    @Test func compactionKeepsTheLogBoundedWhenMostBoxesStopReporting() throws {
        let path = FleetTests.temporaryPath()
        let never = FleetTests.temporaryPath() + "-never"
        defer {
            FleetTests.remove(path)
            FleetTests.remove(never)
        }
        let compacted = try FleetStore(path: path)
        let uncompacted = try FleetStore(path: never)
        uncompacted.compacts = false
        var seqs = [UInt64](repeating: 0, count: 610)
        var streamSeq: UInt64 = 0
        var largest = 0
        func deliver(_ boxes: [Int]) throws {
            let batch = try boxes.map { n in
                seqs[n] += 1
                streamSeq += 1
                return (streamSeq, try Self.report(n, seq: seqs[n], snapbacks: seqs[n] * 2 + UInt64(n % 3)))
            }
            let outcomes = try compacted.apply(batch)
            #expect(try uncompacted.apply(batch) == outcomes)
            let bound = Double(compacted.boxCount()) * 2.5 + 6 * Double(boxes.count)
            #expect(Double(compacted.logSize.entries) <= bound, "after stream seq \(streamSeq): \(compacted.logSize)")
            largest = max(largest, compacted.logSize.entries)
        }
        // 600 boxes report once, 20 a batch; then boxes 600..<610 report in every batch, with box i's
        // second (and last) report.
        for start in stride(from: 0, to: 600, by: 20) { try deliver(Array(start..<(start + 20))) }
        for i in 0..<400 { try deliver(Array(600..<610) + [i % 300]) }
        #expect(compacted.boxCount() == 610 && uncompacted.boxCount() == 610)
        // Never compacted: a row a batch of phase two, each with its one live entry.
        #expect(uncompacted.logSize.rows > 300 && uncompacted.logSize.entries > 3_500)
        #expect(compacted.logSize.rows < 100 && largest <= 1_525 + 66)
        #expect(try compacted.db.integer("SELECT count(*) FROM box_log") == Int64(compacted.logSize.rows))
        // Read back: the same boxes, totals and log, and the same as the log never compacted.
        let reopened = try FleetStore(path: path)
        let reopenedNever = try FleetStore(path: never)
        #expect(reopened.logSize == compacted.logSize && reopened.boxStates == compacted.boxStates)
        #expect(Self.states(reopened) == Self.states(reopenedNever) && Self.states(reopened) == Self.states(uncompacted))
        let totals = reopened.totals(changedOnly: false).sorted { $0.series < $1.series }
        #expect(totals.map(\.series) == reopenedNever.totals(changedOnly: false).sorted { $0.series < $1.series }.map(\.series))
        #expect(totals.map(\.value) == reopenedNever.totals(changedOnly: false).sorted { $0.series < $1.series }.map(\.value))
        // And they go on alike: a box that had stopped, one of phase one only, one that never stopped.
        let next = [
            (streamSeq + 1, try Self.report(5, seq: seqs[5] + 1, snapbacks: 100)),
            (streamSeq + 2, try Self.report(450, seq: seqs[450] + 1, snapbacks: 100)),
            (streamSeq + 3, try Self.report(605, seq: seqs[605], snapbacks: 100))
        ]
        #expect(try reopened.apply(next) == [.applied, .applied, .duplicate])
        #expect(try reopenedNever.apply(next) == [.applied, .applied, .duplicate])
        #expect(try FleetTests.total(reopened, Self.seeks) == FleetTests.total(reopenedNever, Self.seeks))
        #expect(Self.states(reopened) == Self.states(reopenedNever))
    }

    /// Seeded random batches (1 to 40 reports, a box sometimes twice, a store reset now and then) over
    /// an active set of boxes that moves on and shrinks: the compacted log stays within its bound after
    /// every batch, and read back (at times in the middle) it is the boxes of a log never compacted.
    @Test func aCompactedLogReadsBackAsOneNeverCompactedOnRandomBatches() throws {
        let path = FleetTests.temporaryPath()
        let never = FleetTests.temporaryPath() + "-never"
        defer {
            FleetTests.remove(path)
            FleetTests.remove(never)
        }
        var compacted = try FleetStore(path: path)
        let uncompacted = try FleetStore(path: never)
        uncompacted.compacts = false
        var random = SplitMix64(seed: 0x10c)
        var seqs = [UInt64](repeating: 0, count: 400)
        var since = [Double](repeating: 1_700_000_000, count: 400)
        var streamSeq: UInt64 = 0
        var compactedAtAll = false
        for round in 0..<160 {
            // The active boxes: a window that moves on and narrows.
            let width = max(8, 400 - round * 3)
            let first = (round * 2) % (400 - width + 1)
            let batch = try (0..<Int.random(in: 1...40, using: &random)).map { _ in
                let n = first + Int.random(in: 0..<width, using: &random)
                seqs[n] += 1
                if Int.random(in: 0..<50, using: &random) == 0 { since[n] += 1 }
                streamSeq += 1
                return (streamSeq, try Self.report(n, seq: seqs[n], snapbacks: seqs[n] * 3, since: since[n]))
            }
            let entriesBefore = compacted.logSize.entries
            let outcomes = try compacted.apply(batch)
            #expect(try uncompacted.apply(batch) == outcomes)
            let bound = 2.5 * Double(compacted.boxCount()) + 6 * Double(batch.count)
            #expect(Double(compacted.logSize.entries) <= bound, "round \(round): \(compacted.logSize)")
            if compacted.logSize.entries < entriesBefore { compactedAtAll = true }
            if round % 40 == 39 {
                compacted = try FleetStore(path: path)
                #expect(Self.states(compacted) == Self.states(uncompacted), "round \(round)")
            }
        }
        #expect(compactedAtAll && uncompacted.logSize.entries > compacted.logSize.entries)
        let reopened = try FleetStore(path: path)
        #expect(reopened.logSize == compacted.logSize && reopened.boxStates == compacted.boxStates)
        #expect(Self.states(reopened) == Self.states(try FleetStore(path: never)))
        #expect(try FleetTests.total(reopened, Self.seeks) == FleetTests.total(uncompacted, Self.seeks))
    }

    /// A database whose boxes are a row each in `box_state` (the layout before the log): moved into the
    /// log once, a row per 256 boxes, in one transaction, the table dropped; values of series past those
    /// known and box ids that are not 32 hex digits left out.
    @Test func aDatabaseOfBoxStateRowsMovesIntoTheLog() throws {
        let path = FleetTests.temporaryPath()
        defer { FleetTests.remove(path) }
        let key = "snapbackd_seeks_commanded_total{reason=\"snapback\",preset=\"ima\"}"
        do {
            let db = try SQLiteConnection(path: path, create: true)
            try db.execute(
                """
                CREATE TABLE box_state (id INTEGER PRIMARY KEY, box TEXT NOT NULL UNIQUE,
                    counting_since REAL NOT NULL, seq INTEGER NOT NULL, start_id TEXT NOT NULL, firmware TEXT NOT NULL,
                    model TEXT NOT NULL, region TEXT NOT NULL, time REAL NOT NULL, vals BLOB NOT NULL);
                CREATE TABLE series (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
                CREATE TABLE label_sets (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
                CREATE TABLE label_totals (label_set INTEGER PRIMARY KEY, vals BLOB NOT NULL);
                CREATE TABLE state (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO series VALUES (1, '\(key)');
                INSERT INTO label_sets VALUES (1, 'firmware="fw-1",model="m",region="eu"');
                INSERT INTO state VALUES ('stream_seq', 40);
                INSERT INTO box_state VALUES (1000, 'not a box', 1700000000, 3, 's', 'fw-1', 'm', 'eu', 1, X'');
                """)
            // Box n's seeks are n (series 1); box 1 has a value of series 9, not known, too.
            let put = try db.prepare("INSERT INTO box_state VALUES (?, ?, 1700000000, 3, 's', 'fw-1', 'm', 'eu', 1, ?)")
            for n in 1...300 {
                var vals: [UInt8] = []
                for (id, value) in [(UInt32(1), Double(n))] + (n == 1 ? [(UInt32(9), 5.0)] : []) {
                    withUnsafeBytes(of: id.littleEndian) { vals.append(contentsOf: $0) }
                    withUnsafeBytes(of: value.bitPattern.littleEndian) { vals.append(contentsOf: $0) }
                }
                try put.bind(1, Int64(n))
                try put.bind(2, Self.box(n))
                try put.bind(3, vals)
                try put.run()
            }
        }
        let store = try FleetStore(path: path)
        #expect(store.boxCount() == 300 && store.position() == 40)
        #expect(try store.db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'box_state'") == 0)
        #expect(try store.db.integer("SELECT count(*) FROM box_log") == 2 && store.logSize == (2, 300))
        let first = try #require(store.boxStates[BoxKey(Self.box(1))!])
        #expect(first.seq == 3 && first.countingSince == 1_700_000_000 && first.vals.count == 12)
        #expect(
            store.boxStates[BoxKey(Self.box(300))!]?.vals == [1, 0, 0, 0]
                + withUnsafeBytes(of: 300.0.bitPattern.littleEndian, Array.init))
        // Box 7's 7 seeks are known: its 10 adds 3; box 8's report of seq 3 is a duplicate.
        #expect(
            try store.apply([(41, try Self.report(7, seq: 4, snapbacks: 10)), (42, try Self.report(8, seq: 3, snapbacks: 50))])
                == [.applied, .duplicate])
        #expect(try FleetTests.total(store, Self.seeks) == 3)
        let reopened = try FleetStore(path: path)
        #expect(reopened.boxCount() == 300 && reopened.logSize == (3, 301) && reopened.boxStates == store.boxStates)
    }

    /// A row of the log that is cut, corrupt or of series not known is read as far as it holds: never a
    /// trap, the entries before the damage kept, and the series past those known left out.
    @Test func aDamagedLogRowIsReadAsFarAsItHolds() throws {
        let path = FleetTests.temporaryPath()
        defer { FleetTests.remove(path) }
        var valid: [UInt8] = []
        do {
            let store = try FleetStore(path: path)
            _ = try store.apply((1...5).map { (UInt64($0), try Self.report($0, seq: 1, snapbacks: UInt64($0))) })
            let row = try store.db.prepare("SELECT entries FROM box_log")
            if try row.step() { valid = row.blob(0) }
            row.reset()
        }
        let entry = valid.count / 5
        #expect(entry == 36 + 12 * (try Self.report(1, seq: 1, snapbacks: 1)).series.count)
        func open(_ rows: [[UInt8]]) throws -> FleetStore {
            let db = try SQLiteConnection(path: path, create: false)
            try db.execute("DELETE FROM box_log")
            let put = try db.prepare("INSERT INTO box_log (id, entries) VALUES (?, ?)")
            for (i, row) in rows.enumerated() {
                try put.bind(1, Int64(i + 1))
                try put.bind(2, row)
                try put.run()
            }
            return try FleetStore(path: path)
        }
        // Cut inside the third entry: two boxes; a count of pairs past the row's end: none after it.
        #expect(try open([Array(valid[..<(2 * entry + 40)])]).boxCount() == 2)
        var huge = valid
        huge.replaceSubrange((entry + 32)..<(entry + 36), with: [0xff, 0xff, 0xff, 0xff])
        #expect(try open([huge]).boxCount() == 1)
        // A row of nothing readable is deleted; the others are read.
        let store = try open([[1, 2, 3], valid, []])
        #expect(store.boxCount() == 5 && store.logSize == (1, 5))
        #expect(try store.db.integer("SELECT count(*) FROM box_log") == 1)
        // A series id past those known: the value left out, the rest of the box kept.
        var unknown = Array(valid[..<entry])
        unknown.replaceSubrange(36..<40, with: [0x00, 0x01, 0x00, 0x00])
        let box = try #require(try open([unknown]).boxStates[BoxKey(Self.box(1))!])
        #expect(box.vals.count == entry - 36 - 12)
        // Seeded mutations of the row: read or cut short, never a trap, never more boxes than written.
        var random = SplitMix64(seed: 0x106)
        for _ in 0..<200 {
            var bytes = valid
            random.mutate(&bytes)
            let mutated = try open([bytes])
            #expect(mutated.boxCount() <= 5 + bytes.count / 36)
            _ = try mutated.apply([(100, try Self.report(1, seq: 9, snapbacks: 9))])
        }
    }
}

/// snapback-fuzz-fleet's path on the committed corpus (Tests/Fuzz/fleet-corpus: reports as the agent
/// encodes them, full and sparse, their truncations, and what `make fuzz` found) and on seeded mutations of
/// a report.
@Suite struct FleetFuzzCorpusTests {
    static let corpus = String(#filePath.dropLast("SnapbackFleetTests/FleetTests.swift".count)) + "Fuzz/fleet-corpus"

    @Test func corpusRuns() throws {
        let directory = try #require(opendir(Self.corpus), "no \(Self.corpus)")
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(directory)
        var parsed = 0
        for name in names.sorted() {
            let bytes = try #require(Self.readBytes(Self.corpus + "/" + name), "\(name)")
            bytes.withUnsafeBytes { FleetFuzzReplay.run($0) }
            if (try? FleetReport.parse(bytes)) != nil { parsed += 1 }
        }
        // Real reports among them, and inputs the checks refuse.
        #expect(names.count >= 20 && parsed > 0 && parsed < names.count, "\(parsed) of \(names.count) read")
    }

    @Test func seededMutationsRun() {
        let valid = FleetTests.report(seq: 3, snapbacks: 9, skips: 1).encoded()
        var random = SplitMix64(seed: 40)
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0...Int.random(in: 0...4, using: &random) { random.mutate(&bytes) }
            bytes.withUnsafeBytes { FleetFuzzReplay.run($0) }
        }
    }

    static func readBytes(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
    }
}
