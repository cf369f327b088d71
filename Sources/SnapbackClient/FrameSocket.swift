// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackWire

/// Why a ``FrameSocket`` call failed.
public enum FrameSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed with `errno`.
    case system(call: String, errno: Int32)
    case pathTooLong(String)
    /// No complete frame arrived in time.
    case timedOut
    /// The daemon closed the connection (end of file before a complete frame).
    case closedByPeer
    /// The daemon sent a header a client never accepts; the socket is unusable.
    case protocolError(FrameProtocolError)
    /// The daemon sent a frame longer than this socket's maximum; its body was skipped and the next
    /// frame can be read.
    case oversizedFrame(FrameHeader)
    /// The socket was closed by ``FrameSocket/close()``.
    case notConnected

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
        case .pathTooLong(let path): "socket path too long: \(path)"
        case .timedOut: "timed out waiting for a frame"
        case .closedByPeer: "the daemon closed the connection"
        case .protocolError(let error): "protocol error from the daemon: \(error)"
        case .oversizedFrame(let header): "frame over the size limit: \(header)"
        case .notConnected: "socket is closed"
        }
    }
}

/// A small blocking client for the daemon's Unix socket: write frames, read frames with a timeout.
/// The typed client, the command-line tool and the tests build on it. Not thread-safe.
public final class FrameSocket {
    public private(set) var fd: Int32
    private var decoder: FrameDecoder

    /// Connects to the daemon at `path`.
    ///
    /// - Parameters:
    ///   - maxFrameSize: longest body accepted from the daemon.
    ///   - sendTimeout: how long a write may block on a daemon that is not reading (nil: forever).
    public init(
        connectingTo path: String,
        maxFrameSize: Int = 16 << 20,
        sendTimeout: Duration? = .seconds(10)
    ) throws(FrameSocketError) {
        var address = sockaddr_un()
        guard !path.isEmpty, path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .pathTooLong(path)
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system(call: "connect \(path)", errno: code)
        }
        if let sendTimeout {
            let (seconds, attoseconds) = sendTimeout.components
            var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        self.fd = fd
        self.decoder = FrameDecoder(side: .client, maxFrameSize: maxFrameSize)
    }

    deinit {
        if fd >= 0 {
            Glibc.close(fd)
        }
    }

    // MARK: Writing

    /// Writes one frame; `header.length` is set from `body`.
    public func send(_ header: FrameHeader, body: [UInt8] = []) throws(FrameSocketError) {
        try sendRaw(Frame(header: header, body: body).encoded)
    }

    public func send(_ frame: Frame) throws(FrameSocketError) {
        try sendRaw(frame.encoded)
    }

    /// Writes bytes as they are: garbage, partial frames, several frames at once.
    public func sendRaw(_ bytes: [UInt8]) throws(FrameSocketError) {
        guard fd >= 0 else { throw .notConnected }
        let result: Result<Void, FrameSocketError> = bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                // MSG_NOSIGNAL: a daemon that hung up gives EPIPE instead of killing the caller.
                let written = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 {
                    if errno == EINTR { continue }
                    return .failure(
                        errno == EAGAIN || errno == EWOULDBLOCK
                            ? .timedOut : .system(call: "send", errno: errno))
                }
                offset += written
            }
            return .success(())
        }
        try result.get()
    }

    // MARK: Reading

    /// The next RESPONSE or PUSH frame.
    ///
    /// - Parameter timeout: how long to wait for a complete frame; nil waits forever, zero takes only
    ///   what has arrived (the socket is read once without waiting).
    /// - Throws: ``FrameSocketError/timedOut``, ``FrameSocketError/closedByPeer``, or what the decoder
    ///   found wrong.
    public func readFrame(timeout: Duration? = .seconds(5)) throws(FrameSocketError) -> Frame {
        guard fd >= 0 else { throw .notConnected }
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        var polled = false
        while true {
            if let event = decoder.next() {
                switch event {
                case .frame(let header, let body):
                    return Frame(header: header, body: body)
                case .oversized(let header):
                    throw .oversizedFrame(header)
                case .protocolError(let error):
                    throw .protocolError(error)
                }
            }
            if let error = decoder.protocolError {
                throw .protocolError(error)
            }
            var milliseconds: Int32 = -1
            if let deadline {
                let remaining = clock.now.duration(to: deadline)
                if remaining > .zero {
                    let (seconds, attoseconds) = remaining.components
                    milliseconds = Int32(
                        clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
                } else {
                    // Past the deadline: what the socket holds is still taken, once.
                    guard !polled else { throw .timedOut }
                    milliseconds = 0
                }
            }
            polled = true
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(call: "poll", errno: errno)
            }
            if ready == 0 { continue }  // the deadline check above decides
            let tail = decoder.writableTail(minimumCount: 4096)
            let count = recv(fd, tail.baseAddress, tail.count, 0)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == ECONNRESET { throw .closedByPeer }
                throw .system(call: "recv", errno: errno)
            }
            if count == 0 { throw .closedByPeer }
            decoder.commit(count)
        }
    }

    /// Waits until the daemon closes the connection, discarding frames meanwhile. True if it closed
    /// within `timeout`.
    public func waitForClose(timeout: Duration = .seconds(5)) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            do {
                _ = try readFrame(timeout: remaining)
            } catch .closedByPeer {
                return true
            } catch .oversizedFrame {
                continue
            } catch .timedOut {
                return false
            } catch {
                // A protocol error or a failed read: the connection is unusable, which counts as closed.
                return true
            }
        }
    }

    /// Closes the socket; later calls throw ``FrameSocketError/notConnected``.
    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
