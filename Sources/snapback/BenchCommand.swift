import ArgumentParser
import CLinux
import Glibc
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import SnapbackCLI

/// `snapback bench`: snapbackd's SeekEnded → snapback push round trip against the floor, a raw Unix-socket
/// ping-pong with the same frame sizes, in one run (../shared/reference/daemon-practice.md: pin every end
/// to one CPU, alternate rounds, report medians, read CPU from /proc).
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "snapbackd's SeekEnded → snapback push round trip vs a raw Unix-socket ping-pong.",
        discussion: prose("""
            Measures snapbackd's snapback round trip — a SeekEnded that crosses an unwatched break, answered
            by a seek push and the reply in one write — against the floor: a raw Unix-socket ping-pong with
            the same bytes. The raw peer is a separate process on a socketpair that reads the request and
            writes back what snapbackd wrote (blocking recv/send); a second peer does the same behind
            epoll_wait, reading once per wake-up as libuv does, to show what an event loop alone costs.

            The bench starts its own snapbackd (temporary socket, log level warning) and pins itself,
            snapbackd and the peers to one CPU (sched_setaffinity). Within a round the three are measured in
            interleaved batches (raw, epoll echo, snapbackd, raw, …), so that whatever else the machine does
            weighs on all three alike; each round reports p50/p99, and the summary takes the median over
            rounds, with each server's CPU per call (/proc/PID/task/*/schedstat) and snapbackd's RSS.

            The last line reads: ratio p50 snapbackd/raw = X.XX, the median over rounds of each round's
            ratio (the target is at most 1.30).

            Exit status: 0 when the run completed, 1 when it failed, 2 for a bad command line.
            """))

    @Option(name: .long, help: ArgumentHelp("The daemon to measure (default: snapbackd next to this executable).",
                                            valueName: "path"), completion: .file())
    var snapbackd: String?
    @Option(name: .long, help: ArgumentHelp("Measured round trips of each kind per round.", valueName: "n"))
    var iterations = 20_000
    @Option(name: .long, help: ArgumentHelp("Round trips of one kind before switching to the next.", valueName: "n"))
    var batch = 1000
    @Option(name: .long, help: ArgumentHelp("Unmeasured round trips of each kind before each round.", valueName: "n"))
    var warmup = 2_000
    @Option(name: .long, help: ArgumentHelp("Rounds.", valueName: "n"))
    var rounds = 5
    @Option(name: .long, help: ArgumentHelp("The CPU everything is pinned to.", valueName: "n"))
    var cpu = 0

    func validate() throws {
        if let snapbackd { try checkNonEmpty(snapbackd, "--snapbackd") }
        try checkRange(iterations, "--iterations", 100...10_000_000)
        try checkRange(batch, "--batch", 1...10_000_000)
        try checkRange(warmup, "--warmup", 0...10_000_000)
        try checkRange(rounds, "--rounds", 1...1000)
        try checkRange(cpu, "--cpu", 0...1023)
        try checkExecutable(snapbackd ?? siblingDaemonPath())
    }

    func run() throws {
        let config = Bench.Configuration(
            daemonPath: snapbackd ?? siblingDaemonPath(), iterations: iterations, batch: batch, warmup: warmup,
            rounds: rounds, cpu: cpu, selfPath: Self.executablePath() ?? "")
        let bench = Bench(config)
        defer { bench.cleanUp() }
        try bench.run()
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

// The children a signal must not leave running: snapbackd and the two echo peers (read by the signal
// handler, hence plain globals).
nonisolated(unsafe) private var childrenToKill: (pid_t, pid_t, pid_t) = (0, 0, 0)

private func setChildToKill(_ slot: Int, _ pid: pid_t) {
    switch slot {
    case 0: childrenToKill.0 = pid
    case 1: childrenToKill.1 = pid
    default: childrenToKill.2 = pid
    }
}

// The temporary socket, state directory and directory, as C strings for the signal handler (best effort:
// unlink and rmdir are async-signal-safe, a recursive removal is not).
nonisolated(unsafe) private var pathsToRemove: (UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?,
                                                UnsafeMutablePointer<CChar>?) = (nil, nil, nil)

private func installSignalCleanup(directory: String) {
    pathsToRemove = (strdup(directory + "/snapbackd.sock"), strdup(directory + "/state"), strdup(directory))
    let handler: @convention(c) (Int32) -> Void = { signal in
        if childrenToKill.0 > 0 { kill(childrenToKill.0, SIGKILL) }
        if childrenToKill.1 > 0 { kill(childrenToKill.1, SIGKILL) }
        if childrenToKill.2 > 0 { kill(childrenToKill.2, SIGKILL) }
        if let path = pathsToRemove.0 { unlink(path) }
        if let path = pathsToRemove.1 { rmdir(path) }
        if let path = pathsToRemove.2 { rmdir(path) }
        _exit(128 + signal)
    }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
    signal(SIGHUP, handler)
}

final class Bench {
    struct Configuration {
        var daemonPath: String
        var iterations: Int
        var batch: Int
        var warmup: Int
        var rounds: Int
        var cpu: Int
        var selfPath: String
    }

    /// One round of one kind.
    struct Round {
        var p50: Double
        var p99: Double
        /// Microseconds of server CPU per round trip.
        var serverCPU: Double?
        var clientCPU: Double?
    }

    /// An echo peer: a `snapback __bench-echo` process on one end of a socketpair.
    struct EchoPeer {
        var name: String
        var pid: pid_t
        var fd: Int32
        var loop: PingPong
    }

    let config: Configuration
    var directory: String?
    var daemonPid: pid_t = 0
    var peers: [EchoPeer] = []
    var client: SnapbackClient?
    /// One sample buffer per kind (raw, epoll echo, snapbackd), filled batch by batch.
    private var samples: [UnsafeMutableBufferPointer<UInt64>]

    init(_ config: Configuration) {
        self.config = config
        samples = (0..<3).map { _ in
            let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: config.iterations)
            buffer.initialize(repeating: 0)
            return buffer
        }
    }

    deinit { for buffer in samples { buffer.deallocate() } }

    func run() throws {
        let cpu = config.cpu
        guard Processes.cpuAllowed(cpu) else { throw CommandError("CPU \(cpu) is not available to this process") }
        guard Processes.pin(0, cpu: cpu) else { throw CommandError("sched_setaffinity to CPU \(cpu): \(String(cString: strerror(errno)))") }
        let dir = try Processes.makeTemporaryDirectory("snapback-bench")
        directory = dir
        installSignalCleanup(directory: dir)
        let socket = dir + "/snapbackd.sock"

        // snapbackd, pinned (it inherits this thread's affinity; every thread is pinned again below).
        daemonPid = try Processes.spawn(config.daemonPath,
                                        ["--socket", socket, "--state-dir", dir + "/state", "--log-level", "warning"])
        childrenToKill.0 = daemonPid
        try waitForSocket(socket)
        guard Processes.pinAllThreads(of: daemonPid, cpu: cpu) else { throw CommandError("cannot pin snapbackd to CPU \(cpu)") }
        let daemonThreads = Processes.threads(of: daemonPid).count
        let idleRSS = Processes.statusKiB("VmRSS", of: daemonPid)

        let client = try connect(socket, clientName: "snapback-bench")
        self.client = client
        let (session, request, firstPush) = try Self.openSnapbackSession(client)
        try Self.setReceiveTimeout(client.socket.fd)
        let daemon = PingPong(fd: client.socket.fd, request: request)
        // Warm up snapbackd and take its answer as the echo peer's canned answer.
        try daemon.run(max(config.warmup, 1), samples: nil)
        let response = daemon.lastResponse
        let replyOffset = daemon.lastReplyOffset

        // The floors: the same bytes exchanged with a process that does no work — blocking recv/send (the
        // kernel's cost alone), and an epoll loop reading once per wake-up as libuv does (what an event
        // loop adds).
        let raw = try startEchoPeer("raw", mode: "blocking", request: request, response: response, replyOffset: replyOffset)
        let epoll = try startEchoPeer("epoll echo", mode: "epoll", request: request, response: response, replyOffset: replyOffset)

        say("snapback bench: SeekEnded → snapback push + reply round trip, snapbackd vs a raw Unix-socket ping-pong")
        say("  snapbackd  \(config.daemonPath) (pid \(daemonPid), \(daemonThreads) thread\(daemonThreads == 1 ? "" : "s"))")
        say("  pinned     bench client, snapbackd and the echo processes on CPU \(cpu) (sched_setaffinity)")
        say("  frames     request \(request.count) B → response \(response.count) B (push \(replyOffset) B + reply "
            + "\(response.count - replyOffset) B) in one write, the same bytes from every peer")
        say("  floors     raw: a separate process on a socketpair, blocking recv → send; epoll echo: the same "
            + "behind epoll_wait, one read per wake-up (as libuv)")
        say("  checked    SeekEnded 5:00 → 15:00 → \(firstPush)")
        say("  method     \(config.rounds) rounds × \(config.iterations) round trips of each kind (+\(config.warmup) warm-up), "
            + "interleaved in batches of \(config.batch): raw, epoll echo, snapbackd, raw, …; medians over rounds")
        say("")
        say("round     raw p50/p99   epoll echo p50/p99   snapbackd p50/p99   (µs)")

        var raws: [Round] = []
        var epolls: [Round] = []
        var daemons: [Round] = []
        func cell(_ r: Round, _ width: Int) -> String { padLeft(fixed(r.p50, 1) + " / " + fixed(r.p99, 1), width) }
        for r in 1...config.rounds {
            let round = try measure([(raw.loop, raw.pid), (epoll.loop, epoll.pid), (daemon, daemonPid)])
            raws.append(round[0])
            epolls.append(round[1])
            daemons.append(round[2])
            say(padLeft("\(r)", 5) + cell(raws.last!, 16) + cell(epolls.last!, 21) + cell(daemons.last!, 20))
        }
        let afterRSS = Processes.statusKiB("VmRSS", of: daemonPid)
        let peakRSS = Processes.statusKiB("VmHWM", of: daemonPid)
        let total = daemon.roundTrips

        // Stop everything before printing the summary.
        _ = try? client.closeSession(session)
        client.close()
        self.client = nil
        kill(daemonPid, SIGTERM)
        let stopped = Processes.wait(daemonPid, seconds: 5)
        daemonPid = 0
        childrenToKill.0 = 0
        stopEchoPeers()

        say("")
        say("              p50 µs   p99 µs   server CPU/call   client CPU/call")
        summary("raw", raws)
        summary("epoll echo", epolls)
        summary("snapbackd", daemons)
        // Each round measured the kinds side by side: the ratio is taken within a round, then the median.
        let pairRatios = zip(daemons, raws).map { $0.p50 / $1.p50 }
        let ratio = median(pairRatios)
        say("per round p50 snapbackd/raw: " + pairRatios.map { fixed($0, 2) }.joined(separator: " ")
            + "; ratio of the medians \(fixed(median(daemons.map(\.p50)) / median(raws.map(\.p50)), 2))"
            + "; p99 snapbackd/raw \(fixed(median(zip(daemons, raws).map { $0.p99 / $1.p99 }), 2))"
            + "; p50 snapbackd/epoll echo \(fixed(median(zip(daemons, epolls).map { $0.p50 / $1.p50 }), 2))")
        say("snapbackd RSS: idle \(idleRSS.map(mebibytes) ?? "?"), after \(total) round trips "
            + "\(afterRSS.map(mebibytes) ?? "?") (peak \(peakRSS.map(mebibytes) ?? "?")); SIGTERM → \(stopped.text)")
        say("target: snapbackd p50 within 1.30× the raw floor: \(ratio <= 1.3 ? "met" : "missed")")
        say("ratio p50 snapbackd/raw = \(fixed(ratio, 2))")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }
    }

    /// Opens the bench's session and checks its exchange: a session whose every forward seek over b1
    /// snaps back again (seeks are not refused inside the unwatched break and the loop guard never lets
    /// the viewer go). Returns the session, the SeekEnded 5:00 → 15:00 request frame as bytes (the same
    /// bytes go to snapbackd and to the echo peers; `PingPong` patches its call id) and the first push.
    static func openSnapbackSession(_ client: SnapbackClient) throws -> (session: UInt64, request: [UInt8], firstPush: String) {
        var overrides = PolicyOverrides()
        overrides.refuseSeeksDuringUnwatchedBreak = false
        overrides.maxSnapbacksPerBreak = Limits.snapbacksPerBreak.upperBound
        let reply = try client.openSession(OpenSessionRequest(
            streamId: "bench", contentId: "bench", profile: "bench",
            breaks: [AdBreak(id: "b1", start: 600, duration: 30)], contentDuration: 1800,
            preset: .snapback, overrides: overrides))
        let session = reply.sessionId
        _ = client.takePushes()
        var firstPush = ""
        for _ in 0..<2 {
            let pushes = try client.send(.seekEnded(from: 300, to: 900), session: session)
            guard pushes.count == 1, case .seek(let to, .snapback) = pushes[0].kind, same(to, 600) else {
                throw CommandError("SeekEnded 5:00 → 15:00 did not cause exactly one snapback push: \(pushes.map(describe))")
            }
            if firstPush.isEmpty { firstPush = describe(pushes[0]) }
        }
        let body = WireRequest.event(sessionId: session, .seekEnded(from: 300, to: 900)).encoded()
        let request = FrameHeader.request(callId: PingPong.firstCallId, method: WireMethod.seekEnded.rawValue,
                                          length: UInt32(body.count)).encoded + body
        return (session, request, firstPush)
    }

    /// Starts an echo process on a socketpair, pins it, warms it up and checks its answer's size.
    func startEchoPeer(_ name: String, mode: String, request: [UInt8], response: [UInt8], replyOffset: Int) throws -> EchoPeer {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw CommandError("socketpair: \(String(cString: strerror(errno)))")
        }
        let pid: pid_t
        do {
            pid = try Processes.spawn(config.selfPath.isEmpty ? "/proc/self/exe" : config.selfPath, [
                BenchEchoServer.commandName, "--mode", mode, "--request-size", String(request.count),
                "--response", hex(response), "--reply-offset", String(replyOffset),
            ], inheritFd: pair[1])
        } catch {
            Glibc.close(pair[0])
            Glibc.close(pair[1])
            throw error
        }
        Glibc.close(pair[1])
        let peer = EchoPeer(name: name, pid: pid, fd: pair[0], loop: PingPong(fd: pair[0], request: request))
        peers.append(peer)
        setChildToKill(peers.count, pid)
        _ = Processes.pinAllThreads(of: pid, cpu: config.cpu)
        try Self.setReceiveTimeout(peer.fd)
        try peer.loop.run(max(config.warmup, 1), samples: nil)
        guard peer.loop.lastResponse.count == response.count else {
            throw CommandError("the \(name) peer answered \(peer.loop.lastResponse.count) bytes instead of \(response.count)")
        }
        return peer
    }

    /// Closes the echo peers' sockets (they exit on end of file) and reaps them.
    func stopEchoPeers() {
        for peer in peers { Glibc.close(peer.fd) }
        for peer in peers { _ = Processes.wait(peer.pid, seconds: 2) }
        peers = []
        childrenToKill.1 = 0
        childrenToKill.2 = 0
    }

    /// One measured round: a warm-up of each kind, then `iterations` timed round trips of each, in
    /// interleaved batches. A server's CPU comes from schedstat over the round (it works only during
    /// its own batches); the client's, per batch, from its thread CPU clock.
    func measure(_ kinds: [(loop: PingPong, server: pid_t)]) throws -> [Round] {
        if config.warmup > 0 {
            for kind in kinds { try kind.loop.run(config.warmup, samples: nil) }
        }
        let serverBefore = kinds.map { Processes.cpuNanoseconds(of: $0.server) }
        var clientNanoseconds = [UInt64](repeating: 0, count: kinds.count)
        var done = 0
        while done < config.iterations {
            let n = min(config.batch, config.iterations - done)
            for (k, kind) in kinds.enumerated() {
                let start = threadCPUNanoseconds()
                try kind.loop.run(n, samples: UnsafeMutableBufferPointer(rebasing: samples[k][done..<(done + n)]))
                clientNanoseconds[k] &+= threadCPUNanoseconds() &- start
            }
            done += n
        }
        let serverAfter = kinds.map { Processes.cpuNanoseconds(of: $0.server) }
        return kinds.indices.map { k in
            var buffer = samples[k]
            buffer.sort()
            let n = buffer.count
            var serverCPU: Double?
            if let a = serverBefore[k], let b = serverAfter[k], b >= a {
                serverCPU = Double(b - a) / Double(config.iterations) / 1000
            }
            return Round(p50: Double(buffer[n / 2]) / 1000, p99: Double(buffer[min(n - 1, n * 99 / 100)]) / 1000,
                         serverCPU: serverCPU, clientCPU: Double(clientNanoseconds[k]) / Double(config.iterations) / 1000)
        }
    }

    func summary(_ name: String, _ rounds: [Round]) {
        let server = rounds.compactMap(\.serverCPU)
        let client = rounds.compactMap(\.clientCPU)
        say(padRight(name, 12) + padLeft(fixed(median(rounds.map(\.p50)), 1), 8) + padLeft(fixed(median(rounds.map(\.p99)), 1), 9)
            + padLeft(server.isEmpty ? "?" : fixed(median(server), 1) + " µs", 18)
            + padLeft(client.isEmpty ? "?" : fixed(median(client), 1) + " µs", 18))
    }

    func waitForSocket(_ path: String) throws {
        do {
            try Processes.waitForSocket(path, daemon: daemonPid)
        } catch {
            // The daemon is gone: nothing left to kill.
            if Processes.reap(daemonPid) != nil || kill(daemonPid, 0) != 0 {
                daemonPid = 0
                childrenToKill.0 = 0
            }
            throw error
        }
    }

    static func setReceiveTimeout(_ fd: Int32) throws {
        var value = timeval(tv_sec: 10, tv_usec: 0)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            throw CommandError("setsockopt SO_RCVTIMEO: \(String(cString: strerror(errno)))")
        }
    }

    /// Stops whatever still runs and removes the temporary directory.
    func cleanUp() {
        client?.close()
        client = nil
        stopEchoPeers()
        if daemonPid > 0 {
            kill(daemonPid, SIGTERM)
            _ = Processes.wait(daemonPid, seconds: 5)
            daemonPid = 0
        }
        childrenToKill = (0, 0, 0)
        if let directory { Processes.removeTree(directory) }
        directory = nil
    }
}

