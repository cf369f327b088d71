// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTestSupport
import SnapbackTimeline
import SnapbackWire
import Testing

/// A box runs for months: memory must come back when sessions close. 10,000 sessions opened and closed
/// once left the daemon 16 MiB above idle for good (freed heap that glibc kept), and every further round
/// of 10,000 took more. At a size that fits CI: rounds of 5,000 sessions over 10 connections, closed by
/// CloseSession in one round and by the players going away in the next.
@Suite struct SessionChurnTests {
    /// The daemon's resident memory in KiB: the RSS of its mappings (/proc/PID/smaps) but those that are
    /// anonymous, writable and executable, code generated at run time. snapbackd generates none, so
    /// natively this is its VmRSS. Under qemu-user (`make test-arm64`) the emulator's translation cache is
    /// such a mapping in the daemon's process, and it grows by whole 2 MiB huge pages as code first runs:
    /// +2,048 KiB of the 2,164 KiB ConnectionChurnTests' RSS grew by from its first round to its second
    /// there, none of it the daemon's.
    static func rssKiB(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8) else { return 0 }
        var total = 0
        var generatedCode = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-") && !first.hasSuffix(":") && fields.count >= 5 {
                // A mapping: "start-end perms offset device inode [path]".
                generatedCode = fields[1].contains("w") && fields[1].contains("x") && fields.count == 5
            } else if first == "Rss:" && !generatedCode && fields.count >= 2 {
                total += Int(fields[1]) ?? 0
            }
        }
        return total
    }

    /// RSS once it has settled within `limit`, waiting for the daemon's trim (a few seconds after a
    /// bulk close); the last reading if it never does.
    static func settledRSS(_ pid: Int32, atMost limit: Int) -> Int {
        let deadline = Date().addingTimeInterval(TestTime.scaled(seconds: 10))
        var rss = rssKiB(pid)
        while rss > limit, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            rss = rssKiB(pid)
        }
        return rss
    }

    /// What may stay: SQLite's page caches (up to 2 MiB each for the reader and the writer connection)
    /// fill as bookmarks are written and stay filled. The 5,000 sessions' heap (about 7 MiB) may not.
    static let slack = 6 * 1024

    @Test func memoryComesBackAfterSessionsClose() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let config = directory.appendingPathComponent("snapbackd.conf").path
        try "max-sessions-per-connection = 1000\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", config, "--log-level", "warning"], in: directory)
        let idle = Self.rssKiB(daemon.pid)
        let perConnection = 500
        var afterRound: [Int] = []
        for round in 1...5 {
            var players: [(SnapbackClient, [UInt64])] = []
            for p in 0..<10 {
                let player = try daemon.player("churn-\(p)")
                var ids: [UInt64] = []
                for s in 0..<perConnection {
                    let open = Streams.seed(
                        contentId: "c-\(round)-\(p)-\(s)",
                        breaks: [
                            AdBreak(id: "b1", start: 600, duration: 30),
                            AdBreak(id: "b2", start: 1200, duration: 30)
                        ])
                    let id = try player.openSession(open).sessionId
                    // A few play (and take a bookmark when they close); the rest only open: each closing
                    // bookmark waits for its commit, and 5,000 fsyncs would make the test slow.
                    if s % 100 == 0 {
                        try player.send(.playheadReported(streamTime: 100, rate: 1, playing: true), session: id)
                    }
                    ids.append(id)
                }
                players.append((player, ids))
            }
            let open = Self.rssKiB(daemon.pid)
            if round % 2 == 1 {
                for (player, ids) in players { for id in ids { _ = try player.closeSession(id) } }
            }
            players.removeAll()  // the connections close: the even rounds' sessions close with them
            let status: SnapbackV1.StatusReply = try daemon.player("status").call(.getStatus)
            #expect(status.sessions == 0)
            let settled = Self.settledRSS(daemon.pid, atMost: idle + Self.slack)
            afterRound.append(settled)
            print("session churn round \(round): idle \(idle) KiB, 5,000 open \(open) KiB, all closed \(settled) KiB")
            #expect(settled <= idle + Self.slack, "round \(round): \(settled) KiB after closing, idle was \(idle) KiB")
        }
        // A plateau, not a climb: the last round within 10% of the second.
        #expect(Double(afterRound[4]) <= Double(afterRound[1]) * 1.1, "\(afterRound)")
    }
}
