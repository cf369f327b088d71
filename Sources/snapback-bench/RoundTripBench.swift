// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// `snapback-bench daemon` without a mode: snapbackd's SeekEnded → snapback round trip against the floors, a
/// raw Unix-socket ping-pong and an epoll echo with the same bytes, all pinned to one CPU, measured in
/// interleaved batches, medians over rounds.
final class RoundTripBench {
    /// One round of one kind.
    struct Round {
        var p50: Double
        var p99: Double
        /// Microseconds of server CPU per round trip.
        var serverCPU: Double?
        var clientCPU: Double?

        var json: JSON {
            .object([
                "p50_us": .number(p50), "p99_us": .number(p99), "server_cpu_us": .number(serverCPU),
                "client_cpu_us": .number(clientCPU)
            ])
        }
    }

    let options: BenchOptions
    let out: BenchOutput
    /// One sample buffer per kind (raw, epoll echo, snapbackd), filled batch by batch.
    private var samples: [UnsafeMutableBufferPointer<UInt64>]

    init(_ options: BenchOptions, _ out: BenchOutput) {
        self.options = options
        self.out = out
        samples = (0..<3).map { _ in
            let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: options.iterations)
            buffer.initialize(repeating: 0)
            return buffer
        }
    }

    deinit { for buffer in samples { buffer.deallocate() } }

    func run(in directory: String) throws -> JSON {
        let cpu = options.cpu
        try pinSelf(cpu)
        // snapbackd, pinned (it inherits this thread's affinity; every thread is pinned again below).
        let daemon = try BenchDaemon(options.daemonPath, in: directory, name: "round-trip")
        guard Processes.pinAllThreads(of: daemon.pid, cpu: cpu) else { throw CommandError("cannot pin snapbackd to CPU \(cpu)") }
        let daemonThreads = Processes.threads(of: daemon.pid).count
        let idleRSS = daemon.rssKiB

        let connection = try SnapbackProbe(socket: daemon.socketPath, clientName: "snapback-bench")
        let (request, firstPush, probe) = (connection.request, connection.firstPush, connection.loop)
        // Warm up snapbackd and take its answer as the echo peers' canned answer.
        try probe.run(max(options.warmup, 1), samples: nil)
        let response = probe.lastResponse
        let replyOffset = probe.lastReplyOffset

        // The floors: the same bytes exchanged with a process that does no work — blocking recv/send (the
        // kernel's cost alone), and an epoll loop reading once per wake-up as libuv does (what an event
        // loop adds).
        let raw = try EchoPeer.start(
            "raw", server: .blocking, request: request, response: response,
            replyOffset: replyOffset, cpu: cpu, warmup: options.warmup, selfPath: options.selfPath)
        defer { raw.stop() }
        let epoll = try EchoPeer.start(
            "epoll echo", server: .epoll, request: request, response: response,
            replyOffset: replyOffset, cpu: cpu, warmup: options.warmup, selfPath: options.selfPath)
        defer { epoll.stop() }

        out.line("snapback-bench daemon: SeekEnded → snapback push + reply round trip, snapbackd vs a raw Unix-socket ping-pong")
        out.line(
            "  snapbackd  \(options.daemonPath) (pid \(daemon.pid), \(daemonThreads) thread\(daemonThreads == 1 ? "" : "s"))")
        out.line("  pinned     bench client, snapbackd and the echo processes on CPU \(cpu) (sched_setaffinity)")
        out.line(
            "  frames     request \(request.count) B → response \(response.count) B (push \(replyOffset) B + reply "
                + "\(response.count - replyOffset) B) in one write, the same bytes from every peer")
        out.line(
            "  floors     raw: a separate process on a socketpair, blocking recv → send; epoll echo: the same "
                + "behind epoll_wait, one read per wake-up (as libuv)")
        out.line("  checked    SeekEnded 5:00 → 15:00 → \(firstPush)")
        out.line(
            "  method     \(options.rounds) rounds × \(options.iterations) round trips of each kind (+\(options.warmup) warm-up), "
                + "interleaved in batches of \(options.batch): raw, epoll echo, snapbackd, raw, …; medians over rounds")
        out.line()
        out.line("round     raw p50/p99   epoll echo p50/p99   snapbackd p50/p99   (µs)")

        var raws: [Round] = []
        var epolls: [Round] = []
        var daemons: [Round] = []
        func cell(_ r: Round, _ width: Int) -> String { padLeft(fixed(r.p50, 1) + " / " + fixed(r.p99, 1), width) }
        for r in 1...options.rounds {
            let round = try measure([(raw.loop, raw.pid), (epoll.loop, epoll.pid), (probe, daemon.pid)])
            raws.append(round[0])
            epolls.append(round[1])
            daemons.append(round[2])
            out.line(padLeft("\(r)", 5) + cell(raws.last!, 16) + cell(epolls.last!, 21) + cell(daemons.last!, 20))
        }
        let afterRSS = daemon.rssKiB
        let peakRSS = Processes.statusKiB("VmHWM", of: daemon.pid)
        let total = probe.roundTrips

        // Stop everything before printing the summary.
        connection.close()
        let stopped = daemon.stop()

        out.line()
        out.line("              p50 µs   p99 µs   server CPU/call   client CPU/call")
        summary("raw", raws)
        summary("epoll echo", epolls)
        summary("snapbackd", daemons)
        // Each round measured the kinds side by side: the ratio is taken within a round, then the median.
        let pairRatios = zip(daemons, raws).map { $0.p50 / $1.p50 }
        let ratio = median(pairRatios)
        let ratioOfMedians = median(daemons.map(\.p50)) / median(raws.map(\.p50))
        let p99Ratio = median(zip(daemons, raws).map { $0.p99 / $1.p99 })
        let epollRatio = median(zip(daemons, epolls).map { $0.p50 / $1.p50 })
        out.line(
            "per round p50 snapbackd/raw: " + pairRatios.map { fixed($0, 2) }.joined(separator: " ")
                + "; ratio of the medians \(fixed(ratioOfMedians, 2)); p99 snapbackd/raw \(fixed(p99Ratio, 2))"
                + "; p50 snapbackd/epoll echo \(fixed(epollRatio, 2))")
        out.line(
            "snapbackd RSS: idle \(idleRSS.map(mebibytes) ?? "?"), after \(total) round trips "
                + "\(afterRSS.map(mebibytes) ?? "?") (peak \(peakRSS.map(mebibytes) ?? "?")); SIGTERM → \(stopped.text)")
        out.line("target: snapbackd p50 within 1.30× the raw floor: \(ratio <= 1.3 ? "met" : "missed")")
        out.line("ratio p50 snapbackd/raw = \(fixed(ratio, 2))")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }

        func medians(_ rounds: [Round]) -> JSON {
            Round(
                p50: median(rounds.map(\.p50)), p99: median(rounds.map(\.p99)),
                serverCPU: rounds.compactMap(\.serverCPU).isEmpty ? nil : median(rounds.compactMap(\.serverCPU)),
                clientCPU: rounds.compactMap(\.clientCPU).isEmpty ? nil : median(rounds.compactMap(\.clientCPU))
            ).json
        }
        return .object([
            "request_bytes": .uint(UInt64(request.count)), "response_bytes": .uint(UInt64(response.count)),
            "checked": .string(firstPush), "cpu": .uint(UInt64(cpu)), "rounds": .uint(UInt64(options.rounds)),
            "iterations": .uint(UInt64(options.iterations)), "batch": .uint(UInt64(options.batch)),
            "warmup": .uint(UInt64(options.warmup)),
            "per_round": .array(
                (0..<raws.count).map { r in
                    .object(["raw": raws[r].json, "epoll_echo": epolls[r].json, "snapbackd": daemons[r].json])
                }),
            "raw": medians(raws), "epoll_echo": medians(epolls), "snapbackd": medians(daemons),
            "ratio_p50_snapbackd_raw": .number(ratio), "ratio_of_medians_p50": .number(ratioOfMedians),
            "ratio_p99_snapbackd_raw": .number(p99Ratio), "ratio_p50_snapbackd_epoll_echo": .number(epollRatio),
            "idle_rss_kib": .number(idleRSS.map(Double.init)), "rss_after_kib": .number(afterRSS.map(Double.init)),
            "peak_rss_kib": .number(peakRSS.map(Double.init)), "round_trips": .uint(UInt64(total)),
            "target_met": .bool(ratio <= 1.3), "stopped": .string(stopped.text)
        ])
    }

    /// One measured round: a warm-up of each kind, then `iterations` timed round trips of each, in
    /// interleaved batches. A server's CPU comes from schedstat over the round (it works only during
    /// its own batches); the client's, per batch, from its thread CPU clock.
    func measure(_ kinds: [(loop: PingPong, server: pid_t)]) throws -> [Round] {
        if options.warmup > 0 {
            for kind in kinds { try kind.loop.run(options.warmup, samples: nil) }
        }
        let serverBefore = kinds.map { Processes.cpuNanoseconds(of: $0.server) }
        var clientNanoseconds = [UInt64](repeating: 0, count: kinds.count)
        var done = 0
        while done < options.iterations {
            let n = min(options.batch, options.iterations - done)
            for (k, kind) in kinds.enumerated() {
                let start = threadCPUNanoseconds()
                try kind.loop.run(n, samples: UnsafeMutableBufferPointer(rebasing: samples[k][done..<(done + n)]))
                clientNanoseconds[k] &+= threadCPUNanoseconds() &- start
            }
            done += n
        }
        let serverAfter = kinds.map { Processes.cpuNanoseconds(of: $0.server) }
        return kinds.indices.map { k in
            let (p50, p99) = percentiles(samples[k])
            var serverCPU: Double?
            if let a = serverBefore[k], let b = serverAfter[k], b >= a {
                serverCPU = Double(b - a) / Double(options.iterations) / 1000
            }
            return Round(
                p50: p50, p99: p99, serverCPU: serverCPU,
                clientCPU: Double(clientNanoseconds[k]) / Double(options.iterations) / 1000)
        }
    }

    func summary(_ name: String, _ rounds: [Round]) {
        let server = rounds.compactMap(\.serverCPU)
        let client = rounds.compactMap(\.clientCPU)
        out.line(
            percentileRow(name, median(rounds.map(\.p50)), median(rounds.map(\.p99)))
                + padLeft(server.isEmpty ? "?" : fixed(median(server), 1) + " µs", 18)
                + padLeft(client.isEmpty ? "?" : fixed(median(client), 1) + " µs", 18))
    }
}