/// The hot loop both sides share, so the client's own work is identical: patch the call id, one `send`,
/// then `recv` until the RESPONSE with that call id is complete (headers parsed in place, no allocation).
final class PingPong {
    static let firstCallId: UInt32 = 0x10000
    static let capacity = 1 << 16

    let fd: Int32
    private let request: UnsafeMutableRawBufferPointer
    private let buffer: UnsafeMutableRawPointer
    private var callId = PingPong.firstCallId
    private(set) var roundTrips = 0
    /// Bytes received in the last round trip, and where its RESPONSE frame starts.
    private var lastCount = 0
    private(set) var lastReplyOffset = 0

    init(fd: Int32, request: [UInt8]) {
        self.fd = fd
        self.request = .allocate(byteCount: request.count, alignment: 8)
        self.request.copyBytes(from: request)
        buffer = .allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        request.deallocate()
        buffer.deallocate()
    }

    var lastResponse: [UInt8] {
        Array(UnsafeRawBufferPointer(start: buffer, count: lastCount))
    }

    /// `count` round trips; durations in nanoseconds go to `samples` when given.
    func run(_ count: Int, samples: UnsafeMutableBufferPointer<UInt64>?) throws {
        for i in 0..<count {
            callId &+= 1
            if callId == 0 { callId = Self.firstCallId }
            request.storeBytes(of: callId.bigEndian, toByteOffset: 4, as: UInt32.self)
            let start = monotonicNanoseconds()
            let sent = Glibc.send(fd, request.baseAddress, request.count, Int32(MSG_NOSIGNAL))
            guard sent == request.count else {
                throw CommandError("send: \(sent < 0 ? String(cString: strerror(errno)) : "short write")")
            }
            try receiveReply()
            let end = monotonicNanoseconds()
            samples?[i] = end &- start
        }
        roundTrips += count
    }

