// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackWire

/// The listening Unix socket: accepts clients and turns each into a ``Connection``.
///
/// The socket is watched with a `uv_poll_t` and accepted with `accept4` here rather than through
/// `uv_listen`: when accept fails for lack of descriptors (EMFILE, ENFILE), libuv silently accepts and
/// closes every waiting peer (its own reserve descriptor trick), so the peer sees a reset and nobody a
/// log line. Here the listener keeps a descriptor in reserve (an open `/dev/null`): at the limit it
/// closes it, accepts, writes the peer the same RESOURCE_EXHAUSTED refusal as any other limit, closes,
/// and reopens the reserve — which also empties the backlog, so the level-triggered poll does not call
/// back again and again. One warning per shortage, one notice when connections are served again. If the
/// reserve cannot be had back (another thread took the descriptor), the poll is paused and retried on a
/// timer instead of spinning.
public final class Listener {
    /// Why the listener could not start.
    public enum Failure: Error, CustomStringConvertible {
        case pathTooLong(String)
        case notASocket(String)
        case alreadyInUse(String)
        case system(call: String, path: String, errno: Int32)
        case libuv(LibUVError)

        public var description: String {
            switch self {
            case .pathTooLong(let path):
                "socket path is too long (at most \(Listener.maxPathLength) bytes): \(path)"
            case .notASocket(let path):
                "\(path) exists and is not a socket; refusing to replace it"
            case .alreadyInUse(let path):
                "another daemon is already listening on \(path)"
            case .system(let call, let path, let code):
                "\(call) \(path): \(String(cString: strerror(code)))"
            case .libuv(let error):
                error.description
            }
        }
    }

    /// `sun_path` holds 108 bytes including the terminating NUL.
    public static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The socket path, if this listener created the socket (and so removes it when closing).
    public let path: String?
    private let loop: EventLoop
    /// The listening socket.
    private let fd: Int32
    /// Watches `fd` for peers waiting to be accepted.
    private let poll: UnsafeMutablePointer<uv_poll_t>
    private var isPolling = false
    /// A descriptor kept open to be given up at the descriptor limit; -1 while it is not held.
    private var reserveFd: Int32 = -1
    /// Set from the first accept that failed for lack of descriptors until one succeeds again.
    private var shortage: (error: Int32, refused: Int)?
    /// Restarts the poll after a pause (an accept error that would otherwise repeat at once).
    private var retryTimer: LoopTimer?
    /// The whole refusal frame written at the descriptor limit, built once.
    private let refusal: [UInt8]
    /// The limits of connections accepted from now on (a reload changes them; open connections keep
    /// theirs).
    public var configuration: Connection.Configuration
    private let handler: any ConnectionHandler
    /// Identity of the socket file we bound, so closing never removes someone else's.
    private var boundFile: (device: UInt, inode: UInt)?
    private var isClosed = false

    /// Binds `path`: creates the parent directory if missing, replaces a stale socket file (but fails
    /// if a daemon answers on it), and makes the socket 0660.
    public convenience init(
        loop: EventLoop,
        path: String,
        configuration: Connection.Configuration,
        handler: any ConnectionHandler
    ) throws(Failure) {
        try Self.prepareSocketPath(path, logger: loop.logger)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        do throws(Failure) {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else {
                if errno == EADDRINUSE { throw Failure.alreadyInUse(path) }
                throw Failure.system(call: "bind", path: path, errno: errno)
            }
            guard chmod(path, 0o660) == 0 else {
                throw Failure.system(call: "chmod", path: path, errno: errno)
            }
            try self.init(loop: loop, path: path, fd: fd, configuration: configuration, handler: handler)
        } catch {
            Glibc.close(fd)
            throw error
        }
        var status = stat()
        if stat(path, &status) == 0 {
            boundFile = (UInt(status.st_dev), UInt(status.st_ino))
        }
    }

