// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCommandLine

// snapback: the command-line client of snapbackd (demo, operator queries, live decisions, bookmarks).

/// The root command: its subcommands are the tool's commands, and its table makes the help, the usage
/// errors and the shell completion (`--generate-completion-script bash|zsh|fish`).
let snapback = Command(
    name: "snapback",
    abstract: "The command-line client of snapbackd, the ad-timeline daemon.",
    discussion: """
        The queries (status, sessions, session, convert, bookmarks, metrics) and the demo take --json: one \
        JSON document on stdout; watch --json prints JSON lines.
        The daemon's socket is --socket, else $SNAPBACK_SOCKET, else \(defaultSocketPath).

        Exit status: 0 on success, 1 when the command failed, 2 for a bad command line.
        """,
    subcommands: [
        DemoCommand.command, StatusCommand.command, SessionsCommand.command, SessionCommand.command,
        ConvertCommand.command, WatchCommand.command, BookmarksCommand.command, CuesCommand.command,
        MetricsCommand.command
    ],
    // No command: a bad command line (exit 2), as it always was, rather than help with exit 0.
    missing: "a command is needed")

exit(runCommandLine(snapback))
