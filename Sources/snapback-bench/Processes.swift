// SPDX-License-Identifier: Apache-2.0
import CLinux
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine

/// Child processes, CPU pinning and /proc readings for the bench (Glibc only).
enum Processes {
    /// Starts `path` with `arguments` (argv[0] is `path`). `inheritFd` is passed to the child as fd 3;
    /// stdout goes to /dev/null when `quietStdout`. The child inherits this thread's CPU affinity.
    static func spawn(_ path: String, _ arguments: [String], inheritFd: Int32? = nil, quietStdout: Bool = true) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quietStdout {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        }
        if let fd = inheritFd {
            // dup2 onto 3 clears close-on-exec on the copy (glibc ≥ 2.29 does so even when fd is 3).
            posix_spawn_file_actions_adddup2(&actions, fd, 3)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard result == 0 else {
            throw CommandError("cannot start \(path): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Starts `path` with one end of a new socketpair as its fd 3 (and killed on a signal to the bench);
    /// returns it and this process's end.
    static func spawnWithSocket(_ path: String, _ arguments: [String]) throws -> (pid: pid_t, fd: Int32) {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw CommandError("socketpair: \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(ends[1]) }
        do {
            let pid = try spawn(path, arguments, inheritFd: ends[1])
            BenchCleanup.killOnSignal(pid)
            return (pid, ends[0])
        } catch {
            Glibc.close(ends[0])
            throw error
        }
    }

    /// The child's exit status if it has ended (reaping it), nil while it runs.
    static func reap(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        guard r == pid else { return r < 0 ? -1 : nil }
        return status
    }

    /// Waits up to `seconds` for the child; kills it (SIGKILL) after that. Returns a description of how it
    /// ended and whether it exited 0.
    static func wait(_ pid: pid_t, seconds: Double) -> (text: String, clean: Bool) {
        let steps = Int(seconds * 200)
        for _ in 0..<max(1, steps) {
            if let status = reap(pid) { return describe(status) }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return ("did not exit within \(fixed(seconds, 0)) s, killed", false)
    }

    static func describe(_ status: Int32) -> (text: String, clean: Bool) {
        if status == -1 { return ("already reaped", false) }
        let signal = status & 0x7f
        if signal == 0 {
            let code = (status >> 8) & 0xff
            return ("exited \(code)", code == 0)
        }
        return ("killed by signal \(signal)", false)
    }

    // MARK: CPU affinity

    /// Restricts a thread (`tid` 0: the calling one) to one CPU.
    static func pin(_ tid: pid_t, cpu: Int) -> Bool {
        guard let cpu = Int32(exactly: cpu) else { return false }
        return snapback_pin_thread(tid, cpu) == 0
    }

    /// Whether this thread may run on `cpu`.
    static func cpuAllowed(_ cpu: Int) -> Bool {
        guard let cpu = Int32(exactly: cpu) else { return false }
        return snapback_cpu_allowed(cpu) == 1
    }

    /// Pins every thread of a process.
    static func pinAllThreads(of pid: pid_t, cpu: Int) -> Bool {
        var ok = true
        for tid in threads(of: pid) { ok = pin(tid, cpu: cpu) && ok }
        return ok
    }

    // MARK: /proc

    static func threads(of pid: pid_t) -> [pid_t] {
        guard let dir = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(dir) }
        var tids: [pid_t] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if let tid = pid_t(name) { tids.append(tid) }
        }
        return tids
    }

    /// Nanoseconds on a CPU, summed over the process's threads (first field of schedstat).
    static func cpuNanoseconds(of pid: pid_t) -> UInt64? {
        var total: UInt64 = 0
        var any = false
        for tid in threads(of: pid) {
            guard let text = readFile("/proc/\(pid)/task/\(tid)/schedstat"),
                let first = text.split(separator: " ").first, let ns = UInt64(first)
            else { continue }
            total += ns
            any = true
        }
        return any ? total : nil
    }

    /// A `kB` field of /proc/PID/status (VmRSS, VmHWM), in KiB.
    static func statusKiB(_ field: String, of pid: pid_t) -> Int? {
        guard let text = readFile("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
            return number.flatMap { Int($0) }
        }
        return nil
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Files

    /// A new private directory under /tmp (short: a socket path must fit in 108 bytes).
    static func makeTemporaryDirectory(_ prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CommandError("mkdtemp: \(String(cString: strerror(errno)))") }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Removes a file or a directory tree (does not follow symbolic links).
    static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            if let dir = opendir(path) {
                var names: [String] = []
                while let entry = readdir(dir) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                    }
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(dir)
                for name in names { removeTree(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// Monotonic nanoseconds (vDSO `clock_gettime`).
@inline(__always)
/// This thread's CPU time (user and system) in nanoseconds.
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

extension Processes {
    /// Waits up to 5 s until the daemon `pid` accepts connections on `path`; fails if it exits first.
    static func waitForSocket(_ path: String, daemon pid: pid_t) throws {
        for _ in 0..<500 {
            if let status = reap(pid) {
                throw CommandError("snapbackd \(describe(status).text) during start-up")
            }
            if let probe = try? FrameSocket(connectingTo: path) {
                probe.close()
                return
            }
            usleep(10_000)
        }
        throw CommandError("snapbackd did not accept connections on \(path) within 5 s")
    }
}