    /// Reads until the RESPONSE to `callId` is complete; exactly one PUSH must come before it.
    @inline(__always)
    private func receiveReply() throws {
        var have = 0
        var offset = 0
        var pushes = 0
        while true {
            let n = recv(fd, buffer + have, Self.capacity - have, 0)
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                throw CommandError(n == 0 ? "the peer closed the connection" : "recv: \(String(cString: strerror(errno)))")
            }
            have += n
            while have - offset >= FrameHeader.size {
                let length = Int(UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                guard have - offset >= FrameHeader.size + length else { break }
                let type = buffer.load(fromByteOffset: offset + 8, as: UInt8.self)
                if type == FrameType.push.rawValue {
                    pushes += 1
                } else if type == FrameType.response.rawValue,
                          UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)) == callId {
                    let status = buffer.load(fromByteOffset: offset + 9, as: UInt8.self)
                    guard status == 0, pushes == 1, offset + FrameHeader.size + length == have else {
                        throw CommandError("unexpected answer to SeekEnded: status \(status), \(pushes) pushes, "
                                           + "\(have - offset - FrameHeader.size - length) extra bytes")
                    }
                    lastCount = have
                    lastReplyOffset = offset
                    return
                }
                offset += FrameHeader.size + length
            }
            if have == Self.capacity { throw CommandError("answer longer than \(Self.capacity) bytes") }
        }
    }
}

