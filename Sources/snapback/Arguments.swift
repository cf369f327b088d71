import ArgumentParser
import Glibc
import SnapbackCLI

/// `--socket PATH`, shared by every command that talks to a running daemon.
struct SocketOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "snapbackd's socket (default: $SNAPBACK_SOCKET, else \(defaultSocketPath)).", valueName: "path"),
        completion: .file())
    var socket: String?

    /// `--socket`, else `$SNAPBACK_SOCKET`, else snapbackd's development default.
    var path: String {
        if let socket { return socket }
        if let env = getenv("SNAPBACK_SOCKET"), env.pointee != 0 { return String(cString: env) }
        return defaultSocketPath
    }

    func validate() throws {
        if let socket, socket.isEmpty { throw ValidationError("--socket needs a non-empty value") }
    }
}

/// `--json`, on every command that prints data.
struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON document instead of text.")
    var json = false
}

/// snapbackd.socket's, as in libsnapback: what a player and an operator on the box use.
let defaultSocketPath = "/run/snapback/snapbackd.sock"

/// An integer option's range check, worded as the tool always has: `--batch: '0' is not a whole number
/// in 1...10000000`.
func checkRange(_ value: Int, _ name: String, _ range: ClosedRange<Int>) throws {
    guard range.contains(value) else {
        throw ValidationError("\(name): '\(value)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
    }
}

/// A non-empty string option.
func checkNonEmpty(_ value: String, _ name: String) throws {
    if value.isEmpty { throw ValidationError("\(name) needs a non-empty value") }
}

/// The path of snapbackd next to this executable (the bench's default daemon).
func siblingDaemonPath() -> String {
    BenchCommand.executablePath().map { BenchCommand.dirname($0) + "/snapbackd" } ?? "snapbackd"
}

/// A daemon the bench can start.
func checkExecutable(_ path: String, _ option: String = "--snapbackd") throws {
    guard access(path, X_OK) == 0 else { throw ValidationError("\(option): \(path) is not an executable file") }
}

/// A help text as argument-parser should wrap it: the lines of a paragraph joined, so that it wraps at
/// the terminal's width; a paragraph with indented lines (a list, a table) keeps its lines.
func prose(_ text: String) -> String {
    text.split(separator: "\n\n", omittingEmptySubsequences: false).map { paragraph in
        let lines = paragraph.split(separator: "\n")
        if lines.dropFirst().contains(where: { $0.hasPrefix(" ") }) || lines.first?.hasPrefix(" ") == true {
            return String(paragraph)
        }
        return lines.joined(separator: " ")
    }.joined(separator: "\n\n")
}
