// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// Why a call failed: the daemon answered a status, or the socket failed.
public enum SnapbackClientError: Error, Equatable, CustomStringConvertible {
    /// The daemon answered a non-OK status.
    case status(StatusCode, String)
    case socket(FrameSocketError)
    /// A reply that does not decode as the method's message.
    case malformedReply(String)

    public var description: String {
        switch self {
        case .status(let code, let message): return "\(code.name): \(message)"
        case .socket(let error): return "\(error)"
        case .malformedReply(let why): return "malformed reply: \(why)"
        }
    }

    /// The status code, when the daemon answered one.
    public var code: StatusCode? {
        if case .status(let code, _) = self { return code }
        return nil
    }
}

/// A blocking client of snapbackd: connects, says Hello, makes calls and collects the pushes that
/// arrive on the sessions it opened. Used by the `snapback` tool, the demo, the benchmarks and the
/// integration tests. Not thread-safe.
public final class SnapbackClient {
    public let socket: FrameSocket
    public let hello: SnapbackV1.HelloReply
    private var nextCallId: UInt32 = 1
    /// Pushes received and not yet taken, in arrival order.
    public private(set) var pendingPushes: [WirePushMessage] = []
    /// Decisions of this connection's WatchDecisions stream received and not yet taken.
    public private(set) var pendingDecisions: [SnapbackV1.Decision] = []
    /// Changes of this connection's Sync/WatchChanges stream received and not yet taken.
    public private(set) var pendingChanges: [SyncChange] = []
    public var timeout: Duration

