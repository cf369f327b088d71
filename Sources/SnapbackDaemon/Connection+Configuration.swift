// SPDX-License-Identifier: Apache-2.0
extension Connection {
    /// Per-connection limits.
    public struct Configuration: Sendable, Hashable {
        /// Largest request body accepted; longer ones are skipped and reported to the handler.
        public var maxFrameSize: Int
        /// Output queued for the peer beyond which it is disconnected.
        public var maxOutboundBytes: Int
        /// Initial read buffer; it grows for one large frame and shrinks back.
        public var readBufferSize: Int
        /// Time from accept to a completed handshake (``completeHandshake()``) before the connection
        /// is closed.
        public var helloTimeoutMilliseconds: UInt64
        /// Time a frame may take from its first byte to its last before the connection is closed.
        public var partialFrameTimeoutMilliseconds: UInt64

        public init(
            maxFrameSize: Int = 1 << 18, maxOutboundBytes: Int = 8 << 20, readBufferSize: Int = 16 * 1024,
            helloTimeoutMilliseconds: UInt64 = 5000, partialFrameTimeoutMilliseconds: UInt64 = 10_000
        ) {
            self.maxFrameSize = maxFrameSize
            self.maxOutboundBytes = maxOutboundBytes
            self.readBufferSize = readBufferSize
            self.helloTimeoutMilliseconds = helloTimeoutMilliseconds
            self.partialFrameTimeoutMilliseconds = partialFrameTimeoutMilliseconds
        }
    }
}
