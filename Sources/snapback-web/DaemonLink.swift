// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackDaemon
import SnapbackWire

/// A page's own connection to snapbackd: connected when the page's WebSocket opens, closed with it, so the
/// daemon ends the page's sessions (and saves their bookmarks) when the page goes. It says Hello, then
/// carries requests and hands back replies by call id and pushes as they come.
///
/// Loop-confined.
final class DaemonLink {
    /// What the link tells its page.
    enum Event {
        case ready
        case response(FrameHeader, [UInt8])
        case push(FrameHeader, [UInt8])
        /// The link is gone (refused, failed or closed by the daemon): the page must close.
        case failed(String)
    }

    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let connectRequest: UnsafeMutablePointer<uv_connect_t>
    private let logger: Logger
    private let clientName: String
    private var decoder = FrameDecoder(side: .client, maxFrameSize: 1 << 20)
    private let writer: StreamWriter
    private var onEvent: ((Event) -> Void)?
    private var isReady = false
    private var isClosed = false
    private var nextCallId: UInt32 = 2

    init(loop: EventLoop, socketPath: String, clientName: String, onEvent: @escaping (Event) -> Void) {
        logger = loop.logger
        self.clientName = clientName
        self.onEvent = onEvent
        handle = .allocate(capacity: 1)
        connectRequest = .allocate(capacity: 1)
        uv_pipe_init(loop.raw, handle, 0)
        writer = StreamWriter(stream: asStream(handle), maxQueued: 8 << 20)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        connectRequest.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_pipe_connect(connectRequest, handle, socketPath) { request, status in
            let link = Unmanaged<DaemonLink>.fromOpaque(request!.pointee.data).takeUnretainedValue()
            link.connected(status: status)
        }
    }

    /// Sends a request; returns its call id (nil when the link is not ready or its output is full).
    func send(method: UInt16, body: [UInt8]) -> UInt32? {
        guard isReady, !isClosed else { return nil }
        let callId = nextCallId
        nextCallId = nextCallId == UInt32.max ? 2 : nextCallId + 1
        var frame: [UInt8] = []
        FrameHeader.request(callId: callId, method: method, length: UInt32(body.count)).encode(into: &frame)
        frame += body
        guard writer.write(frame) == nil else {
            fail("snapbackd is not reading (output queue full)")
            return nil
        }
        return callId
    }

    private func connected(status: Int32) {
        guard !isClosed else { return }
        guard status == 0 else {
            fail("cannot connect to snapbackd: \(uvErrorDescription(status))")
            return
        }
        let hello = WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: clientName))
        var frame: [UInt8] = []
        let body = hello.encoded()
        FrameHeader.request(callId: 1, method: hello.method.rawValue, length: UInt32(body.count)).encode(into: &frame)
        if let error = writer.write(frame + body) {
            fail("writing Hello to snapbackd: \(error)")
            return
        }
        let result = uv_read_start(
            asStream(handle),
            { raw, _, buffer in
                let link = Unmanaged<DaemonLink>.fromOpaque(raw!.pointee.data).takeUnretainedValue()
                let tail = link.decoder.writableTail(minimumCount: 4096)
                buffer!.pointee = uv_buf_t(base: tail.baseAddress!.assumingMemoryBound(to: CChar.self), len: tail.count)
            },
            { stream, count, _ in
                let link = Unmanaged<DaemonLink>.fromOpaque(stream!.pointee.data).takeUnretainedValue()
                link.didRead(count)
            })
        if result != 0 { fail("uv_read_start: \(uvErrorDescription(result))") }
    }

    private func didRead(_ count: Int) {
        guard !isClosed else { return }
        if count < 0 {
            fail(
                isUVError(count, UV_EOF)
                    ? "snapbackd closed the connection" : "reading from snapbackd: \(uvErrorDescription(Int32(count)))")
            return
        }
        decoder.commit(count)
        while !isClosed, let event = decoder.next() {
            switch event {
            case .frame(let header, let body):
                let bytes = Array(body)
                if !isReady {
                    // Call id 0: snapbackd refused the connection (its allow-list or limits); else Hello's answer.
                    guard header.type == .response, header.callId == 1 || header.callId == 0 else { continue }
                    guard header.status == 0 else {
                        let status = (try? WireStatus.decode(body))?.message ?? ""
                        fail(
                            "snapbackd refused the connection: \(StatusCode(rawValue: header.status).map { "\($0)" } ?? "\(header.status)") \(status)"
                        )
                        return
                    }
                    isReady = true
                    onEvent?(.ready)
                } else if header.type == .push {
                    onEvent?(.push(header, bytes))
                } else {
                    onEvent?(.response(header, bytes))
                }
            case .oversized(let header):
                fail("snapbackd sent a \(header.length)-byte frame, over the bridge's limit")
            case .protocolError(let error):
                fail("protocol error from snapbackd: \(error)")
            }
        }
    }

    private func fail(_ reason: String) {
        guard !isClosed else { return }
        let onEvent = self.onEvent
        close()
        onEvent?(.failed(reason))
    }

    /// Closes the connection (snapbackd closes the page's sessions); no event follows.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        onEvent = nil
        writer.detach()
        uv_close(asHandle(handle)) { raw in
            let handle = UnsafeMutablePointer<uv_pipe_t>(OpaquePointer(raw!))
            let link = Unmanaged<DaemonLink>.fromOpaque(handle.pointee.data).takeRetainedValue()
            link.connectRequest.deallocate()
            handle.deallocate()
        }
    }
}

