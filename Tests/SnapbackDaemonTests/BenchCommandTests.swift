// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// `snapback-bench daemon` end to end, tiny: `make bench` must not break unnoticed. It starts its own
/// daemon (the one under test) and the echo peers, interleaves the three kinds and prints the ratio line.
/// Figures are not checked here (benchmarks prove speed, tests do not time things).
@Suite struct BenchCommandTests {
    /// snapback-bench, built beside the daemon under test.
    static var benchPath: String {
        URL(fileURLWithPath: DaemonHarness.binaryPath).deletingLastPathComponent().appendingPathComponent("snapback-bench").path
    }

    static func run(_ arguments: [String]) throws -> (Int32, String) {
        try runToEnd(benchPath, arguments)
    }

    @Test func aShortInterleavedRunCompletesAndPrintsTheRatio() throws {
        let (status, text) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath,
            "--iterations", "300", "--batch", "70", "--rounds", "2", "--warmup", "20"
        ])
        #expect(status == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("interleaved in batches of 70") })
        let perRound = try #require(lines.first { $0.hasPrefix("per round p50 snapbackd/raw: ") })
        let ratios = perRound.dropFirst("per round p50 snapbackd/raw: ".count).prefix { $0 != ";" }.split(separator: " ")
        #expect(ratios.count == 2 && ratios.allSatisfy { Double($0) != nil }, "\(perRound)")
        #expect(lines.contains { $0.hasPrefix("  checked    SeekEnded 5:00 → 15:00 → ") })
        #expect(lines.last?.hasPrefix("ratio p50 snapbackd/raw = ") == true, "\(lines.last ?? "")")
        #expect(lines.contains { $0.contains("SIGTERM → exited 0") })
    }

    /// `--json`: one document, its figures where a program finds them.
    static func document(_ arguments: [String]) throws -> [String: Any] {
        let (status, text) = try run(arguments + ["--json"])
        #expect(status == 0, "\(text)")
        #expect(text.hasSuffix("\n") && text.dropLast().split(separator: "\n").count == 1, "one line: \(text)")
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func theRoundTripInJSON() throws {
        let json = try Self.document([
            "daemon", "--snapbackd", DaemonHarness.binaryPath,
            "--iterations", "200", "--batch", "50", "--rounds", "2", "--warmup", "10"
        ])
        let bench = try #require(json["round_trip"] as? [String: Any])
        #expect((bench["per_round"] as? [Any])?.count == 2)
        for kind in ["raw", "epoll_echo", "snapbackd"] {
            let figures = try #require(bench[kind] as? [String: Any], "\(kind)")
            let p50 = try #require(figures["p50_us"] as? Double)
            let p99 = try #require(figures["p99_us"] as? Double)
            #expect(p50 > 0 && p99 >= p50)
        }
        #expect((bench["ratio_p50_snapbackd_raw"] as? Double ?? 0) > 0)
        #expect((bench["idle_rss_kib"] as? Double ?? 0) > 0)
        #expect(bench["stopped"] as? String == "exited 0")
    }

    /// The three modes in one run, small: the cold path, the load (every report answered) and memory per
    /// session, each with its ratio or figure.
    @Test func theModesInOneRunInJSON() throws {
        let json = try Self.document([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1",
            "--probes", "100", "--load", "--load-connections", "20", "--load-hz", "20",
            "--sessions", "300", "--sessions-per-connection", "30"
        ])
        #expect(json["round_trip"] == nil)
        let spacing = try #require(json["spacing"] as? [String: Any])
        #expect(spacing["spacing_ms"] as? Int == 1 && spacing["probes"] as? Int == 100)
        #expect((spacing["ratio_p50_snapbackd_epoll_echo"] as? Double ?? 0) > 0)
        let load = try #require(json["load"] as? [String: Any])
        #expect(load["connections"] as? Int == 20 && load["sessions_per_connection"] as? Int == 10)
        let sent = try #require(load["reports_sent"] as? Int)
        #expect(sent > 0 && load["reports_answered"] as? Int == sent && load["reports_failed"] as? Int == 0, "\(load)")
        #expect((load["ratio_p99_loaded_unloaded"] as? Double ?? 0) > 0)
        // Unloaded and loaded alternate over the rounds; the figure is the median of the rounds' ratios.
        let ratios = try #require(load["ratios_p99_per_round"] as? [Double])
        #expect(load["rounds"] as? Int == 5 && ratios.count == 5, "\(load)")
        #expect(load["ratio_p99_loaded_unloaded"] as? Double == ratios.sorted()[2], "\(load)")
        let sessions = try #require(json["sessions"] as? [String: Any])
        #expect(sessions["sessions"] as? Int == 300 && sessions["connections"] as? Int == 10)
        let idle = try #require(sessions["idle_rss_kib"] as? Int)
        let open = try #require(sessions["sessions_rss_kib"] as? Int)
        #expect(open > idle, "\(sessions)")
        #expect((sessions["bytes_per_session"] as? Double ?? 0) > 0)
    }

    @Test func theModesInText() throws {
        let (status, text) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1",
            "--probes", "100", "--sessions", "100"
        ])
        #expect(status == 0, "\(text)")
        #expect(text.contains("ratio p50 snapbackd/epoll echo at 1 ms spacing = "), "\(text)")
        #expect(text.contains("bytes per session = "), "\(text)")
        #expect(!text.contains("ratio p50 snapbackd/raw"), "no round trip bench when a mode is given")
    }

    /// snapback-uv-echo: `$SNAPBACK_UV_ECHO` (make test sets it), else where the Makefile builds it.
    static var libuvEchoPath: String {
        if let path = ProcessInfo.processInfo.environment["SNAPBACK_UV_ECHO"], !path.isEmpty { return path }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        return root.appendingPathComponent(".build-c/release/snapback-uv-echo").path
    }

    /// With --libuv-echo the cold path has a third peer, the echo behind libuv, and the ratio splits into
    /// the event loop's share and snapbackd's own; both products give back the whole.
    @Test func theSpacingBenchWithTheLibuvFloor() throws {
        let path = Self.libuvEchoPath
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path): make .build-c/release/snapback-uv-echo")
        let json = try Self.document([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1", "--probes", "100", "--libuv-echo", path
        ])
        let spacing = try #require(json["spacing"] as? [String: Any])
        let libuv = try #require(spacing["libuv_echo"] as? [String: Any], "\(spacing)")
        let p50 = try #require(libuv["p50_us"] as? Double)
        #expect(p50 > 0 && (libuv["p99_us"] as? Double ?? 0) >= p50)
        let loopShare = try #require(spacing["ratio_p50_libuv_echo_epoll_echo"] as? Double)
        let own = try #require(spacing["ratio_p50_snapbackd_libuv_echo"] as? Double)
        let whole = try #require(spacing["ratio_p50_snapbackd_epoll_echo"] as? Double)
        #expect(abs(loopShare * own - whole) < 1e-9 * whole, "\(spacing)")

        let (status, text) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1", "--probes", "100", "--libuv-echo", path
        ])
        #expect(status == 0, "\(text)")
        #expect(text.contains("\nlibuv echo "), "\(text)")
        #expect(text.contains("split: libuv echo/epoll echo = "), "\(text)")
    }

    /// Without --libuv-echo the text says how to get the libuv floor; an echo that is not there, or
    /// without --spacing, is a usage error.
    @Test func theLibuvFloorIsOptional() throws {
        let (status, text) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1", "--probes", "100"
        ])
        #expect(status == 0, "\(text)")
        #expect(text.contains("libuv      not measured (--libuv-echo PATH"), "\(text)")
        #expect(!text.contains("split:"), "\(text)")
        let (missing, missingText) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--spacing", "1", "--libuv-echo", "/nonexistent/uv-echo"
        ])
        #expect(missing == 2 && missingText.contains("--libuv-echo: /nonexistent/uv-echo is not an executable file"))
        let (alone, aloneText) = try Self.run([
            "daemon", "--snapbackd", DaemonHarness.binaryPath, "--libuv-echo", Self.libuvEchoPath
        ])
        #expect(alone == 2 && aloneText.contains("--libuv-echo: only with --spacing"), "\(aloneText)")
    }

    @Test func aBadBatchIsAUsageError() throws {
        let (status, text) = try Self.run(["daemon", "--batch", "0"])
        #expect(status == 2)
        #expect(text.contains("--batch"))
        let (loadStatus, loadText) = try Self.run(["daemon", "--load", "--probes", "100", "--rounds", "20"])
        #expect(loadStatus == 2 && loadText.contains("fewer than 10 per round"), "\(loadText)")
    }
}
