// SPDX-License-Identifier: Apache-2.0
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
/// Read where the bytes are (``FleetReportReader``), every series' key written into one byte buffer and
/// hashed there: no string is made per series (the fold names series by their keys' bytes, and
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

    /// Reads and checks a report's bytes (``FleetReportReader``: in place, no protobuf message made).
    public static func parse(_ bytes: [UInt8]) throws(Rejection) -> FleetReport {
        try bytes.withUnsafeBufferPointer { (buffer) throws(Rejection) in try parse(UnsafeRawBufferPointer(buffer)) }
    }

    /// Reads and checks a report's bytes where they are.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(Rejection) -> FleetReport {
        guard bytes.count <= maxBytes else { throw Rejection("\(bytes.count) bytes, more than \(maxBytes)") }
        var none: UInt8 = 0
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return try withUnsafePointer(to: &none) { (p) throws(Rejection) in try FleetReportReader(p, count: 0).read() }
        }
        return try FleetReportReader(base.assumingMemoryBound(to: UInt8.self), count: bytes.count).read()
    }

    /// Appends a series' key (`name` `suffix` `{labels,le="bound"}`) to `keys`, and the series.
    static func append(
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
    static func checkDistinct(_ series: [FleetSeries], _ keys: [UInt8]) throws(Rejection) {
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

    static func isBoxId(_ id: UnsafeRawBufferPointer) -> Bool {
        id.count == 32 && id.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
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
            out.append(bound > 0 ? 0x2b : 0x2d)
            out.append(0x49)
            out.append(0x6e)
            out.append(0x66)
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
                // The places written in the key itself, from the last.
                let start = out.count
                for _ in 0..<places { out.append(0x30) }
                for i in stride(from: start + places - 1, through: start, by: -1) {
                    out[i] = 0x30 + UInt8(fraction % 10)
                    fraction /= 10
                }
                return
            }
        }
        out.append(contentsOf: "\(bound)".utf8)
    }

    /// `value` in decimal ASCII, without making a string (the export text's integers and stamps).
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2d) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(0x30 + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }

    static func bucketLabel(_ bound: Double) -> String {
        var out: [UInt8] = []
        appendBucketLabel(bound, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