/// The floors' peer, run by the bench as a separate process (`snapback __bench-echo`): on fd 3, reads
/// requests of a fixed size and answers each with the canned bytes snapbackd sent (its reply's call id
/// patched), in one write. No decoding: only the kernel's cost of the same exchange. `--mode blocking`
/// waits in `recv`; `--mode epoll` waits in `epoll_wait` on a non-blocking socket and reads once per
/// wake-up, as libuv does, so the difference is what an event loop costs.
struct BenchEchoServer: ParsableCommand {
    static let commandName = "__bench-echo"
    static let configuration = CommandConfiguration(
        commandName: commandName, abstract: "Internal command of 'snapback bench': the raw ping-pong peer.",
        shouldDisplay: false)

    @Option(name: .long) var mode: String
    @Option(name: .customLong("request-size")) var requestSize: Int
    @Option(name: .long, help: "The canned answer, in hex.") var response: String
    @Option(name: .customLong("reply-offset")) var replyOffset: Int

    func validate() throws {
        guard mode == "blocking" || mode == "epoll" else { throw ValidationError("--mode: blocking or epoll") }
        guard requestSize >= FrameHeader.size else { throw ValidationError("--request-size: at least a frame header") }
        guard let bytes = unhex(response), !bytes.isEmpty else { throw ValidationError("--response: hex bytes") }
        guard replyOffset >= 0, replyOffset + FrameHeader.size <= bytes.count else {
            throw ValidationError("--reply-offset: a frame header within --response")
        }
    }

