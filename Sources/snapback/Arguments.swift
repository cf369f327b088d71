// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCommandLine

/// `--socket PATH`, shared by every command that talks to a running daemon.
struct SocketOption {
    static let parameters: [Parameter] = [
        .option(
            "socket", value: "path", help: "snapbackd's socket (default: $SNAPBACK_SOCKET, else \(defaultSocketPath)).",
            completion: .file)
    ]

    var socket: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        socket = arguments.string("socket")
        if let socket, socket.isEmpty { throw UsageError("--socket needs a non-empty value") }
    }

    /// `--socket`, else `$SNAPBACK_SOCKET`, else snapbackd's development default.
    var path: String {
        if let socket { return socket }
        if let env = getenv("SNAPBACK_SOCKET"), env.pointee != 0 { return String(cString: env) }
        return defaultSocketPath
    }
}

/// `--json`, on every command that prints data.
struct JSONOption {
    static let parameters: [Parameter] = [.flag("json", help: "Print one JSON document instead of text.")]

    var json: Bool

    init(_ arguments: ParsedArguments) { json = arguments.flag("json") }
}

/// snapbackd.socket's, as in libsnapback: what a player and an operator on the box use.
let defaultSocketPath = "/run/snapback/snapbackd.sock"
