// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import CLinux
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// `snapback-bench daemon --load`: the snapback round trip's p99 while many players report their playhead,
/// against the same probes unloaded. The load is a separate process (`snapback-bench load-generator`), so that
/// the probe's own process does nothing else; nothing is pinned (the daemon and the load need a CPU each).
/// Unloaded and loaded alternate over `rounds` rounds (the load paused, its sessions open, then running),
/// and the figure is the median of the rounds' ratios: a burst of noise from the host weighs on one round,
/// not on the whole of one side, as it did when each side was measured once.
struct LoadBench {
    let options: BenchOptions
    let out: BenchOutput
    static let probeSpacingMicroseconds: useconds_t = 2000

    func run(in directory: String) throws -> JSON {
        // The daemon and the load need a CPU each: undo an earlier mode's pinning before starting them.
        guard snapback_unpin_thread() == 0 else { throw CommandError("sched_setaffinity: \(String(cString: strerror(errno)))") }
        let connections = options.loadConnections
        let sessions = connections * options.loadSessions
        let daemon = try BenchDaemon(
            options.daemonPath, in: directory, name: "load",
            configuration: SessionMemoryBench.configuration(connections: connections + 1, sessions: sessions))
        let connection = try SnapbackProbe(socket: daemon.socketPath, clientName: "snapback-bench-probe")
        let probe = connection.loop
        try probe.run(200, samples: nil)
        let idle = daemon.settledRSS()

        let generator = try LoadGeneratorProcess(options, socket: daemon.socketPath)
        defer { generator.stop() }
        let ready = try generator.readLine(timeoutSeconds: 120)
        guard ready.hasPrefix("ready") else { throw CommandError("the load did not start: \(ready)") }
        usleep(1_000_000)
        let rounds = options.rounds
        let perPhase = options.probes / rounds
        var unloadedSamples: [UInt64] = []
        var loadedSamples: [UInt64] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            try generator.pause()
            usleep(100_000)
            let unloaded = try measure(probe, count: perPhase)
            try generator.resume()
            usleep(500_000)  // the load's schedule under way again
            let loaded = try measure(probe, count: perPhase)
            ratios.append(Self.p99(loaded) / Self.p99(unloaded))
            unloadedSamples += unloaded
            loadedSamples += loaded
        }
        let underLoad = daemon.rssKiB
        let counts = try generator.finish()

