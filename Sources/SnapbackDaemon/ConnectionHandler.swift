// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// What the daemon does with connections and frames: the RPC service implements it. Every method is
/// called on the loop thread, from a libuv callback; frames the implementation sends from these
/// methods are written together when the callback returns.
public protocol ConnectionHandler: AnyObject {
    /// A client connected; its peer credentials are in `connection.peer`. Reading starts after this
    /// returns, so closing the connection here (access control) refuses the peer before any request.
    func connectionOpened(_ connection: any PeerPort)

    /// A complete REQUEST frame (the header was validated: type REQUEST, status 0, call id non-zero).
    /// `body` points into the connection's read buffer and is valid only during this call. Once the
    /// peer's Hello is accepted the handler calls `connection.completeHandshake()`; a connection that
    /// has not by its Hello timeout is closed.
    func frameReceived(_ header: FrameHeader, body: UnsafeRawBufferPointer, on connection: any PeerPort)

    /// A REQUEST announced a body longer than the maximum frame size. The connection discards the body
    /// as it arrives; the handler answers RESOURCE_EXHAUSTED with `header.callId`.
    func oversizedFrame(_ header: FrameHeader, on connection: any PeerPort)

    /// The connection is gone, cleanly or not, and can no longer send; the handler closes its sessions.
    /// Called exactly once, from the handle's close callback (never from inside `close(reason:)`).
    func connectionClosed(_ connection: any PeerPort)

    /// SIGTERM or SIGINT: called after the listener stopped accepting and before the connections are
    /// drained, so the handler can still send final frames.
    func shutdown()
}

/// Implemented by a handler that follows the configuration. The daemon calls it on the loop thread:
/// once at start, after the socket is bound or adopted and before any connection (the socket's group is
/// known then: ``DaemonConfiguration/socketGroup``), and after every SIGHUP that loaded a valid
/// configuration. What it changes applies to what is opened afterwards: open connections and sessions
/// keep what they have.
public protocol ConfigurationReloading: AnyObject {
    func apply(_ configuration: DaemonConfiguration)
}

extension ConnectionHandler {
    /// Hands each complete request `next` decodes to the handler, in order — the one read path of every
    /// ``PeerPort`` (the socket's and the embedded one). `next` answers nil when no frame is complete or
    /// the port stopped reading. Returns the framing error that stopped it, after which the port must
    /// close: the stream cannot be resynchronised. (The decoder is reached through `next`, one short
    /// access per frame, because the handler may read the port — its `maxFrameSize` — while it works.)
    package func deliverFrames(
        on port: any PeerPort, logger: Logger,
        next: () -> FrameDecoder.Event?
    ) -> FrameProtocolError? {
        while let event = next() {
            switch event {
            case .frame(let header, let body):
                frameReceived(header, body: body, on: port)
            case .oversized(let header):
                logger.debug(
                    "connection \(port.id): \(header.length)-byte request over the \(port.maxFrameSize)-byte limit, body discarded"
                )
                oversizedFrame(header, on: port)
            case .protocolError(let error):
                return error
            }
        }
        return nil
    }
}