    /// Connects to `path` and performs the Hello exchange.
    public init(socketPath path: String, clientName: String = "snapback", timeout: Duration = .seconds(5))
        throws(SnapbackClientError)
    {
        do {
            socket = try FrameSocket(connectingTo: path)
        } catch {
            throw .socket(error)
        }
        self.timeout = timeout
        var tmp: SnapbackV1.HelloReply?
        // `self` is not fully initialised yet: do the Hello call by hand.
        let request = WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: clientName))
        do {
            // A daemon that refuses the connection answers before any request and hangs up: the send
            // may then fail (EPIPE) while its answer is still there to read.
            var sendError: FrameSocketError?
            do {
                try socket.send(.request(callId: 1, method: request.method.rawValue), body: request.encoded())
            } catch {
                sendError = error
            }
            while tmp == nil {
                let frame: Frame
                do {
                    frame = try socket.readFrame(timeout: timeout)
                } catch {
                    throw sendError ?? error
                }
                // Call id 0: the daemon refused the connection (allow-list, connection limits).
                guard frame.header.type == .response, frame.header.callId == 1 || frame.header.callId == 0 else { continue }
                if frame.header.status != 0 {
                    let status = (try? WireStatus.decode(frame.body)) ?? WireStatus(code: .unknown, message: "")
                    throw SnapbackClientError.status(StatusCode(rawValue: frame.header.status) ?? .unknown, status.message)
                }
                tmp = try SnapbackV1.HelloReply.decode(frame.body)
            }
        } catch let error as SnapbackClientError {
            throw error
        } catch let error as FrameSocketError {
            throw .socket(error)
        } catch {
            throw .malformedReply("\(error)")
        }
        hello = tmp!
        nextCallId = 2
    }

    deinit { socket.close() }

    public func close() { socket.close() }

    /// Sends `request` and waits for its reply, decoded as `Reply`. Pushes that arrive meanwhile are
    /// kept in `pendingPushes` (the daemon writes an event's pushes before its reply).
    @discardableResult
    public func call<Reply: WireMessage>(_ request: WireRequest, as _: Reply.Type = Reply.self) throws(SnapbackClientError)
        -> Reply
    {
        let body = try rawCall(method: request.method.rawValue, body: request.encoded())
        do {
            return try body.withUnsafeBytes { (raw) throws(WireError) in try Reply.decode(raw) }
        } catch {
            throw .malformedReply("\(request.method.name): \(error)")
        }
    }

    /// Sends an arbitrary method and body (tests use it for bad input); returns the OK reply's body.
    public func rawCall(method: UInt16, body: [UInt8]) throws(SnapbackClientError) -> [UInt8] {
        let callId = nextCallId
        nextCallId = nextCallId == UInt32.max ? 1 : nextCallId + 1
        do {
            try socket.send(.request(callId: callId, method: method), body: body)
        } catch {
            throw .socket(error)
        }
        while true {
            let frame = try readFrame(timeout: timeout)
            switch frame.header.type {
            case .push:
                try keepPush(frame)
            case .response where frame.header.callId == callId || frame.header.callId == 0:
                // Call id 0 is the daemon refusing the connection; it closes it next.
                if frame.header.status != 0 {
                    let code = StatusCode(rawValue: frame.header.status) ?? .unknown
                    let message = (try? WireStatus.decode(frame.body))?.message ?? ""
                    throw .status(code, message)
                }
                return frame.body
            default:
                continue  // a late reply to an abandoned call
            }
        }
    }

    private func readFrame(timeout: Duration) throws(SnapbackClientError) -> Frame {
        do {
            return try socket.readFrame(timeout: timeout)
        } catch {
            throw .socket(error)
        }
    }

    private func keepPush(_ frame: Frame) throws(SnapbackClientError) {
        if frame.header.method == WireMethod.watchChanges.rawValue {
            do {
                pendingChanges.append(try frame.body.withUnsafeBytes { (raw) throws(WireError) in try SyncChange.decode(raw) })
            } catch {
                throw .malformedReply("change: \(error)")
            }
            return
        }
        if frame.header.method == WireMethod.watchDecisions.rawValue {
            do {
                pendingDecisions.append(
                    try frame.body.withUnsafeBytes { (raw) throws(WireError) in try SnapbackV1.Decision.decode(raw) })
            } catch {
                throw .malformedReply("decision: \(error)")
            }
            return
        }
        do {
            let push = try frame.body.withUnsafeBytes { (raw) throws(WireError) in try WirePushMessage.decode(raw) }
            pendingPushes.append(push)
        } catch {
            throw .malformedReply("push: \(error)")
        }
    }

    /// Takes the pushes received so far.
    public func takePushes() -> [WirePushMessage] {
        defer { pendingPushes = [] }
        return pendingPushes
    }

    /// Waits for the next push (a timer's, or a bookmark the store acknowledged later).
    public func nextPush(timeout: Duration) throws(SnapbackClientError) -> WirePushMessage {
        if !pendingPushes.isEmpty { return pendingPushes.removeFirst() }
        while true {
            let frame = try readFrame(timeout: timeout)
            if frame.header.type == .push {
                try keepPush(frame)
                return pendingPushes.removeFirst()
            }
        }
    }

    /// Subscribes this connection to the daemon's decisions (Control/WatchDecisions): `sessionId` 0 and
    /// `contentId` "" for every session. Read them with ``nextDecision(timeout:)``.
    public func watchDecisions(sessionId: UInt64 = 0, contentId: String = "") throws(SnapbackClientError) {
        let request = WireRequest.watchDecisions(sessionId: sessionId, contentId: contentId)
        _ = try rawCall(method: request.method.rawValue, body: request.encoded())
    }

    /// The next decision of the watch stream; nil timeout waits for as long as it takes.
    public func nextDecision(timeout: Duration?) throws(SnapbackClientError) -> SnapbackV1.Decision {
        while pendingDecisions.isEmpty {
            let frame: Frame
            do {
                frame = try socket.readFrame(timeout: timeout)
            } catch {
                throw .socket(error)
            }
            if frame.header.type == .push { try keepPush(frame) }
        }
        return pendingDecisions.removeFirst()
    }

    /// Subscribes this connection to the store's changes after `after` (Sync/WatchChanges). Returns the
    /// box's device id; read the changes with ``nextChange(timeout:)``.
    public func watchChanges(after: UInt64 = 0) throws(SnapbackClientError) -> SnapbackV1.WatchChangesReply {
        let request = WireRequest.watchChanges(after: after)
        let body = try rawCall(method: request.method.rawValue, body: request.encoded())
        do {
            return try SnapbackV1.WatchChangesReply.decode(body)
        } catch {
            throw .malformedReply("\(request.method.name): \(error)")
        }
    }

    /// The next change of the change stream; nil timeout waits for as long as it takes.
    public func nextChange(timeout: Duration?) throws(SnapbackClientError) -> SyncChange {
        while pendingChanges.isEmpty {
            let frame: Frame
            do {
                frame = try socket.readFrame(timeout: timeout)
            } catch {
                throw .socket(error)
            }
            if frame.header.type == .push { try keepPush(frame) }
        }
        return pendingChanges.removeFirst()
    }

    // MARK: Conveniences

    /// Opens a session; returns the reply (its pushes are in `pendingPushes`).
    public func openSession(_ request: OpenSessionRequest) throws(SnapbackClientError) -> SnapbackV1.OpenSessionReply {
        try call(.openSession(request))
    }

    /// Sends one event of a session; returns the pushes it caused.
    @discardableResult
    public func send(_ event: TimelineEvent, session: UInt64) throws(SnapbackClientError) -> [WirePushMessage] {
        let _: SnapbackV1.EventReply = try call(.event(sessionId: session, event))
        return takePushes()
    }

    /// Closes a session; returns the pushes it caused (the final bookmark).
    @discardableResult
    public func closeSession(_ session: UInt64) throws(SnapbackClientError) -> [WirePushMessage] {
        let _: SnapbackV1.EventReply = try call(.closeSession(sessionId: session))
        return takePushes()
    }
}
