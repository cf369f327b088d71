// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackCommandLine

/// A snapbackd the bench starts for one measurement: its own socket, state directory and configuration
/// file under the bench's temporary directory (so that nothing in /etc changes what is measured), at log
/// level warning. Stopped with SIGTERM; a signal to the bench kills it (``BenchCleanup``).
final class BenchDaemon {
    let pid: pid_t
    let socketPath: String

    /// Starts `path` as `name` under `directory` with `configuration` (the lines of a snapbackd.conf)
    /// and waits until it accepts connections.
    init(_ path: String, in directory: String, name: String, configuration: [String] = []) throws {
        socketPath = directory + "/" + name + ".sock"
        let configPath = directory + "/" + name + ".conf"
        try Self.write(configuration.map { $0 + "\n" }.joined(), to: configPath)
        BenchCleanup.removeOnSignal(socketPath)
        pid = try Processes.spawn(
            path,
            [
                "--socket", socketPath, "--state-dir", directory + "/" + name + "-state",
                "--config", configPath, "--log-level", "warning"
            ])
        BenchCleanup.killOnSignal(pid)
        do {
            try Processes.waitForSocket(socketPath, daemon: pid)
        } catch {
            if Processes.reap(pid) == nil { _ = stop() }
            BenchCleanup.forget(pid)
            throw error
        }
    }

    private var stopped: (text: String, clean: Bool)?

    /// Resident memory now, in KiB (VmRSS).
    var rssKiB: Int? { Processes.statusKiB("VmRSS", of: pid) }

    /// Waits until the resident memory has not changed for `quiet` seconds (the loop is idle and the
    /// store's writer has settled), at most `limit` seconds; returns it.
    func settledRSS(quiet: Double = 0.5, limit: Double = 10) -> Int? {
        var last = rssKiB
        var stableSince = monotonicNanoseconds()
        let start = stableSince
        while Double(monotonicNanoseconds() - start) / 1e9 < limit {
            usleep(100_000)
            let now = rssKiB
            if now != last {
                last = now
                stableSince = monotonicNanoseconds()
            } else if Double(monotonicNanoseconds() - stableSince) / 1e9 >= quiet {
                break
            }
        }
        return last
    }

    /// SIGTERM, then waits up to 5 s (SIGKILL after that). Idempotent.
    @discardableResult
    func stop() -> (text: String, clean: Bool) {
        if let stopped { return stopped }
        kill(pid, SIGTERM)
        let result = Processes.wait(pid, seconds: 5)
        BenchCleanup.forget(pid)
        stopped = result
        return result
    }

    deinit { stop() }

    static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        Output.write(text, to: fd)
    }
}

/// What a signal to the bench must not leave behind: its child processes (killed) and its temporary
/// sockets and directory (removed, best effort: unlink and rmdir are async-signal-safe, a recursive
/// removal is not). Fixed slots in memory allocated once, since the handler may read them at any time.
enum BenchCleanup {
    static let slots = 16
    nonisolated(unsafe) private static let pids: UnsafeMutablePointer<pid_t> = {
        let p = UnsafeMutablePointer<pid_t>.allocate(capacity: slots)
        p.initialize(repeating: 0, count: slots)
        return p
    }()
    /// Files to unlink, then the directory to remove last.
    nonisolated(unsafe) private static let paths: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let p = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: slots + 1)
        p.initialize(repeating: nil, count: slots + 1)
        return p
    }()

    /// Installs the handler for SIGINT, SIGTERM and SIGHUP; `directory` is removed last.
    static func install(directory: String) {
        paths[slots] = strdup(directory)
        let handler: @convention(c) (Int32) -> Void = { signal in
            for i in 0..<BenchCleanup.slots where BenchCleanup.pids[i] > 0 { kill(BenchCleanup.pids[i], SIGKILL) }
            for i in 0..<BenchCleanup.slots {
                if let path = BenchCleanup.paths[i] { unlink(path) }
            }
            if let directory = BenchCleanup.paths[BenchCleanup.slots] { rmdir(directory) }
            _exit(128 + signal)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        signal(SIGHUP, handler)
    }

    static func killOnSignal(_ pid: pid_t) {
        if let free = (0..<slots).first(where: { pids[$0] == 0 }) { pids[free] = pid }
    }

    static func forget(_ pid: pid_t) {
        for i in 0..<slots where pids[i] == pid { pids[i] = 0 }
    }

    static func removeOnSignal(_ path: String) {
        if let free = (0..<slots).first(where: { paths[$0] == nil }) { paths[free] = strdup(path) }
    }
}
