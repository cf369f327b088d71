// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackWire
import Testing

/// Issue 9: when accept failed for lack of file descriptors the peer was reset, with no
/// RESOURCE_EXHAUSTED and no log line. The daemon runs here under a low RLIMIT_NOFILE (`prlimit`).
@Suite struct DescriptorLimitTests {
    static let prlimitPath = "/usr/bin/prlimit"

    /// What a peer gets first: the Hello reply (served) or the refusal (call id 0).
    enum Outcome: Equatable { case served, refused(StatusCode, String), other(String) }

    static func tryHello(_ socket: FrameSocket) -> Outcome {
        // A refused peer may be closed before the Hello is written (EPIPE); its refusal is still there to read.
        try? socket.send(TestFrames.hello(callId: 1))
        guard let frame = try? socket.readFrame(timeout: .seconds(10)) else { return .other("no frame") }
        if frame.header.callId == 1 && frame.header.status == 0 { return .served }
        if frame.header.callId == 0, let code = StatusCode(rawValue: frame.header.status),
            let status = try? frame.body.withUnsafeBytes({ try WireStatus.decode($0) })
        {
            return .refused(code, status.message)
        }
        return .other("\(frame.header)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: prlimitPath)))
    func acceptAtTheLimitAnswersResourceExhaustedLogsOnceDoesNotSpinAndServesAgain() throws {
        let daemon = try DaemonHarness(launcher: [Self.prlimitPath, "--nofile=48:48", "--"])
        // The harness's readiness probe is gone before the descriptors are counted.
        #expect(daemon.waitForLog(containing: "closed: peer closed the connection"))
        // Descriptors left for connections: the limit less what the daemon holds idle (the reserve among them).
        let free = 48 - daemon.openDescriptorCount
        try #require(free > 4, "the daemon holds \(daemon.openDescriptorCount) descriptors idle")

        var served: [FrameSocket] = []
        var refusals: [(StatusCode, String)] = []
        for _ in 0..<(free + 10) {
            let socket = try daemon.connect()
            switch Self.tryHello(socket) {
            case .served: served.append(socket)
            case .refused(let code, let message): refusals.append((code, message))
            case .other(let what): Issue.record("neither served nor refused: \(what)")
            }
        }
        // Every descriptor but the reserve serves a player (give or take one the daemon was still closing
        // when they were counted: the probe's socket is closed in the loop iteration after its log line).
        #expect(served.count + refusals.count == free + 10)
        #expect(served.count >= free - 1 && served.count <= free + 1, "\(served.count) served, \(free) free")
        #expect(refusals.count >= 9)
        #expect(refusals.allSatisfy { $0.0 == .resourceExhausted && $0.1.contains("out of file descriptors") })
        #expect(daemon.waitForLog(containing: "new connections are refused RESOURCE_EXHAUSTED"))
        #expect(
            daemon.stderrLines.filter { $0.contains("new connections are refused RESOURCE_EXHAUSTED") }.count == 1,
            "one line for the whole shortage")
        #expect(daemon.stderrLines.contains { $0.hasPrefix("<4>") && $0.contains("Too many open files (EMFILE)") })

        // At the limit, with a peer refused meanwhile, the loop sleeps: a spin would take about 100 ticks.
        let before = daemon.cpuTicks
        usleep(500_000)
        if case .refused = Self.tryHello(try daemon.connect()) {} else { Issue.record("not refused at the limit") }
        usleep(500_000)
        let spent = daemon.cpuTicks - before
        #expect(spent < 30, "\(spent) ticks of CPU in one second at the descriptor limit")

        // The players still get answers, and once descriptors are free new ones are served again.
        #expect(try served[0].hello(callId: 2).header.callId == 2)
        for socket in served.suffix(3) { socket.close() }
        served.removeLast(3)
        #expect(daemon.waitForLog(containing: "closed: peer closed the connection"))
        var servedAgain = false
        for _ in 0..<100 where !servedAgain {
            if case .served = Self.tryHello(try daemon.connect()) { servedAgain = true } else { usleep(20_000) }
        }
        #expect(servedAgain)
        #expect(daemon.waitForLog(containing: "accepting connections again;"))
        #expect(
            daemon.stderrLines.contains {
                $0.hasPrefix("<5>") && $0.contains("were refused RESOURCE_EXHAUSTED for lack of file descriptors")
            })
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }
}
