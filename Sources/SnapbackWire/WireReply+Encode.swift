// SPDX-License-Identifier: Apache-2.0
// The reply to every session event, the snapback round trip's: written straight into a connection's
// outbound buffer by its generated writer (`ProtoPlainMessage`). Every other reply is its message's
// `encode(into:)`.

extension WireReply {
    /// The most bytes an EventReply takes.
    public static let eventReplyBound = SnapbackV1.EventReply.byteBound

    /// The reply to every event, written at the start of `buffer` (at least ``eventReplyBound`` bytes:
    /// a connection's outbound buffer). Returns its length.
    public static func encodeEventReply(lastPushSeq: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        SnapbackV1.EventReply(lastPushSeq: lastPushSeq).write(into: buffer)
    }

    /// The reply to every event: on the hot path, so no allocation beyond `out`'s growth.
    @discardableResult
    public static func encodeEventReply(lastPushSeq: UInt64, into out: inout [UInt8]) -> Int {
        SnapbackV1.EventReply(lastPushSeq: lastPushSeq).encode(into: &out)
    }
}
