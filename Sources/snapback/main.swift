// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCommandLine

// snapback: the command-line client of snapbackd (demo, operator queries, live decisions, bookmarks).

/// The root command: its subcommands are the tool's commands; help, usage errors and shell completion
/// (`--generate-completion-script bash|zsh|fish`) are swift-argument-parser's.
struct Snapback: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapback",
        abstract: "The command-line client of snapbackd, the ad-timeline daemon.",
        discussion: prose(
            """
            The queries (status, sessions, session, convert, bookmarks, metrics) and the demo take --json: one \
            JSON document on stdout; watch --json prints JSON lines.
            The daemon's socket is --socket, else $SNAPBACK_SOCKET, else \(defaultSocketPath).

            Exit status: 0 on success, 1 when the command failed, 2 for a bad command line.
            """),
        subcommands: [
            DemoCommand.self, StatusCommand.self, SessionsCommand.self, SessionCommand.self, ConvertCommand.self,
            WatchCommand.self, BookmarksCommand.self, CuesCommand.self, MetricsCommand.self
        ]
    )

    /// No command: a bad command line (exit 2), as it always was, rather than help with exit 0.
    func run() throws {
        throw ValidationError("a command is needed")
    }
}

exit(runCommandLine(Snapback.self))
