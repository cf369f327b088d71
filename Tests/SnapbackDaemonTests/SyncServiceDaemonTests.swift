// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

/// The Sync service through the real daemon and socket (proto/snapback/v1/sync.proto): the change stream
/// a sync agent reads, and the merge it applies other boxes' records with.
@Suite(.serialized) struct SyncServiceDaemonTests {
    static func stamp(_ physical: Int64, _ device: String = "box-2") throws -> SyncStamp {
        SyncStamp(physical: physical, counter: 0, device: try DeviceID(device))
    }

    static func bookmark(_ contentId: String, at contentTime: Double, _ stamp: SyncStamp) throws -> SyncRecord {
        try SyncRecord(
            profile: "", contentId: contentId,
            value: .bookmark(
                SyncedBookmark(
                    contentTime: contentTime, streamId: "stream-\(contentId)", streamTime: contentTime, finished: false,
                    updatedAt: Double(stamp.physical) / 1000)), stamp: stamp)
    }

    /// Saves a bookmark at `at` by pausing there, as a player does.
    static func save(_ player: SnapbackClient, _ contentId: String, at: Double) throws {
        let session = try player.openSession(Streams.seed(contentId: contentId, breaks: [])).sessionId
        try player.send(.playheadReported(streamTime: at, rate: 1, playing: true), session: session)
        var pushes = try player.send(.paused(streamTime: at), session: session)
        while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(10))) }
        _ = try player.closeSession(session)
    }

    static func merge(_ client: SnapbackClient, _ records: [SyncRecord], watched: [WatchedBreaks] = []) throws
        -> SnapbackV1.MergeReply
    {
        try client.call(.merge(SyncMerge(records: records, watched: watched)))
    }

    @Test func aSaveStreamsOutAsAChangeOfThisDevice() throws {
        let daemon = try DaemonHarness()
        let agent = try daemon.player("agent")
        let started = try agent.watchChanges(after: 0)
        let player = try daemon.player()
        try Self.save(player, "film", at: 300)
        let change = try agent.nextChange(timeout: .seconds(10))
        guard case .record(let record) = change.change else {
            Issue.record("expected a record, got \(change)")
            return
        }
        #expect(record.contentId == "film")
        #expect(record.value.bookmark?.contentTime == 300)
        #expect(record.origin.text == started.deviceId)
        #expect(change.seq > 0)
        #expect(daemon.errorLines == [])
    }

    /// `[sync] device-id` names this box's changes; a reload that changes it keeps the name in force
    /// (changes already stamped keep theirs) and says the new one waits for the next start.
    @Test func theConfiguredDeviceIdSignsChangesAndAReloadKeepsIt() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try "[sync]\ndevice-id = living-room\n".write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory)
        let agent = try daemon.player("agent")
        #expect(try agent.watchChanges(after: 0).deviceId == "living-room")
        try "[sync]\ndevice-id = bedroom\n".write(toFile: path, atomically: true, encoding: .utf8)
        daemon.terminate(signal: SIGHUP)
        #expect(daemon.waitForLog(containing: "configuration reloaded", timeout: 10))
        #expect(daemon.stderrText.contains("the [sync] keys changed; the store keeps its values until the next start"))
        try Self.save(try daemon.player(), "film", at: 120)
        guard case .record(let record) = try agent.nextChange(timeout: .seconds(10)).change else {
            Issue.record("expected a record")
            return
        }
        #expect(record.origin.text == "living-room")
    }

    @Test func aMergeChangesWhatANewSessionResumesAtAndTheRuleDecides() throws {
        let daemon = try DaemonHarness()
        let agent = try daemon.player("agent")
        let player = try daemon.player()
        try Self.save(player, "film", at: 300)
        let now = SyncStamp.milliseconds(ofSeconds: wallClockNow())

        // Newer than the local save: it wins, and a new session resumes there.
        let remote = try Self.bookmark("film", at: 900, try Self.stamp(now + 5_000))
        #expect(try Self.merge(agent, [remote]).recordsChanged == [true])
        let resumed = try player.openSession(Streams.seed(contentId: "film", useBookmark: true, breaks: []))
        #expect(resumed.resumedFromBookmark)
        #expect(resumed.resumeContentTime == 900)
        _ = try player.closeSession(resumed.sessionId)

        // A stale remote write (stamped long ago) loses to the newer local save.
        try Self.save(player, "movie", at: 120)
        let stale = try Self.bookmark("movie", at: 1500, try Self.stamp(1_000))
        #expect(try Self.merge(agent, [stale]).recordsChanged == [false])
        let kept: Bookmark = try player.call(.getBookmark(profile: "", contentId: "movie"))
        #expect(kept.contentTime == 120)

        // A later tombstone deletes the bookmark; the same record again changes nothing (idempotent).
        let tombstone = try SyncRecord(
            profile: "", contentId: "film", value: .tombstone(.deleted), stamp: try Self.stamp(now + 10_000))
        #expect(try Self.merge(agent, [tombstone, tombstone]).recordsChanged == [true, false])
        #expect(throws: SnapbackClientError.self) {
            let _: Bookmark = try player.call(.getBookmark(profile: "", contentId: "film"))
        }
        let gone = try player.openSession(Streams.seed(contentId: "film", useBookmark: true, breaks: []))
        #expect(!gone.resumedFromBookmark)

        // Watched breaks merge by union, answered per break.
        let watched = try WatchedBreaks(contentId: "film", watchedAt: ["b1": Double(now) / 1000])
        #expect(try Self.merge(agent, [], watched: [watched, watched]).watchedChanged == [true, false])

        // The merged records are in the change stream under their origin: the agent tells them from
        // this box's own changes by the device.
        let started = try agent.watchChanges(after: 0)
        var origins: [String: String] = [:]
        while origins["film"] == nil || origins["movie"] == nil {
            let change = try agent.nextChange(timeout: .seconds(10))
            if case .record(let r) = change.change { origins[r.contentId] = r.origin.text }
        }
        #expect(origins["film"] == "box-2")
        #expect(origins["movie"] == started.deviceId)
        #expect(daemon.errorLines == [])
    }

    @Test func resumingAfterARestartSeesNothingTwiceAndNothingLost() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        // Merged records: one change each (a player's session saves again as it closes).
        func record(_ id: String) throws -> SyncRecord { try Self.bookmark(id, at: 60, try Self.stamp(1_000)) }
        func read(_ agent: SnapbackClient, count: Int) throws -> [(Int64, String)] {
            var out: [(Int64, String)] = []
            while out.count < count {
                let change = try agent.nextChange(timeout: .seconds(10))
                guard case .record(let r) = change.change else { continue }
                out.append((change.seq, r.contentId))
            }
            return out
        }
        // The first daemon's harness is kept to the end: its state directory goes with it.
        let first = try DaemonHarness(in: directory)
        let firstAgent = try first.player("agent")
        _ = try firstAgent.watchChanges(after: 0)
        for id in ["a", "b", "c"] { _ = try Self.merge(firstAgent, [try record(id)]) }
        let before = try read(firstAgent, count: 3)
        first.terminate()
        #expect(first.waitForExit() == .exit(0))
        let last = try #require(before.last?.0)
        let daemon = try DaemonHarness(in: directory)
        let agent = try daemon.player("agent")
        for id in ["d", "e"] { _ = try Self.merge(agent, [try record(id)]) }
        _ = try agent.watchChanges(after: UInt64(last))
        _ = try Self.merge(agent, [try record("f")])
        let after = try read(agent, count: 3)
        #expect(before.map(\.1) == ["a", "b", "c"])
        #expect(after.map(\.1) == ["d", "e", "f"])
        let seqs = (before + after).map(\.0)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
        #expect(daemon.errorLines == [])
        withExtendedLifetime(first) {}
    }

    @Test func outOfRangeRecordsAreRefusedNamingTheField() throws {
        let daemon = try DaemonHarness()
        let agent = try daemon.player("agent")
        func refusal(_ record: SnapbackV1Record) throws -> (StatusCode?, String) {
            do {
                _ = try agent.rawCall(method: WireMethod.merge.rawValue, body: record.body)
                return (nil, "")
            } catch {
                if case .status(let code, let message) = error { return (code, message) }
                return (nil, "\(error)")
            }
        }
        let cases: [(SnapbackV1Record, String)] = [
            (SnapbackV1Record(counter: 1 << 32), "records[0].stamp.counter"),
            (SnapbackV1Record(physical: 1 << 62), "records[0].stamp.physical"),
            (SnapbackV1Record(device: "bad id!"), "records[0].stamp.device"),
            (SnapbackV1Record(device: ""), "records[0].stamp.device"),
            (SnapbackV1Record(contentId: ""), "records[0].content_id"),
            (SnapbackV1Record(contentTime: .nan), "records[0].bookmark.content_time"),
            (SnapbackV1Record(contentTime: -1), "records[0].bookmark.content_time"),
            (SnapbackV1Record(updatedAt: 1e300), "records[0].bookmark.updated_at"),
            (SnapbackV1Record(tombstoneKind: 7), "records[0].tombstone.kind")
        ]
        for (record, field) in cases {
            let (code, message) = try refusal(record)
            #expect(code == .invalidArgument, "\(field): \(message)")
            #expect(message.contains(field), "\(message)")
        }
        // More records than a call may carry: refused before they are read.
        let many = SyncMerge(records: Array(repeating: try Self.bookmark("x", at: 1, try Self.stamp(1)), count: 257))
        do {
            _ = try agent.rawCall(method: WireMethod.merge.rawValue, body: many.encoded())
            Issue.record("257 records accepted")
        } catch {
            #expect(error.code == .resourceExhausted, "\(error)")
        }
        #expect(daemon.isRunning)
    }

    @Test func aStreamReaderThatDoesNotReadIsDroppedAndPlayersAreAnswered() throws {
        let daemon = try DaemonHarness()
        let agent = try daemon.player("agent")
        // A backlog far over what a socket buffer and the queue bound hold: 1,600 records of 900-byte ids, 100 a call.
        let pad = String(repeating: "p", count: 900)
        for batch in 0..<16 {
            let records = try (0..<100).map { i in try Self.bookmark("\(pad)-\(batch)-\(i)", at: 1, try Self.stamp(1_000)) }
            #expect(try Self.merge(agent, records).recordsChanged.allSatisfy { $0 })
        }
        let slow = try daemon.connect()
        let hello = WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "slow-agent"))
        try slow.send(.request(callId: 1, method: hello.method.rawValue), body: hello.encoded())
        let watch = WireRequest.watchChanges(after: 0)
        try slow.send(.request(callId: 2, method: watch.method.rawValue), body: watch.encoded())
        // Players are answered all along, and the reader that never reads is dropped.
        let player = try daemon.player()
        let deadline = Date().addingTimeInterval(60)
        var dropped = false
        while Date() < deadline {
            let _: SnapbackV1.StatusReply = try player.call(.getStatus)
            if daemon.stderrText.contains("change stream reader not reading") {
                dropped = true
                break
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(dropped, "\(daemon.stderrText.suffix(2000))")
        try Self.save(player, "after", at: 42)
        #expect(daemon.isRunning)
    }
}

