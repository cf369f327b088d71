// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import SnapbackTimeline
import Testing

@testable import SnapbackSync

/// The bound of a bucket value's stamp by its message's server time, and the conflict rule with a
/// hostile member of the household: any honest change made after reading wins, whatever was written before.
@Suite struct ServerTimeBoundTests {
    static let hostile = try! DeviceID(String(repeating: "z", count: 64))

    static func record(_ stamp: SyncStamp, at time: Double = 1) -> SyncRecord {
        try! SyncRecord(
            profile: "p", contentId: "c",
            value: .bookmark(SyncedBookmark(contentTime: time, streamId: "s", streamTime: time, finished: false, updatedAt: 1)),
            stamp: stamp)
    }

    @Test func theBoundIsTheServersTimePlusADay() {
        let server: Int64 = 1_800_000_000_000
        let ns = server * 1_000_000 + 999_999
        #expect(ServerTimeBound.excess(physical: server + 86_400_000, serverNanoseconds: ns) == nil)
        #expect(ServerTimeBound.excess(physical: server + 86_400_001, serverNanoseconds: ns) == 1)
        #expect(ServerTimeBound.excess(physical: 0, serverNanoseconds: ns) == nil)
        #expect(ServerTimeBound.excess(physical: SyncStamp.maxPhysical, serverNanoseconds: ns) != nil)
        // A server time that is no time at all (negative) bounds from 0: no trap.
        #expect(ServerTimeBound.excess(physical: 86_400_001, serverNanoseconds: Int64.min) == 1)
        let watched = try! WatchedBreaks(contentId: "c", watchedAt: ["ok": Double(server) / 1000, "ahead": 4_102_444_800])
        let (kept, refused) = ServerTimeBound.split(watched, serverNanoseconds: ns)
        #expect(Array(kept.watchedAt.keys) == ["ok"] && refused == ["ahead"])
    }

    /// One key, a hostile member and three honest boxes whose clocks are off by up to a day behind or 23 h
    /// ahead of the server. Every box reads every write (taking it if the bound does); the hostile
    /// member writes any stamp of the range, the top included, whenever it likes, and rewrites lower
    /// ones over higher. After each honest change (stamped by the box's clock after what it holds,
    /// published by the rule against what the bucket holds), every box holds that change.
    static func honestChangesWin(seed: UInt64, accepts: (SyncRecord, Int64) -> Bool) -> String? {
        var rng = SplitMix64(seed: seed)
        var server: Int64 = 1_800_000_000_000 + Int64.random(in: 0..<86_400_000, using: &rng)
        var bucket: (record: SyncRecord, created: Int64)?
        let hour: Int64 = 3_600_000
        var clocks = (0..<3).map { i in
            HybridLogicalClock(device: try! DeviceID("box-\(i)"), physical: 0)
        }
        let offsets = (0..<3).map { _ in Int64.random(in: -24 * hour...23 * hour, using: &rng) }
        var held: [SyncRecord?] = [nil, nil, nil]
        func wall(_ i: Int) -> Double { Double(server + offsets[i]) / 1000 }
        func everyBoxReads() {
            guard let (record, created) = bucket, accepts(record, created * 1_000_000) else { return }
            for i in 0..<3 where held[i].map({ record.supersedes($0) }) ?? true {
                held[i] = record
                clocks[i].receive(record.stamp, now: wall(i))
            }
        }
        for step in 0..<200 {
            server += Int64.random(in: 1...(rng.chance(0.5) ? 1000 : hour), using: &rng)
            if rng.chance(0.4) {
                let physical: Int64 = rng.pick([
                    SyncStamp.maxPhysical, 4_102_444_800_000, server + ServerTimeBound.maxAheadMilliseconds,
                    server + ServerTimeBound.maxAheadMilliseconds + 1, server, 0,
                    Int64.random(in: 0...SyncStamp.maxPhysical, using: &rng),
                    server - Int64.random(in: 0...server, using: &rng)
                ])
                let counter: UInt32 = rng.pick([0, UInt32.max, UInt32.max - 1, UInt32.random(in: 0...UInt32.max, using: &rng)])
                let device =
                    rng.chance(0.7) ? hostile : try! DeviceID(rng.pick(["0", "box-0", "box-9", "~"].filter(DeviceID.isValid)))
                bucket = (record(SyncStamp(physical: physical, counter: counter, device: device)), server)
                everyBoxReads()
                continue
            }
            let i = Int.random(in: 0..<3, using: &rng)
            let stamp = clocks[i].stamp(now: wall(i), after: held[i]?.stamp)
            let mine = record(stamp, at: Double(step))
            let remote = bucket.flatMap { accepts($0.record, $0.created * 1_000_000) ? $0.record : nil }
            guard case .write = PublishStep.record(mine, remote: remote) else {
                return "seed \(seed) step \(step): box \(i)'s change \(stamp) lost to the bucket's \(String(describing: remote))"
            }
            bucket = (mine, server)
            held[i] = mine
            everyBoxReads()
            for j in 0..<3 where held[j] != mine {
                return "seed \(seed) step \(step): box \(j) holds \(String(describing: held[j])), not box \(i)'s \(stamp)"
            }
        }
        return nil
    }

    @Test func anyHonestChangeAfterReadingWinsWhateverAHostileMemberWrote() {
        for seed in UInt64(1)...150 {
            let failure = Self.honestChangesWin(seed: seed) { ServerTimeBound.accepts($0, serverNanoseconds: $1) }
            #expect(failure == nil, "\(failure ?? "")")
            if failure != nil { return }
        }
    }

    /// The same households without the bound: a stamp at the top of the range pins the key (the test
    /// above would fail on the landed main's agent, which took every stamp in range).
    @Test func withoutTheBoundAHostileStampPinsTheKey() {
        let pinned = (UInt64(1)...300).contains { Self.honestChangesWin(seed: $0) { _, _ in true } != nil }
        #expect(pinned)
    }
}
