// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// systemd socket activation (`sd_listen_fds(3)`), written out instead of linking libsystemd: the
/// service manager passes listening sockets from fd 3 on, with `LISTEN_FDS` (how many), `LISTEN_PID`
/// (for whom: a child we spawned must not take them) and optionally `LISTEN_FDNAMES`.
public enum SocketActivation {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The passed socket.
    public struct Activated: Sendable, Equatable {
        public var fd: Int32
        /// `FileDescriptorName=` of the socket unit (`LISTEN_FDNAMES`), if given.
        public var name: String?
    }

    /// Why the passed descriptors cannot be used.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Takes the socket passed to this process, if any, and unsets the variables either way (so nothing
    /// we might start inherits them). Returns nil when the daemon was not socket-activated (no
    /// `LISTEN_PID`, or one naming another process, or `LISTEN_FDS=0`).
    ///
    /// snapbackd listens on exactly one socket: more than one passed, or one that is not a listening
    /// AF_UNIX stream socket, is an error (a unit file mistake that must not be papered over).
    public static func take() throws(Failure) -> Activated? {
        guard let (count, names) = try takeEnvironment() else { return nil }
        guard count == 1 else {
            throw Failure(
                description: "socket activation: \(count) sockets passed (LISTEN_FDS); snapbackd listens on exactly one")
        }
        let fd = firstDescriptor
        try adopt(fd)
        try checkListeningUnixStream(fd)
        let name = names.flatMap { $0.split(separator: ":", omittingEmptySubsequences: false).first.map(String.init) }
        return Activated(fd: fd, name: (name?.isEmpty ?? true) ? nil : name)
    }

    /// Takes every socket passed to this process (snapback-web's, one per loopback address), each a
    /// listening TCP socket (`ListenStream=` with an address); nil when not socket-activated. The
    /// variables are unset either way.
    public static func takeTCP() throws(Failure) -> [Int32]? {
        guard let (count, _) = try takeEnvironment() else { return nil }
        var fds: [Int32] = []
        for fd in firstDescriptor..<(firstDescriptor + count) {
            try adopt(fd)
            let domain = socketOption(fd, SO_DOMAIN)
            guard domain == AF_INET || domain == AF_INET6, socketOption(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
                throw Failure(description: "socket activation: fd \(fd) is not a TCP socket (ListenStream= with an address)")
            }
            guard socketOption(fd, SO_ACCEPTCONN) == 1 else {
                throw Failure(description: "socket activation: fd \(fd) is not listening (Accept=yes is not supported)")
            }
            fds.append(fd)
        }
        return fds
    }

    /// `LISTEN_FDS` and `LISTEN_FDNAMES` when `LISTEN_PID` names this process and some were passed.
    private static func takeEnvironment() throws(Failure) -> (count: Int32, names: String?)? {
        let pidText = environment("LISTEN_PID")
        let countText = environment("LISTEN_FDS")
        let names = environment("LISTEN_FDNAMES")
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        guard let pidText, let pid = Int32(pidText), pid == getpid() else { return nil }
        guard let countText, let count = Int32(countText), count >= 0, count < 64 else {
            throw Failure(description: "socket activation: LISTEN_FDS='\(countText ?? "")' is not a count")
        }
        return count == 0 ? nil : (count, names)
    }

    /// Checks that `fd` is open and keeps it out of anything we exec, as sd_listen_fds() does.
    private static func adopt(_ fd: Int32) throws(Failure) {
        let flags = fcntl(fd, F_GETFD)
        guard flags >= 0 else {
            throw Failure(description: "socket activation: fd \(fd) is not open: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC)
    }

    private static func socketOption(_ fd: Int32, _ name: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else { return nil }
        return value
    }

    /// `sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0)`.
    static func checkListeningUnixStream(_ fd: Int32) throws(Failure) {
        guard let domain = socketOption(fd, SO_DOMAIN), let type = socketOption(fd, SO_TYPE),
            let listening = socketOption(fd, SO_ACCEPTCONN)
        else {
            throw Failure(description: "socket activation: fd \(fd) is not a socket")
        }
        guard domain == AF_UNIX, type == Int32(SOCK_STREAM.rawValue) else {
            throw Failure(description: "socket activation: fd \(fd) is not a Unix stream socket (ListenStream= with a path)")
        }
        guard listening != 0 else {
            throw Failure(description: "socket activation: fd \(fd) is not listening (Accept=yes is not supported)")
        }
    }

    /// The filesystem path a Unix socket is bound to; nil for an abstract or unnamed one.
    public static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        let pathLength = Int(length) - MemoryLayout.offset(of: \sockaddr_un.sun_path)!
        guard pathLength > 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            let bytes = raw.prefix(pathLength)
            guard let first = bytes.first, first != 0 else { return nil }  // abstract
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
