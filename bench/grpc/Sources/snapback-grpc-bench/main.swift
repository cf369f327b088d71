// SPDX-License-Identifier: Apache-2.0
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SnapbackGRPCProto

// snapback-grpc-bench: `make bench-grpc`. Starts snapback-grpc-server on a temporary Unix socket and
// reads its idle RSS; then, in alternating rounds, times CALLS sequential SeekEnded calls through a
// gRPC-Swift-2 client (each answer checked: one snapback seek push back to 10:00, and the reply) and runs
// `snapback-bench daemon --json --rounds 1` for snapbackd's round trip of the same exchange; finally starts the
// release snapbackd alone and reads its idle RSS exactly as the gRPC server's. Prints both side by side
// with the ratios (medians over rounds), or one JSON document with --json.
//
// Run it pinned (`taskset -c CPU`, as the Makefile does): the gRPC server and this client inherit the
// pinning, and `snapback-bench daemon --cpu CPU` pins itself and snapbackd to the same CPU.

struct Options {
    var snapbackBench = ""
    var snapbackd = ""
    var server = ""
    var calls = 20_000
    var warmup = 2_000
    var rounds = 3
    var cpu = 0
    var json = false

    static let usage = "usage: snapback-grpc-bench --snapback-bench PATH --snapbackd PATH --server PATH "
        + "[--calls N] [--warmup N] [--rounds N] [--cpu N] [--json]"

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let name = rest.popFirst() {
            if name == "--json" {
                json = true
                continue
            }
            if name == "--help" || name == "-h" { throw Failure(Self.usage) }
            guard let value = rest.popFirst() else { throw Failure("\(name) needs a value") }
            switch name {
            case "--snapback-bench": snapbackBench = value
            case "--snapbackd": snapbackd = value
            case "--server": server = value
            case "--calls": calls = try Self.count(value, name, 100...10_000_000)
            case "--warmup": warmup = try Self.count(value, name, 0...10_000_000)
            case "--rounds": rounds = try Self.count(value, name, 1...100)
            case "--cpu": cpu = try Self.count(value, name, 0...1023)
            default: throw Failure("unknown option \(name)\n\(Self.usage)")
            }
        }
        guard !snapbackBench.isEmpty, !snapbackd.isEmpty, !server.isEmpty else { throw Failure(Self.usage) }
    }

    static func count(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let n = Int(text), range.contains(n) else {
            throw Failure("\(name): a count in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Processes

/// A field of /proc/PID/status, in KiB (VmRSS, VmHWM).
func statusKiB(_ field: String, of pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
    return nil
}

func threadIDs(of pid: Int32) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
}

/// Nanoseconds on CPU of every thread of a process (/proc/PID/task/*/schedstat).
func cpuNanoseconds(of pid: Int32) -> UInt64? {
    var total: UInt64 = 0
    let tasks = threadIDs(of: pid)
    guard !tasks.isEmpty else { return nil }
    for task in tasks {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
              let first = text.split(separator: " ").first, let ns = UInt64(first) else { continue }
        total &+= ns
    }
    return total
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The CPUs this process may run on, as /proc/self/status lists them ("0", "0-1", "0,2-3").
func allowedCPUs() -> String {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "?" }
    for line in text.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
        return line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
    }
    return "?"
}

/// Waits until a Unix socket accepts connections (the server is ready), at most 20 s.
func waitForSocket(_ path: String, _ process: Process, _ name: String) throws {
    let start = monotonicNanoseconds()
    while monotonicNanoseconds() - start < 20_000_000_000 {
        guard process.isRunning else { throw Failure("\(name) exited with status \(process.terminationStatus)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        if connected == 0 { return }
        usleep(5_000)
    }
    throw Failure("\(name) did not listen on \(path) within 20 s")
}

/// Idle resident memory, measured the same way for both servers: VmRSS as soon as the socket accepts a
/// connection, and once it has not changed for 0.5 s (at most 10 s).
struct IdleRSS {
    var readyKiB: Int
    var settledKiB: Int
    var threads: Int

    init(of process: Process, name: String) throws {
        let pid = process.processIdentifier
        guard let ready = statusKiB("VmRSS", of: pid) else { throw Failure("cannot read \(name)'s VmRSS") }
        var last = ready
        var stableSince = monotonicNanoseconds()
        let start = stableSince
        while monotonicNanoseconds() - start < 10_000_000_000 {
            usleep(100_000)
            guard let now = statusKiB("VmRSS", of: pid) else { throw Failure("\(name) exited") }
            if now != last {
                last = now
                stableSince = monotonicNanoseconds()
            } else if monotonicNanoseconds() - stableSince >= 500_000_000 {
                break
            }
        }
        readyKiB = ready
        settledKiB = last
        threads = threadIDs(of: pid).count
    }

    var json: [String: Any] { ["ready_kib": readyKiB, "settled_kib": settledKiB, "threads": threads] }
}

func start(_ path: String, _ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    return process
}

func stop(_ process: Process) {
    guard process.isRunning else { return }
    process.terminate()
    process.waitUntilExit()
}

// MARK: - Measurements

struct Round {
    var p50: Double
    var p99: Double
    /// Microseconds of server CPU per call.
    var serverCPU: Double?

    var json: [String: Any] {
        var members: [String: Any] = ["p50_us": p50, "p99_us": p99]
        if let serverCPU { members["server_cpu_us"] = serverCPU }
        return members
    }
}

func percentiles(_ samples: inout [UInt64]) -> (p50: Double, p99: Double) {
    samples.sort()
    let n = samples.count
    return (Double(samples[n / 2]) / 1000, Double(samples[min(n - 1, n * 99 / 100)]) / 1000)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let n = sorted.count
    guard n > 0 else { return .nan }
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
}

/// The gRPC side: one client connection, calls one after another, every answer checked.
struct GRPCProbe {
    let bench: Snapback_Bench_V1_TimelineBench.Client<HTTP2ClientTransport.Posix>
    let serverPID: Int32
    let request: Snapback_V1_SeekEndedRequest = {
        var request = Snapback_V1_SeekEndedRequest()
        request.sessionID = 1
        request.fromStreamTime = 300
        request.toStreamTime = 900
        return request
    }()

    /// One checked call; the push's reason, for the report.
    @discardableResult
    func call() async throws -> String {
        let answer = try await bench.seekEnded(request)
        guard answer.pushes.count == 1, case .seek(let seek)? = answer.pushes[0].kind, seek.streamTime == 600,
              seek.reason == .snapback, answer.reply.lastPushSeq == answer.pushes[0].seq else {
            throw Failure("SeekEnded 5:00 → 15:00 was not answered by one snapback push to 10:00: \(answer)")
        }
        return answer.pushes[0].reason
    }

    func round(_ options: Options) async throws -> Round {
        for _ in 0..<options.warmup { try await call() }
        var samples = [UInt64](repeating: 0, count: options.calls)
        let cpuBefore = cpuNanoseconds(of: serverPID)
        for i in 0..<options.calls {
            let start = monotonicNanoseconds()
            try await call()
            samples[i] = monotonicNanoseconds() - start
        }
        let cpuAfter = cpuNanoseconds(of: serverPID)
        let (p50, p99) = percentiles(&samples)
        var serverCPU: Double?
        if let a = cpuBefore, let b = cpuAfter, b >= a { serverCPU = Double(b - a) / Double(options.calls) / 1000 }
        return Round(p50: p50, p99: p99, serverCPU: serverCPU)
    }
}

/// The snapbackd side: one round of `snapback-bench daemon --json` (its own snapbackd, client and floors,
/// pinned to the same CPU).
struct SnapbackRound {
    var daemon: Round
    var raw: Round
    var idleRSSKiB: Double?
    var checked: String

    init(_ options: Options) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: options.snapbackBench)
        process.arguments = ["daemon", "--snapbackd", options.snapbackd, "--json", "--rounds", "1",
                             "--iterations", "\(options.calls)", "--warmup", "\(options.warmup)", "--cpu", "\(options.cpu)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure("snapback-bench daemon --json exited with status \(process.terminationStatus)")
        }
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let bench = document["round_trip"] as? [String: Any],
              let daemon = bench["snapbackd"] as? [String: Any], let raw = bench["raw"] as? [String: Any],
              let p50 = daemon["p50_us"] as? Double, let p99 = daemon["p99_us"] as? Double,
              let rawP50 = raw["p50_us"] as? Double, let rawP99 = raw["p99_us"] as? Double else {
            throw Failure("snapback-bench daemon --json: unexpected document: \(String(decoding: data, as: UTF8.self))")
        }
        self.daemon = Round(p50: p50, p99: p99, serverCPU: daemon["server_cpu_us"] as? Double)
        self.raw = Round(p50: rawP50, p99: rawP99, serverCPU: raw["server_cpu_us"] as? Double)
        idleRSSKiB = bench["idle_rss_kib"] as? Double
        checked = bench["checked"] as? String ?? "?"
    }
}

// MARK: - Output

func fixed(_ value: Double?, _ digits: Int) -> String {
    guard let value, value.isFinite else { return "?" }
    return String(format: "%.\(digits)f", value)
}

func mebibytes(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) + " MiB" }

