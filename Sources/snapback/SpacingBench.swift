import Glibc
import SnapbackCLI

/// `snapback bench --spacing MS`: the cold path. With requests MS milliseconds apart, the caches and the
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
        let echo = try EchoPeer.start(
            "epoll echo", mode: "epoll", request: connection.request, response: probe.lastResponse,
            replyOffset: probe.lastReplyOffset, cpu: cpu, warmup: 100, selfPath: options.selfPath)
        defer { echo.stop() }

        let n = options.probes
        let daemonSamples = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n)
        let echoSamples = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n)
        defer {
            daemonSamples.deallocate()
            echoSamples.deallocate()
        }
        let pause = useconds_t(milliseconds * 1000)
        for i in 0..<n {
            usleep(pause)
            try probe.run(1, samples: UnsafeMutableBufferPointer(rebasing: daemonSamples[i..<(i + 1)]))
            usleep(pause)
            try echo.loop.run(1, samples: UnsafeMutableBufferPointer(rebasing: echoSamples[i..<(i + 1)]))
        }
        connection.close()
        let stopped = daemon.stop()
        let d = percentiles(daemonSamples)
        let e = percentiles(echoSamples)
        let ratio = d.p50 / e.p50
        out.line("snapback bench --spacing \(milliseconds): the cold path, round trips \(milliseconds) ms apart")
        out.line("  checked    SeekEnded 5:00 → 15:00 → \(connection.firstPush)")
        out.line(
            "  method     \(n) round trips each, snapbackd and the epoll echo alternately, every one "
                + "\(milliseconds) ms after the last; pinned to CPU \(cpu)")
        out.line("              p50 µs   p99 µs")
        out.line(percentileRow("epoll echo", e.p50, e.p99))
        out.line(percentileRow("snapbackd", d.p50, d.p99))
        out.line("snapbackd SIGTERM → \(stopped.text)")
        out.line("target: snapbackd p50 within 1.30× the epoll echo \(milliseconds) ms apart: \(ratio <= 1.3 ? "met" : "missed")")
        out.line("ratio p50 snapbackd/epoll echo at \(milliseconds) ms spacing = \(fixed(ratio, 2))")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }
        return .object([
            "spacing_ms": .uint(UInt64(milliseconds)), "probes": .uint(UInt64(n)), "cpu": .uint(UInt64(cpu)),
            "epoll_echo": .object(["p50_us": .number(e.p50), "p99_us": .number(e.p99)]),
            "snapbackd": .object(["p50_us": .number(d.p50), "p99_us": .number(d.p99)]),
            "ratio_p50_snapbackd_epoll_echo": .number(ratio), "ratio_p99_snapbackd_epoll_echo": .number(d.p99 / e.p99),
            "target_met": .bool(ratio <= 1.3), "stopped": .string(stopped.text)
        ])
    }
}
