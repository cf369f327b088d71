// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// The snapback round trip's messages read and written straight from and to the frame: protobuf-c's
/// allocation, packed-size pass, pack pass and zero-filled reservation cost more than the whole timeline
/// decision here. The plain scalar messages (SeekEnded, EventReply…) are generated on `Reader` and
/// `RawWriter` (`ProtoPlainMessage`); the `seek` Push, whose reason is worded in place from the action,
/// is written here by hand. Both produce the same bytes as protobuf-c (field order, proto3 defaults left
/// out, doubles as fixed64); `WireFastPathTests` checks that byte for byte against `ProtoC`.
enum WireFastPath {
    /// At least the size of a seek push whose reason takes at most `text` bytes.
    @inline(__always)
    static func seekPushBound(reasonBound text: Int) -> Int {
        // session_id and seq: tag + 10-byte varint each; reason: tag + length varint + text; seek: tag,
        // length, stream_time (tag + 8), reason (tag + varint).
        11 + 11 + 1 + RawWriter.varintSize(UInt64(text)) + text + 2 + 9 + 11
    }

    /// `Push{session_id, seq, reason, seek: SeekCommand{stream_time, reason}}`, written at the start of
    /// `buffer` (at least ``seekPushBound(reasonBound:)`` of the reason's UTF-8 bytes, e.g. straight into a
    /// connection's outbound buffer). Returns the body's length.
    static func encodeSeekPush(
        sessionId: UInt64, seq: UInt64, reason: String, to streamTime: Double,
        seekReason: UInt64, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        encodeSeekPush(
            sessionId: sessionId, seq: seq, hasReason: !reason.isEmpty,
            writeReason: { buffer in
                var words = ReasonWriter(buffer)
                words.put(reason)
                return words.count
            }, to: streamTime, seekReason: seekReason, into: buffer)
    }

    /// The same, the reason written by `writeReason` (at most as many bytes as the bound was given for),
    /// when `hasReason`.
    @inline(__always)
    static func encodeSeekPush(
        sessionId: UInt64, seq: UInt64, hasReason: Bool, writeReason: (UnsafeMutableRawBufferPointer) -> Int,
        to streamTime: Double, seekReason: UInt64, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        var out = RawWriter(buffer)
        out.uint64Field(1, sessionId)
        out.uint64Field(2, seq)
        if hasReason {
            // The reason is worded straight into the frame behind a one-byte length; in the rare case of
            // 128 bytes or more it moves along to make room for a longer one.
            out.varint(3 << 3 | 2)
            let lengthAt = out.count
            let textAt = lengthAt + 1
            let length = writeReason(UnsafeMutableRawBufferPointer(rebasing: buffer[textAt...]))
            let lengthSize = RawWriter.varintSize(UInt64(length))
            if lengthSize > 1 {
                (buffer.baseAddress! + lengthAt + lengthSize).copyMemory(from: buffer.baseAddress! + textAt, byteCount: length)
            }
            out.varint(UInt64(length))
            out.count += length
        }
        // The oneof member is written even when empty: it says which kind the push is.
        let seekSize =
            (streamTime != 0 ? 9 : 0)
            + (seekReason != 0 ? 1 + RawWriter.varintSize(seekReason) : 0)
        out.varint(4 << 3 | 2)
        out.varint(UInt64(seekSize))
        out.doubleField(1, streamTime)
        out.uint64Field(2, seekReason)
        return out.count
    }

    /// Appends what `encode` writes into at most `bound` bytes to `out`; returns how many.
    static func append(to out: inout [UInt8], bound: Int, _ encode: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: bound))
        let n = out.withUnsafeMutableBytes { encode(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        out.removeLast(bound - n)
        return n
    }
}

