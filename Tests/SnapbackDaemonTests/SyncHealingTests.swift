// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackCLI
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackSync

/// Household sync that heals itself (issue #35), through a real nats-server, snapbackd and agent: a
/// store made afresh under the agent, a hostile member's stamps, a server that lost its store.
@Suite(
    .serialized,
    .enabled(if: NatsServer.available, "nats-server is not installed (make deps installs Debian's nats-server)"))
struct SyncHealingTests {
    /// Makes the box's store unreadable, as a disk error would: snapbackd sets it aside at its next start
    /// and begins a fresh one (another store id, change numbers from 1 again).
    static func corruptStore(_ daemon: DaemonHarness) throws {
        let path = daemon.stateDirectory + "/snapback.db"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
    }

    static func seconds(since start: Date) -> String { String(format: "%.2f s", Date().timeIntervalSince(start)) }

    /// A box whose store was made afresh (its file corrupt) under a running agent, then again under a
    /// stopped one: the agent tells the new store from the old by its id and reads it from the start, so
    /// the new store's saves, numbered below the old cursor, go out. On the landed main they never did.
    @Test func aStoreMadeAfreshIsReadFromTheStart() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nats = try NatsServer(directory: directory.appendingPathComponent("nats"))
        let daemonDirectory = try DaemonHarness.makeTemporaryDirectory()
        var daemon = try DaemonHarness(in: daemonDirectory)
        // Every harness is kept to the end: the first one's directory (socket, store) goes with it.
        var daemons = [daemon]
        defer { withExtendedLifetime(daemons) {} }
        let agent = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.url], household: "A", in: directory.appendingPathComponent("agent"))
        let kv = try SyncAgentTests.bucket(nats)
        for i in 0..<5 { try SyncServiceDaemonTests.save(try daemon.player(), "old-\(i)", at: Double(10 + i)) }
        // A restart moves the change numbers past the sequence's bound (1,000 ahead): the agent's cursor is
        // then far above what a fresh store numbers its first changes.
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        daemon = try DaemonHarness(in: daemonDirectory)
        daemons.append(daemon)
        try SyncServiceDaemonTests.save(try daemon.player(), "old-5", at: 15)
        _ = try eventually(60, "old-5 in the bucket; log: \(agent.log)") { SyncAgentTests.record(kv, "old-5") }
        let oldDevice = try #require(agent.status?.deviceId)

        // Under the running agent: snapbackd stops, its store is corrupt, it starts with a fresh one.
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        try Self.corruptStore(daemon)
        daemon = try DaemonHarness(in: daemonDirectory)
        daemons.append(daemon)
        // The household's bookmarks come back from the bucket (merged: other devices' records now)...
        let player = try daemon.player()
        try eventually(60, "old-5 merged back; log: \(agent.log)") { () -> Bool? in
            let b: Bookmark? = try? player.call(.getBookmark(profile: "", contentId: "old-5"))
            return b?.contentTime == 15 ? true : nil
        }
        // ...and the new store's own save goes out.
        let saved = Date()
        try SyncServiceDaemonTests.save(player, "fresh-1", at: 101)
        let (fresh, _) = try eventually(60, "fresh-1 in the bucket; log: \(agent.log)") { SyncAgentTests.record(kv, "fresh-1") }
        print(
            "SyncHealingTests: a save on a store made afresh under a running agent reached the bucket in \(Self.seconds(since: saved))"
        )
        #expect(fresh.value.bookmark?.contentTime == 101)
        #expect(fresh.origin.text != oldDevice)
        #expect(agent.log.contains("reading its changes from the start"), "\(agent.log)")

        // Under a stopped agent: the same, the agent learning of it when it starts.
        #expect(agent.stop() == 0)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        try Self.corruptStore(daemon)
        daemon = try DaemonHarness(in: daemonDirectory)
        daemons.append(daemon)
        try SyncServiceDaemonTests.save(try daemon.player(), "fresh-2", at: 102)
        let second = try agent.restarted()
        let (fresh2, _) = try eventually(60, "fresh-2 in the bucket; log: \(second.log)") {
            SyncAgentTests.record(kv, "fresh-2")
        }
        #expect(fresh2.value.bookmark?.contentTime == 102)
        let status = try eventually(60, "outbox empty and connected; log: \(second.log)") {
            second.status.flatMap { $0.outbox == 0 && $0.state == .connected ? $0 : nil }
        }
        #expect(status.deviceId != oldDevice && status.deviceId != fresh.origin.text)
        #expect(second.stop() == 0)
        withExtendedLifetime(nats) {}
    }
}
