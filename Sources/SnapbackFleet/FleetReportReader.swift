// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackSync

/// A `TelemetryReport` read where its bytes are (protobuf's wire format walked over the buffer): no
/// message, no array or string per field is made, only the report's own strings and its series' keys.
///
/// protobuf-c 1.4's unpack is the rule (the same tags, wire types, varints of at most 10 bytes, length
/// prefixes of at most 5, packed and unpacked repeated numbers; an unknown field kept or skipped):
/// whatever it refuses is refused here, before any check, with the same reason. Every string must be
/// UTF-8 without a NUL (protobuf-c copies a string up to its length and C reads it up to its first NUL:
/// a string with a NUL inside would be checked as one and used as another). The checks are
/// ``FleetReport``'s, in their order and with their reasons, scalar fields as their last occurrence
/// gives them (protobuf's rule), repeated ones concatenated.
///
/// A report is read on one walk that holds each field to protobuf-c's rules where it reads it. A report
/// refused on that walk, for any reason, is read again in two passes, for the reason: the first walks
/// every field of every nested message against protobuf-c's rules, the second makes the checks.
///
/// Every number is read into a fixed-width integer with its bits (a varint's low 64, an enum's or a
/// uint32's low 32, as protobuf-c keeps them), every count is bounded before it is used, and every
/// position is checked against the end of its message: no input traps.
struct FleetReportReader {
    private let p: UnsafePointer<UInt8>
    private let count: Int

    /// One field as the wire gives it: its number and wire type, where its payload is, and a varint's value.
    struct Field {
        var number: UInt32
        var wire: UInt8
        var start: Int
        var end: Int
        var varint: UInt64
    }

    private enum Kind { case report, family, sample, label }

    init(_ base: UnsafePointer<UInt8>, count: Int) {
        p = base
        self.count = count
    }

    static let badString = "a string that is not UTF-8, or that holds a NUL"
    static let refused = "not a TelemetryReport (protobuf-c refused it)"

    /// The next field at `at` (moved past it), in a message ending at `end`; nil where protobuf-c's scan
    /// fails (a tag of 0 in its first byte, an unterminated varint, a wire type it does not read, a
    /// payload past the end).
    @inline(__always)
    func next(_ at: inout Int, _ end: Int) -> Field? {
        // Most fields: a tag of one byte, then a length or a varint of one byte.
        let b0 = p[at]
        let i = at &+ 1
        if b0 & 0x80 == 0, b0 & 0xf8 != 0, i < end {
            let b1 = p[i]
            if b1 & 0x80 == 0 {
                let number = UInt32(b0 >> 3)
                switch b0 & 7 {
                case 0:
                    at = i &+ 1
                    return Field(number: number, wire: 0, start: i, end: at, varint: UInt64(b1))
                case 2:
                    let fieldEnd = i &+ 1 &+ Int(b1)
                    if fieldEnd > end { return nil }
                    at = fieldEnd
                    return Field(number: number, wire: 2, start: i &+ 1, end: fieldEnd, varint: 0)
                default: break
                }
            }
        }
        return nextField(&at, end)
    }

    /// The varint at `at` as protobuf-c reads one: ended (a byte without the high bit) within `max`
    /// bytes and before `end`, its value the low 64 bits of its 7-bit groups; its value and length, or nil.
    @inline(__always)
    func varint(_ at: Int, _ end: Int, max: Int) -> (value: UInt64, length: Int)? {
        let maxLength = min(end - at, max)
        var value: UInt64 = 0
        var n = 0
        while true {
            if n == maxLength { return nil }
            let b = p[at + n]
            value |= UInt64(b & 0x7f) << UInt64(7 * n)
            n += 1
            if b & 0x80 == 0 { return (value, n) }
        }
    }

