// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Who is on the other end of a Unix socket, as the kernel saw it when the peer connected
/// (SO_PEERCRED, and SO_PEERGROUPS for its supplementary groups). Captured once at accept; used for
/// access control.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// The peer's supplementary groups when it connected (empty if the kernel could not tell).
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
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
        return PeerCredentials(
            pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
            groups: supplementaryGroups(socket: fd))
    }

    /// SO_PEERGROUPS (Linux 4.13): the groups a socket-file permission check would have used too, so a
    /// player that may connect through its membership in the socket's group is recognised.
    static func supplementaryGroups(socket fd: Int32) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            let result = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
            if result == 0 {
                return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
            }
            // ERANGE: the kernel said how much room it needs.
            guard errno == ERANGE, Int(length) > groups.count * MemoryLayout<UInt32>.size, length <= 65536 * 4 else {
                return []
            }
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size)
        }
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }
}
