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

    /// Appends a series' key (`name` `suffix` `{labels,le="bound"}`) to `keys`, and the series: the key's
    /// form, as ``FleetReportReader`` writes it where it reads.
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
                keys.append(contentsOf: [0x6c, 0x65, 0x3d, 0x22])
                appendBucketLabel(bound, to: &keys)
                keys.append(0x22)
            }
            keys.append(0x7d)
        }
        let hash = keys.withUnsafeBufferPointer { keyHash(UnsafeBufferPointer(rebasing: $0[start...])) }
        series.append(FleetSeries(start: Int32(start), count: Int32(keys.count - start), hash: hash, value: value))
    }

    /// No series twice in a report (one total per series: a second would count the box twice).
    static func checkDistinct(_ series: [FleetSeries], _ keys: [UInt8]) throws(Rejection) {
        guard series.count > 1 else { return }
        var size = 4
        while size < series.count * 2 { size <<= 1 }
        // At most 8192 slots: on the stack.
        let twice = withUnsafeTemporaryAllocation(of: Int32.self, capacity: size) { (slots) -> Int? in
            slots.initialize(repeating: -1)
            return keys.withUnsafeBufferPointer { (k) -> Int? in
                for (i, s) in series.enumerated() {
                    var slot = Int(truncatingIfNeeded: s.hash) & (size - 1)
                    while slots[slot] >= 0 {
                        let other = series[Int(slots[slot])]
                        if other.hash == s.hash, other.count == s.count,
                            memcmp(k.baseAddress! + Int(other.start), k.baseAddress! + Int(s.start), Int(s.count)) == 0
                        {
                            return i
                        }
                        slot = (slot + 1) & (size - 1)
                    }
                    slots[slot] = Int32(i)
                }
                return nil
            }
        }
        if let twice {
            let s = series[twice]
            throw Rejection("series \(String(decoding: keys[Int(s.start)..<Int(s.start + s.count)], as: UTF8.self)) twice")
        }
    }

    /// A series key's 64-bit hash (the reports' and the store's tables of keys), 8 bytes a step: each word
    /// mixed in by a multiply, the length in the seed, the last bits folded down into the low ones the
    /// tables index by. Not keyed: the tables compare the bytes of keys whose hashes are equal.
    @inline(__always)
    static func keyHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return withUnsafeBytes(of: 0) { keyHash($0.baseAddress!, 0) } }
        return keyHash(UnsafeRawPointer(base), bytes.count)
    }

    @inline(__always)
    static func keyHash(_ p: UnsafeRawPointer, _ count: Int) -> UInt64 {
        let m: UInt64 = 0x9e37_79b9_7f4a_7c15
        var h: UInt64 = 0x2545_f491_4f6c_dd1d ^ UInt64(truncatingIfNeeded: count)
        var i = 0
        while i &+ 8 <= count {
            h = (h ^ UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))) &* m
            h ^= h >> 29
            i &+= 8
        }
        if i < count {
            var last: UInt64 = 0
            var shift: UInt64 = 0
            while i < count {
                last |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift &+= 8
                i &+= 1
            }
            h = (h ^ last) &* m
            h ^= h >> 29
        }
        h = (h ^ (h >> 32)) &* 0xd6e8_feb8_6659_fd93
        return h ^ (h >> 32)
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
        guard id.count == 32 else { return false }
        for i in 0..<32 {
            let c = id[i]
            guard c &- 0x30 < 10 || c &- 0x61 < 6 else { return false }
        }
        return true
    }

    /// ``TelemetryConfiguration/isLabel(_:)`` on bytes: at most its most bytes of A-Z a-z 0-9 . _ -.
    static func isOperatorLabel(_ value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= TelemetryConfiguration.maxLabelBytes else { return false }
        for c in value {
            guard c &- 0x30 < 10 || (c | 0x20) &- 0x61 < 26 || c == 0x2e || c == 0x5f || c == 0x2d else { return false }
        }
        return true
    }

    /// 0 to 64 printable ASCII bytes (no space).
    static func isStartId(_ id: UnsafeRawBufferPointer) -> Bool {
        guard id.count <= 64 else { return false }
        for c in id {
            guard c > 0x20, c < 0x7f else { return false }
        }
        return true
    }

    /// `[a-z_][a-z0-9_]*`, at most ``maxNameBytes`` bytes (the daemon's names are lower case).
    static func isMetricName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes
            && Array(name.utf8).withUnsafeBytes { isMetricName($0.baseAddress!, count: $0.count) }
    }

    @inline(__always)
    static func isMetricName(_ name: UnsafeRawPointer, count: Int) -> Bool {
        guard count > 0 else { return false }
        let b = name.assumingMemoryBound(to: UInt8.self)
        guard b[0] == 0x5f || b[0] &- 0x61 < 26 else { return false }
        var i = 1
        while i < count {
            guard inSet(b[i], Self.nameBytes) else { return false }
            i &+= 1
        }
        return true
    }

    /// A set of ASCII bytes as 128 bits, bytes 0-63 in the first word.
    typealias ByteSet = (UInt64, UInt64)

    /// 0-9, _ and a-z.
    static let nameBytes: ByteSet = (0x03ff_0000_0000_0000, 0x07ff_fffe_8000_0000)
    /// 0-9, A-Z, a-z, . _ - and +.
    static let valueBytes: ByteSet = (0x03ff_6800_0000_0000, 0x07ff_fffe_87ff_fffe)

    @inline(__always)
    static func inSet(_ c: UInt8, _ set: ByteSet) -> Bool {
        let word = c < 64 ? set.0 : set.1
        return c < 128 && (word >> UInt64(c & 63)) & 1 != 0
    }

    /// A closed value: 1 to ``maxLabelBytes`` bytes of A-Z a-z 0-9 . _ - + (nothing a free text or an id
    /// of content would need, nothing the Prometheus text format must escape).
    @inline(__always)
    static func isLabelValue(_ value: UnsafeRawPointer, count: Int) -> Bool {
        guard count >= 1, count <= maxLabelBytes else { return false }
        let b = value.assumingMemoryBound(to: UInt8.self)
        var i = 0
        while i < count {
            guard inSet(b[i], Self.valueBytes) else { return false }
            i &+= 1
        }
        return true
    }

    /// One of ``reservedLabels``.
    @inline(__always)
    static func isReservedLabel(_ name: UnsafeRawPointer, count: Int) -> Bool {
        // The names' bytes read as little-endian words.
        switch count {
        case 2: return name.loadUnaligned(as: UInt16.self) == UInt16(littleEndian: 0x656c)  // le
        case 5:  // model
            return name.loadUnaligned(as: UInt32.self) == UInt32(littleEndian: 0x6564_6f6d)
                && name.load(fromByteOffset: 4, as: UInt8.self) == 0x6c
        case 6:  // region
            return name.loadUnaligned(as: UInt32.self) == UInt32(littleEndian: 0x6967_6572)
                && name.loadUnaligned(fromByteOffset: 4, as: UInt16.self) == UInt16(littleEndian: 0x6e6f)
        case 8: return name.loadUnaligned(as: UInt64.self) == UInt64(littleEndian: 0x6572_6177_6d72_6966)  // firmware
        default: return false
        }
    }

    /// The most bytes ``writeBucketLabel(_:to:)`` writes (Swift's longest description of a Double is 24).
    static let maxBucketLabelBytes = 32

    /// A bucket's `le` as Swift prints the bound ("+Inf", "1", "0.0005"), written without making a string
    /// for the bounds a daemon uses: an integer, or a decimal of at most 6 places that is the bound's
    /// shortest form (its digits read back as the same Double); any other through Swift's description.
    static func appendBucketLabel(_ bound: Double, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxBucketLabelBytes) { text in
            out.append(
                contentsOf: UnsafeBufferPointer(start: text.baseAddress!, count: writeBucketLabel(bound, to: text.baseAddress!)))
        }
    }

    /// ``appendBucketLabel(_:to:)`` at `out` (room for ``maxBucketLabelBytes``): the bytes written.
    static func writeBucketLabel(_ bound: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        if bound.isInfinite {
            out[0] = bound > 0 ? 0x2b : 0x2d
            out[1] = 0x49
            out[2] = 0x6e
            out[3] = 0x66
            return 4
        }
        if bound == bound.rounded(), abs(bound) < 1e15 {
            return writeInteger(Int64(bound), to: out)
        }
        if bound >= 1e-4, bound < 1e9 {
            var scale = 1.0
            for places in 1...6 {
                scale *= 10
                let scaled = (bound * scale).rounded()
                guard scaled / scale == bound else { continue }
                let n = writeInteger(Int64(scaled) / Int64(scale), to: out)
                out[n] = 0x2e
                var fraction = Int64(scaled) % Int64(scale)
                var i = n + places
                while i > n {
                    out[i] = 0x30 + UInt8(fraction % 10)
                    fraction /= 10
                    i -= 1
                }
                return n + 1 + places
            }
        }
        var text = "\(bound)"
        return text.withUTF8 { utf8 in
            let n = min(utf8.count, maxBucketLabelBytes)
            out.update(from: utf8.baseAddress!, count: n)
            return n
        }
    }

    /// `value` in decimal ASCII at `out` (room for 20 bytes): the bytes written.
    static func writeInteger(_ value: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var n = 0
        if value < 0 {
            out[0] = 0x2d
            n = 1
        }
        var magnitude = value.magnitude
        var digits = 1
        var power: UInt64 = 10
        while digits < 20, magnitude >= power {
            digits += 1
            power = power &* 10
        }
        var i = n + digits
        repeat {
            i -= 1
            out[i] = 0x30 + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return n + digits
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
