import SnapbackTimeline

/// Hand-written encoders for the two messages of the snapback round trip — the `seek` Push and the
/// EventReply — written straight into the output buffer: protobuf-c's packed-size pass, pack pass and
/// zero-filled reservation cost more than the whole timeline decision here. They produce the same bytes
/// as protobuf-c (field order, proto3 defaults left out, doubles as fixed64); `WireFastPathTests` checks
/// that byte for byte against `ProtoC`.
enum WireFastPath {
    @inline(__always)
    static func varint(_ value: UInt64, into out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// A uint64/enum field (wire type 0), left out at 0 as proto3 does.
    @inline(__always)
    static func uint64Field(_ number: UInt64, _ value: UInt64, into out: inout [UInt8]) {
        guard value != 0 else { return }
        varint(number << 3, into: &out)
        varint(value, into: &out)
    }

    /// A double field (wire type 1, little-endian), left out when it equals 0 — -0.0 too, as protobuf-c
    /// compares the value.
    @inline(__always)
    static func doubleField(_ number: UInt64, _ value: Double, into out: inout [UInt8]) {
        guard value != 0 else { return }
        let bits = value.bitPattern
        varint(number << 3 | 1, into: &out)
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i)))) }
    }

    /// `Push{session_id, seq, reason, seek: SeekCommand{stream_time, reason}}`.
    static func encodeSeekPush(sessionId: UInt64, seq: UInt64, reason: TimelineReason, to streamTime: Double,
                               seekReason: UInt64, into out: inout [UInt8]) -> Int {
        let start = out.count
        uint64Field(1, sessionId, into: &out)
        uint64Field(2, seq, into: &out)
        if !reason.isEmpty {
            // The reason is worded straight into the frame; its length byte is patched afterwards (a
            // second one is inserted in the rare case of 128 bytes or more).
            varint(3 << 3 | 2, into: &out)
            let lengthAt = out.count
            out.append(0)
            reason.write(to: &out)
            let length = out.count - lengthAt - 1
            if length < 0x80 {
                out[lengthAt] = UInt8(length)
            } else {
                var prefix: [UInt8] = []
                varint(UInt64(length), into: &prefix)
                out.replaceSubrange(lengthAt...lengthAt, with: prefix)
            }
        }
        // The oneof member is written even when empty: it says which kind the push is.
        let seekSize = (streamTime != 0 ? 9 : 0)
            + (seekReason != 0 ? 1 + varintSize(seekReason) : 0)
        varint(4 << 3 | 2, into: &out)
        varint(UInt64(seekSize), into: &out)
        doubleField(1, streamTime, into: &out)
        uint64Field(2, seekReason, into: &out)
        return out.count - start
    }

    /// `EventReply{last_push_seq}`.
    static func encodeEventReply(lastPushSeq: UInt64, into out: inout [UInt8]) -> Int {
        let start = out.count
        uint64Field(1, lastPushSeq, into: &out)
        return out.count - start
    }
}

extension WireFastPath {
    /// Reads the two most frequent requests without protobuf-c's allocation: only their clean form —
    /// known fields with their own wire types, each at most once, no unknown fields. Anything else
    /// returns nil and goes through protobuf-c, so the result never differs from it
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
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
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
    }

    /// `SeekEndedRequest{session_id = 1; from_stream_time = 2; to_stream_time = 3}`.
    static func decodeSeekEnded(_ body: UnsafeRawBufferPointer) -> (session: UInt64, from: Double, to: Double)? {
        var r = Reader(body)
        var session: UInt64 = 0, from = 0.0, to = 0.0
        while !r.atEnd {
            guard let (number, wire) = r.fieldOnce() else { return nil }
            switch (number, wire) {
            case (1, 0): guard let v = r.varint() else { return nil }; session = v
            case (2, 1): guard let v = r.double() else { return nil }; from = v
            case (3, 1): guard let v = r.double() else { return nil }; to = v
            default: return nil
            }
        }
        return (session, from, to)
    }

    /// `ReportPlayheadRequest{session_id = 1; stream_time = 2; rate = 3; playing = 4}`.
    static func decodeReportPlayhead(_ body: UnsafeRawBufferPointer)
        -> (session: UInt64, streamTime: Double, rate: Double, playing: Bool)?
    {
        var r = Reader(body)
        var session: UInt64 = 0, t = 0.0, rate = 0.0, playing = false
        while !r.atEnd {
            guard let (number, wire) = r.fieldOnce() else { return nil }
            switch (number, wire) {
            case (1, 0): guard let v = r.varint() else { return nil }; session = v
            case (2, 1): guard let v = r.double() else { return nil }; t = v
            case (3, 1): guard let v = r.double() else { return nil }; rate = v
            case (4, 0): guard let v = r.varint() else { return nil }; playing = v != 0
            default: return nil
            }
        }
        return (session, t, rate, playing)
    }
}
