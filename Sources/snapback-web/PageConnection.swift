// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackDaemon
import SnapbackWeb

/// One TCP connection from a browser: its HTTP request head, then — for an app's page — a WebSocket
/// carrying JSON-RPC, with a connection of its own to snapbackd (``DaemonLink``).
///
/// Every bound is the page's own: its request head (size and time), its frames and messages (size),
/// its message rate, its output queue, its silence (a ping, then a close if no pong comes). A page that
/// breaks one is closed with a close code and a reason it can read; no other page notices.
///
/// Loop-confined.
final class PageConnection {
    let id: UInt64
    private unowned let bridge: Bridge
    private let loop: EventLoop
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private let writer: StreamWriter
    private var limits: BridgeConfiguration
    private var timer: LoopTimer?

    /// Only forward: ``beginClosing(_:)`` is the one way into `.closing` and ``abort(_:level:)`` the one
    /// way into `.closed` and the one `uv_close` of the socket. A write or a link that fails while the
    /// connection is closing (the page reset it as its close was echoed, snapbackd went as the page did)
    /// ends in ``abort(_:level:)`` from inside another close; neither step may then run again, nor
    /// `.closed` be taken back to `.closing` (libuv aborts on a handle closed twice).
    enum State {
        /// Reading the request head.
        case handshake([UInt8])
        /// Upgraded for the app at this index; reading waits for the link's Hello.
        case open(appIndex: Int)
        /// A close frame was sent (the peer's answer is awaited until the linger deadline), or a plain
        /// response is being written.
        case closing
        case closed
    }
    private(set) var state: State = .handshake([])
    private(set) var appIndex: Int?
    private var decoder: WebSocketDecoder
    private var rate: MessageRate
    private(set) var link: DaemonLink?
    private(set) var rpc: PageRPC?
    private var reading = false
    /// Loop time of the last frame from the page, and of the ping sent since, if any.
    private var lastHeard: UInt64
    private var pingSentAt: UInt64?
    private let acceptedAt: UInt64
    private var lingerUntil: UInt64?
    /// What the page is told when it is closed (the log line too).
    private var closeReason = ""

    /// How long a close frame waits for the page's own before the socket is closed anyway.
    private static let lingerMilliseconds: UInt64 = 1000
    private static let maxHeadBytes = 8192
    /// How much of the request head ``HTTPRequestHead/parse(_:maxHeadBytes:scanned:)`` has looked at.
    private var headScanned = 0

    init(id: UInt64, bridge: Bridge, loop: EventLoop, handle: UnsafeMutablePointer<uv_tcp_t>, limits: BridgeConfiguration) {
        self.id = id
        self.bridge = bridge
        self.loop = loop
        self.handle = handle
        self.limits = limits
        writer = StreamWriter(stream: asStream(handle), maxQueued: limits.maxOutboundBytes)
        decoder = WebSocketDecoder(maxFrameSize: limits.maxFrameSize, maxMessageSize: limits.maxMessageSize)
        let now = uv_now(loop.raw)
        rate = MessageRate(perSecond: limits.messagesPerSecond, burst: limits.messageBurst, now: now)
        lastHeard = now
        acceptedAt = now
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        writer.setErrorHandler { [unowned self] reason in self.abort("\(reason)") }
    }

    func start() {
        timer = LoopTimer(loop: loop) { [unowned self] in self.timerFired() }
        armTimer()
        startReading()
    }

    private var now: UInt64 { uv_now(loop.raw) }
    var logger: Logger { loop.logger }

    // MARK: Reading

    private func startReading() {
        guard !reading else { return }
        reading = true
        let result = uv_read_start(
            asStream(handle),
            { _, suggested, buffer in
                let size = min(Int(suggested), 64 * 1024)
                buffer!.pointee = uv_buf_t(base: UnsafeMutablePointer<CChar>.allocate(capacity: size), len: size)
            },
            { stream, count, buffer in
                let page = Unmanaged<PageConnection>.fromOpaque(stream!.pointee.data).takeUnretainedValue()
                let base = buffer!.pointee.base
                if count > 0 {
                    page.didRead(UnsafeRawBufferPointer(start: base, count: count))
                } else if count < 0 {
                    page.abort(
                        isUVError(count, UV_EOF)
                            ? "page closed the connection" : "read failed: \(uvErrorDescription(Int32(count)))", level: .debug)
                }
                base?.deallocate()
            })
        if result != 0 { abort("uv_read_start: \(uvErrorDescription(result))") }
    }

