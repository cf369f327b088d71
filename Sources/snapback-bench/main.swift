// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCommandLine

// snapback-bench: snapbackd's benchmarks and the exchange `make check-budget` drives. Built with the
// package, not installed: a lab tool beside the operator's `snapback`.

/// The root command: the benchmarks, and the internal commands they and `make check-budget` start.
struct SnapbackBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapback-bench",
        abstract:
            "snapbackd's benchmarks: the round trip and its floors, the cold path, load, memory, timeline, store, fleet aggregator.",
        discussion: prose(
            """
            `make bench` runs them with their baselines. daemon takes --json: one JSON document on stdout; \
            timeline, store and fleet print text. Every bench that needs a daemon starts its own (--snapbackd, by \
            default the snapbackd next to this executable).

            Exit status: 0 on success, 1 when the bench failed, 2 for a bad command line.
            """),
        subcommands: [
            BenchCommand.self, TimelineBenchCommand.self, StoreBenchCommand.self, FleetBenchCommand.self,
            // Internal: the fixed exchange `make check-budget` drives while callgrind counts the daemon,
            // the raw ping-pong peer and the load process `daemon` spawns. Not listed in the help.
            BenchExchangeCommand.self, BenchEchoServer.self, BenchLoadGenerator.self
        ]
    )

    /// No command: a bad command line (exit 2).
    func run() throws {
        throw ValidationError("a command is needed")
    }
}

exit(runCommandLine(SnapbackBench.self))
