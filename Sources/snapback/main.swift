import Glibc

// snapback: the command-line client of snapbackd (demo, operator queries, benchmarks).

let topUsage = """
    Usage: snapback COMMAND [OPTIONS]

    The command-line client of snapbackd, the ad-timeline daemon.

    Commands:
      demo        A scripted player that tells the snapback and bookmark story through the socket
      status      The daemon's version, limits and counters
      bookmarks   List, show, delete or clear the bookmarks of a viewer profile
      bench       snapbackd's SeekEnded → snapback push round trip vs a raw Unix-socket ping-pong
      bench-timeline  The timeline engine alone: events per second, conversions for 10 vs 100,000 breaks
      bench-store The SQLite store through snapbackd: saves/s, save latency, loop latency while committing

    Run 'snapback COMMAND --help' for a command's options.
    Exit status: 0 on success, 1 when the command failed, 2 for a bad command line.
    """

/// Runs one command: `--help` prints its usage (exit 0), a usage error prints the message and the usage
/// on stderr (exit 2), a run-time failure one line on stderr (exit 1).
func runCommand(_ name: String, usage: String, _ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch let error as UsageError {
        warn("snapback \(name): \(error)\n\n\(usage)")
        return ExitCode.usage
    } catch {
        warn("snapback \(name): \(error)")
        return ExitCode.failure
    }
}

let arguments = CommandLine.arguments
let rest = arguments.dropFirst(2)
let status: Int32
switch arguments.count > 1 ? arguments[1] : "" {
case "demo":
    status = runCommand("demo", usage: DemoCommand.usage) { try DemoCommand.run(rest) }
case "status":
    status = runCommand("status", usage: StatusCommand.usage) { try StatusCommand.run(rest) }
case "bookmarks":
    status = runCommand("bookmarks", usage: BookmarksCommand.usage) { try BookmarksCommand.run(rest) }
case "bench":
    status = runCommand("bench", usage: BenchCommand.usage) { try BenchCommand.run(rest) }
case "bench-timeline":
    status = runCommand("bench-timeline", usage: TimelineBenchCommand.usage) { try TimelineBenchCommand.run(rest) }
case "bench-store":
    status = runCommand("bench-store", usage: StoreBenchCommand.usage) { try StoreBenchCommand.run(rest) }
case BenchExchangeCommand.commandName:
    // Internal: the fixed exchange `make check-budget` drives while callgrind counts the daemon.
    status = runCommand(BenchExchangeCommand.commandName, usage: BenchExchangeCommand.usage) { try BenchExchangeCommand.run(rest) }
case BenchEchoServer.commandName:
    // Internal: the raw ping-pong peer the bench spawns (not a user command).
    status = BenchEchoServer.run(rest)
case "-h", "--help", "help":
    say(topUsage)
    status = ExitCode.ok
case "":
    warn("snapback: a command is needed\n\n\(topUsage)")
    status = ExitCode.usage
default:
    warn("snapback: unknown command '\(arguments[1])'\n\n\(topUsage)")
    status = ExitCode.usage
}
exit(status)
