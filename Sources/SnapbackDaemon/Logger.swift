// SPDX-License-Identifier: Apache-2.0
import Glibc
import Synchronization

/// Log lines on stderr, each prefixed with its syslog priority as `<N>` so journald files them at the
/// right level. No timestamps: journald adds its own.
///
/// A value type that can be copied into every component and used from any thread; the copies share one
/// threshold (an atomic), so a configuration reload that changes ``level`` changes it for all of them.
/// A line is one `write(2)`, which the kernel does not interleave with other writers, and it never
/// blocks: see ``LogSink`` for what happens when stderr does not take it.
public struct Logger: Sendable {
    /// Syslog priorities, most severe first.
    public enum Level: Int32, Sendable, CaseIterable, Comparable, CustomStringConvertible {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7

        /// Parses the names used by `--log-level`.
        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
            self = level
        }

        public var description: String {
            switch self {
            case .error: "error"
            case .warning: "warning"
            case .notice: "notice"
            case .info: "info"
            case .debug: "debug"
            }
        }

        /// More severe levels compare smaller, as syslog priorities do.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The threshold every copy of this logger shares.
    private final class Threshold: Sendable {
        let rawValue: Atomic<Int32>
        init(_ level: Level) { rawValue = Atomic(level.rawValue) }
    }
    private let threshold: Threshold

    /// The least severe level that is written. Setting it changes it for every copy of this logger.
    public var level: Level {
        get { Level(rawValue: threshold.rawValue.load(ordering: .relaxed)) ?? .info }
        nonmutating set { threshold.rawValue.store(newValue.rawValue, ordering: .relaxed) }
    }

    public init(level: Level = .info) {
        threshold = Threshold(level)
    }

    public func isEnabled(_ level: Level) -> Bool { level <= self.level }

    /// Writes one line; `message` is only built if the level is enabled.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        var text = message()
        text.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 5) { line in
                // "<N>", the message, "\n": one write. Byte by byte, not Character by Character (grapheme
                // breaking made a line cost microseconds). A line break inside the message would start a
                // journald record without a priority: CR and LF become spaces ("\r\n" is one Character,
                // which the Character test let through).
                line[0] = UInt8(ascii: "<")
                line[1] = UInt8(ascii: "0") + UInt8(level.rawValue)
                line[2] = UInt8(ascii: ">")
                var count = 3
                for byte in bytes {
                    line[count] = byte == 0x0A || byte == 0x0D ? 0x20 : byte
                    count += 1
                }
                line[count] = 0x0A
                LogSink.standardError.write(UnsafeRawBufferPointer(start: line.baseAddress, count: count + 1))
            }
        }
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
}

/// Writes all of `text` to `fd` (retrying short writes and EINTR); gives up silently on an error — it
/// serves stderr, where there is nobody left to tell.
/// Writes `text` to stderr after whatever stdio buffered (usage and errors before the loop runs).
func writeStandardError(_ text: String) {
    fflush(nil)
    writeAll(STDERR_FILENO, text)
}

func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}

func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
        let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
    }
}
