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
    static func encodeSeekPush(sessionId: UInt64, seq: UInt64, reason: String, to streamTime: Double,
                               seekReason: UInt64, into out: inout [UInt8]) -> Int {
        let start = out.count
        uint64Field(1, sessionId, into: &out)
        uint64Field(2, seq, into: &out)
        var text = reason
        text.withUTF8 { utf8 in
            guard !utf8.isEmpty else { return }
            varint(3 << 3 | 2, into: &out)
            varint(UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
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
