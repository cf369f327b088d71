// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// Writes a reason into a buffer sized for it (a seek push's frame): literals, break ids and whole seconds
/// are copied in place; a time with a fraction (rare in reasons) goes through `Seconds.description`. The
/// words are `TimelineReason`'s own (`ReasonText`); only the bytes are this writer's. A literal is one copy
/// of constant length (a few moves), a time that is a whole number of seconds is taken as such without a
/// call, and digits go two at a time: the snapback's reason is worded on every round trip.
struct ReasonWriter: ReasonText {
    /// At least as many bytes as the snapback's words take with `breakId` (its literals take 37 bytes and a
    /// time at most 25 — a sign, 15 digits, a point, 3 decimals, or Swift's own form of a huge value: 160
    /// leaves room).
    static func snapbackBound(breakId: String) -> Int { 160 + breakId.utf8.count }

    // The buffer's start and size, taken apart once as RawWriter does: every caller reserves the bound of
    // what it writes (`snapbackBound`, or the text's own byte count), so no put checks its room in a release
    // build; a debug build asserts it.
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    private(set) var count = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 1)!
        capacity = buffer.count
    }

    @inline(__always)  // a literal's length is a constant there: the copy folds into a few moves
    mutating func put(literal s: StaticString) {
        let n = s.utf8CodeUnitCount
        assert(n <= capacity &- count, "ReasonWriter past its bound")
        (base + count).copyMemory(from: s.utf8Start, byteCount: n)
        count &+= n
    }

    @inline(__always)
    mutating func put(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        assert(n <= capacity &- count, "ReasonWriter past its bound")
        guard let from = bytes.baseAddress else { return }  // empty
        let to = base + count
        if n <= 32 {
            // The ids of a reason are short: a byte loop beats a call into memcpy.
            var i = 0
            while i < n {
                to.storeBytes(of: from.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self)
                i &+= 1
            }
        } else {
            to.copyMemory(from: from, byteCount: n)
        }
        count &+= n
    }

    /// The text's bytes, read in place (a native string's are contiguous; any other is copied first).
    @inline(__always)
    mutating func put(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ put(UnsafeRawBufferPointer($0)) }) != nil { return }
        var copy = text
        copy.withUTF8 { put(UnsafeRawBufferPointer($0)) }
    }

    /// At most 25 bytes (`snapbackBound` counts them).
    @inline(__always)
    mutating func put(_ t: Seconds) {
        // A whole number of seconds (the usual reason's times) prints as its integer: no rounding to do.
        // Below 1e15 the conversion is safe; converting back tells a whole number (Int64(exactly:) calls
        // libm's trunc).
        let v = t.value
        if v.magnitude < 1e15, Double(Int64(v)) == v {
            putInteger(Int64(v))
        } else if let whole = t.wholeSeconds {
            putInteger(whole)
        } else {
            var text = t.description
            text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
        }
    }

    /// "00" "01" … "99": the digits of an integer, two at a time.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// `value` in decimal: at most 20 bytes.
    @inline(__always)
    private mutating func putInteger(_ value: Int64) {
        var n = value.magnitude
        if value < 0 {
            assert(count < capacity, "ReasonWriter past its bound")
            base.storeBytes(of: UInt8(ascii: "-"), toByteOffset: count, as: UInt8.self)
            count &+= 1
        }
        var digits = 1
        var power: UInt64 = 10
        while digits < 19 && n >= power {
            digits &+= 1
            power &*= 10
        }
        assert(digits <= capacity &- count, "ReasonWriter past its bound")
        var i = count &+ digits
        count = i
        let pairs = UnsafeRawPointer(Self.digitPairs.utf8Start)
        while n >= 100 {
            let pair = Int(truncatingIfNeeded: n % 100) &* 2
            n /= 100
            i &-= 2
            base.storeBytes(of: pairs.loadUnaligned(fromByteOffset: pair, as: UInt16.self), toByteOffset: i, as: UInt16.self)
        }
        if n >= 10 {
            base.storeBytes(
                of: pairs.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: n) &* 2, as: UInt16.self),
                toByteOffset: i &- 2, as: UInt16.self)
        } else {
            base.storeBytes(of: UInt8(truncatingIfNeeded: n) &+ UInt8(ascii: "0"), toByteOffset: i &- 1, as: UInt8.self)
        }
    }
}