    /// Adopts a socket that is already bound (and possibly listening), e.g. one passed by systemd socket
    /// activation (LISTEN_FDS). The socket file is left alone when closing.
    public convenience init(
        loop: EventLoop,
        adoptingFileDescriptor fd: Int32,
        configuration: Connection.Configuration,
        handler: any ConnectionHandler
    ) throws(Failure) {
        // Non-blocking, as the accept loop needs (libuv's uv_pipe_open did the same to it before).
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw .system(call: "fcntl O_NONBLOCK", path: "fd \(fd)", errno: errno)
        }
        try self.init(loop: loop, path: nil, fd: fd, configuration: configuration, handler: handler)
    }

    /// Listens on the bound socket `fd` and starts accepting. Takes `fd` over only if it succeeds.
    private init(
        loop: EventLoop,
        path: String?,
        fd: Int32,
        configuration: Connection.Configuration,
        handler: any ConnectionHandler
    ) throws(Failure) {
        self.loop = loop
        self.path = path
        self.fd = fd
        self.configuration = configuration
        self.handler = handler
        var body: [UInt8] = []
        _ = WireReply.encodeStatus(
            code: .resourceExhausted,
            message: "snapbackd is out of file descriptors; try again later", into: &body)
        var frame: [UInt8] = []
        FrameHeader.response(
            callId: 0, method: WireMethod.hello.rawValue, status: StatusCode.resourceExhausted.rawValue,
            length: UInt32(body.count)
        ).encode(into: &frame)
        refusal = frame + body
        // Listening again on an adopted socket that already listens only sets the backlog.
        guard listen(fd, 128) == 0 else {
            throw .system(call: "listen", path: path ?? "fd \(fd)", errno: errno)
        }
        poll = .allocate(capacity: 1)
        let result = uv_poll_init(loop.raw, poll, fd)
        guard result == 0 else {
            poll.deallocate()
            throw .libuv(LibUVError("uv_poll_init", result))
        }
        reserveFd = Self.openReserve()
        poll.pointee.data = Unmanaged.passRetained(self).toOpaque()
        startPolling()
    }

    /// `/dev/null`, or the root directory where there is none (libuv does the same).
    private static func openReserve() -> Int32 {
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return null >= 0 ? null : open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    private func startPolling() {
        guard !isClosed, !isPolling else { return }
        let result = uv_poll_start(poll, Int32(UV_READABLE.rawValue)) { handle, status, _ in
            let listener = Unmanaged<Listener>.fromOpaque(handle!.pointee.data!).takeUnretainedValue()
            if status < 0 {
                listener.loop.logger.error("poll on the listening socket: \(uvErrorDescription(status))")
                listener.pause()
            } else {
                listener.acceptPending()
            }
            listener.loop.flushPending()
        }
        if result == 0 {
            isPolling = true
        } else {
            loop.logger.error("uv_poll_start on the listening socket: \(uvErrorDescription(result))")
            pause()
        }
    }

    /// Stops accepting and removes the socket file this listener created. Open connections stay.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        if let path, let boundFile {
            var status = stat()
            if stat(path, &status) == 0, UInt(status.st_dev) == boundFile.device, UInt(status.st_ino) == boundFile.inode {
                unlink(path)
            }
        }
        retryTimer?.close()
        retryTimer = nil
        if reserveFd >= 0 {
            Glibc.close(reserveFd)
            reserveFd = -1
        }
        // The socket is closed after libuv has let go of it.
        uv_close(asHandle(poll)) { raw in
            let listener = Unmanaged<Listener>.fromOpaque(raw!.pointee.data!).takeRetainedValue()
            Glibc.close(listener.fd)
            raw!.deallocate()
        }
    }

    /// Peers accepted per wake-up at most, so that a flood of connects cannot hold the loop.
    private static let acceptsPerWakeUp = 64
    /// How long the poll rests after an accept error that would repeat at once.
    private static let pauseMilliseconds: UInt64 = 100

    /// Accepts the waiting peers (level-triggered: what is left wakes the loop again).
    private func acceptPending() {
        for _ in 0..<Self.acceptsPerWakeUp {
            guard !isClosed else { return }
            let client = snapback_accept4(fd, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if client >= 0 {
                if let (_, refused) = shortage {
                    shortage = nil
                    loop.logger.notice(
                        "accepting connections again; \(refused) were refused RESOURCE_EXHAUSTED for lack of file descriptors")
                }
                adopt(client)
                continue
            }
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK:
                return
            case EINTR, ECONNABORTED:
                continue
            case EMFILE, ENFILE:
                guard refuseForLackOfDescriptors(code) else { return }
            default:
                loop.logger.error("accept on \(path ?? "adopted socket"): \(String(cString: strerror(code)))")
                pause()
                return
            }
        }
    }

    /// At the descriptor limit: gives up the reserve to accept one peer, answers it RESOURCE_EXHAUSTED,
    /// closes it and takes the reserve back. Returns whether to go on accepting.
    private func refuseForLackOfDescriptors(_ code: Int32) -> Bool {
        if shortage == nil {
            shortage = (code, 0)
            loop.logger.warning(
                "accept on \(path ?? "adopted socket"): \(String(cString: strerror(code))) "
                    + "(\(code == EMFILE ? "EMFILE" : "ENFILE")): new connections are refused RESOURCE_EXHAUSTED "
                    + "until descriptors are free")
        }
        guard reserveFd >= 0 else {
            reserveFd = Self.openReserve()
            pause()
            return false
        }
        Glibc.close(reserveFd)
        let client = snapback_accept4(fd, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        let acceptError = errno
        if client >= 0 {
            // A fresh socket's buffer takes the whole frame; a peer that is gone simply misses it.
            _ = refusal.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            Glibc.close(client)
            shortage?.refused += 1
        }
        reserveFd = Self.openReserve()
        if reserveFd < 0 {
            // Another thread took the descriptor: wait rather than spin on a backlog we cannot empty.
            pause()
            return false
        }
        if client >= 0 { return true }
        if acceptError == EINTR || acceptError == ECONNABORTED { return true }
        if acceptError == EAGAIN || acceptError == EWOULDBLOCK { return false }
        pause()
        return false
    }

    /// Stops polling and polls again after ``pauseMilliseconds``.
    private func pause() {
        guard !isClosed else { return }
        if isPolling {
            uv_poll_stop(poll)
            isPolling = false
        }
        let timer =
            retryTimer
            ?? LoopTimer(loop: loop) { [unowned self] in
                if self.reserveFd < 0 { self.reserveFd = Self.openReserve() }
                self.startPolling()
            }
        retryTimer = timer
        if !timer.isActive { timer.start(after: Self.pauseMilliseconds) }
    }

    /// Turns an accepted socket into a ``Connection``.
    private func adopt(_ fd: Int32) {
        let client = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
        var result = uv_pipe_init(loop.raw, client, 0)
        guard result == 0 else {
            client.deallocate()
            Glibc.close(fd)
            loop.logger.error("uv_pipe_init for a client: \(uvErrorDescription(result))")
            return
        }
        result = uv_pipe_open(client, fd)
        guard result == 0 else {
            freeHandleOnClose(client)
            Glibc.close(fd)
            loop.logger.error("uv_pipe_open for a client: \(uvErrorDescription(result))")
            return
        }
        let peer =
            PeerCredentials.of(socket: fd)
            ?? {
                loop.logger.warning("SO_PEERCRED failed on a new connection: \(String(cString: strerror(errno)))")
                return .unknown
            }()
        let connection = Connection(
            handle: client,
            id: loop.makeConnectionId(),
            peer: peer,
            loop: loop,
            configuration: configuration,
            handler: handler
        )
        connection.start()
    }

    // MARK: Socket path

    /// Makes `path` bindable: parent directory present, stale socket gone, live one refused.
    static func prepareSocketPath(_ path: String, logger: Logger) throws(Failure) {
        guard !path.isEmpty, path.utf8.count <= maxPathLength else { throw .pathTooLong(path) }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeDirectories(String(path[..<slash]))
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw .system(call: "lstat", path: path, errno: errno)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        switch probe(path) {
        case 0:
            throw .alreadyInUse(path)
        case ECONNREFUSED:
            guard unlink(path) == 0 || errno == ENOENT else {
                throw .system(call: "unlink", path: path, errno: errno)
            }
            logger.notice("removed stale socket \(path)")
        case let code:
            throw .system(call: "connect", path: path, errno: code)
        }
    }

    /// Connects to `path` and hangs up: 0 if something listens there, else the errno.
    private static func probe(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            sunPath.copyBytes(from: path.utf8)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }

    /// `mkdir -p` with mode 0755 for what it creates.
    static func makeDirectories(_ path: String) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .system(call: "mkdir", path: prefix, errno: errno)
            }
            prefix += "/"
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .system(call: "mkdir", path: path, errno: ENOTDIR)
        }
    }
}
