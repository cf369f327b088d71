// SPDX-License-Identifier: Apache-2.0
/// A frame with its own copy of the body: what a client hands to its caller. The daemon's hot path
/// uses ``FrameDecoder`` events directly and never builds one of these.
public struct Frame: Hashable, Sendable {
    public var header: FrameHeader
    public var body: [UInt8]

    /// `header.length` is set from `body`.
    public init(header: FrameHeader, body: [UInt8] = []) {
        precondition(body.count <= Int(UInt32.max), "frame body too long")
        var header = header
        header.length = UInt32(body.count)
        self.header = header
        self.body = body
    }

    /// Copies the body out of a decoder event.
    public init(header: FrameHeader, body: UnsafeRawBufferPointer) {
        self.init(header: header, body: Array(body))
    }

    /// Header and body as one byte array, ready to write.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(FrameHeader.size + body.count)
        header.encode(into: &bytes)
        bytes.append(contentsOf: body)
        return bytes
    }
}
