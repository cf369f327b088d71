// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Glibc
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

    /// A series from its key as a report gives it (`name{a="x",b="y"}`; the values hold no quote or comma).
    init(key: some Collection<UInt8>, value: Double) {
        let text = String(decoding: key, as: UTF8.self)
        guard let brace = text.firstIndex(of: "{") else {
            self.init(name: text, labels: [], value: value)
            return
        }
        let labels = text[text.index(after: brace)..<text.index(before: text.endIndex)].split(separator: ",").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), String(parts[1].dropFirst().dropLast()))
        }
        self.init(name: String(text[..<brace]), labels: labels, value: value)
    }

    init(name: String, labels: [(String, String)], value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }
}

/// One series of a checked report, as the fold takes it: where its key (`name{a="x",…}`, without the
/// operator's labels) is in ``FleetReport/keys``, the key's hash, and the value.
package struct FleetSeries: Equatable, Sendable {
    package var start: Int32
    package var count: Int32
    package var hash: UInt64
    package var value: Double
}

/// A report checked at the fleet's door: every count, length and name within the bounds below, or a
/// reason it was dropped. The labels' values come from closed charsets, so no series text needs escaping.
///
/// Read in one pass over protobuf-c's unpacked message, every series' key written into one byte buffer
/// and hashed there: no string is made per series (the fold names series by their keys' bytes, and
/// ``samples`` makes the strings only when asked).
public struct FleetReport: Equatable, Sendable {
    public var boxId: String
    public var seq: UInt64
    public var countingSince: Double
    public var startId: String
    public var firmware: String
    public var model: String
    public var region: String
    public var time: Double
    /// The series' keys, back to back.
    package var keys: [UInt8]
    package var series: [FleetSeries]

    /// Every series, with its name and labels as strings.
    public var samples: [FleetSample] {
        series.map { FleetSample(key: keys[Int($0.start)..<Int($0.start + $0.count)], value: $0.value) }
    }

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
    static let reservedLabels: [[UInt8]] = ["firmware", "model", "region", "le"].map { Array($0.utf8) }

