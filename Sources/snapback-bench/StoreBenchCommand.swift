// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// `snapback-bench store`: the durable store under load, through a real snapbackd.
/// - saves per second and save latency (Pause request sent → BookmarkSaved push received) with 100
///   sessions saving as fast as they are acknowledged;
/// - the loop's message latency (GetStatus round trips from another client) idle, under a paced load
///   that commits nothing, and under the same load where every tick commits a bookmark: commits run on
///   the writer thread, so the last must not be slower than the second;
/// - commits and bytes written per minute by the periodic bookmarks of N playing sessions, with group
///   commit and without (``GroupCommitBench``).
struct StoreBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The SQLite store: saves/s, save latency, loop latency while committing, commits per minute.",
        discussion: prose(
            """
            Starts its own snapbackd (temporary socket and state directory, log level warning) and measures
            the SQLite store through it:

              1. throughput: N sessions (one connection each) save bookmarks in a closed
                 loop — play, pause, wait for BookmarkSaved — for S seconds: saves/s,
                 p50/p99 save latency.
              2. loop latency: a separate client sends GetStatus round trips back to back
                 while
                 a. nothing else happens (idle);
                 b. the N sessions each send two playhead reports every MS ms (no
                    commits);
                 c. the N sessions each send a playhead report and a Pause every MS ms
                    (one commit each);
                 d. one session saves in a closed loop: the writer is always committing,
                    the loop has little else to do.
                 p50/p99 per case; c/b and d/a are what the store's commits cost the loop.
              3. group commit: the periodic bookmarks of the N sessions playing for a
                 minute (30-second interval, each started at its own moment), in process
                 — the daemon's service and the SQLite store on a virtual clock —
                 a. with each save its own commit and each session on its own timer (what
                    snapbackd did before group commit),
                 b. as snapbackd does: bookmark timers on a shared 5-second tick, each
                    tick's saves in one transaction.
                 Saves, commits (each one fdatasync of the WAL), KiB passed to write(2)
                 and KiB that reached the block device (/proc/self/io; 0 on tmpfs) per
                 minute, and the ratios a/b.

            Pinning (sched_setaffinity, when both CPUs are available) keeps the loop and its probe on one
            CPU, as in `snapback-bench daemon`, so that the probe measures the loop, not the scheduler; the
            players of phase 2 run on the other CPU, those of phase 1 anywhere. Phase 2
            ends with the line `ratio loop p99 committing/no-commit load (c/b) = X.XX` (the target: about 1, no
            rise); d/a, the loop beside a writer that never stops committing, should be about 1 too.
            --group-commit-only runs phase 3 alone (no daemon).
            """))

    @OptionGroup var daemon: DaemonOption
    @Option(name: .long, help: ArgumentHelp("Concurrent sessions.", valueName: "n")) var sessions = 100
    @Option(name: .long, help: ArgumentHelp("Length of each measured phase.", valueName: "s")) var seconds = 5
    @Option(name: .long, help: ArgumentHelp("Tick of each session in phases 2b and 2c.", valueName: "ms"))
    var interval = 100
    @Option(
        name: .customLong("loop-cpu"),
        help: ArgumentHelp(
            "CPU for snapbackd's loop thread and the GetStatus client.", valueName: "n"))
    var loopCPU = 0
    @Option(
        name: .customLong("other-cpu"),
        help: ArgumentHelp(
            "CPU for the store's writer thread and the players.", valueName: "n"))
    var otherCPU = 1
    @Flag(name: .customLong("no-pin"), help: "Pin nothing (a cross-CPU wake-up costs 50-90 µs and blurs the figures).")
    var noPin = false
    @Flag(
        name: .customLong("group-commit-only"), help: "Run only phase 3, the periodic bookmarks' commits per minute (in process)."
    )
    var groupCommitOnly = false

    func validate() throws {
        try checkRange(sessions, "--sessions", 1...1000)
        try checkRange(seconds, "--seconds", 1...600)
        try checkRange(interval, "--interval", 1...10_000)
        try checkRange(loopCPU, "--loop-cpu", 0...1023)
        try checkRange(otherCPU, "--other-cpu", 0...1023)
        if !groupCommitOnly { try daemon.checkExecutable() }
    }

    func run() throws {
        let pin = !noPin && loopCPU != otherCPU && Processes.cpuAllowed(loopCPU) && Processes.cpuAllowed(otherCPU)
        Self.cpus = pin ? (loopCPU, otherCPU) : nil
        if !groupCommitOnly {
            try Self.measure(
                daemonPath: daemon.path, sessions: sessions, seconds: seconds,
                interval: interval)
        }
        try GroupCommitBench.report(sessions: sessions)
    }

    static func measure(daemonPath: String, sessions: Int, seconds: Int, interval: Int) throws {
        let directory = try Processes.makeTemporaryDirectory("snapback-bench-store")
        let socket = directory + "/snapbackd.sock"
        let pid = try Processes.spawn(
            daemonPath, ["--socket", socket, "--state-dir", directory + "/state", "--log-level", "warning"])
        defer {
            kill(pid, SIGTERM)
            _ = Processes.wait(pid, seconds: 10)
            Processes.removeTree(directory)
        }
        try Processes.waitForSocket(socket, daemon: pid)
        let threads = Processes.threads(of: pid)
        if let (loop, other) = cpus {
            // The loop is the daemon's main thread; the other one is the store's writer.
            for tid in threads { _ = Processes.pin(tid, cpu: tid == pid ? loop : other) }
        }

        say("snapbackd \(daemonPath), state in \(directory)/state (SQLite, WAL, synchronous=FULL)")
        say(
            "\(sessions) sessions, \(seconds) s per phase, \(threads.count) daemon threads, "
                + (cpus.map { "loop + probe on CPU \($0.0), writer + players on CPU \($0.1)" } ?? "unpinned"))

        // 1. Throughput.
        let saving = try runPhase(
            socket: socket, sessions: sessions, seconds: seconds, mode: .saveClosedLoop, tag: "t", probe: false)
        let saves = saving.saveLatencies
        say("")
        say(
            "1. saves, closed loop: \(fixed(Double(saves.count) / Double(seconds), 0)) saves/s (\(saves.count) acknowledged), "
                + "latency p50 \(ms(percentile(saves, 0.50))) p99 \(ms(percentile(saves, 0.99))) max \(ms(saves.max() ?? 0))")

        // 2. Loop latency.
        let idle = try runPhase(socket: socket, sessions: 0, seconds: seconds, mode: .idle, tag: "i", probe: true)
        let load = try runPhase(
            socket: socket, sessions: sessions, seconds: seconds,
            mode: .paced(intervalMs: interval, save: false), tag: "l", probe: true)
        let commit = try runPhase(
            socket: socket, sessions: sessions, seconds: seconds,
            mode: .paced(intervalMs: interval, save: true), tag: "c", probe: true)
        let busyWriter = try runPhase(socket: socket, sessions: 1, seconds: seconds, mode: .saveClosedLoop, tag: "d", probe: true)
        say("")
        say("2. loop latency, GetStatus round trips from another client (µs):")
        say("   " + padRight("case", 44) + padLeft("p50", 8) + padLeft("p99", 9) + padLeft("p99.9", 9) + padLeft("calls", 9))
        for (name, phase) in [
            ("a. idle", idle),
            ("b. \(sessions) sessions, 2 playhead reports/tick", load),
            ("c. \(sessions) sessions, playhead + Pause/tick", commit),
            ("d. 1 session saving in a closed loop", busyWriter)
        ] {
            let p = phase.probeLatencies
            say(
                "   " + padRight(name, 44) + padLeft(us(percentile(p, 0.50)), 8) + padLeft(us(percentile(p, 0.99)), 9)
                    + padLeft(us(percentile(p, 0.999)), 9) + padLeft("\(p.count)", 9))
        }
        let commitSaves = commit.saveLatencies
        say(
            "   during c: \(fixed(Double(commitSaves.count) / Double(seconds), 0)) saves/s committed, "
                + "save latency p50 \(ms(percentile(commitSaves, 0.5))) p99 \(ms(percentile(commitSaves, 0.99)))")
        let busySaves = busyWriter.saveLatencies
        say(
            "   during d: \(fixed(Double(busySaves.count) / Double(seconds), 0)) saves/s committed (one fsynced commit each), "
                + "save latency p50 \(ms(percentile(busySaves, 0.5))) p99 \(ms(percentile(busySaves, 0.99)))")
        let p99 = (
            idle: percentile(idle.probeLatencies, 0.99), load: percentile(load.probeLatencies, 0.99),
            commit: percentile(commit.probeLatencies, 0.99), busy: percentile(busyWriter.probeLatencies, 0.99)
        )
        say("")
        say("ratio loop p99 c/a (\(sessions) sessions committing / idle) = \(fixed(p99.commit / p99.idle, 2))")
        say("ratio loop p99 d/a (writer always committing / idle) = \(fixed(p99.busy / p99.idle, 2))")
        say("ratio loop p99 committing/no-commit load (c/b) = \(fixed(p99.commit / p99.load, 2))")
    }

    /// (loop CPU, other CPU) when pinning.
    nonisolated(unsafe) static var cpus: (Int, Int)?

    // MARK: Phases

    enum Mode: Sendable {
        case idle
        /// Play, pause, wait for BookmarkSaved, again at once.
        case saveClosedLoop
        /// Every `intervalMs`: two playhead reports, or a playhead report and a Pause (a commit).
        case paced(intervalMs: Int, save: Bool)
    }

    struct PhaseResult {
        /// Nanoseconds from the Pause request to its BookmarkSaved push.
        var saveLatencies: [UInt64] = []
        /// Nanoseconds per GetStatus round trip.
        var probeLatencies: [UInt64] = []
    }

    /// Connects the players (and the probe), lets them run for `seconds` from a common start, joins.
    static func runPhase(socket: String, sessions: Int, seconds: Int, mode: Mode, tag: String, probe: Bool) throws -> PhaseResult
    {
        let start = monotonicNanoseconds() + 300_000_000 + UInt64(sessions) * 2_000_000
        let end = start + UInt64(seconds) * 1_000_000_000
        var workers: [Worker] = []
        for i in 0..<sessions {
            workers.append(Worker(socket: socket, role: .player(mode, key: "\(tag)\(i)"), probing: probe, start: start, end: end))
        }
        if probe { workers.append(Worker(socket: socket, role: .probe, probing: true, start: start, end: end)) }
        for w in workers { try w.spawn() }
        var result = PhaseResult()
        var failures: [String] = []
        for w in workers {
            w.join()
            if let failure = w.failure { failures.append(failure) }
            switch w.role {
            case .probe: result.probeLatencies += w.samples
            case .player: result.saveLatencies += w.samples
            }
        }
        if !failures.isEmpty {
            throw CommandError("\(failures.count) client(s) failed, first: \(failures[0])")
        }
        return result
    }

    /// One client on its own thread.
    final class Worker: @unchecked Sendable {
        enum Role { case player(Mode, key: String), probe }
        let socket: String
        let role: Role
        /// A probe runs in this phase.
        let probing: Bool
        let start: UInt64
        let end: UInt64
        private(set) var samples: [UInt64] = []
        private(set) var failure: String?
        private var thread = pthread_t()

        init(socket: String, role: Role, probing: Bool, start: UInt64, end: UInt64) {
            self.socket = socket
            self.role = role
            self.probing = probing
            self.start = start
            self.end = end
        }

        func spawn() throws {
            let context = Unmanaged.passRetained(self).toOpaque()
            let rc = pthread_create(
                &thread, nil,
                { raw in
                    let worker = Unmanaged<Worker>.fromOpaque(raw!).takeRetainedValue()
                    worker.main()
                    return nil
                }, context)
            guard rc == 0 else {
                Unmanaged<Worker>.fromOpaque(context).release()
                throw CommandError("pthread_create: \(String(cString: strerror(rc)))")
            }
        }

        func join() { pthread_join(thread, nil) }

        private func main() {
            if let (loop, other) = StoreBenchCommand.cpus {
                switch role {
                case .probe: _ = Processes.pin(0, cpu: loop)
                case .player(.saveClosedLoop, _) where !probing:
                    break  // free: 100 players on the writer's CPU would starve it
                case .player: _ = Processes.pin(0, cpu: other)
                }
            }
            do {
                let client = try SnapbackClient(socketPath: socket, clientName: "bench-store", timeout: .seconds(10))
                switch role {
                case .probe: try probe(client)
                case .player(let mode, let key): try play(client, mode: mode, key: key)
                }
            } catch {
                failure = "\(error)"
            }
        }

        private func waitForStart() {
            let now = monotonicNanoseconds()
            if now < start { sleepNanoseconds(start - now) }
        }

        private func probe(_ client: SnapbackClient) throws {
            samples.reserveCapacity(200_000)
            waitForStart()
            while true {
                let t0 = monotonicNanoseconds()
                if t0 >= end { break }
                let _: SnapbackV1.StatusReply = try client.call(.getStatus)
                samples.append(monotonicNanoseconds() - t0)
            }
        }

        private func play(_ client: SnapbackClient, mode: Mode, key: String) throws {
            let session = try client.openSession(
                OpenSessionRequest(
                    streamId: "bench-\(key)", contentId: "bench-\(key)", profile: "bench", kind: .onDemand, breaks: [],
                    contentDuration: 1_000_000, preset: .snapback)
            ).sessionId
            _ = client.takePushes()
            waitForStart()
            var t = 1.0
            var tick = start
            while monotonicNanoseconds() < end {
                switch mode {
                case .idle:
                    return
                case .saveClosedLoop:
                    try save(client, session, at: t)
                case .paced(let intervalMs, let save):
                    if save {
                        try self.save(client, session, at: t)
                    } else {
                        try client.send(.playheadReported(streamTime: t, rate: 1, playing: true), session: session)
                        try client.send(.playheadReported(streamTime: t + 0.5, rate: 1, playing: true), session: session)
                    }
                    tick += UInt64(intervalMs) * 1_000_000
                    let now = monotonicNanoseconds()
                    if tick > now { sleepNanoseconds(tick - now) }
                }
                t += 1
            }
            _ = try? client.closeSession(session)
        }

        /// Play at `t`, pause at `t`, wait for the BookmarkSaved of `t`.
        private func save(_ client: SnapbackClient, _ session: UInt64, at t: Double) throws {
            try client.send(.playheadReported(streamTime: t, rate: 1, playing: true), session: session)
            let t0 = monotonicNanoseconds()
            var pushes = try client.send(.paused(streamTime: t), session: session)
            while true {
                for push in pushes {
                    switch push.kind {
                    case .bookmarkSaved(let c, _, _) where c == t:
                        samples.append(monotonicNanoseconds() - t0)
                        return
                    case .sessionError(let code, let message):
                        throw CommandError("session error \(code.name): \(message)")
                    default:
                        continue
                    }
                }
                pushes = [try client.nextPush(timeout: .seconds(10))]
            }
        }
    }
}

private func sleepNanoseconds(_ ns: UInt64) {
    var request = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// The `q` quantile of nanosecond samples (nearest rank), in nanoseconds; 0 for none.
private func percentile(_ samples: [UInt64], _ q: Double) -> Double {
    guard !samples.isEmpty else { return 0 }
    let sorted = samples.sorted()
    let rank = min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
    return Double(sorted[rank])
}

private func ms(_ ns: Double) -> String { fixed(ns / 1e6, 2) + " ms" }
private func ms(_ ns: UInt64) -> String { ms(Double(ns)) }
private func us(_ ns: Double) -> String { fixed(ns / 1e3, 1) }