/// Protobuf's wire format into memory sized beforehand (the bound is the caller's promise; a debug build
/// checks it).
struct RawWriter {
    let base: UnsafeMutableRawPointer
    let capacity: Int
    var count = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 1)!
        capacity = buffer.count
    }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        assert(count < capacity, "RawWriter past its bound")
        base.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            byte(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        byte(UInt8(v))
    }

    /// A uint64/enum field (wire type 0), left out at 0 as proto3 does.
    @inline(__always)
    mutating func uint64Field(_ number: UInt64, _ value: UInt64) {
        guard value != 0 else { return }
        varint(number << 3)
        varint(value)
    }

    // The generated direct writers of replies with lists (scripts/gen-wire.py) write with these too.

    /// A length-delimited field of `length` bytes, with its tag and length.
    @inline(__always)
    static func lengthDelimitedSize(_ number: UInt64, _ length: Int) -> Int {
        varintSize(number << 3 | 2) + varintSize(UInt64(length)) + length
    }

    /// The UTF-8 bytes of `s` up to its first NUL: what protobuf-c's C string of it holds.
    static func cStringCount(_ s: String) -> Int {
        s.utf8.withContiguousStorageIfAvailable { units in
            var n = 0
            while n < units.count, units[n] != 0 { n += 1 }
            return n
        } ?? (s.utf8.firstIndex(of: 0).map { s.utf8.distance(from: s.utf8.startIndex, to: $0) } ?? s.utf8.count)
    }

    /// The tag and length of a length-delimited field whose `length` bytes follow.
    @inline(__always)
    mutating func lengthDelimited(_ number: UInt64, _ length: Int) {
        varint(number << 3 | 2)
        varint(UInt64(length))
    }

    /// A string field of `s`'s first `count` UTF-8 bytes (`cStringCount`).
    mutating func string(_ number: UInt64, _ s: String, count: Int) {
        lengthDelimited(number, count)
        assert(self.count + count <= capacity, "RawWriter past its bound")
        let at = base + self.count
        let copied = s.utf8.withContiguousStorageIfAvailable { units in
            if let from = units.baseAddress { at.copyMemory(from: from, byteCount: count) }
        }
        if copied == nil {
            for (i, b) in s.utf8.prefix(count).enumerated() { at.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
        }
        self.count += count
    }

    @inline(__always)
    mutating func rawDouble(_ value: Double) {
        assert(count + 8 <= capacity, "RawWriter past its bound")
        base.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    @inline(__always)
    mutating func rawFloat(_ value: Float) {
        assert(count + 4 <= capacity, "RawWriter past its bound")
        base.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    /// A double field (wire type 1, little-endian), left out when it equals 0 — -0.0 too, as protobuf-c
    /// compares the value.
    @inline(__always)
    mutating func doubleField(_ number: UInt64, _ value: Double) {
        guard value != 0 else { return }
        varint(number << 3 | 1)
        assert(count + 8 <= capacity, "RawWriter past its bound")
        base.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }
}

extension WireFastPath {
    /// Reads a message of plain scalars without protobuf-c's allocation (the generated `init?(clean:)`):
    /// only its clean form — known fields with their own wire types, each at most once, no unknown
    /// fields. Anything else returns nil and goes through protobuf-c, so the result never differs from it
    /// (`WireFastPathTests` checks both agree on random and mutated bodies).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { at >= bytes.count }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while at < bytes.count, shift < 64 {
                let b = bytes[at]
                at += 1
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func double() -> Double? {
            guard bytes.count - at >= 8 else { return nil }
            let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
            at += 8
            return Double(bitPattern: bits)
        }

        /// Field numbers seen so far (1–7), to send a repeated field to protobuf-c.
        private var seen: UInt8 = 0

        /// The next field's (number, wire type): nil for a field number above 15 or one seen before.
        mutating func fieldOnce() -> (UInt64, UInt64)? {
            guard at < bytes.count else { return nil }
            let b = bytes[at]
            guard b < 0x80 else { return nil }  // field numbers above 15: not ours
            at += 1
            let number = UInt64(b >> 3)
            let bit = UInt8(1) << UInt8(truncatingIfNeeded: number & 7)
            guard seen & bit == 0 else { return nil }
            seen |= bit
            return (number, UInt64(b & 7))
        }

        // The clean readers of messages with lists of sub-messages (an OpenSession's breaks, generated by
        // scripts/gen-wire.py) read these too.

        /// The next field's (number, wire type), its number from 1 to 63 (the generated readers' bit of
        /// fields seen); nil for any other.
        mutating func field() -> (UInt64, UInt64)? {
            guard let tag = varint(), case let number = tag >> 3, number >= 1, number <= 63 else { return nil }
            return (number, tag & 7)
        }

        /// A length-delimited field's bytes (wire type 2).
        mutating func lengthDelimited() -> UnsafeRawBufferPointer? {
            guard let length = varint(), length <= UInt64(bytes.count - at) else { return nil }
            let start = at
            at += Int(length)
            return UnsafeRawBufferPointer(rebasing: bytes[start..<at])
        }

        /// A string field: its bytes up to the first NUL, where protobuf-c's C string ends, if they are
        /// UTF-8; nil otherwise, and protobuf-c's path refuses it naming the field.
        mutating func string() -> String? {
            guard let field = lengthDelimited() else { return nil }
            guard let base = field.baseAddress else { return "" }
            let units = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: field.count)
            var end = 0
            var high: UInt8 = 0
            while end < units.count, units[end] != 0 {
                high |= units[end]
                end += 1
            }
            let text = UnsafeBufferPointer(rebasing: units[..<end])
            // ASCII (an id, as a rule) is UTF-8 as it is, and String(decoding:) takes it without the generic
            // validating initialiser's metadata look-ups; anything else is validated.
            return high < 0x80 ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
        }

        mutating func float() -> Float? {
            guard bytes.count - at >= 4 else { return nil }
            let bits = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self))
            at += 4
            return Float(bitPattern: bits)
        }

        /// A packed repeated double field's elements.
        mutating func packedDoubles() -> [Double]? {
            guard let field = lengthDelimited(), field.count % 8 == 0 else { return nil }
            return (0..<field.count / 8).map { i in
                Double(bitPattern: UInt64(littleEndian: field.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
            }
        }

        /// A packed repeated float field's elements.
        mutating func packedFloats() -> [Float]? {
            guard let field = lengthDelimited(), field.count % 4 == 0 else { return nil }
            return (0..<field.count / 4).map { i in
                Float(bitPattern: UInt32(littleEndian: field.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)))
            }
        }
    }
}