    /// ``next(_:_:)`` for any field.
    @inline(never)
    func nextField(_ at: inout Int, _ end: Int) -> Field? {
        let b0 = p[at]
        if b0 & 0xf8 == 0 { return nil }
        let wire = b0 & 7
        var tag = UInt32((b0 & 0x7f) >> 3)
        var used = 1
        if b0 & 0x80 != 0 {
            let maxUsed = min(end - at, 5)
            var shift: UInt32 = 4
            var done = false
            while used < maxUsed {
                let b = p[at + used]
                used += 1
                if b & 0x80 != 0 {
                    tag |= UInt32(b & 0x7f) << shift
                    shift += 7
                } else {
                    tag |= UInt32(b) << shift
                    done = true
                    break
                }
            }
            if !done { return nil }
        }
        var i = at + used
        let rem = end - i
        var field = Field(number: tag, wire: wire, start: i, end: i, varint: 0)
        switch wire {
        case 0:
            guard let (value, n) = varint(i, end, max: 10) else { return nil }
            field.varint = value
            field.end = i + n
        case 1:
            if rem < 8 { return nil }
            field.end = i + 8
        case 5:
            if rem < 4 { return nil }
            field.end = i + 4
        case 2:
            // A length prefix: at most 5 bytes, kept in 32 bits as protobuf-c does.
            guard let (wide, n) = varint(i, end, max: 5) else { return nil }
            let length = UInt32(truncatingIfNeeded: wide)
            // protobuf-c adds the header's length to the payload's in 32 bits; a sum that wraps (a length
            // within 5 of 2^32) it would read past its buffer: refused here.
            let total = UInt32(n) &+ length
            if total < UInt32(n) || Int(total) > rem { return nil }
            i += n
            field.start = i
            field.end = at + used + Int(total)
        default: return nil
        }
        at = field.end
        return field
    }

    /// The whole input as protobuf-c would unpack it: nil where it would not; `strings` false when a
    /// string is not UTF-8 or holds a NUL.
    private func valid(_ kind: Kind, _ start: Int, _ end: Int, _ strings: inout Bool) -> Bool {
        var at = start
        while at < end {
            guard let f = next(&at, end), valid(kind, f, &strings, deep: true) else { return false }
        }
        return true
    }

    /// One field of a `kind` message as protobuf-c would unpack it, and the messages inside it if `deep`
    /// (else only their wire type).
    @inline(__always)
    private func valid(_ kind: Kind, _ f: Field, _ strings: inout Bool, deep: Bool) -> Bool {
        // What the field's number is in this message: a string (1), a varint (2), a double (3), a
        // message (4), or the sample's repeated numbers; a field this version does not know is kept by
        // protobuf-c, unread.
        var shape = 0
        switch kind {
        case .report:
            switch f.number {
            case 1, 3, 4, 9, 10, 11: shape = 1
            case 2, 6, 7, 8: shape = 2
            case 5, 12: shape = 3
            case 13: shape = 4
            default: return true
            }
        case .family:
            switch f.number {
            case 1, 2, 4: shape = 1
            case 3: shape = 2
            case 5: shape = 4
            default: return true
            }
        case .sample:
            switch f.number {
            case 2, 5: shape = 2
            case 4: shape = 3
            case 1: shape = 4
            case 3:
                // Doubles: one (64-bit) or packed (a multiple of 8 bytes).
                return f.wire == 1 || (f.wire == 2 && (f.end - f.start) % 8 == 0)
            case 6:
                // uint64s: one (varint) or packed (each varint ended within the field, at most 10 bytes).
                if f.wire == 2 {
                    var v = f.start
                    while v < f.end {
                        guard let (_, n) = varint(v, f.end, max: 10) else { return false }
                        v += n
                    }
                    return true
                }
                return f.wire == 0
            default: return true
            }
        case .label:
            switch f.number {
            case 1, 2: shape = 1
            default: return true
            }
        }
        switch shape {
        case 1:
            guard f.wire == 2 else { return false }
            if strings && !Self.isText(p + f.start, f.end - f.start) { strings = false }
        case 2:
            guard f.wire == 0 else { return false }
        case 3:
            guard f.wire == 1 else { return false }
        default:
            let inner: Kind
            switch kind {
            case .report: inner = .family
            case .family: inner = .sample
            default: inner = .label
            }
            guard f.wire == 2 else { return false }
            if deep { return valid(inner, f.start, f.end, &strings) }
        }
        return true
    }

