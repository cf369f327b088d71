// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackCommandLine

/// `snapback-bench daemon --spacing MS`: the cold path. With requests MS milliseconds apart, the caches and the
/// branch predictors have forgotten the daemon by the next one (other processes ran, the CPU idled): what
/// shows is how much code and data one request touches. snapbackd's round trip and the epoll echo's
/// (the same bytes, no work) alternate, each MS apart, all pinned to one CPU, so both are cold alike.
struct SpacingBench {
    let options: BenchOptions
    let out: BenchOutput
    let milliseconds: Int

    func run(in directory: String) throws -> JSON {
        let cpu = options.cpu
        try pinSelf(cpu)
        let daemon = try BenchDaemon(options.daemonPath, in: directory, name: "spacing")
        guard Processes.pinAllThreads(of: daemon.pid, cpu: cpu) else { throw CommandError("cannot pin snapbackd to CPU \(cpu)") }
        let connection = try SnapbackProbe(socket: daemon.socketPath, clientName: "snapback-bench-spacing")
        let probe = connection.loop
        try probe.run(100, samples: nil)
        func peer(_ name: String, _ server: EchoPeer.Server) throws -> EchoPeer {
            try EchoPeer.start(
                name, server: server, request: connection.request, response: probe.lastResponse,
                replyOffset: probe.lastReplyOffset, cpu: cpu, warmup: 100, selfPath: options.selfPath)
        }
        let echo = try peer("epoll echo", .epoll)
        defer { echo.stop() }
        let libuv = try options.libuvEchoPath.map { try peer("libuv echo", .libuv(path: $0)) }
        defer { libuv?.stop() }

        // Each kind in turn, every round trip `milliseconds` after the last one of any kind.
        let kinds = [probe, echo.loop] + (libuv.map { [$0.loop] } ?? [])
        let n = options.probes
        let samples = kinds.map { _ in UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n) }
        defer { for buffer in samples { buffer.deallocate() } }
        let pause = useconds_t(milliseconds * 1000)
        for i in 0..<n {
            for (kind, buffer) in zip(kinds, samples) {
                usleep(pause)
                try kind.run(1, samples: UnsafeMutableBufferPointer(rebasing: buffer[i..<(i + 1)]))
            }
        }
        connection.close()
        let stopped = daemon.stop()
        let d = percentiles(samples[0])
        let e = percentiles(samples[1])
        let u = libuv.map { _ in percentiles(samples[2]) }
        let ratio = d.p50 / e.p50
        let peers = u == nil ? "snapbackd and the epoll echo" : "snapbackd, the epoll echo and the libuv echo"
        out.line("snapback-bench daemon --spacing \(milliseconds): the cold path, round trips \(milliseconds) ms apart")
        out.line("  checked    SeekEnded 5:00 → 15:00 → \(connection.firstPush)")
        out.line(
            "  method     \(n) round trips each, \(peers) in turn, every one "
                + "\(milliseconds) ms after the last; pinned to CPU \(cpu)")
        if u == nil {
            out.line("  libuv      not measured (--libuv-echo PATH: snapback-uv-echo, which make bench builds)")
        }
        out.line("              p50 µs   p99 µs")
        out.line(percentileRow("epoll echo", e.p50, e.p99))
        if let u { out.line(percentileRow("libuv echo", u.p50, u.p99)) }
        out.line(percentileRow("snapbackd", d.p50, d.p99))
        out.line("snapbackd SIGTERM → \(stopped.text)")
        if let u {
            out.line(
                "split: libuv echo/epoll echo = \(fixed(u.p50 / e.p50, 2)) (the event loop's share), "
                    + "snapbackd/libuv echo = \(fixed(d.p50 / u.p50, 2)) (snapbackd's own)")
        }
        // The target is the design's own floor: the same echo behind libuv's loop, which snapbackd runs on.
        let targetMet = u.map { d.p50 / $0.p50 <= 1.3 }
        if let targetMet {
            out.line(
                "target: snapbackd p50 within 1.30× the libuv echo \(milliseconds) ms apart: \(targetMet ? "met" : "missed")")
        }
        out.line("ratio p50 snapbackd/epoll echo at \(milliseconds) ms spacing = \(fixed(ratio, 2))")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }
        var members: JSON.Members = [
            "spacing_ms": .uint(UInt64(milliseconds)), "probes": .uint(UInt64(n)), "cpu": .uint(UInt64(cpu)),
            "epoll_echo": .object(["p50_us": .number(e.p50), "p99_us": .number(e.p99)]),
            "snapbackd": .object(["p50_us": .number(d.p50), "p99_us": .number(d.p99)]),
            "ratio_p50_snapbackd_epoll_echo": .number(ratio), "ratio_p99_snapbackd_epoll_echo": .number(d.p99 / e.p99),
            "stopped": .string(stopped.text)
        ]
        if let u {
            members.pairs += [
                ("libuv_echo", .object(["p50_us": .number(u.p50), "p99_us": .number(u.p99)])),
                ("ratio_p50_libuv_echo_epoll_echo", .number(u.p50 / e.p50)),
                ("ratio_p50_snapbackd_libuv_echo", .number(d.p50 / u.p50)),
                ("target_met", .bool(targetMet ?? false))
            ]
        }
        return .object(members)
    }
}
