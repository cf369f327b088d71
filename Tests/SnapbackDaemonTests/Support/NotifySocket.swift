// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTestSupport

/// A fake `$NOTIFY_SOCKET`: the datagram socket systemd would read `sd_notify` messages from, bound by
/// the test (a path, or an abstract name given as `@name`), with each message stamped on arrival.
final class NotifySocket {
    /// What goes into `NOTIFY_SOCKET`.
    let address: String
    private let fd: Int32
    private let path: String?

    struct Message {
        let text: String
        let at: ContinuousClock.Instant
    }

    /// Binds `path`, or the abstract name `name` when `abstract` is set.
    init(path: String) throws {
        self.address = path
        self.path = path
        fd = try Self.bind(Array(path.utf8))
    }

    init(abstractName name: String) throws {
        self.address = "@" + name
        self.path = nil
        fd = try Self.bind([0] + Array(name.utf8))
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    private static func bind(_ name: [UInt8]) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + name.count)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return fd
    }

    /// The next message, or nil after `timeout`.
    func next(timeout: Duration = TestTime.scaled(.seconds(10))) -> Message? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                clamping: remaining.components.seconds * 1000
                    + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 { continue }
            return Message(text: String(decoding: buffer[..<count], as: UTF8.self), at: clock.now)
        }
    }

    /// The first message starting with `prefix` within `timeout`, skipping others (watchdog pings).
    func next(startingWith prefix: String, timeout: Duration = TestTime.scaled(.seconds(10))) -> Message? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while let message = next(timeout: clock.now.duration(to: deadline)) {
            if message.text.hasPrefix(prefix) { return message }
        }
        return nil
    }

    /// Takes every message already queued, without waiting.
    @discardableResult
    func drain() -> [Message] {
        var messages: [Message] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return messages }
            messages.append(Message(text: String(decoding: buffer[..<count], as: UTF8.self), at: ContinuousClock.now))
        }
    }

    /// Every message that arrives during `duration`.
    func collect(for duration: Duration) -> [Message] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: duration)
        var messages: [Message] = []
        while let message = next(timeout: clock.now.duration(to: deadline)) {
            messages.append(message)
        }
        return messages
    }
}
