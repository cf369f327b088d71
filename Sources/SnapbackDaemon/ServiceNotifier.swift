// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// `sd_notify(3)` without libsystemd: one datagram of `KEY=value` lines to the AF_UNIX socket named by
/// `$NOTIFY_SOCKET` (a path, or an abstract name written with a leading '@').
///
/// Sends never block: the socket is non-blocking, and a message the service manager's queue has no room
/// for is dropped (a watchdog ping that cannot be delivered is as good as a missed one). Without
/// `$NOTIFY_SOCKET` (started by hand) every send does nothing.
public final class ServiceNotifier {
    private let fd: Int32
    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    private let logger: Logger
    private var failureLogged = false

    /// The socket named by `$NOTIFY_SOCKET`, or nil if it is unset or unusable (logged).
    public init?(logger: Logger) {
        self.logger = logger
        guard let name = SocketActivation.environment("NOTIFY_SOCKET"), !name.isEmpty else { return nil }
        var bytes = Array(name.utf8)
        guard bytes.first == UInt8(ascii: "/") || bytes.first == UInt8(ascii: "@") else {
            logger.warning("NOTIFY_SOCKET=\(name): only Unix socket paths and @abstract names are supported; not notifying")
            return nil
        }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count <= capacity else {
            logger.warning("NOTIFY_SOCKET=\(name): too long; not notifying")
            return nil
        }
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        // An abstract name's length is exact; a path may include its NUL, as libsystemd does.
        addressLength = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + bytes.count + (bytes[0] == 0 ? 0 : 1))
        if addressLength > socklen_t(MemoryLayout<sockaddr_un>.size) { addressLength = socklen_t(MemoryLayout<sockaddr_un>.size) }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else {
            logger.warning("NOTIFY_SOCKET: socket(): \(String(cString: strerror(errno))); not notifying")
            return nil
        }
    }

    deinit {
        close(fd)
    }

    /// Sends `lines` as one datagram ("READY=1", "STATUS=…"). Returns whether it was sent.
    @discardableResult
    public func send(_ lines: String...) -> Bool {
        send(lines)
    }

    @discardableResult
    public func send(_ lines: [String]) -> Bool {
        // A newline inside a value would start another assignment.
        var message = lines.map { line in String(line.map { $0 == "\n" ? " " : $0 }) }.joined(separator: "\n")
        let sent = message.withUTF8 { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), target, addressLength)
                }
            }
        }
        if sent < 0 {
            // Logged once, not at every watchdog tick.
            if !failureLogged {
                failureLogged = true
                logger.warning("sd_notify: \(String(cString: strerror(errno))) (further failures are not logged)")
            }
            return false
        }
        if lines != ["WATCHDOG=1"] {  // not a debug line every few seconds
            logger.debug("sd_notify: \(lines.joined(separator: ", "))")
        }
        return true
    }

    /// CLOCK_MONOTONIC in µs, for `MONOTONIC_USEC=` (RELOADING=1 needs it since systemd 253).
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// `sd_watchdog_enabled(3)`: the watchdog interval in µs if `$WATCHDOG_USEC` is set for this
    /// process (`$WATCHDOG_PID`, when set, must be ours). The variables are unset afterwards.
    public static func watchdogMicroseconds() -> UInt64? {
        let usecText = SocketActivation.environment("WATCHDOG_USEC")
        let pidText = SocketActivation.environment("WATCHDOG_PID")
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
        guard let usecText, let usec = UInt64(usecText), usec > 0 else { return nil }
        if let pidText {
            guard let pid = Int32(pidText), pid == getpid() else { return nil }
        }
        return usec
    }
}