/// Pins the calling thread (and so every process it starts afterwards) to `cpu`.
func pinSelf(_ cpu: Int) throws {
    guard Processes.cpuAllowed(cpu) else { throw CommandError("CPU \(cpu) is not available to this process") }
    guard Processes.pin(0, cpu: cpu) else {
        throw CommandError("sched_setaffinity to CPU \(cpu): \(String(cString: strerror(errno)))")
    }
}

/// A connection with the bench's snapback session open and its exchange checked, and the ping-pong that
/// drives it.
final class SnapbackProbe {
    let client: SnapbackClient
    let session: UInt64
    /// The SeekEnded request frame, and the first push it caused, described.
    let request: [UInt8]
    let firstPush: String
    let loop: PingPong
    private var closed = false

    init(socket: String, clientName: String) throws {
        client = try connect(socket, clientName: clientName)
        do {
            (session, request, firstPush) = try openSnapbackSession(client)
            try setReceiveTimeout(client.socket.fd)
        } catch {
            client.close()
            throw error
        }
        loop = PingPong(fd: client.socket.fd, request: request)
    }

    /// Closes the session, then the connection. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? client.closeSession(session)
        client.close()
    }

    deinit { close() }
}

/// Opens the bench's session and checks its exchange: a session whose every forward seek over b1
/// snaps back again (seeks are not refused inside the unwatched break and the loop guard never lets
/// the viewer go). Returns the session, the SeekEnded 5:00 → 15:00 request frame as bytes (the same
/// bytes go to snapbackd and to the echo peers; `PingPong` patches its call id) and the first push.
func openSnapbackSession(_ client: SnapbackClient) throws -> (session: UInt64, request: [UInt8], firstPush: String) {
    var overrides = PolicyOverrides()
    overrides.refuseSeeksDuringUnwatchedBreak = false
    overrides.maxSnapbacksPerBreak = Limits.snapbacksPerBreak.upperBound
    let reply = try client.openSession(
        OpenSessionRequest(
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
    let request =
        FrameHeader.request(
            callId: PingPong.firstCallId, method: WireMethod.seekEnded.rawValue,
            length: UInt32(body.count)
        ).encoded + body
    return (session, request, firstPush)
}