        connection.close()
        let stopped = daemon.stop()
        let unloaded = unloadedSamples.withUnsafeMutableBufferPointer { percentiles($0) }
        let loaded = loadedSamples.withUnsafeMutableBufferPointer { percentiles($0) }
        let ratio = median(ratios)
        let perSession = idle.flatMap { i in underLoad.map { Double($0 - i) * 1024 / Double(sessions) } }
        out.line("snapback-bench daemon --load: the snapback round trip under load vs unloaded")
        out.line("  checked    SeekEnded 5:00 → 15:00 → \(connection.firstPush)")
        out.line(
            "  load       \(connections) connections × \(options.loadSessions) sessions × \(options.loadHz) Hz playhead "
                + "reports (\(connections * options.loadSessions * options.loadHz) a second), from a separate process")
        out.line(
            "  method     \(rounds) rounds of \(perPhase) probe round trips \(Self.probeSpacingMicroseconds / 1000) ms apart "
                + "unloaded (the load paused, its sessions open), then as many loaded; not pinned")
        out.line(
            "  load sent  \(counts.sent) reports, \(counts.answered) answered, \(counts.errors) errors, "
                + "\(counts.late) answered later than the next report was due")
        out.line("              p50 µs   p99 µs   (all rounds)")
        out.line(percentileRow("unloaded", unloaded.p50, unloaded.p99))
        out.line(percentileRow("loaded", loaded.p50, loaded.p99))
        out.line("per round p99 loaded/unloaded: \(ratios.map { fixed($0, 2) }.joined(separator: " "))")
        out.line(
            "snapbackd RSS: idle \(idle.map { "\($0) KiB" } ?? "?"), under load \(underLoad.map { "\($0) KiB" } ?? "?")"
                + (perSession.map { " (\(fixed($0, 0)) B per session, connections included)" } ?? "")
                + "; SIGTERM → \(stopped.text)")
        out.line("target: loaded p99 within 2× unloaded: \(ratio <= 2 ? "met" : "missed")")
        out.line("ratio p99 loaded/unloaded = \(fixed(ratio, 2)) (the median of the rounds)")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }
        if counts.errors > 0 { throw CommandError("\(counts.errors) playhead reports of the load failed") }
        return .object([
            "connections": .uint(UInt64(connections)), "sessions_per_connection": .uint(UInt64(options.loadSessions)),
            "hz": .uint(UInt64(options.loadHz)), "probes": .uint(UInt64(options.probes)),
            "rounds": .uint(UInt64(rounds)), "ratios_p99_per_round": .array(ratios.map { .number($0) }),
            "reports_sent": .uint(UInt64(counts.sent)), "reports_answered": .uint(UInt64(counts.answered)),
            "reports_failed": .uint(UInt64(counts.errors)), "reports_late": .uint(UInt64(counts.late)),
            "unloaded": .object(["p50_us": .number(unloaded.p50), "p99_us": .number(unloaded.p99)]),
            "loaded": .object(["p50_us": .number(loaded.p50), "p99_us": .number(loaded.p99)]),
            "ratio_p99_loaded_unloaded": .number(ratio),
            "idle_rss_kib": .number(idle.map(Double.init)), "loaded_rss_kib": .number(underLoad.map(Double.init)),
            "bytes_per_session_loaded": .number(perSession), "target_met": .bool(ratio <= 2),
            "stopped": .string(stopped.text)
        ])
    }

    /// `count` round trips, each 2 ms after the last: their durations in nanoseconds.
    func measure(_ probe: PingPong, count: Int) throws -> [UInt64] {
        var samples = [UInt64](repeating: 0, count: count)
        try samples.withUnsafeMutableBufferPointer { buffer in
            for i in 0..<count {
                usleep(Self.probeSpacingMicroseconds)
                try probe.run(1, samples: UnsafeMutableBufferPointer(rebasing: buffer[i..<(i + 1)]))
            }
        }
        return samples
    }

    static func p99(_ samples: [UInt64]) -> Double {
        var copy = samples
        return copy.withUnsafeMutableBufferPointer { percentiles($0).p99 }
    }
}

/// The load process seen from the bench: started with a socket on its fd 3, on which it says `ready` once
/// its sessions are open, and its counts when told to stop (any byte).
final class LoadGeneratorProcess {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var stopped = false

    init(_ options: BenchOptions, socket: String) throws {
        (pid, fd) = try Processes.spawnWithSocket(
            options.selfPath.isEmpty ? "/proc/self/exe" : options.selfPath,
            [
                BenchLoadGenerator.commandName, "--socket", socket, "--connections", String(options.loadConnections),
                "--sessions", String(options.loadSessions), "--hz", String(options.loadHz)
            ])
    }

    /// The next line it writes, waiting at most `timeoutSeconds`.
    func readLine(timeoutSeconds: Int32) throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeoutSeconds * 1000)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw CommandError("the load process said nothing within \(timeoutSeconds) s") }
            var chunk = [UInt8](repeating: 0, count: 512)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw CommandError("the load process ended: \(Processes.wait(pid, seconds: 1).text)") }
            buffer += chunk[0..<n]
        }
    }

    /// Pauses the load and waits until it says it is paused (the answers it was due read).
    func pause() throws {
        Output.write("p", to: fd)
        let line = try readLine(timeoutSeconds: 30)
        guard line == "paused" else { throw CommandError("the load did not pause: \(line)") }
    }

    /// Resumes the load on a fresh schedule.
    func resume() throws { Output.write("r", to: fd) }

    /// Stops it and returns its counts.
    func finish() throws -> (sent: Int, answered: Int, errors: Int, late: Int) {
        Output.write("stop\n", to: fd)
        let line = try readLine(timeoutSeconds: 30)
        stop()
        var values: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let n = Int(parts[1]) { values[String(parts[0])] = n }
        }
        guard line.hasPrefix("done"), let sent = values["sent"], let answered = values["answered"],
            let errors = values["errors"], let late = values["late"]
        else {
            throw CommandError("the load process ended with: \(line)")
        }
        return (sent, answered, errors, late)
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        _ = Processes.wait(pid, seconds: 10)
        BenchCleanup.forget(pid)
        Glibc.close(fd)
    }
}