    func run() throws {
        let status = serve(mode: mode, size: requestSize, response: unhex(response)!, replyOffset: replyOffset)
        if status != ExitCode.ok { throw ArgumentParser.ExitCode(status) }
    }

    func serve(mode: String, size: Int, response: [UInt8], replyOffset: Int) -> Int32 {
        let commandName = Self.commandName
        let fd: Int32 = 3
        var poller: Epoll?
        if mode == "epoll" {
            guard let p = Epoll(watching: fd), fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
                warn("snapback \(commandName): epoll set-up failed: \(String(cString: strerror(errno)))")
                return ExitCode.failure
            }
            poller = p
        }
        let capacity = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        let answer = UnsafeMutableRawBufferPointer.allocate(byteCount: response.count, alignment: 16)
        answer.copyBytes(from: response)
        var have = 0
        while true {
            if let poller, !poller.wait() { return ExitCode.failure }
            let n = recv(fd, buffer + have, capacity - have, 0)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { return n == 0 ? ExitCode.ok : ExitCode.failure }
            have += n
            var offset = 0
            while have - offset >= size {
                // The reply echoes the request's call id.
                (answer.baseAddress! + replyOffset + 4).copyMemory(from: buffer + offset + 4, byteCount: 4)
                var written = 0
                while written < answer.count {
                    let w = Glibc.send(fd, answer.baseAddress! + written, answer.count - written, Int32(MSG_NOSIGNAL))
                    if w < 0 && errno == EINTR { continue }
                    if w <= 0 { return ExitCode.failure }
                    written += w
                }
                offset += size
            }
            if offset > 0 {
                if have > offset { memmove(buffer, buffer + offset, have - offset) }
                have -= offset
            }
        }
    }
}

/// An epoll instance watching one socket (the C side: `CLinux`).
struct Epoll {
    private let epfd: Int32

    init?(watching fd: Int32) {
        epfd = snapback_epoll_watch(fd)
        guard epfd >= 0 else { return nil }
    }

    /// Waits until the socket is readable.
    func wait() -> Bool { snapback_epoll_wait_readable(epfd) == 1 }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(bytes.count * 2)
    for b in bytes {
        text.append(digits[Int(b >> 4)])
        text.append(digits[Int(b & 15)])
    }
    return text
}

func unhex(_ text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(chars.count / 2)
    var i = 0
    while i < chars.count {
        guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
        bytes.append(hi << 4 | lo)
        i += 2
    }
    return bytes
}

/// The median of a non-empty list.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let n = sorted.count
    guard n > 0 else { return .nan }
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
}
