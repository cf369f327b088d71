// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// A box runs for months, and players connect for every stream: what a connection takes must come back
/// when it closes, however it closes. Every connection closed within its Hello timeout once stayed on the
/// loop's deadline list with its read buffer for those 5 s, and under churn glibc's heap grew behind them
/// for good (10,000 connect/close cycles: 5.5 → 49 MiB, +44 MiB every further 10,000).
///
/// Rounds of 3,200 connections through the real binary, each round the same mix: plain connect and
/// close, Hello then close, Hello with a session opened and closed, a peer that vanishes in the
/// middle of a frame, and players sending an OpenSession of 1,000 breaks (decoded on the daemon's worker
/// thread), half of them waiting for it, half gone with it in flight. The RSS after the last round must be
/// within 1 MiB of the RSS after the first.
@Suite struct ConnectionChurnTests {
    static let rounds = 4
    static let driftLimitKiB = 1024

    /// Connects, writes `bytes` (if any) and closes without reading.
    static func connectAndVanish(_ path: String, writing bytes: [UInt8] = []) throws {
        let socket = try FrameSocket(connectingTo: path)
        if !bytes.isEmpty { try socket.sendRaw(bytes) }
        socket.close()
    }

    /// The first part of a GetStatus request: its header announces a 64-byte body, of which 8 come.
    static let halfFrame: [UInt8] = {
        var bytes: [UInt8] = []
        FrameHeader.request(callId: 1, method: WireMethod.getStatus.rawValue, length: 64).encode(into: &bytes)
        return bytes + [UInt8](repeating: 0, count: 8)
    }()

    /// An OpenSession of 1,000 breaks: a 70 KB body, over the size decoded off the loop.
    static let largeOpen = OpenSessionRequest(
        streamId: "large", contentId: "churn-large",
        breaks: (0..<1000).map {
            AdBreak(id: "break-\($0)", start: 600 + Double($0) * 700, duration: 60, adDurations: [15, 15, 15, 15])
        })

    /// Hello and the large OpenSession in one write, from a peer that then goes.
    static let helloAndLargeOpen: [UInt8] =
        TestFrames.hello(callId: 1).encoded
        + Frame(header: .request(callId: 2, method: WireMethod.openSession.rawValue), body: largeOpen.encoded()).encoded

    static func churn(_ daemon: DaemonHarness, round: Int) throws {
        for _ in 0..<1000 {
            try connectAndVanish(daemon.socketPath)
        }
        for i in 0..<1000 {
            try daemon.player("churn-hello-\(i)").close()
        }
        for i in 0..<500 {
            let player = try daemon.player("churn-session-\(i)")
            let id = try player.openSession(Streams.seed(contentId: "churn-\(round)-\(i)")).sessionId
            _ = try player.closeSession(id)
            player.close()
        }
        for _ in 0..<500 {
            try connectAndVanish(daemon.socketPath, writing: halfFrame)
        }
        for i in 0..<100 {
            let player = try daemon.player("churn-large-\(i)")
            _ = try player.closeSession(try player.openSession(Self.largeOpen).sessionId)
            player.close()
            try connectAndVanish(daemon.socketPath, writing: helloAndLargeOpen)
        }
    }

    @Test func connectionsGiveBackWhatTheyTook() throws {
        let daemon = try DaemonHarness(arguments: ["--log-level", "warning"])
        var afterRound: [Int] = []
        for round in 1...Self.rounds {
            try Self.churn(daemon, round: round)
            // Every connection of the round is closed once the daemon answers one more, and counts none.
            let status: SnapbackV1.StatusReply = try daemon.player("status").call(.getStatus)
            #expect(status.sessions == 0)
            let rss = SessionChurnTests.settledRSS(
                daemon.pid, atMost: afterRound.first.map { $0 + Self.driftLimitKiB } ?? .max)
            afterRound.append(rss)
            print("connection churn round \(round): \(rss) KiB after 3,200 connections")
        }
        #expect(
            afterRound.last! <= afterRound.first! + Self.driftLimitKiB,
            "RSS after each round of 3,200 connections (KiB): \(afterRound)")
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines.isEmpty, "\(daemon.errorLines)")
    }
}
