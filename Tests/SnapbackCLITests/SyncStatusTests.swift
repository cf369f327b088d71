// SPDX-License-Identifier: Apache-2.0
import SnapbackCLI
import Testing

/// The sync agent's status file: what the agent writes reads back the same; `snapback status` tolerates
/// torn, foreign and out-of-range files.
@Suite struct SyncStatusTests {
    @Test func whatTheAgentWritesReadsBack() throws {
        let status = SyncStatus(
            state: .offline, outbox: 3, skipped: 2, lastExchange: 1_764_000_000.25, lastError: "nats: connect:\nrefused",
            household: "A", deviceId: "box-1", server: "nats://127.0.0.1:4222", updated: 1_764_000_010.5, pid: 42)
        let text = status.rendered()
        #expect(
            text.contains("state = offline\n") && text.contains("outbox = 3\n") && text.contains("skipped = 2\n")
                && text.contains("last-exchange = 1764000000.250\n"))
        let read = try #require(SyncStatus.parse(text))
        var expected = status
        expected.lastError = "nats: connect: refused"  // one line a value
        #expect(read == expected)
        #expect(
            read.summary(now: 1_764_000_007.9)
                == "offline (nats://127.0.0.1:4222), household A, outbox 3, 2 bucket value(s) skipped, last exchange 7 s ago")
        var connected = read
        connected.state = .connected
        connected.lastExchange = 0
        connected.skipped = 0
        #expect(connected.summary(now: 0) == "connected to nats://127.0.0.1:4222, household A, outbox 3, no exchange yet")
    }

    @Test func otherFilesAreNoStatusAndBadNumbersReadAsZero() throws {
        #expect(SyncStatus.parse("") == nil)
        #expect(SyncStatus.parse("outbox = 3\n") == nil)
        #expect(SyncStatus.parse("state = sleeping\n") == nil)
        let odd = try #require(
            SyncStatus.parse(
                "state = connected\noutbox = -4\nlast-exchange = nan\nupdated = 1e300\npid = 99999999999\nfuture = x\n"))
        #expect(odd.outbox == 0 && odd.lastExchange == 0 && odd.updated == 0 && odd.pid == 0)
        #expect(SyncStatus.json(nil) == .object(["state": .string("not running")]))
        #expect(SyncStatus.json(odd)["state"] == .string("connected"))
        #expect(SyncStatus.json(odd)["last_exchange"] == .null)
    }
}