/// Writes to a libuv stream: what the socket takes at once, the rest through one `uv_write` at a time,
/// with what is sent meanwhile queued behind it, up to `maxQueued` bytes.
final class StreamWriter {
    private let stream: UnsafeMutablePointer<uv_stream_t>
    var maxQueued: Int
    private var queued: [UInt8] = []
    private var inFlight: [UInt8] = []
    private var writing = false
    private var detached = false
    private var onDrained: (() -> Void)?
    private var onError: ((String) -> Void)?
    private let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)

    init(stream: UnsafeMutablePointer<uv_stream_t>, maxQueued: Int) {
        self.stream = stream
        self.maxQueued = maxQueued
    }

    deinit { request.deallocate() }

    var queuedCount: Int { queued.count + inFlight.count }
    var isIdle: Bool { !writing && queued.isEmpty }

    /// Calls `body` once everything queued is written (for a close after the last frame).
    func whenDrained(_ body: @escaping () -> Void) {
        if isIdle { body() } else { onDrained = body }
    }

    /// Called when a queued write fails.
    func setErrorHandler(_ body: @escaping (String) -> Void) { onError = body }

    /// Stops calling back: the stream is closing (libuv cancels the write in flight).
    func detach() {
        detached = true
        onDrained = nil
        onError = nil
    }

    /// Writes or queues `bytes`; returns why not when the stream failed or the queue is full.
    func write(_ bytes: [UInt8]) -> String? {
        guard !detached else { return "closed" }
        if writing {
            guard queuedCount + bytes.count <= maxQueued else {
                return "peer is not reading: \(queuedCount) bytes queued, limit \(maxQueued)"
            }
            queued += bytes
            return nil
        }
        let written = bytes.withUnsafeBytes { raw -> Int32 in
            var buffer = uv_buf_t(
                base: UnsafeMutablePointer(mutating: raw.baseAddress!.assumingMemoryBound(to: CChar.self)), len: raw.count)
            return uv_try_write(stream, &buffer, 1)
        }
        if Int(written) == bytes.count { return nil }
        if written < 0 && !isUVError(written, UV_EAGAIN) { return "write failed: \(uvErrorDescription(written))" }
        inFlight = Array(bytes.dropFirst(max(Int(written), 0)))
        return startWrite()
    }

    private func startWrite() -> String? {
        writing = true
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let result = inFlight.withUnsafeMutableBytes { raw -> Int32 in
            var buffer = uv_buf_t(base: raw.baseAddress!.assumingMemoryBound(to: CChar.self), len: raw.count)
            return uv_write(request, stream, &buffer, 1) { request, status in
                Unmanaged<StreamWriter>.fromOpaque(request!.pointee.data).takeRetainedValue().written(status: status)
            }
        }
        if result != 0 {
            Unmanaged<StreamWriter>.fromOpaque(request.pointee.data).release()
            writing = false
            return "uv_write: \(uvErrorDescription(result))"
        }
        return nil
    }

    private func written(status: Int32) {
        writing = false
        inFlight = []
        guard !detached else { return }
        if status < 0 {
            onError?("write failed: \(uvErrorDescription(status))")
            return
        }
        if !queued.isEmpty {
            inFlight = queued
            queued = []
            if let error = startWrite() { onError?(error) }
        } else if let drained = onDrained {
            onDrained = nil
            drained()
        }
    }
}
