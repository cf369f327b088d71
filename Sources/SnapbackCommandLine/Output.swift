// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Unbuffered output: every call is one `write(2)`, so lines from this tool and from a daemon sharing the
/// terminal or pipe interleave in the order they happened (no stdio buffer, no `stderr` global).
public enum Output {
    public static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// One line on stdout.
public func say(_ line: String = "") {
    Output.write(line + "\n", to: STDOUT_FILENO)
}

/// One line on stderr.
public func warn(_ line: String) {
    Output.write(line + "\n", to: STDERR_FILENO)
}

/// Exit statuses of every command.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 2
}

/// A command failed at run time: the message goes to stderr and the tool exits 1.
public struct CommandError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
