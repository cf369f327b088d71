// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackWire

/// One client on the Unix socket.
///
/// Reads go straight into the ``FrameDecoder``'s buffer (libuv's `alloc_cb` gets its free tail) and
/// frames are parsed in place; a partial frame is moved to the front before the next read.
///
/// Frames sent while a callback runs are appended to one outbound buffer and written with a single
/// `uv_try_write` when the callback returns (a push and a response leave in one syscall); whatever the
/// socket does not take is handed to one `uv_write` at a time, and frames sent meanwhile wait for it.
/// Queued output is bounded: a frame that would take it past `maxOutboundBytes` disconnects the peer
/// (it is not reading), with one log line, and no other connection notices.
///
/// Loop-confined: use it only on the loop thread, where the handler's callbacks run.
public final class Connection: PeerPort {
    /// Unique for the daemon's lifetime, starting at 1.
    public let id: UInt64
    /// The peer's pid, uid and gid when it connected (SO_PEERCRED).
    public let peer: PeerCredentials
    public let loop: EventLoop
    /// The service's per-connection state, so that it needs no lookup by id; typed, so that it needs no
    /// cast per request. Cleared after `connectionClosed`.
    public var serviceState: ConnectionState?

    /// Output queued for the peer beyond which it is disconnected (fixed at accept).
    public let maxOutboundBytes: Int

    private let handler: any ConnectionHandler
    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let writeRequest: UnsafeMutablePointer<uv_write_t>

    private var decoder: FrameDecoder
    /// Frames queued since the last flush.
    private var pending = OutboundBuffer()
    /// Bytes a `uv_write` is writing; untouchable until its callback.
    private var inFlight = OutboundBuffer()
    private var writeInFlight = false
    /// Bounds a ``closeAfterFlush(reason:level:timeoutMilliseconds:)``.
    private var drainTimer: LoopTimer?
    /// Set while the connection waits in the loop's flush list.
    var needsFlush = false

    // Deadlines. A connection has one until its handshake completes and while a frame is partly
    // received; the loop keeps those connections in a list checked by one timer (``EventLoop/watch(_:)``).
    // The read path only counts bytes and, when a read ends between frames, clears a field: no timer
    // is touched per frame.
    let helloTimeout: UInt64
    let partialFrameTimeout: UInt64
    /// Loop time (`uv_now`, milliseconds) of the accept.
    let acceptedAt: UInt64
    /// Set by the handler once the peer said Hello.
    public private(set) var handshakeCompleted = false
    /// Bytes received that are not yet part of a whole frame: the frame in progress. Negative while
    /// the body of an oversized frame, announced by a header already counted, is still to come.
    private(set) var unframedBytes = 0
    /// Loop time when the frame in progress began to arrive; nil between frames.
    private(set) var partialFrameSince: UInt64?
    /// Its place in the loop's deadline list; -1 when it is not listed.
    var watchIndex = -1

    private enum State {
        case open
        /// Not reading any more; closes once the queued output is written.
        case draining(reason: String, level: Logger.Level)
        case closing
        case closed
    }
    private var state = State.open

    /// Output this large is written at once instead of at the end of the callback.
    private static let eagerFlushBytes = 64 * 1024
    /// The smallest free space handed to a read.
    private static let minimumReadSize = 4096

