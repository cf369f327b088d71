import Foundation
import Testing

/// `snapback bench` end to end, tiny: `make bench` must not break unnoticed. It starts its own daemon
/// (the one under test) and the echo peers, interleaves the three kinds and prints the ratio line.
/// Figures are not checked here (benchmarks prove speed, tests do not time things).
@Suite struct BenchCommandTests {
    static var cliPath: String {
        URL(fileURLWithPath: DaemonHarness.binaryPath).deletingLastPathComponent().appendingPathComponent("snapback").path
    }

    static func run(_ arguments: [String]) throws -> (Int32, String) {
        try runToEnd(cliPath, arguments)
    }

    @Test func aShortInterleavedRunCompletesAndPrintsTheRatio() throws {
        let (status, text) = try Self.run(["bench", "--snapbackd", DaemonHarness.binaryPath,
                                           "--iterations", "300", "--batch", "70", "--rounds", "2", "--warmup", "20"])
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

    @Test func aBadBatchIsAUsageError() throws {
        let (status, text) = try Self.run(["bench", "--batch", "0"])
        #expect(status == 2)
        #expect(text.contains("--batch"))
    }
}
