// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackCommandLine

/// `snapback-bench daemon`: snapbackd's SeekEnded → snapback push round trip against the floor, a raw Unix-socket
/// ping-pong with the same frame sizes, in one run (pin every end to one CPU, alternate rounds, report
/// medians, read CPU from /proc); and, as modes, the cold path (requests spaced apart), the round trip
/// under load, and the memory each session costs.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract:
            "snapbackd's SeekEnded → snapback push round trip vs a raw Unix-socket ping-pong; cold path, load, memory per session.",
        discussion: prose(
            """
            Without a mode, measures snapbackd's snapback round trip — a SeekEnded that crosses an unwatched
            break, answered by a seek push and the reply in one write — against the floor: a raw Unix-socket
            ping-pong with the same bytes. The raw peer is a separate process on a socketpair that reads the
            request and writes back what snapbackd wrote (blocking recv/send); a second peer does the same
            behind epoll_wait, reading once per wake-up as libuv does, to show what an event loop alone costs.
            Everything is pinned to one CPU (sched_setaffinity). Within a round the three are measured in
            interleaved batches (raw, epoll echo, snapbackd, raw, …), so that whatever else the machine does
            weighs on all three alike; each round reports p50/p99, and the summary takes the median over
            rounds, with each server's CPU per call (/proc/PID/task/*/schedstat) and snapbackd's RSS. The last
            line reads: ratio p50 snapbackd/raw = X.XX (the target is at most 1.30).

            The modes (any of them, in one run; each starts its own snapbackd):
              --spacing MS  the cold path: --probes round trips MS milliseconds apart,
                            snapbackd and the epoll echo alternately, pinned to one CPU;
                            ratio p50 snapbackd/epoll echo. With --libuv-echo, a third
                            peer takes its turn: the same echo behind libuv
                            (snapback-uv-echo, built by make bench), which splits the
                            ratio into libuv's share and snapbackd's; the target is
                            snapbackd at most 1.30× that echo, the design's own floor.
              --load        the round trip's p99 while --load-connections connections
                            (default 1,000) with --load-sessions sessions each (default 10)
                            report the playhead --load-hz times a second (default 4),
                            against the p99 of the same probes unloaded (the load paused,
                            its sessions open), round trips 2 ms apart, not pinned; the
                            two alternate over --rounds rounds of --probes/--rounds each;
                            the median of the rounds' ratios loaded/unloaded p99 (the
                            target is at most 2). Also the memory per session under load.
              --sessions N  memory per session: snapbackd's resident memory idle, with the
                            connections open (--sessions-per-connection, default 64), with
                            N sessions open (3 breaks each), and after they closed; (with
                            sessions − with connections) / N is the figure (the target is
                            at most 2 KiB).

            Every bench starts its own snapbackd (temporary socket, state directory and an empty
            configuration file, log level warning). --json prints one JSON document instead of text, with a
            member per bench run (round_trip, spacing, load, sessions).

            Exit status: 0 when the run completed, 1 when it failed, 2 for a bad command line.
            """))

    @OptionGroup var daemon: DaemonOption
    @Option(name: .long, help: ArgumentHelp("Measured round trips of each kind per round.", valueName: "n"))
    var iterations = 20_000
    @Option(name: .long, help: ArgumentHelp("Round trips of one kind before switching to the next.", valueName: "n"))
    var batch = 1000
    @Option(name: .long, help: ArgumentHelp("Unmeasured round trips of each kind before each round.", valueName: "n"))
    var warmup = 2_000
    @Option(name: .long, help: ArgumentHelp("Rounds of the round trip bench and of --load.", valueName: "n"))
    var rounds = 5
    @Option(name: .long, help: ArgumentHelp("The CPU everything is pinned to.", valueName: "n"))
    var cpu = 0
    @Option(name: .long, help: ArgumentHelp("Cold path: round trips this many milliseconds apart.", valueName: "ms"))
    var spacing: Int?
    @Option(
        name: .customLong("libuv-echo"),
        help: ArgumentHelp("--spacing's libuv floor: snapback-uv-echo (make bench builds it).", valueName: "path"),
        completion: .file())
    var libuvEcho: String?
    @Flag(name: .long, help: "The round trip's p99 under load against unloaded.")
    var load = false
    @Option(name: .long, help: ArgumentHelp("Memory per session with this many sessions open.", valueName: "n"))
    var sessions: Int?
    @Option(name: .long, help: ArgumentHelp("Measured round trips of --spacing and --load.", valueName: "n"))
    var probes = 2_000
    @Option(name: .customLong("load-connections"), help: ArgumentHelp("Connections of --load.", valueName: "n"))
    var loadConnections = 1_000
    @Option(name: .customLong("load-sessions"), help: ArgumentHelp("Sessions per connection of --load.", valueName: "n"))
    var loadSessions = 10
    @Option(
        name: .customLong("load-hz"), help: ArgumentHelp("Playhead reports per session per second of --load.", valueName: "n"))
    var loadHz = 4
    @Option(
        name: .customLong("sessions-per-connection"),
        help: ArgumentHelp("Sessions per connection of --sessions.", valueName: "n"))
    var sessionsPerConnection = 64
    @Flag(name: .long, help: "Print one JSON document instead of text.")
    var json = false

    func validate() throws {
        try checkRange(iterations, "--iterations", 100...10_000_000)
        try checkRange(batch, "--batch", 1...10_000_000)
        try checkRange(warmup, "--warmup", 0...10_000_000)
        try checkRange(rounds, "--rounds", 1...1000)
        try checkRange(cpu, "--cpu", 0...1023)
        if let spacing { try checkRange(spacing, "--spacing", 1...1000) }
        if let sessions { try checkRange(sessions, "--sessions", 1...100_000) }
        try checkRange(probes, "--probes", 100...1_000_000)
        try checkRange(loadConnections, "--load-connections", 1...10_000)
        try checkRange(loadSessions, "--load-sessions", 1...64)
        try checkRange(loadHz, "--load-hz", 1...100)
        try checkRange(sessionsPerConnection, "--sessions-per-connection", 1...64)
        if load && probes / rounds < 10 {
            throw ValidationError("--probes: '\(probes)' is fewer than 10 per round of --load (--rounds \(rounds))")
        }
        try daemon.checkExecutable()
        if let libuvEcho {
            guard spacing != nil else { throw ValidationError("--libuv-echo: only with --spacing") }
            try checkExecutable(libuvEcho, "--libuv-echo")
        }
    }

    func run() throws {
        let options = BenchOptions(
            daemonPath: daemon.path, iterations: iterations, batch: batch, warmup: warmup,
            rounds: rounds, cpu: cpu, selfPath: Self.executablePath() ?? "", probes: probes,
            loadConnections: loadConnections, loadSessions: loadSessions, loadHz: loadHz,
            sessionsPerConnection: sessionsPerConnection, libuvEchoPath: libuvEcho)
        let out = BenchOutput(json: json)
        let directory = try Processes.makeTemporaryDirectory("snapback-bench")
        BenchCleanup.install(directory: directory)
        defer { Processes.removeTree(directory) }
        var document: [(String, JSON)] = []
        if spacing == nil && !load && sessions == nil {
            document.append(("round_trip", try RoundTripBench(options, out).run(in: directory)))
        }
        if let spacing {
            document.append(("spacing", try SpacingBench(options: options, out: out, milliseconds: spacing).run(in: directory)))
        }
        if load {
            document.append(("load", try LoadBench(options: options, out: out).run(in: directory)))
        }
        if let sessions {
            document.append(
                ("sessions", try SessionMemoryBench(options: options, out: out, sessions: sessions).run(in: directory)))
        }
        if json { say(JSON.object(JSON.Members(document)).rendered) }
    }

    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func dirname(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// What every bench mode needs from the command line.
struct BenchOptions {
    var daemonPath: String
    var iterations: Int
    var batch: Int
    var warmup: Int
    var rounds: Int
    var cpu: Int
    var selfPath: String
    var probes: Int
    var loadConnections: Int
    var loadSessions: Int
    var loadHz: Int
    var sessionsPerConnection: Int
    /// snapback-uv-echo, the libuv floor of --spacing, when given.
    var libuvEchoPath: String?
}

/// Where a bench's text goes: stdout as it comes, or nowhere with --json (the document is printed at
/// the end instead).
struct BenchOutput {
    let json: Bool

    func line(_ text: String = "") {
        if !json { say(text) }
    }
}