    private func stopReading() {
        guard reading else { return }
        reading = false
        uv_read_stop(asStream(handle))
    }

    private func didRead(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .handshake(var head):
            head += bytes
            state = .handshake(head)
            readHead(head)
        case .open, .closing:
            if discardingInput { return }
            lastHeard = now
            pingSentAt = nil
            decoder.append(bytes)
            deliverFrames()
        case .closed:
            break
        }
    }

    private func readHead(_ head: [UInt8]) {
        let parsed = head.withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: Self.maxHeadBytes, scanned: &headScanned) }
        switch parsed {
        case .needMore: return
        case .invalid(let status, let reason):
            respondAndClose(
                Handshake.response(
                    status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array((reason + "\n").utf8)),
                refusal: reason)
        case .complete(let request, let consumed):
            // The apps in force now (a reload may have changed them since this page was accepted).
            switch Handshake.decide(request, configuration: bridge.configuration, files: bridge.files) {
            case .respond(let response, let refusal):
                respondAndClose(
                    response,
                    refusal: refusal.map {
                        "\($0) (\(request.method) \(request.path), Origin \(request.single("origin").value ?? "none"))"
                    })
            case .upgrade(let index, let response):
                upgraded(appIndex: index, response: response, leftover: Array(head[consumed...]))
            }
        }
    }

    private func respondAndClose(_ response: [UInt8], refusal: String?) {
        guard beginClosing("") else { return }
        stopReading()
        if let refusal { loop.logger.notice("page \(id) refused: \(refusal)") }
        if let error = writer.write(response) {
            abort(error, level: .debug)
            return
        }
        writer.whenDrained { [unowned self] in self.abort("response written", level: .debug) }
        lingerUntil = now + Self.lingerMilliseconds
        armTimer()
    }

    private func upgraded(appIndex index: Int, response: [UInt8], leftover: [UInt8]) {
        state = .open(appIndex: index)
        appIndex = index
        lastHeard = now
        let app = bridge.configuration.apps[index]
        if let error = writer.write(response) {
            abort(error, level: .debug)
            return
        }
        // Quotas are told as close codes, which a page can read (a refused upgrade is only "1006").
        if let refusal = bridge.admit(self, appIndex: index) {
            closeWebSocket(.tryAgainLater, refusal)
            return
        }
        loop.logger.info("page \(id) of app \(app.name) connected")
        stopReading()
        if !leftover.isEmpty { decoder.append(leftover) }
        rpc = PageRPC(page: self, app: app, maxMessageSize: limits.maxMessageSize, worker: bridge.worker)
        link = DaemonLink(loop: loop, socketPath: limits.daemonSocket, clientName: "snapback-web \(app.name)") {
            [unowned self] event in
            self.linkEvent(event)
        }
        armTimer()
    }

    /// A reload's `[limits]`, for what the page does from now on: its message rate (the bucket as it is,
    /// capped at the new burst), frame and message sizes, output queue, ping and pong times, and the
    /// handshake time of a page still in its handshake.
    func apply(limits new: BridgeConfiguration) {
        limits = new
        rate.retune(perSecond: new.messagesPerSecond, burst: new.messageBurst)
        decoder.maxFrameSize = new.maxFrameSize
        decoder.maxMessageSize = new.maxMessageSize
        writer.maxQueued = new.maxOutboundBytes
        rpc?.apply(maxMessageSize: new.maxMessageSize)
        armTimer()
    }

    /// A reload kept this page's app, unchanged, at another index of the new configuration's apps.
    func reassign(appIndex index: Int) {
        if case .open = state { state = .open(appIndex: index) }
        appIndex = index
    }

    private func linkEvent(_ event: DaemonLink.Event) {
        switch event {
        case .ready:
            guard case .open = state else { return }
            startReading()
            deliverFrames()
        case .response(let header, let body):
            rpc?.daemonResponse(header, body: body)
        case .push(let header, let body):
            rpc?.daemonPush(header, body: body)
        case .failed(let reason):
            link = nil
            closeWebSocket(.internalError, "snapbackd: \(reason)")
        }
    }

    /// Messages handled in one turn of the loop at most: a page that sent many at once (a read takes up
    /// to 64 KiB) has the rest handled in the next turns, after the other pages' input.
    private static let messagesPerTurn = 16
    /// Resumes a page that used its turn.
    private var turnTimer: LoopTimer?

    private func deliverFrames() {
        // Frames wait in the decoder until the link is ready.
        var handled = 0
        while reading, !discardingInput, let event = decoder.next() {
            switch event {
            case .text(let message):
                guard case .open = state else { continue }
                handled += 1
                if handled == Self.messagesPerTurn {
                    yieldTurn()
                }
                guard rate.admit(now: now) else {
                    closeWebSocket(
                        .policyViolation,
                        "more than \(limits.messagesPerSecond) messages per second (burst \(limits.messageBurst))")
                    return
                }
                rpc?.received(message)
            case .binary:
                closeWebSocket(.unsupportedData, "binary messages are not accepted: send JSON-RPC text")
            case .ping(let payload):
                sendFrame(.pong, payload)
            case .pong:
                break
            case .close(let code, _):
                if case .closing = state {
                    abort("closed: \(closeReason)", level: .info)
                } else if beginClosing("page closed the WebSocket (\(code.map(String.init) ?? "no code"))") {
                    // Echo the code (§5.5.1), then close once it is written (at once if the echo failed).
                    stopReading()
                    let payload = code.map { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] } ?? []
                    sendFrame(.close, payload)
                    writer.whenDrained { [unowned self] in self.abort(self.closeReason, level: .info) }
                    // A page that stops reading never lets the echo drain: it must not hold its slot.
                    guard case .closing = state else { return }
                    lingerUntil = now + Self.lingerMilliseconds
                    armTimer()
                }
                return
            case .failure(let code, let reason):
                closeWebSocket(code, reason)
                return
            }
        }
    }

    /// Stops reading until the next turn of the loop, when the frames left in the decoder are handled.
    private func yieldTurn() {
        stopReading()
        let timer =
            turnTimer
            ?? LoopTimer(loop: loop) { [unowned self] in
                guard case .open = self.state else { return }
                self.startReading()
                self.deliverFrames()
            }
        turnTimer = timer
        timer.start(after: 0)
    }

    // MARK: Sending

    /// Sends a text message to the page.
    func sendText(_ message: [UInt8]) {
        guard case .open = state else { return }
        sendFrame(.text, message)
    }

    private func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        var frame: [UInt8] = []
        WebSocketFrame.encode(opcode, payload: payload, into: &frame)
        if let error = writer.write(frame) { abort(error, level: .warning) }
    }

    /// Sends a close frame with `code` and `reason`. A page that broke a rule is failed (RFC 6455 §7.1.7):
    /// nothing more is read from it and the socket closes once the frame is written, so a flooder costs
    /// nothing after its limit. Otherwise the socket closes when the page answers, or after the linger time.
    func closeWebSocket(_ code: WebSocketCloseCode, _ reason: String) {
        guard case .open = state, beginClosing("\(code.rawValue) \(reason)") else { return }
        loop.logger.log(code == .normal || code == .goingAway ? .info : .notice, "page \(id) closed: \(closeReason)")
        sendFrame(.close, WebSocketFrame.closePayload(code, reason: reason))
        closeLink()
        // The close frame's write failed: the socket is closed already.
        guard case .closing = state else { return }
        lingerUntil = now + Self.lingerMilliseconds
        armTimer()
        switch code {
        case .normal, .goingAway, .tryAgainLater, .internalError, .serviceRestart:
            break
        default:
            // What the page goes on sending is read and dropped, undecoded, until it closes or the
            // linger ends: closing with unread input would reset the connection, and the page would
            // lose the close frame (and see 1006, not why).
            discardingInput = true
            writer.whenDrained { [unowned self] in self.shutdownOutput() }
        }
    }

    /// Set once the page failed: its input is dropped unread.
    private var discardingInput = false

    /// Half-closes the socket once the close frame is written: the page sees the end of the stream.
    private func shutdownOutput() {
        guard case .closing = state else { return }
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        if uv_shutdown(request, asStream(handle), { request, _ in request!.deallocate() }) != 0 {
            request.deallocate()
        }
    }

    private func closeLink() {
        link?.close()
        link = nil
        rpc?.close()
        rpc = nil
    }

    /// The one way into `.closing`: false once the connection is closing or closed, so that a second
    /// close (the page's close frame read while the bridge's own was being sent, a write failing in the
    /// middle of a close) does nothing.
    private func beginClosing(_ reason: String) -> Bool {
        switch state {
        case .handshake, .open:
            state = .closing
            closeReason = reason
            return true
        case .closing, .closed:
            return false
        }
    }

    /// Closes the socket now; the one `uv_close` of it, whichever path comes here first (again: nothing).
    func abort(_ reason: String, level: Logger.Level = .info) {
        if case .closed = state { return }
        state = .closed
        // libuv stops reading a closing handle; the frames left in the decoder are not handled.
        reading = false
        loop.logger.log(level, "page \(id) connection closed: \(reason)")
        closeLink()
        timer?.close()
        timer = nil
        turnTimer?.close()
        turnTimer = nil
        writer.detach()
        uv_close(asHandle(handle)) { raw in
            let handle = UnsafeMutablePointer<uv_tcp_t>(OpaquePointer(raw!))
            let page = Unmanaged<PageConnection>.fromOpaque(handle.pointee.data).takeRetainedValue()
            page.bridge.remove(page)
            handle.deallocate()
        }
    }

    // MARK: Time

    /// The next deadline: the handshake's, the linger's, or the next ping or pong check.
    private var deadline: UInt64? {
        switch state {
        case .handshake: acceptedAt + limits.handshakeTimeoutMilliseconds
        case .closing: lingerUntil
        case .open: pingSentAt.map { $0 + limits.pongTimeoutMilliseconds } ?? lastHeard + limits.pingIntervalMilliseconds
        case .closed: nil
        }
    }

    private func armTimer() {
        guard let deadline, let timer else { return }
        let now = self.now
        timer.start(after: deadline > now ? deadline - now : 0)
    }

    private func timerFired() {
        uv_update_time(loop.raw)
        let now = self.now
        switch state {
        case .handshake:
            if now >= acceptedAt + limits.handshakeTimeoutMilliseconds {
                respondAndClose(
                    Handshake.response(408, headers: [], body: Array("no complete request within the handshake timeout\n".utf8)),
                    refusal: "no complete request head within \(limits.handshakeTimeoutMilliseconds) ms")
                return
            }
        case .closing:
            if let lingerUntil, now >= lingerUntil {
                let why = closeReason.isEmpty ? "response written" : closeReason
                let unread = writer.queuedCount
                abort(
                    unread > 0
                        ? "closed (\(why); \(unread) bytes still unread by the page after \(Self.lingerMilliseconds) ms)"
                        : "closed (\(why); no answer within \(Self.lingerMilliseconds) ms)",
                    level: .debug)
                return
            }
        case .open:
            if let pingSentAt {
                if now >= pingSentAt + limits.pongTimeoutMilliseconds {
                    closeWebSocket(.policyViolation, "no pong within \(limits.pongTimeoutMilliseconds) ms of a ping")
                    return
                }
            } else if now >= lastHeard + limits.pingIntervalMilliseconds {
                pingSentAt = now
                sendFrame(.ping, [])
            }
        case .closed:
            return
        }
        armTimer()
    }
}
