// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc

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