    /// UTF-8 (well formed: no overlong form, no surrogate, nothing past U+10FFFF) without a NUL.
    static func isText(_ s: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        // Most strings: ASCII without a NUL, told on one loop without a branch a byte.
        var bits: UInt8 = 0
        var least: UInt8 = 0xff
        for k in 0..<n {
            bits |= s[k]
            least = min(least, s[k])
        }
        if bits < 0x80 && least > 0 { return true }
        var i = 0
        while i < n {
            let b = s[i]
            if b < 0x80 {
                if b == 0 { return false }
                i += 1
                continue
            }
            let need: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xbf
            switch b {
            case 0xc2...0xdf: need = 1
            case 0xe0:
                need = 2
                low = 0xa0
            case 0xe1...0xec, 0xee...0xef: need = 2
            case 0xed:
                need = 2
                high = 0x9f
            case 0xf0:
                need = 3
                low = 0x90
            case 0xf1...0xf3: need = 3
            case 0xf4:
                need = 3
                high = 0x8f
            default: return false
            }
            guard i + need < n else { return false }
            let second = s[i + 1]
            guard second >= low, second <= high else { return false }
            var k = 2
            while k <= need {
                guard s[i + k] & 0xc0 == 0x80 else { return false }
                k += 1
            }
            i += need + 1
        }
        return true
    }

    @inline(__always) private func double(_ f: Field) -> Double {
        Double(bitPattern: UInt64(littleEndian: UnsafeRawPointer(p + f.start).loadUnaligned(as: UInt64.self)))
    }