extension String {
    func padLeft(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
    func padRight(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}

func say(_ text: String = "") { print(text) }

@main
struct Bench {
    static func main() async {
        do {
            try await run(Options(CommandLine.arguments))
        } catch {
            FileHandle.standardError.write(Data("snapback-grpc-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        let cpus = allowedCPUs()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapback-grpc.\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // The gRPC server: started, idle RSS read, then measured round by round.
        let grpcSocket = directory.appendingPathComponent("grpc.sock").path
        let server = try start(options.server, [grpcSocket])
        defer { stop(server) }
        try waitForSocket(grpcSocket, server, "snapback-grpc-server")
        let grpcIdle = try IdleRSS(of: server, name: "snapback-grpc-server")

        var grpcRounds: [Round] = []
        var daemonRounds: [Round] = []
        var rawRounds: [Round] = []
        var daemonBenchIdle: [Double] = []
        var grpcChecked = ""
        var daemonChecked = ""
        let transport = try HTTP2ClientTransport.Posix(target: .unixDomainSocket(path: grpcSocket), transportSecurity: .plaintext)
        try await withGRPCClient(transport: transport) { client in
            let probe = GRPCProbe(bench: Snapback_Bench_V1_TimelineBench.Client(wrapping: client), serverPID: server.processIdentifier)
            grpcChecked = try await probe.call()
            if !options.json {
                say("bench-grpc: SeekEnded 5:00 → 15:00 answered by seek to 10:00 (snapback) + reply, over a Unix socket: "
                    + "gRPC-Swift 2 vs snapbackd")
                say("  gRPC       \(options.server) (pid \(server.processIdentifier), \(grpcIdle.threads) threads): "
                    + "gRPC-Swift 2.4.3 server, HTTP/2 on SwiftNIO's posix transport, plaintext; SnapbackTimeline decides;")
                say("             one unary call per SeekEnded answered by the push(es) and the EventReply; a gRPC-Swift client "
                    + "in this process, one connection, calls one after another")
                say("  snapbackd  \(options.snapbackd) through `snapback-bench daemon --json --rounds 1` (its own blocking client "
                    + "and the raw Unix-socket ping-pong floor)")
                say("  pinned     " + (cpus == "\(options.cpu)" ? "everything on CPU \(options.cpu)"
                    : "snapback-bench daemon on CPU \(options.cpu); the gRPC server and client on CPUs \(cpus) (run under taskset -c \(options.cpu) to pin them)"))
                say("  method     \(options.rounds) rounds × \(options.calls) calls of each (+\(options.warmup) warm-up), "
                    + "gRPC and snapbackd alternately; medians over rounds")
                say()
                say("round      gRPC p50/p99   snapbackd p50/p99   raw p50/p99   (µs)")
            }
            for r in 1...options.rounds {
                var grpc: Round
                var daemon: SnapbackRound
                if r % 2 == 1 {
                    grpc = try await probe.round(options)
                    daemon = try SnapbackRound(options)
                } else {
                    daemon = try SnapbackRound(options)
                    grpc = try await probe.round(options)
                }
                grpcRounds.append(grpc)
                daemonRounds.append(daemon.daemon)
                rawRounds.append(daemon.raw)
                if let idle = daemon.idleRSSKiB { daemonBenchIdle.append(idle) }
                daemonChecked = daemon.checked
                func cell(_ round: Round, _ width: Int) -> String { (fixed(round.p50, 1) + " / " + fixed(round.p99, 1)).padLeft(width) }
                if !options.json {
                    say("\(r)".padLeft(5) + cell(grpc, 18) + cell(daemon.daemon, 20) + cell(daemon.raw, 14))
                }
            }
        }
        let grpcAfter = statusKiB("VmRSS", of: server.processIdentifier)
        let grpcPeak = statusKiB("VmHWM", of: server.processIdentifier)
        stop(server)

        // snapbackd alone, its idle RSS read exactly as the gRPC server's (the way `snapback-bench daemon` starts it).
        let daemonSocket = directory.appendingPathComponent("snapbackd.sock").path
        let config = directory.appendingPathComponent("snapbackd.conf").path
        _ = FileManager.default.createFile(atPath: config, contents: Data())
        let daemon = try start(options.snapbackd, ["--socket", daemonSocket, "--state-dir",
                                                   directory.appendingPathComponent("state").path,
                                                   "--config", config, "--log-level", "warning"])
        defer { stop(daemon) }
        try waitForSocket(daemonSocket, daemon, "snapbackd")
        let daemonIdle = try IdleRSS(of: daemon, name: "snapbackd")
        stop(daemon)

        func med(_ rounds: [Round]) -> Round {
            let cpu = rounds.compactMap(\.serverCPU)
            return Round(p50: median(rounds.map(\.p50)), p99: median(rounds.map(\.p99)), serverCPU: cpu.isEmpty ? nil : median(cpu))
        }
        let grpc = med(grpcRounds)
        let snapbackd = med(daemonRounds)
        let raw = med(rawRounds)
        // Within a round the two ran back to back: the ratio is taken per round, then the median.
        let p50Ratio = median(zip(grpcRounds, daemonRounds).map { $0.p50 / $1.p50 })
        let p99Ratio = median(zip(grpcRounds, daemonRounds).map { $0.p99 / $1.p99 })
        let cpuRatio = grpc.serverCPU.flatMap { g in snapbackd.serverCPU.map { g / $0 } }
        let rssRatio = Double(grpcIdle.settledKiB) / Double(daemonIdle.settledKiB)
        let readyRatio = Double(grpcIdle.readyKiB) / Double(daemonIdle.readyKiB)

        if options.json {
            let document: [String: Any] = [
                "exchange": "SeekEnded 300→900 answered by one snapback seek push to 600 and the reply",
                "checked": ["grpc": grpcChecked, "snapbackd": daemonChecked],
                "calls": options.calls, "warmup": options.warmup, "rounds": options.rounds, "cpu": options.cpu,
                "pinned": cpus == "\(options.cpu)",
                "per_round": (0..<grpcRounds.count).map { r in
                    ["grpc": grpcRounds[r].json, "snapbackd": daemonRounds[r].json, "raw": rawRounds[r].json]
                },
                "grpc": grpc.json.merging([
                    "idle_rss": grpcIdle.json, "rss_after_kib": grpcAfter as Any, "peak_rss_kib": grpcPeak as Any,
                ]) { a, _ in a },
                "snapbackd": snapbackd.json.merging([
                    "idle_rss": daemonIdle.json, "bench_idle_rss_kib": median(daemonBenchIdle),
                ]) { a, _ in a },
                "raw": raw.json,
                "ratio_p50_grpc_snapbackd": p50Ratio, "ratio_p99_grpc_snapbackd": p99Ratio,
                "ratio_server_cpu_grpc_snapbackd": cpuRatio as Any,
                "ratio_idle_rss_grpc_snapbackd": rssRatio, "ratio_ready_rss_grpc_snapbackd": readyRatio,
            ]
            let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            say(String(decoding: data, as: UTF8.self))
            return
        }
        say()
        say("checked    gRPC: \(grpcChecked)")
        say("           snapbackd: \(daemonChecked)")
        say()
        say("              p50 µs   p99 µs   server CPU/call   idle RSS (ready → settled)   threads")
        say("gRPC-Swift".padRight(12) + fixed(grpc.p50, 1).padLeft(8) + fixed(grpc.p99, 1).padLeft(9)
            + (fixed(grpc.serverCPU, 1) + " µs").padLeft(18)
            + (mebibytes(grpcIdle.readyKiB) + " → " + mebibytes(grpcIdle.settledKiB)).padLeft(29)
            + "\(grpcIdle.threads)".padLeft(10))
        say("snapbackd".padRight(12) + fixed(snapbackd.p50, 1).padLeft(8) + fixed(snapbackd.p99, 1).padLeft(9)
            + (fixed(snapbackd.serverCPU, 1) + " µs").padLeft(18)
            + (mebibytes(daemonIdle.readyKiB) + " → " + mebibytes(daemonIdle.settledKiB)).padLeft(29)
            + "\(daemonIdle.threads)".padLeft(10))
        say("raw floor".padRight(12) + fixed(raw.p50, 1).padLeft(8) + fixed(raw.p99, 1).padLeft(9)
            + (fixed(raw.serverCPU, 1) + " µs").padLeft(18))
        say("gRPC server RSS after \(options.rounds * (options.calls + options.warmup) + 1) calls: "
            + "\(grpcAfter.map(mebibytes) ?? "?") (peak \(grpcPeak.map(mebibytes) ?? "?"))")
        say()
        say("ratios gRPC/snapbackd: p50 \(fixed(p50Ratio, 2))×, p99 \(fixed(p99Ratio, 2))×, server CPU per call "
            + "\(fixed(cpuRatio, 2))×, idle RSS \(fixed(rssRatio, 2))× (at ready \(fixed(readyRatio, 2))×)")
    }
}
