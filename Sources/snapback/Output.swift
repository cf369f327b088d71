import Glibc
import SnapbackCLI

/// Unbuffered output: every call is one `write(2)`, so lines from this tool and from a daemon sharing the
/// terminal or pipe interleave in the order they happened (no stdio buffer, no `stderr` global).
enum Output {
    static func write(_ text: String, to fd: Int32) {
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
func say(_ line: String = "") {
    Output.write(line + "\n", to: STDOUT_FILENO)
}

/// One line on stderr.
func warn(_ line: String) {
    Output.write(line + "\n", to: STDERR_FILENO)
}

/// Exit statuses of every command.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

/// A command failed at run time: the message goes to stderr and the tool exits 1.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: Formatting

/// A byte count as MiB with one decimal.
func mebibytes(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) + " MiB" }