    @inline(__always) private func bytes(_ start: Int, _ end: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: p + start, count: end - start)
    }

    fileprivate func text(_ start: Int, _ end: Int) -> String { String(decoding: bytes(start, end), as: UTF8.self) }

    private typealias Rejection = FleetReport.Rejection

    /// A family's name, made a string when a refusal names it.
    struct FamilyName: CustomStringConvertible {
        let reader: FleetReportReader
        let start: Int
        let end: Int
        var description: String { reader.text(start, end) }
    }

    /// Where a sample's keys are made before each is appended to the report's (on the stack, sized for the
    /// longest key the bounds allow), and where a sample's labels and buckets are noted on its one walk.
    private struct Scratch {
        /// A name, a suffix, `{`, the labels, `,le="`, a bound, `"}`.
        static let keyBytes = FleetReport.maxNameBytes + 8 + labelBytes + 8 + FleetReport.maxBucketLabelBytes
        /// `a="x"` at most ``FleetReport/maxLabels`` times, commas between.
        static let labelBytes = FleetReport.maxLabels * (2 * FleetReport.maxLabelBytes + 4)
        static let bytes =
            keyBytes + labelBytes + 8 * (2 * FleetReport.maxBuckets + 2 * FleetReport.maxLabels + 2 * FleetReport.maxFamilies)

        let key: UnsafeMutablePointer<UInt8>
        let labels: UnsafeMutablePointer<UInt8>
        /// The bucket bounds' bits from 0, the counts from ``FleetReport/maxBuckets``.
        let numbers: UnsafeMutablePointer<UInt64>
        /// Each label field's start and end.
        let labelFields: UnsafeMutablePointer<Int>
        /// Each family's name's start and end.
        let familyNames: UnsafeMutablePointer<Int>

        init(_ raw: UnsafeMutableRawPointer) {
            numbers = raw.bindMemory(to: UInt64.self, capacity: 2 * FleetReport.maxBuckets)
            labelFields = (raw + 16 * FleetReport.maxBuckets).bindMemory(to: Int.self, capacity: 2 * FleetReport.maxLabels)
            familyNames = (raw + 16 * FleetReport.maxBuckets + 16 * FleetReport.maxLabels).bindMemory(
                to: Int.self, capacity: 2 * FleetReport.maxFamilies)
            let text = raw + 8 * (2 * FleetReport.maxBuckets + 2 * FleetReport.maxLabels + 2 * FleetReport.maxFamilies)
            key = text.bindMemory(to: UInt8.self, capacity: Self.keyBytes + Self.labelBytes)
            labels = key + Self.keyBytes
        }
    }

    /// The next field of a `kind` message on a reading walk, nil at its end. Fused (``read(fused:)``),
    /// what protobuf-c's scan or unpack would refuse is thrown as ``retry``; else the walk ends where the
    /// scan stops (the exact walk refused such a report first).
    @inline(__always)
    private func nextRead(_ kind: Kind, _ at: inout Int, _ end: Int, _ fused: Bool, _ strings: inout Bool)
        throws(FleetReport.Rejection) -> Field?
    {
        guard at < end else { return nil }
        guard let f = next(&at, end) else {
            if fused { throw Self.retry }
            return nil
        }
        if fused {
            guard valid(kind, f, &strings, deep: false), strings else { throw Self.retry }
        }
        return f
    }

    /// Reads and checks the report: on one walk that checks protobuf-c's rules as it reads; if anything is
    /// refused on it, the refusal and its reason as the reference gives them, on the walk that checks
    /// the whole input against protobuf-c's rules first (``valid(_:_:_:_:)``), then reads.
    func read() throws(FleetReport.Rejection) -> FleetReport {
        if let report = try? read(fused: true) { return report }
        return try read(fused: false)
    }

    /// Where the walk that checks protobuf-c's rules as it reads refuses anything (whatever the reason
    /// the reference would give).
    private static let retry = Rejection("read again, checked first")

    /// `fused`: protobuf-c's rules checked on the reading walks (the fields of a family of an unknown
    /// type walked for them alone), anything refused thrown as ``retry``.
    private func read(fused: Bool) throws(FleetReport.Rejection) -> FleetReport {
        var strings = true
        if !fused {
            guard valid(.report, 0, count, &strings) else { throw Rejection(Self.refused) }
            guard strings else { throw Rejection(Self.badString) }
        }
        // The report's scalar fields, each its last occurrence; where its families are.
        var boxId = (0, 0)
        var startId = (0, 0)
        var firmware = (0, 0)
        var model = (0, 0)
        var region = (0, 0)
        var seq: UInt64 = 0
        var countingSince = 0.0
        var time = 0.0
        var familyCount = 0
        var at = 0
        while let f = try nextRead(.report, &at, count, fused, &strings) {
            switch f.number {
            case 1: boxId = (f.start, f.end)
            case 2: seq = f.varint
            case 3: startId = (f.start, f.end)
            case 5: countingSince = double(f)
            case 9: firmware = (f.start, f.end)
            case 10: model = (f.start, f.end)
            case 11: region = (f.start, f.end)
            case 12: time = double(f)
            case 13: familyCount += 1
            default: break
            }
        }
        guard boxId.1 - boxId.0 == 32, FleetReport.isBoxId(bytes(boxId.0, boxId.1)) else {
            throw Rejection("box_id is not 32 hex digits")
        }
        guard seq > 0 else { throw Rejection("seq 0") }
        guard countingSince.isFinite, countingSince > 0, countingSince < 1e10 else {
            throw Rejection("counting_since \(countingSince) is not a time")
        }
        guard time.isFinite, time >= 0, time < 1e10 else { throw Rejection("time is not a time") }
        func label(_ name: String, _ field: (Int, Int)) throws(FleetReport.Rejection) -> String {
            guard FleetReport.isOperatorLabel(bytes(field.0, field.1)) else {
                throw Rejection("\(name) is not 0 to \(TelemetryConfiguration.maxLabelBytes) bytes of A-Z a-z 0-9 . _ -")
            }
            return text(field.0, field.1)
        }
        let labels = (try label("firmware", firmware), try label("model", model), try label("region", region))
        guard startId.1 - startId.0 <= 64, FleetReport.isStartId(bytes(startId.0, startId.1)) else {
            throw Rejection("start_id is not 0 to 64 printable ASCII bytes")
        }
        guard familyCount <= FleetReport.maxFamilies else {
            throw Rejection("\(familyCount) families, more than \(FleetReport.maxFamilies)")
        }
        var keys: [UInt8] = []
        var series: [FleetSeries] = []
        // About the report's size in keys, a series for every 20 bytes or so: one allocation each.
        keys.reserveCapacity(2 * count + 256)
        series.reserveCapacity(min(FleetReport.maxSamples, count / 20 + 16))
        let problem = withUnsafeTemporaryAllocation(byteCount: Scratch.bytes, alignment: 8) { (raw) -> FleetReport.Rejection? in
            let scratch = Scratch(raw.baseAddress!)
            var families = 0
            var at = 0
            while at < count, let f = next(&at, count) {
                guard f.number == 13 else { continue }
                do throws(FleetReport.Rejection) {
                    try family(f.start, f.end, fused, scratch, &families, &keys, &series)
                } catch {
                    return error
                }
            }
            return nil
        }
        if let problem { throw problem }
        try FleetReport.checkDistinct(series, keys)
        return FleetReport(
            boxId: text(boxId.0, boxId.1), seq: seq, countingSince: countingSince, startId: text(startId.0, startId.1),
            firmware: labels.0, model: labels.1, region: labels.2, time: time, keys: keys, series: series)
    }

    private func family(
        _ start: Int, _ end: Int, _ fused: Bool, _ scratch: Scratch, _ families: inout Int, _ keys: inout [UInt8],
        _ series: inout [FleetSeries]
    ) throws(FleetReport.Rejection) {
        var name = (start, start)
        var type: UInt32 = 0
        var seriesCount = 0
        var at = start
        var strings = true
        while let f = try nextRead(.family, &at, end, fused, &strings) {
            switch f.number {
            case 1: name = (f.start, f.end)
            case 3: type = UInt32(truncatingIfNeeded: f.varint)
            case 5: seriesCount += 1
            default: break
            }
        }
        let nameCount = name.1 - name.0
        guard nameCount <= FleetReport.maxNameBytes, FleetReport.isMetricName(p + name.0, count: nameCount) else {
            throw Rejection("family name '\(text(name.0, name.1).prefix(64))' is not a metric name")
        }
        // The name as a string only for a refusal's reason.
        let familyName = FamilyName(reader: self, start: name.0, end: name.1)
        for i in 0..<families {
            let other = (scratch.familyNames[2 * i], scratch.familyNames[2 * i + 1])
            if other.1 - other.0 == nameCount && memcmp(p + other.0, p + name.0, nameCount) == 0 {
                throw Rejection("family \(familyName) twice")
            }
        }
        // At most maxFamilies: counted before any family is read.
        scratch.familyNames[2 * families] = name.0
        scratch.familyNames[2 * families + 1] = name.1
        families += 1
        // A type this version does not know (a newer daemon's gauge): the family is left out, the rest of
        // the report counts.
        let histogram: Bool
        switch type {
        case 1: histogram = false
        case 2: histogram = true
        default:
            if fused {
                guard valid(.family, start, end, &strings), strings else { throw Self.retry }
            }
            return
        }
        guard series.count + seriesCount <= FleetReport.maxSamples else {
            throw Rejection("more than \(FleetReport.maxSamples) samples")
        }
        // Every key of the family begins with its name.
        Self.copy(scratch.key, p + name.0, nameCount)
        at = start
        while at < end, let f = next(&at, end) {
            guard f.number == 5 else { continue }
            try sample(f.start, f.end, familyName, nameCount, histogram, scratch, &keys, &series)
        }
    }

    /// `n` bytes from `from` to `to`: the keys' short pieces without a call.
    @inline(__always)
    private static func copy(_ to: UnsafeMutablePointer<UInt8>, _ from: UnsafePointer<UInt8>, _ n: Int) {
        if n >= 8, n <= 16 {
            let head = UnsafeRawPointer(from).loadUnaligned(as: UInt64.self)
            let tail = UnsafeRawPointer(from + (n - 8)).loadUnaligned(as: UInt64.self)
            UnsafeMutableRawPointer(to).storeBytes(of: head, as: UInt64.self)
            UnsafeMutableRawPointer(to + (n - 8)).storeBytes(of: tail, as: UInt64.self)
        } else if n < 8 {
            var i = 0
            while i < n {
                to[i] = from[i]
                i &+= 1
            }
        } else {
            to.update(from: from, count: n)
        }
    }

    /// Appends the key made at `scratch.key` and the series.
    @inline(__always)
    private func append(
        _ scratch: Scratch, _ length: Int, _ value: Double, _ keys: inout [UInt8], _ series: inout [FleetSeries]
    ) {
        let start = keys.count
        keys.append(contentsOf: UnsafeBufferPointer(start: scratch.key, count: length))
        series.append(
            FleetSeries(
                start: Int32(start), count: Int32(length), hash: FleetReport.keyHash(scratch.key, length), value: value))
    }

    /// Writes `suffix` after the family's name at `scratch.key`, then `{labels}` if there are labels: the
    /// key's length.
    @inline(__always)
    private func key(_ scratch: Scratch, _ nameCount: Int, _ suffix: StaticString, _ labelCount: Int) -> Int {
        var n = nameCount
        Self.copy(scratch.key + n, suffix.utf8Start, suffix.utf8CodeUnitCount)
        n += suffix.utf8CodeUnitCount
        if labelCount > 0 {
            scratch.key[n] = 0x7b
            Self.copy(scratch.key + n + 1, scratch.labels, labelCount)
            n += labelCount + 1
            scratch.key[n] = 0x7d
            n += 1
        }
        return n
    }

    /// One walk over the sample's fields notes its labels (up to the most a sample may have), its buckets
    /// (up to the most it may have, the rest counted) and its numbers; then the checks, in the reference's
    /// order, and the keys.
    private func sample(
        _ start: Int, _ end: Int, _ familyName: FamilyName, _ nameCount: Int, _ histogram: Bool, _ scratch: Scratch,
        _ keys: inout [UInt8], _ series: inout [FleetSeries]
    ) throws(FleetReport.Rejection) {
        var labelCount = 0
        var value: UInt64 = 0
        var sum = 0.0
        var total: UInt64 = 0
        var boundCount = 0
        var countCount = 0
        let maxBuckets = FleetReport.maxBuckets
        // protobuf-c's rules for each field checked here as on ``valid(_:_:_:_:)`` (when that walk was
        // made first, none of these throws).
        var at = start
        while at < end {
            guard let f = next(&at, end) else { throw Self.retry }
            switch f.number {
            case 1:
                guard f.wire == 2 else { throw Self.retry }
                if labelCount < FleetReport.maxLabels {
                    scratch.labelFields[2 * labelCount] = f.start
                    scratch.labelFields[2 * labelCount + 1] = f.end
                }
                labelCount += 1
            case 2:
                guard f.wire == 0 else { throw Self.retry }
                value = f.varint
            case 3:
                // One double, or packed ones (a multiple of 8 bytes).
                guard f.wire == 1 || (f.wire == 2 && (f.end - f.start) % 8 == 0) else { throw Self.retry }
                var v = f.start
                while v < f.end {
                    if boundCount < maxBuckets {
                        scratch.numbers[boundCount] = UInt64(
                            littleEndian: UnsafeRawPointer(p + v).loadUnaligned(as: UInt64.self))
                    }
                    boundCount += 1
                    v += 8
                }
            case 4:
                guard f.wire == 1 else { throw Self.retry }
                sum = double(f)
            case 5:
                guard f.wire == 0 else { throw Self.retry }
                total = f.varint
            case 6:
                if f.wire == 0 {
                    if countCount < maxBuckets { scratch.numbers[maxBuckets + countCount] = f.varint }
                    countCount += 1
                    continue
                }
                // Packed varints, each ended within the field in at most 10 bytes.
                guard f.wire == 2 else { throw Self.retry }
                var v = f.start
                while v < f.end {
                    guard let (x, n) = varint(v, f.end, max: 10) else { throw Self.retry }
                    if countCount < maxBuckets { scratch.numbers[maxBuckets + countCount] = x }
                    countCount += 1
                    v += n
                }
            default: break
            }
        }
        guard labelCount <= FleetReport.maxLabels else {
            throw Rejection(
                "family \(familyName): a sample with \(labelCount) labels, more than \(FleetReport.maxLabels)")
        }
        // The labels, as the key writes them: `a="x",b="y"`.
        var labelBytes = 0
        for i in 0..<labelCount {
            let fieldEnd = scratch.labelFields[2 * i + 1]
            var name = (scratch.labelFields[2 * i], scratch.labelFields[2 * i])
            var labelValue = name
            var l = name.0
            while l < fieldEnd {
                guard let g = next(&l, fieldEnd) else { throw Self.retry }
                // Strings, UTF-8 without a NUL: the last name and value as the checks below take them
                // (ASCII without a NUL), one before it here.
                if g.number == 1 {
                    guard g.wire == 2, Self.isText(p + name.0, name.1 - name.0) else { throw Self.retry }
                    name = (g.start, g.end)
                } else if g.number == 2 {
                    guard g.wire == 2, Self.isText(p + labelValue.0, labelValue.1 - labelValue.0) else { throw Self.retry }
                    labelValue = (g.start, g.end)
                }
            }
            let nameBytes = name.1 - name.0
            guard nameBytes <= FleetReport.maxLabelBytes, FleetReport.isMetricName(p + name.0, count: nameBytes),
                !FleetReport.isReservedLabel(p + name.0, count: nameBytes)
            else {
                throw Rejection("family \(familyName): label name '\(text(name.0, name.1).prefix(64))' refused")
            }
            let valueBytes = labelValue.1 - labelValue.0
            guard valueBytes <= FleetReport.maxLabelBytes, FleetReport.isLabelValue(p + labelValue.0, count: valueBytes) else {
                throw Rejection("family \(familyName): a value of label \(text(name.0, name.1)) is not a closed value")
            }
            let out = scratch.labels + labelBytes
            var n = 0
            if i > 0 {
                out[0] = 0x2c
                n = 1
            }
            Self.copy(out + n, p + name.0, nameBytes)
            n += nameBytes
            out[n] = 0x3d
            out[n + 1] = 0x22
            n += 2
            Self.copy(out + n, p + labelValue.0, valueBytes)
            n += valueBytes
            out[n] = 0x22
            labelBytes += n + 1
        }
        if !histogram {
            append(scratch, key(scratch, nameCount, "_total", labelBytes), Double(value), &keys, &series)
            return
        }
        guard boundCount == countCount, (1...maxBuckets).contains(boundCount) else {
            throw Rejection("family \(familyName): 1 to \(maxBuckets) buckets, each with its count")
        }
        let buckets = boundCount
        func bound(_ i: Int) -> Double { Double(bitPattern: scratch.numbers[i]) }
        guard bound(buckets - 1) == .infinity,
            (0..<(buckets - 1)).allSatisfy({ bound($0) < bound($0 + 1) && bound($0).isFinite })
        else { throw Rejection("family \(familyName): bucket bounds not ascending to +Inf") }
        guard sum.isFinite, sum >= 0 else { throw Rejection("family \(familyName): sum not finite") }
        guard series.count + buckets + 2 <= FleetReport.maxSamples else {
            throw Rejection("more than \(FleetReport.maxSamples) samples")
        }
        // `name_bucket{labels,le="`, then each bound and `"}`.
        var prefix = key(scratch, nameCount, "_bucket", 0)
        scratch.key[prefix] = 0x7b
        prefix += 1
        if labelBytes > 0 {
            Self.copy(scratch.key + prefix, scratch.labels, labelBytes)
            prefix += labelBytes
            scratch.key[prefix] = 0x2c
            prefix += 1
        }
        scratch.key[prefix] = 0x6c
        scratch.key[prefix + 1] = 0x65
        scratch.key[prefix + 2] = 0x3d
        scratch.key[prefix + 3] = 0x22
        prefix += 4
        for i in 0..<buckets {
            var n = prefix + FleetReport.writeBucketLabel(bound(i), to: scratch.key + prefix)
            scratch.key[n] = 0x22
            scratch.key[n + 1] = 0x7d
            n += 2
            append(scratch, n, Double(scratch.numbers[maxBuckets + i]), &keys, &series)
        }
        append(scratch, key(scratch, nameCount, "_sum", labelBytes), sum, &keys, &series)
        append(scratch, key(scratch, nameCount, "_count", labelBytes), Double(total), &keys, &series)
    }
}