    /// Why a report was dropped.
    public struct Rejection: Error, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
        init(_ reason: String) { self.reason = reason }
    }

    /// Decodes and checks a report's bytes.
    public static func parse(_ bytes: [UInt8]) throws(Rejection) -> FleetReport {
        try parse(bytes, arena: UnpackArena(capacity: 1 << 16))
    }

    /// Decodes and checks a report's bytes, protobuf-c's allocations in `arena` (one for many reports).
    package static func parse(_ bytes: [UInt8], arena: UnpackArena) throws(Rejection) -> FleetReport {
        guard bytes.count <= maxBytes else { throw Rejection("\(bytes.count) bytes, more than \(maxBytes)") }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(Rejection) in
            try arena.unpack(buffer) { (unpacked) throws(Rejection) in
                guard let unpacked else { throw Rejection("not a TelemetryReport (protobuf-c refused it)") }
                return try check(unpacked)
            }
        }
    }

    static func check(_ report: Snapback__V1__TelemetryReport) throws(Rejection) -> FleetReport {
        guard let boxId = Self.string(report.box_id, max: 32), isBoxId(boxId) else {
            throw Rejection("box_id is not 32 hex digits")
        }
        guard report.seq > 0 else { throw Rejection("seq 0") }
        guard report.counting_since.isFinite, report.counting_since > 0, report.counting_since < 1e10 else {
            throw Rejection("counting_since \(report.counting_since) is not a time")
        }
        guard report.time.isFinite, report.time >= 0, report.time < 1e10 else { throw Rejection("time is not a time") }
        var operatorLabels: [String] = []
        for (name, value) in [("firmware", report.firmware), ("model", report.model), ("region", report.region)] {
            guard let text = Self.string(value, max: TelemetryConfiguration.maxLabelBytes), TelemetryConfiguration.isLabel(text)
            else {
                throw Rejection("\(name) is not 0 to \(TelemetryConfiguration.maxLabelBytes) bytes of A-Z a-z 0-9 . _ -")
            }
            operatorLabels.append(text)
        }
        guard let startId = Self.string(report.start_id, max: 64), startId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Rejection("start_id is not 0 to 64 printable ASCII bytes")
        }
        guard report.n_families <= maxFamilies else { throw Rejection("\(report.n_families) families, more than \(maxFamilies)") }
        var keys: [UInt8] = []
        var series: [FleetSeries] = []
        // About the report's size in keys; a series for every 30 bytes or so.
        keys.reserveCapacity(4096)
        series.reserveCapacity(64)
        var labelText: [UInt8] = []
        labelText.reserveCapacity(256)
        var families: [UnsafeMutablePointer<CChar>] = []
        for f in 0..<report.n_families {
            guard let family = report.families[f]?.pointee, let name = family.name else {
                throw Rejection("a family without a name")
            }
            let nameCount = Self.length(name, max: maxNameBytes)
            guard nameCount <= maxNameBytes, isMetricName(name, count: nameCount) else {
                throw Rejection("family name '\(String(cString: name).prefix(64))' is not a metric name")
            }
            guard !families.contains(where: { strcmp($0, name) == 0 }) else {
                throw Rejection("family \(String(cString: name)) twice")
            }
            families.append(name)
            // A type this version does not know (a newer daemon's gauge): the family is left out, the rest
            // of the report counts.
            let histogram: Bool
            switch family.type.rawValue {
            case 1: histogram = false
            case 2: histogram = true
            default: continue
            }
            guard series.count + family.n_series <= maxSamples else { throw Rejection("more than \(maxSamples) samples") }
            let familyName = UnsafeRawBufferPointer(start: name, count: nameCount)
            for s in 0..<family.n_series {
                guard let sample = family.series[s]?.pointee else { throw Rejection("an empty sample") }
                guard sample.n_labels <= maxLabels else {
                    throw Rejection(
                        "family \(String(cString: name)): a sample with \(sample.n_labels) labels, more than \(maxLabels)")
                }
                // The labels, as the key writes them: `a="x",b="y"`.
                labelText.removeAll(keepingCapacity: true)
                for l in 0..<sample.n_labels {
                    guard let label = sample.labels[l]?.pointee, let labelName = label.name, let labelValue = label.value else {
                        throw Rejection("family \(String(cString: name)): an empty label")
                    }
                    let nameBytes = Self.length(labelName, max: maxLabelBytes)
                    guard nameBytes <= maxLabelBytes, isMetricName(labelName, count: nameBytes),
                        !reservedLabels.contains(where: { $0.count == nameBytes && memcmp($0, labelName, nameBytes) == 0 })
                    else {
                        throw Rejection(
                            "family \(String(cString: name)): label name '\(String(cString: labelName).prefix(64))' refused")
                    }
                    let valueBytes = Self.length(labelValue, max: maxLabelBytes)
                    guard valueBytes <= maxLabelBytes, isLabelValue(labelValue, count: valueBytes) else {
                        throw Rejection(
                            "family \(String(cString: name)): a value of label \(String(cString: labelName)) is not a closed value"
                        )
                    }
                    if l > 0 { labelText.append(0x2c) }
                    labelText.append(contentsOf: UnsafeRawBufferPointer(start: labelName, count: nameBytes))
                    labelText.append(0x3d)
                    labelText.append(0x22)
                    labelText.append(contentsOf: UnsafeRawBufferPointer(start: labelValue, count: valueBytes))
                    labelText.append(0x22)
                }
                if !histogram {
                    append(familyName, "_total", labelText, nil, Double(sample.value), to: &keys, &series)
                    continue
                }
                let buckets = sample.n_bucket_bounds
                guard buckets == sample.n_bucket_counts, (1...maxBuckets).contains(buckets) else {
                    throw Rejection("family \(String(cString: name)): 1 to \(maxBuckets) buckets, each with its count")
                }
                let bounds = UnsafeBufferPointer(start: sample.bucket_bounds, count: buckets)
                guard bounds.last == .infinity, zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }),
                    bounds.dropLast().allSatisfy({ $0.isFinite })
                else { throw Rejection("family \(String(cString: name)): bucket bounds not ascending to +Inf") }
                guard sample.sum.isFinite, sample.sum >= 0 else {
                    throw Rejection("family \(String(cString: name)): sum not finite")
                }
                guard series.count + buckets + 2 <= maxSamples else { throw Rejection("more than \(maxSamples) samples") }
                for b in 0..<buckets {
                    append(familyName, "_bucket", labelText, bounds[b], Double(sample.bucket_counts[b]), to: &keys, &series)
                }
                append(familyName, "_sum", labelText, nil, sample.sum, to: &keys, &series)
                append(familyName, "_count", labelText, nil, Double(sample.count), to: &keys, &series)
            }
        }
        try checkDistinct(series, keys)
        return FleetReport(
            boxId: boxId, seq: report.seq, countingSince: report.counting_since, startId: startId,
            firmware: operatorLabels[0], model: operatorLabels[1], region: operatorLabels[2], time: report.time, keys: keys,
            series: series)
    }

    /// Appends a series' key (`name` `suffix` `{labels,le="bound"}`) to `keys`, and the series.
    private static func append(
        _ name: UnsafeRawBufferPointer, _ suffix: StaticString, _ labels: [UInt8], _ bound: Double?, _ value: Double,
        to keys: inout [UInt8], _ series: inout [FleetSeries]
    ) {
        let start = keys.count
        keys.append(contentsOf: name)
        keys.append(contentsOf: UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount))
        if !labels.isEmpty || bound != nil {
            keys.append(0x7b)
            keys.append(contentsOf: labels)
            if let bound {
                if !labels.isEmpty { keys.append(0x2c) }
                keys.append(0x6c)
                keys.append(0x65)
                keys.append(0x3d)
                keys.append(0x22)
                appendBucketLabel(bound, to: &keys)
                keys.append(0x22)
            }
            keys.append(0x7d)
        }
        let hash = keys.withUnsafeBufferPointer { fnv1a(UnsafeBufferPointer(rebasing: $0[start...])) }
        series.append(FleetSeries(start: Int32(start), count: Int32(keys.count - start), hash: hash, value: value))
    }

    /// No series twice in a report (one total per series: a second would count the box twice).
    private static func checkDistinct(_ series: [FleetSeries], _ keys: [UInt8]) throws(Rejection) {
        guard series.count > 1 else { return }
        var size = 4
        while size < series.count * 2 { size <<= 1 }
        var slots = [Int32](repeating: -1, count: size)
        try keys.withUnsafeBufferPointer { (k: UnsafeBufferPointer<UInt8>) throws(Rejection) in
            for (i, s) in series.enumerated() {
                var slot = Int(truncatingIfNeeded: s.hash) & (size - 1)
                while slots[slot] >= 0 {
                    let other = series[Int(slots[slot])]
                    if other.hash == s.hash, other.count == s.count,
                        memcmp(k.baseAddress! + Int(other.start), k.baseAddress! + Int(s.start), Int(s.count)) == 0
                    {
                        throw Rejection(
                            "series \(String(decoding: k[Int(s.start)..<Int(s.start + s.count)], as: UTF8.self)) twice")
                    }
                    slot = (slot + 1) & (size - 1)
                }
                slots[slot] = Int32(i)
            }
        }
    }

    /// 64-bit FNV-1a.
    @inline(__always)
    static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// A C string's length, or `max + 1` if it is longer than `max` bytes (read no further).
    static func length(_ text: UnsafePointer<CChar>, max: Int) -> Int {
        var n = 0
        while n <= max, text[n] != 0 { n += 1 }
        return n
    }

    static func string(_ text: UnsafePointer<CChar>?, max: Int) -> String? {
        guard let text else { return "" }
        let n = length(text, max: max)
        guard n <= max else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: n), as: UTF8.self)
    }

    static func isBoxId(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// `[a-z_][a-z0-9_]*`, at most ``maxNameBytes`` bytes (the daemon's names are lower case).
    static func isMetricName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes
            && Array(name.utf8).withUnsafeBytes { isMetricName($0.baseAddress!, count: $0.count) }
    }

    static func isMetricName(_ name: UnsafeRawPointer, count: Int) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: name, count: count)
        guard let first = bytes.first, first == 0x5f || (first >= 0x61 && first <= 0x7a) else { return false }
        return bytes.allSatisfy { $0 == 0x5f || ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    /// A closed value: 1 to ``maxLabelBytes`` bytes of A-Z a-z 0-9 . _ - + (nothing a free text or an id
    /// of content would need, nothing the Prometheus text format must escape).
    static func isLabelValue(_ value: UnsafeRawPointer, count: Int) -> Bool {
        (1...maxLabelBytes).contains(count)
            && UnsafeRawBufferPointer(start: value, count: count).allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2e || b == 0x5f
                    || b == 0x2d || b == 0x2b
            }
    }

    /// A bucket's `le` as Swift prints the bound ("+Inf", "1", "0.0005"), written without making a string
    /// for the bounds a daemon uses: an integer, or a decimal of at most 6 places that is the bound's
    /// shortest form (its digits read back as the same Double); any other through Swift's description.
    static func appendBucketLabel(_ bound: Double, to out: inout [UInt8]) {
        if bound.isInfinite {
            out.append(contentsOf: bound > 0 ? [0x2b, 0x49, 0x6e, 0x66] : [0x2d, 0x49, 0x6e, 0x66])
            return
        }
        if bound == bound.rounded(), abs(bound) < 1e15 {
            appendInteger(Int64(bound), to: &out)
            return
        }
        if bound >= 1e-4, bound < 1e9 {
            var scale = 1.0
            for places in 1...6 {
                scale *= 10
                let scaled = (bound * scale).rounded()
                guard scaled / scale == bound else { continue }
                let whole = Int64(scaled) / Int64(scale)
                var fraction = Int64(scaled) % Int64(scale)
                appendInteger(whole, to: &out)
                out.append(0x2e)
                var digits = [UInt8](repeating: 0x30, count: places)
                for i in stride(from: places - 1, through: 0, by: -1) {
                    digits[i] = 0x30 + UInt8(fraction % 10)
                    fraction /= 10
                }
                out.append(contentsOf: digits)
                return
            }
        }
        out.append(contentsOf: "\(bound)".utf8)
    }

    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2d) }
        var magnitude = value.magnitude
        var digits: [UInt8] = []
        repeat {
            digits.append(0x30 + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out.append(contentsOf: digits.reversed())
    }

    static func bucketLabel(_ bound: Double) -> String {
        var out: [UInt8] = []
        appendBucketLabel(bound, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// protobuf-c's allocations while it unpacks a report, taken from one block that is used again for the
/// next report: unpacking a report is a few thousand small allocations (a message, a pointer array and the
/// strings of every sample and label), all freed together. What does not fit goes to malloc.
package final class UnpackArena {
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    private var used = 0
    /// Allocations that went to malloc since the last reset.
    private var spilled = 0
    fileprivate var allocator = ProtobufCAllocator()

    package init(capacity: Int = 1 << 19) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
        allocator.alloc = { data, size in
            let arena = Unmanaged<UnpackArena>.fromOpaque(data!).takeUnretainedValue()
            let start = (arena.used + 15) & ~15
            if size <= arena.capacity - start {
                arena.used = start + size
                return arena.base + start
            }
            arena.spilled += 1
            return malloc(size)
        }
        allocator.free = { data, pointer in
            guard let pointer else { return }
            let arena = Unmanaged<UnpackArena>.fromOpaque(data!).takeUnretainedValue()
            if pointer >= UnsafeMutableRawPointer(arena.base), pointer < arena.base + arena.capacity { return }
            free(pointer)
        }
        allocator.allocator_data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { base.deallocate() }

    /// Unpacks `bytes` into the block, gives the message to `body`, then releases it.
    fileprivate func unpack<T>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (Snapback__V1__TelemetryReport?) throws(FleetReport.Rejection) -> T
    ) throws(FleetReport.Rejection) -> T {
        used = 0
        spilled = 0
        var none: UInt8 = 0
        let message =
            bytes.baseAddress.map { snapback__v1__telemetry_report__unpack(&allocator, bytes.count, $0) }
            ?? snapback__v1__telemetry_report__unpack(&allocator, 0, &none)
        defer {
            // Only what went to malloc needs freeing; the block is simply used again.
            if let message, spilled > 0 { snapback__v1__telemetry_report__free_unpacked(message, &allocator) }
            used = 0
        }
        return try body(message?.pointee)
    }
}
