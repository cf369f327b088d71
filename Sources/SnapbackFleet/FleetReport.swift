// SPDX-License-Identifier: Apache-2.0
import SnapbackSync
import SnapbackWire

/// One series of a report: its sample name (`…_total`, `…_bucket`, `…_sum`, `…_count`), the metric's own
/// closed labels, and its cumulative value.
public struct FleetSample: Equatable, Sendable {
    public var name: String
    public var labels: [(String, String)]
    public var value: Double

    public static func == (a: FleetSample, b: FleetSample) -> Bool {
        a.name == b.name && a.value == b.value && a.labels.elementsEqual(b.labels, by: { $0 == $1 })
    }

    /// The series as the Prometheus text format names it, `name{a="x",b="y"}`, with `extra` labels first.
    public func series(extra: [(String, String)] = []) -> String {
        let all = extra + labels
        guard !all.isEmpty else { return name }
        return name + "{" + all.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ",") + "}"
    }
}

/// A report checked at the fleet's door: every count, length and name within the bounds below, or a
/// reason it was dropped. The labels' values come from closed charsets, so no series text needs escaping.
public struct FleetReport: Equatable, Sendable {
    public var boxId: String
    public var seq: UInt64
    public var countingSince: Double
    public var startId: String
    public var firmware: String
    public var model: String
    public var region: String
    public var time: Double
    public var samples: [FleetSample]

    /// The operator's labels, first on every fleet series.
    public var operatorLabels: [(String, String)] { [("firmware", firmware), ("model", model), ("region", region)] }

    public static let maxBytes = Int(TelemetryConfiguration.maxReportBytes)
    public static let maxFamilies = 64
    public static let maxSamples = 4096
    public static let maxLabels = 8
    public static let maxBuckets = 32
    public static let maxNameBytes = 128
    public static let maxLabelBytes = 64
    /// Label names the fleet sets itself: a report may not carry them.
    static let reservedLabels: Set<String> = ["firmware", "model", "region", "le"]

