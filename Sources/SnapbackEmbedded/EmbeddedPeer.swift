// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackWire

/// A player in process: bytes in through the same frame decoding and dispatch as a socket, frames out
/// into an array, no file descriptor, no loop. With a ``ManualClock`` it runs the real service — Hello
/// gating, limits, sessions, actions, timers, push sequence numbers — deterministically, for tests and
/// the fuzzer, as NIOEmbedded does for NIO.
public final class EmbeddedPeer: PeerPort {
    public let id: UInt64
    public let peer: PeerCredentials
    public var serviceState: ConnectionState?
    public let maxOutboundBytes: Int
    public let maxFrameSize: Int
    private let handler: any ConnectionHandler
    private let logger: Logger
    private var decoder: FrameDecoder

    public enum State: Equatable {
        case open
        /// Asked to close once its output is taken (refused, incompatible, shutting down).
        case draining(reason: String)
        /// Closed: by the service, by a framing error, or by ``disconnect()``.
        case closed(reason: String)
    }
    public private(set) var state = State.open

    /// Frames the service sent, in order, not yet taken with ``takeSent()``.
    public private(set) var sent: [Frame] = []
    private var sentBytes = 0

    public init(
        id: UInt64, peer: PeerCredentials = PeerCredentials(pid: 1, uid: 0, gid: 0),
        handler: any ConnectionHandler, logger: Logger,
        maxFrameSize: Int = 1 << 18, maxOutboundBytes: Int = 8 << 20
    ) {
        self.id = id
        self.peer = peer
        self.handler = handler
        self.logger = logger
        self.maxOutboundBytes = maxOutboundBytes
        self.maxFrameSize = maxFrameSize
        decoder = FrameDecoder(side: .server, maxFrameSize: maxFrameSize, initialCapacity: 4096)
    }

    /// Tells the service a peer connected (access control and limits run here).
    public func connect() {
        handler.connectionOpened(self)
    }

    public var isOpen: Bool { state == .open }

    /// What the player has not taken yet (``takeSent()`` takes it all).
    public var queuedOutboundBytes: Int { canSend ? sentBytes : 0 }

    public var canSend: Bool {
        if case .closed = state { return false }
        return true
    }

    /// Bytes from the player, in any split: complete requests are dispatched at once.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard isOpen, !bytes.isEmpty else { return }
        var offset = 0
        while offset < bytes.count, isOpen {
            let tail = decoder.writableTail(minimumCount: 1)
            let n = min(tail.count, bytes.count - offset)
            tail.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            decoder.commit(n)
            offset += n
            deliverBufferedFrames()
        }
    }

    /// Set between ``holdRequests()`` and ``resumeRequests()``: what the player sends meanwhile waits in
    /// the decoder.
    public private(set) var requestsHeld = false

    public func holdRequests() {
        guard isOpen else { return }
        requestsHeld = true
    }

    public func resumeRequests() {
        guard requestsHeld else { return }
        requestsHeld = false
        deliverBufferedFrames()
    }

    private func deliverBufferedFrames() {
        let error = handler.deliverFrames(
            on: self, logger: logger, next: { self.isOpen && !self.requestsHeld ? self.decoder.next() : nil })
        if let error {
            finish("protocol error: \(error)")
        }
    }

    public func receive(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// A request frame, as a player sends it.
    public func receive(_ header: FrameHeader, body: [UInt8]) {
        var header = header
        header.length = UInt32(truncatingIfNeeded: body.count)
        var bytes = [UInt8](repeating: 0, count: FrameHeader.size)
        bytes.withUnsafeMutableBytes { header.encode(to: $0.baseAddress!) }
        receive(bytes + body)
    }

    /// The player goes away (or the service's close completes): the service closes its sessions.
    public func disconnect() {
        finish("peer disconnected")
    }

    /// Takes the frames sent so far; the queue counts as read by the player.
    public func takeSent() -> [Frame] {
        defer {
            sent.removeAll()
            sentBytes = 0
        }
        return sent
    }

    private func finish(_ reason: String) {
        guard canSend else { return }
        state = .closed(reason: reason)
        handler.connectionClosed(self)
        serviceState = nil
    }

    // MARK: PeerPort

    @discardableResult
    public func send(_ header: FrameHeader, body: UnsafeRawBufferPointer) -> Bool {
        guard admit(FrameHeader.size + body.count) else { return false }
        var header = header
        header.length = UInt32(body.count)
        sent.append(Frame(header: header, body: body))
        return true
    }

    @discardableResult
    public func send(
        _ header: FrameHeader, reservingBodyCapacity capacity: Int,
        encodeBody: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Bool {
        guard admit(FrameHeader.size + capacity) else { return false }
        var body = [UInt8](repeating: 0, count: capacity)
        let count = body.withUnsafeMutableBytes { encodeBody($0) }
        precondition(count >= 0 && count <= capacity, "encodeBody returned \(count), capacity \(capacity)")
        body.removeLast(capacity - count)
        var header = header
        header.length = UInt32(count)
        sent.append(Frame(header: header, body: body))
        return true
    }

    /// The socket's rule: a peer that lets its queue pass the bound is dropped.
    private func admit(_ count: Int) -> Bool {
        guard canSend else { return false }
        if sentBytes > 0 && sentBytes + count > maxOutboundBytes {
            finish("peer is not reading: \(sentBytes) bytes queued, limit \(maxOutboundBytes)")
            return false
        }
        sentBytes += count
        return true
    }

    public func closeAfterFlush(reason: String, level: Logger.Level) {
        guard isOpen else { return }
        state = .draining(reason: reason)
    }

    /// A draining peer closes once the player has taken its output (``takeSent()`` then this).
    public func completeDrain() {
        if case .draining(let reason) = state { finish(reason) }
    }
}
