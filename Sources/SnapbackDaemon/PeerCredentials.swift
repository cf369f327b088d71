import Glibc

/// Who is on the other end of a Unix socket, as the kernel saw it when the peer connected
/// (SO_PEERCRED). Captured once at accept; used for access control.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Returned when the kernel could not tell: pid 0 and the overflow ids, which match no real user.
    public static let unknown = PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max)

    /// Reads SO_PEERCRED from a connected Unix socket.
    public static func of(socket fd: Int32) -> PeerCredentials? {
        // Glibc's `struct ucred` needs _GNU_SOURCE, which the Swift module does not set; the kernel
        // layout is fixed: pid_t, uid_t, gid_t.
        var credentials = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        let result = withUnsafeMutableBytes(of: &credentials) { raw in
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, raw.baseAddress, &length)
        }
        guard result == 0, length == MemoryLayout.size(ofValue: credentials) else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