/// A MergeRequest of one record with every field settable, out of range included, built on the
/// generated wire types' public client API (`SyncMerge` refuses what the core refuses, so the bad
/// values are written by field number here).
struct SnapbackV1Record {
    var physical: UInt64 = 1
    var counter: UInt64 = 0
    var device = "box-2"
    var contentId = "film"
    var contentTime = 10.0
    var updatedAt = 1.0
    var tombstoneKind: UInt64? = nil

    var body: [UInt8] {
        var stamp = Proto.varint(1, physical) + Proto.varint(2, counter)
        stamp += Proto.bytes(3, Array(device.utf8))
        var record = Proto.bytes(1, []) + Proto.bytes(2, Array(contentId.utf8)) + Proto.bytes(3, stamp)
        if let kind = tombstoneKind {
            record += Proto.bytes(5, Proto.varint(1, kind))
        } else {
            var b = Proto.double(1, contentTime) + Proto.bytes(2, Array("s".utf8)) + Proto.double(3, 1)
            b += Proto.double(5, updatedAt)
            record += Proto.bytes(4, b)
        }
        return Proto.bytes(1, record)
    }
}

/// Just enough of the protobuf encoding to write values the typed API refuses to build.
enum Proto {
    static func rawVarint(_ v: UInt64) -> [UInt8] {
        var v = v
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }
    static func varint(_ field: UInt64, _ v: UInt64) -> [UInt8] { rawVarint(field << 3) + rawVarint(v) }
    static func double(_ field: UInt64, _ v: Double) -> [UInt8] {
        rawVarint(field << 3 | 1) + withUnsafeBytes(of: v.bitPattern.littleEndian) { Array($0) }
    }
    static func bytes(_ field: UInt64, _ b: [UInt8]) -> [UInt8] { rawVarint(field << 3 | 2) + rawVarint(UInt64(b.count)) + b }
}
