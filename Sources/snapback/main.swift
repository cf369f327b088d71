import ArgumentParser
import Glibc
import SnapbackCLI

// snapback: the command-line client of snapbackd (demo, operator queries, live decisions, benchmarks).

/// The root command: its subcommands are the tool's commands; help, usage errors and shell completion
/// (`--generate-completion-script bash|zsh|fish`) are swift-argument-parser's.
struct Snapback: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapback",
        abstract: "The command-line client of snapbackd, the ad-timeline daemon.",
        discussion: prose(
            """
            The queries (status, sessions, session, convert, bookmarks), the demo and bench take --json: \
            one JSON document on stdout; watch --json prints JSON lines. bench-timeline and bench-store \
            print text.
            The daemon's socket is --socket, else $SNAPBACK_SOCKET, else \(defaultSocketPath).

            Exit status: 0 on success, 1 when the command failed, 2 for a bad command line.
            """),
        subcommands: [
            DemoCommand.self, StatusCommand.self, SessionsCommand.self, SessionCommand.self, ConvertCommand.self,
            WatchCommand.self, BookmarksCommand.self,
            BenchCommand.self, TimelineBenchCommand.self, StoreBenchCommand.self,
            // Internal: the fixed exchange `make check-budget` drives while callgrind counts the daemon,
            // the raw ping-pong peer and the load process the bench spawns. Not listed in the help.
            BenchExchangeCommand.self, BenchEchoServer.self, BenchLoadGenerator.self
        ]
    )

    /// No command: a bad command line (exit 2), as it always was, rather than help with exit 0.
    func run() throws {
        throw ValidationError("a command is needed")
    }
}

/// Parses the command line and runs the command. Help and completion scripts go to stdout (exit 0); a
/// bad command line prints argument-parser's message and usage on stderr and exits 2 (the status this
/// tool has always documented, where argument-parser alone would exit 64); a run-time failure prints one
/// line, `snapback COMMAND: why`, and exits 1.
func main() -> Int32 {
    var command: any ParsableCommand
    do {
        command = try Snapback.parseAsRoot()
    } catch {
        return report(parseError: error)
    }
    do {
        try command.run()
        return ExitCode.ok
    } catch let exit as ArgumentParser.ExitCode {
        return exit.rawValue
    } catch {
        // argument-parser's own commands (help) end in errors of its own; a ValidationError found only
        // once running (a daemon binary that is not executable) is still a bad command line.
        let status = Snapback.exitCode(for: error)
        if status == .success || status == .validationFailure { return report(parseError: error) }
        let arguments = CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("-") }
        warn("snapback \(arguments.first ?? ""): \(error)")
        return ExitCode.failure
    }
}

func report(parseError error: any Error) -> Int32 {
    let message = Snapback.fullMessage(for: error)
    let status = Snapback.exitCode(for: error)
    if status == .success {
        if !message.isEmpty { say(message) }
        return ExitCode.ok
    }
    warn(message)
    return status == .validationFailure ? ExitCode.usage : status.rawValue
}

exit(main())