    /// Why a report was dropped.
    public struct Rejection: Error, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
        init(_ reason: String) { self.reason = reason }
    }

    /// Decodes and checks a report's bytes.
    public static func parse(_ bytes: [UInt8]) throws(Rejection) -> FleetReport {
        guard bytes.count <= maxBytes else { throw Rejection("\(bytes.count) bytes, more than \(maxBytes)") }
        let report: SnapbackV1.TelemetryReport
        do {
            report = try bytes.withUnsafeBytes { raw throws(WireError) in try SnapbackV1.TelemetryReport.decode(raw) }
        } catch {
            throw Rejection("not a TelemetryReport: \(error)")
        }
        return try check(report)
    }

    public static func check(_ report: SnapbackV1.TelemetryReport) throws(Rejection) -> FleetReport {
        guard isBoxId(report.boxId) else { throw Rejection("box_id is not 32 hex digits") }
        guard report.seq > 0 else { throw Rejection("seq 0") }
        guard report.countingSince.isFinite, report.countingSince > 0, report.countingSince < 1e10 else {
            throw Rejection("counting_since \(report.countingSince) is not a time")
        }
        guard report.time.isFinite, report.time >= 0, report.time < 1e10 else { throw Rejection("time is not a time") }
        for (name, value) in [("firmware", report.firmware), ("model", report.model), ("region", report.region)] {
            guard TelemetryConfiguration.isLabel(value) else {
                throw Rejection("\(name) is not 0 to \(TelemetryConfiguration.maxLabelBytes) bytes of A-Z a-z 0-9 . _ -")
            }
        }
        guard report.startId.utf8.count <= 64 else { throw Rejection("start_id longer than 64 bytes") }
        guard report.families.count <= maxFamilies else {
            throw Rejection("\(report.families.count) families, more than \(maxFamilies)")
        }
        var samples: [FleetSample] = []
        var names = Set<String>()
        for family in report.families {
            guard isMetricName(family.name) else {
                throw Rejection("family name '\(family.name.prefix(64))' is not a metric name")
            }
            guard names.insert(family.name).inserted else { throw Rejection("family \(family.name) twice") }
            // A type this version does not know (a newer daemon's gauge): the family is left out, the rest
            // of the report counts.
            guard let type = MetricType(proto: family.type) else { continue }
            guard samples.count + family.series.count <= maxSamples else {
                throw Rejection("more than \(maxSamples) samples")
            }
            var seen = Set<String>()
            for sample in family.series {
                guard sample.labels.count <= maxLabels else {
                    throw Rejection("family \(family.name): a sample with \(sample.labels.count) labels, more than \(maxLabels)")
                }
                var labels: [(String, String)] = []
                for label in sample.labels {
                    guard isLabelName(label.name), !reservedLabels.contains(label.name) else {
                        throw Rejection("family \(family.name): label name '\(label.name.prefix(64))' refused")
                    }
                    guard isLabelValue(label.value) else {
                        throw Rejection("family \(family.name): a value of label \(label.name) is not a closed value")
                    }
                    labels.append((label.name, label.value))
                }
                let key = labels.map { $0.0 + "=" + $0.1 }.joined(separator: ",")
                guard seen.insert(key).inserted else { throw Rejection("family \(family.name): series {\(key)} twice") }
                switch type {
                case .counter:
                    samples.append(FleetSample(name: family.name + "_total", labels: labels, value: Double(sample.value)))
                case .histogram:
                    let bounds = sample.bucketBounds
                    guard bounds.count == sample.bucketCounts.count, (1...maxBuckets).contains(bounds.count) else {
                        throw Rejection("family \(family.name): 1 to \(maxBuckets) buckets, each with its count")
                    }
                    guard bounds.last == .infinity, zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }),
                        bounds.dropLast().allSatisfy({ $0.isFinite })
                    else { throw Rejection("family \(family.name): bucket bounds not ascending to +Inf") }
                    guard sample.sum.isFinite, sample.sum >= 0 else { throw Rejection("family \(family.name): sum not finite") }
                    for (bound, count) in zip(bounds, sample.bucketCounts) {
                        samples.append(
                            FleetSample(
                                name: family.name + "_bucket", labels: labels + [("le", bucketLabel(bound))],
                                value: Double(count)))
                    }
                    samples.append(FleetSample(name: family.name + "_sum", labels: labels, value: sample.sum))
                    samples.append(FleetSample(name: family.name + "_count", labels: labels, value: Double(sample.count)))
                }
            }
        }
        return FleetReport(
            boxId: report.boxId, seq: report.seq, countingSince: report.countingSince, startId: report.startId,
            firmware: report.firmware, model: report.model, region: report.region, time: report.time, samples: samples)
    }

    static func isBoxId(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// `[a-z_][a-z0-9_]*`, at most ``maxNameBytes`` bytes (the daemon's names are lower case).
    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= maxNameBytes, first == 0x5f || (first >= 0x61 && first <= 0x7a)
        else { return false }
        return name.utf8.allSatisfy { $0 == 0x5f || ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    static func isLabelName(_ name: String) -> Bool { name.utf8.count <= maxLabelBytes && isMetricName(name) }

    /// A closed value: 1 to ``maxLabelBytes`` bytes of A-Z a-z 0-9 . _ - + (nothing a free text or an id
    /// of content would need, nothing the Prometheus text format must escape).
    static func isLabelValue(_ value: String) -> Bool {
        (1...maxLabelBytes).contains(value.utf8.count)
            && value.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2e || b == 0x5f
                    || b == 0x2d || b == 0x2b
            }
    }

    static func bucketLabel(_ bound: Double) -> String {
        if bound.isInfinite { return "+Inf" }
        if bound == bound.rounded(), abs(bound) < 1e15 { return String(Int64(bound)) }
        return "\(bound)"
    }
}