    /// Takes over an accepted, initialised pipe handle; the connection closes and frees it.
    init(
        handle: UnsafeMutablePointer<uv_pipe_t>,
        id: UInt64,
        peer: PeerCredentials,
        loop: EventLoop,
        configuration: Configuration,
        handler: any ConnectionHandler
    ) {
        self.handle = handle
        self.id = id
        self.peer = peer
        self.loop = loop
        self.handler = handler
        self.maxOutboundBytes = configuration.maxOutboundBytes
        self.maxFrameSize = configuration.maxFrameSize
        self.helloTimeout = configuration.helloTimeoutMilliseconds
        self.partialFrameTimeout = configuration.partialFrameTimeoutMilliseconds
        self.acceptedAt = uv_now(loop.raw)
        self.decoder = FrameDecoder(
            side: .server,
            maxFrameSize: configuration.maxFrameSize,
            initialCapacity: configuration.readBufferSize
        )
        writeRequest = .allocate(capacity: 1)
        // The handle owns one reference until its close callback; write callbacks come before that.
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        writeRequest.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Tells the handler, then starts reading (unless the handler refused the peer and closed it).
    func start() {
        loop.register(self)
        loop.logger.debug("connection \(id) opened (\(peer))")
        handler.connectionOpened(self)
        guard isOpen else { return }
        let result = uv_read_start(asStream(handle), Self.allocCallback, Self.readCallback)
        if result != 0 {
            close(reason: "uv_read_start: \(uvErrorDescription(result))", level: .error)
            return
        }
        loop.watch(self)
    }

    /// The peer completed the handshake (Hello): from now on it may stay idle between frames for as
    /// long as it likes.
    public func completeHandshake() {
        handshakeCompleted = true
    }

    /// Largest request body accepted on this connection (fixed at accept).
    public let maxFrameSize: Int

    // MARK: State

    /// Still reading requests.
    public var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// Can still queue output: open, or draining before a close.
    public var canSend: Bool {
        switch state {
        case .open, .draining: true
        case .closing, .closed: false
        }
    }

    /// Output not yet taken by the kernel.
    public var queuedOutboundBytes: Int {
        guard canSend else { return 0 }
        return pending.readableCount + Int(asStream(handle).pointee.write_queue_size)
    }

    // MARK: Sending

    /// Queues a frame; `header.length` is set from `body`. Written when the current callback returns.
    /// Returns false if the connection is closing, or has just been closed because its peer is not
    /// reading.
    @discardableResult
    public func send(_ header: FrameHeader, body: UnsafeRawBufferPointer) -> Bool {
        let total = FrameHeader.size + body.count
        guard admit(total) else { return false }
        let start = pending.reserve(total)
        var header = header
        header.length = UInt32(body.count)
        header.encode(to: start)
        if !body.isEmpty {
            (start + FrameHeader.size).copyMemory(from: body.baseAddress!, byteCount: body.count)
        }
        pending.commit(total)
        didQueue()
        return true
    }

    /// Queues a frame with a body from an array (see the `UnsafeRawBufferPointer` variant).
    /// Queues a frame whose body is encoded in place, straight into the outbound buffer after a
    /// reserved header: `encodeBody` gets `capacity` writable bytes and returns how many it used (at
    /// most `capacity`; e.g. protobuf-c's packed size and `pack`). `header.length` is set from that.
    /// `encodeBody` must not send on this connection.
    @discardableResult
    public func send(
        _ header: FrameHeader,
        reservingBodyCapacity capacity: Int,
        encodeBody: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Bool {
        precondition(capacity >= 0 && capacity <= Int(UInt32.max), "body capacity out of range")
        guard admit(FrameHeader.size + capacity) else { return false }
        let start = pending.reserve(FrameHeader.size + capacity)
        let count = encodeBody(UnsafeMutableRawBufferPointer(start: start + FrameHeader.size, count: capacity))
        precondition(count >= 0 && count <= capacity, "encodeBody returned \(count), capacity \(capacity)")
        var header = header
        header.length = UInt32(count)
        header.encode(to: start)
        pending.commit(FrameHeader.size + count)
        didQueue()
        return true
    }

    /// Whether `count` more bytes may be queued; disconnects a peer that let its queue fill.
    private func admit(_ count: Int) -> Bool {
        guard canSend else { return false }
        precondition(count - FrameHeader.size <= Int(UInt32.max), "frame body longer than 4 GiB")
        let queued = queuedOutboundBytes
        // A single frame into an empty queue always goes: the bound is on backlog, not frame size.
        if queued > 0 && queued + count > maxOutboundBytes {
            close(
                reason: "peer is not reading: \(queued) bytes queued, limit \(maxOutboundBytes)",
                level: .warning
            )
            return false
        }
        return true
    }

    private func didQueue() {
        if pending.readableCount >= Self.eagerFlushBytes && !writeInFlight {
            flush()
        } else {
            loop.setNeedsFlush(self)
        }
    }

    /// Writes queued output: `uv_try_write` first, the rest through one `uv_write`.
    func flush() {
        needsFlush = false
        guard canSend, !writeInFlight else { return }
        if pending.isEmpty {
            closeIfDrained()
            return
        }
        var buffer = uv_buf_t(base: pending.readPointer.assumingMemoryBound(to: CChar.self), len: pending.readableCount)
        let written = uv_try_write(asStream(handle), &buffer, 1)
        if Int(written) == pending.readableCount {
            pending.clear()
            closeIfDrained()
            return
        }
        if written < 0 && !isUVError(written, UV_EAGAIN) {
            close(reason: "write failed: \(uvErrorDescription(written))", level: written == UV_EPIPE.rawValue ? .debug : .info)
            return
        }
        if written > 0 {
            pending.consume(Int(written))
        }
        // The rest goes out from a buffer nobody appends to until the write completes.
        swap(&pending, &inFlight)
        buffer = uv_buf_t(base: inFlight.readPointer.assumingMemoryBound(to: CChar.self), len: inFlight.readableCount)
        let result = uv_write(writeRequest, asStream(handle), &buffer, 1) { request, status in
            let connection = Unmanaged<Connection>.fromOpaque(request!.pointee.data).takeUnretainedValue()
            connection.writeCompleted(status: status)
            connection.loop.flushPending()
        }
        if result != 0 {
            close(reason: "uv_write: \(uvErrorDescription(result))", level: .error)
            return
        }
        writeInFlight = true
    }

    private func writeCompleted(status: Int32) {
        writeInFlight = false
        inFlight.clear()
        guard canSend else { return }  // UV_ECANCELED: the connection is closing
        if status < 0 {
            close(reason: "write failed: \(uvErrorDescription(status))", level: status == UV_EPIPE.rawValue ? .debug : .info)
            return
        }
        flush()
    }

    // MARK: Closing

    /// Closes now, dropping queued output, and logs one line at info level. The handler's
    /// `connectionClosed` follows from the close callback.
    public func close(reason: String) {
        close(reason: reason, level: .info)
    }

    func close(reason: String, level: Logger.Level) {
        guard canSend else { return }
        state = .closing
        loop.logger.log(level, "connection \(id) (\(peer)) closed: \(reason)")
        uv_close(asHandle(handle)) { raw in
            let handle = UnsafeMutablePointer<uv_pipe_t>(OpaquePointer(raw!))
            let connection = Unmanaged<Connection>.fromOpaque(handle.pointee.data).takeRetainedValue()
            connection.didClose()
            handle.deallocate()
        }
    }

    /// Stops reading and closes once the queued output is written (a final error answer, peer EOF,
    /// daemon shutdown). A peer that has not taken it all after `timeoutMilliseconds` is closed anyway.
    public func closeAfterFlush(reason: String, level: Logger.Level) {
        closeAfterFlush(reason: reason, level: level, timeoutMilliseconds: 2000)
    }

    public func closeAfterFlush(reason: String, level: Logger.Level, timeoutMilliseconds: UInt64) {
        guard isOpen else { return }
        uv_read_stop(asStream(handle))
        state = .draining(reason: reason, level: level)
        flush()
        guard canSend else { return }  // everything went out at once
        let timer = LoopTimer(loop: loop) { [unowned self] in
            self.close(reason: "\(reason); output not taken within \(timeoutMilliseconds) ms", level: level)
        }
        timer.start(after: timeoutMilliseconds)
        drainTimer = timer
    }

    private func closeIfDrained() {
        if case .draining(let reason, let level) = state, pending.isEmpty, !writeInFlight {
            close(reason: reason, level: level)
        }
    }

    private func didClose() {
        state = .closed
        drainTimer?.close()
        drainTimer = nil
        writeRequest.deallocate()
        pending.clear()
        handler.connectionClosed(self)
        serviceState = nil
        loop.unwatch(self)
        loop.unregister(self)
    }

    // MARK: Reading

    /// Set between ``holdRequests()`` and ``resumeRequests()``: the frames after the one held wait in the
    /// decoder, and the socket is not read, so the peer's requests are answered in order and what it
    /// sends meanwhile waits in the kernel's buffer, not in ours.
    private var requestsHeld = false

    public func holdRequests() {
        guard isOpen, !requestsHeld else { return }
        requestsHeld = true
        uv_read_stop(asStream(handle))
    }

    public func resumeRequests() {
        guard requestsHeld else { return }
        requestsHeld = false
        guard isOpen else { return }
        deliverBufferedFrames()
        guard isOpen, !requestsHeld else { return }
        let result = uv_read_start(asStream(handle), Self.allocCallback, Self.readCallback)
        if result != 0 {
            close(reason: "uv_read_start: \(uvErrorDescription(result))", level: .error)
        }
    }

    private func didRead(_ count: Int) {
        if count > 0 {
            decoder.commit(count)
            unframedBytes &+= count
            deliverBufferedFrames()
        } else if isUVError(count, UV_EOF) {
            closeAfterFlush(reason: "peer closed the connection", level: .debug)
        } else if count < 0 {
            close(reason: "read failed: \(uvErrorDescription(Int32(count)))", level: .info)
        }
    }

    /// Hands the frames received to the handler, and keeps the clock of the one still arriving.
    private func deliverBufferedFrames() {
        let completed = handleDecodedFrames()
        if unframedBytes == 0 {
            partialFrameSince = nil
        } else if completed || partialFrameSince == nil {
            // A frame began in this read: its clock starts now (a frame completed in the same read
            // was progress, so a peer streaming frames back to back is never cut off).
            partialFrameSince = uv_now(loop.raw)
            loop.watch(self)
        }
    }

    /// Hands every complete frame to the handler, until it holds them; returns whether there was one. Each frame's bytes
    /// are taken off ``unframedBytes`` as the decoder yields it (an oversized frame's whole length: the
    /// body still to come makes the count negative, and the frame is partial until it has been skipped).
    private func handleDecodedFrames() -> Bool {
        var completed = false
        let error = handler.deliverFrames(
            on: self, logger: loop.logger,
            next: {
                guard self.isOpen, !self.requestsHeld, let event = self.decoder.next() else { return nil }
                switch event {
                case .frame(_, let body):
                    self.unframedBytes &-= FrameHeader.size &+ body.count
                    completed = true
                case .oversized(let header):
                    self.unframedBytes &-= FrameHeader.size &+ Int(header.length)
                    completed = true
                case .protocolError:
                    break
                }
                return event
            })
        if let error {
            // Whatever answers were queued before the bad header still go out if the socket takes them.
            flush()
            close(reason: "protocol error: \(error)", level: .warning)
        }
        return completed
    }

    private static let allocCallback: uv_alloc_cb = { raw, _, buffer in
        let connection = Unmanaged<Connection>.fromOpaque(raw!.pointee.data).takeUnretainedValue()
        let tail = connection.decoder.writableTail(minimumCount: minimumReadSize)
        buffer!.pointee = uv_buf_t(base: tail.baseAddress!.assumingMemoryBound(to: CChar.self), len: tail.count)
    }

    /// One read in this many is timed (`snapbackd_event_handling_seconds`), the first among them.
    static let handlingSample: UInt32 = 16
    /// Reads of this connection before the next timed one.
    private var readsUntilTimed: UInt32 = 1

    private static let readCallback: uv_read_cb = { stream, count, _ in
        let connection = Unmanaged<Connection>.fromOpaque(stream!.pointee.data).takeUnretainedValue()
        // `snapbackd_event_handling_seconds`: the time of one read callback, the batch of requests it
        // delivered with their answers written, which is what the other players wait for. Per read, not
        // per request, and one read in `handlingSample` of each connection: the two clock reads cost a
        // quarter of the histogram's budget on every round trip; sampled, a sixteenth of that, and a
        // player's reads are alike enough that the sample tells the spread.
        connection.readsUntilTimed &-= 1
        guard connection.readsUntilTimed == 0, let metrics = connection.loop.metrics else {
            connection.didRead(count)
            connection.loop.flushPending()
            return
        }
        connection.readsUntilTimed = Connection.handlingSample
        let start = TimerQueue.now()
        connection.didRead(count)
        connection.loop.flushPending()
        metrics.observe(.eventHandling, nanoseconds: TimerQueue.now() &- start)
    }
}

/// "5 s", "250 ms": a timeout for a log line.
func describeDuration(milliseconds: UInt64) -> String {
    milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
}
