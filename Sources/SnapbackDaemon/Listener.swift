import CLibUV
import Glibc

/// The listening Unix socket: accepts clients and turns each into a ``Connection``.
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
    private let handle: UnsafeMutablePointer<uv_pipe_t>
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
        try self.init(loop: loop, path: path, configuration: configuration, handler: handler) { pipe throws(Failure) in
            let result = uv_pipe_bind(pipe, path)
            guard result == 0 else {
                if isUVError(result, UV_EADDRINUSE) { throw .alreadyInUse(path) }
                throw .libuv(LibUVError("uv_pipe_bind \(path)", result))
            }
            guard chmod(path, 0o660) == 0 else {
                throw .system(call: "chmod", path: path, errno: errno)
            }
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
        try self.init(loop: loop, path: nil, configuration: configuration, handler: handler) { pipe throws(Failure) in
            let result = uv_pipe_open(pipe, fd)
            guard result == 0 else { throw .libuv(LibUVError("uv_pipe_open fd \(fd)", result)) }
        }
    }

    private init(
        loop: EventLoop,
        path: String?,
        configuration: Connection.Configuration,
        handler: any ConnectionHandler,
        bind: (UnsafeMutablePointer<uv_pipe_t>) throws(Failure) -> Void
    ) throws(Failure) {
        self.loop = loop
        self.path = path
        self.configuration = configuration
        self.handler = handler
        handle = .allocate(capacity: 1)
        let result = uv_pipe_init(loop.raw, handle, 0)
        guard result == 0 else {
            handle.deallocate()
            throw .libuv(LibUVError("uv_pipe_init", result))
        }
        do throws(Failure) {
            try bind(handle)
            let listening = uv_listen(asStream(handle), 128) { server, status in
                let listener = Unmanaged<Listener>.fromOpaque(server!.pointee.data!).takeUnretainedValue()
                listener.accept(status: status)
                listener.loop.flushPending()
            }
            guard listening == 0 else { throw Failure.libuv(LibUVError("uv_listen", listening)) }
        } catch {
            freeHandleOnClose(handle)
            throw error
        }
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
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
        uv_close(asHandle(handle)) { raw in
            Unmanaged<Listener>.fromOpaque(raw!.pointee.data!).release()
            raw!.deallocate()
        }
    }

    private func accept(status: Int32) {
        guard !isClosed else { return }
        guard status == 0 else {
            loop.logger.error("accept on \(path ?? "adopted socket"): \(uvErrorDescription(status))")
            return
        }
        let client = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
        var result = uv_pipe_init(loop.raw, client, 0)
        guard result == 0 else {
            client.deallocate()
            loop.logger.error("uv_pipe_init for a client: \(uvErrorDescription(result))")
            return
        }
        result = uv_accept(asStream(handle), asStream(client))
        guard result == 0 else {
            freeHandleOnClose(client)
            loop.logger.error("uv_accept: \(uvErrorDescription(result))")
            return
        }
        var fd: uv_os_fd_t = -1
        uv_fileno(asHandle(client), &fd)
        let peer = PeerCredentials.of(socket: fd) ?? {
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
