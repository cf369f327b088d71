// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import SnapbackTimeline
import Testing

private func device(_ name: String) -> DeviceID { try! DeviceID(name) }

private func record(
    _ contentId: String = "film", at contentTime: Double, stamp: SyncStamp, profile: String = "p"
) -> SyncRecord {
    try! SyncRecord(
        profile: profile, contentId: contentId,
        value: .bookmark(
            SyncedBookmark(contentTime: contentTime, streamId: "s", streamTime: contentTime, finished: false, updatedAt: 1)),
        stamp: stamp)
}

private func tombstone(_ kind: TombstoneKind, stamp: SyncStamp, contentId: String = "film") -> SyncRecord {
    try! SyncRecord(profile: "p", contentId: contentId, value: .tombstone(kind), stamp: stamp)
}

/// The household sync rule's scenarios (issue 27): hybrid logical clocks across skewed boxes, tombstones.
@Suite struct SyncScenarioTests {
    let now = 1_800_000_000.0

    /// Box 2's clock is 10 minutes behind. It reads box 1's 47:23, the viewer rewinds to 0:10 there:
    /// 0:10 is the later change and wins on both boxes.
    @Test func aHandOffToABoxWhoseClockIsBehindOrdersAfterWhatItRead() {
        var box1 = HybridLogicalClock(device: device("box1"))
        var box2 = HybridLogicalClock(device: device("box2"))
        let saved = record(at: 47 * 60 + 23, stamp: box1.stamp(now: now, after: nil))
        // Box 2 hears of it (its clock: now - 600 s); the viewer rewinds there 30 s later.
        box2.receive(saved.stamp, now: now - 600)
        let rewound = record(at: 10, stamp: box2.stamp(now: now - 570, after: saved.stamp))
        #expect(rewound.stamp > saved.stamp)
        #expect(SyncRecord.merge(saved, rewound).value.bookmark?.contentTime == 10)
        #expect(SyncRecord.merge(rewound, saved).value.bookmark?.contentTime == 10)
        // Plain wall-clock last-writer-wins would have picked 47:23 (box 2's wall time is earlier).
        #expect(now - 570 < now)
    }

    /// Without having heard the stamp through `receive` (the store hands only the record's own stamp),
    /// a change to a record stamped far ahead still orders after it.
    @Test func aChangeToARecordStampedFarAheadOrdersAfterIt() {
        var box2 = HybridLogicalClock(device: device("box2"))
        let ahead = SyncStamp(physical: SyncStamp.milliseconds(ofSeconds: now + 3600), counter: 7, device: device("box1"))
        let mine = box2.stamp(now: now, after: ahead)
        #expect(mine > ahead)
        #expect(mine.device == device("box2"))
        // The clock itself stayed within its cap of box 2's time.
        #expect(box2.physical <= SyncStamp.milliseconds(ofSeconds: now) + box2.maxAheadMilliseconds)
    }

    /// A box whose clock is an hour ahead: a box that hears its stamps adopts at most `maxAhead` of it,
    /// so its own later changes are stamped at its own time (plus the cap), not an hour ahead; and once
    /// real time passes the ahead box's stamp, any change wins over it.
    @Test func aClockAnHourAheadIsCapped() {
        var ahead = HybridLogicalClock(device: device("ahead"))
        var honest = HybridLogicalClock(device: device("honest"))
        let fromAhead = record(at: 100, stamp: ahead.tick(now: now + 3600))
        honest.receive(fromAhead.stamp, now: now)
        #expect(honest.physical == SyncStamp.milliseconds(ofSeconds: now) + HybridLogicalClock.defaultMaxAheadMilliseconds)
        // Its next change of another bookmark: not dragged an hour ahead.
        let other = honest.tick(now: now + 1)
        #expect(other.physical < fromAhead.stamp.physical - 3_000_000)
        // Receiving it again and again does not move the clock further than the cap of the time.
        for _ in 0..<100 { honest.receive(fromAhead.stamp, now: now + 1) }
        #expect(honest.physical <= SyncStamp.milliseconds(ofSeconds: now + 1) + honest.maxAheadMilliseconds)
        // Uncapped (the cap at its widest, a day), the clock would have been dragged the whole hour.
        var dragged = HybridLogicalClock(device: device("honest"), maxAheadMilliseconds: 86_400_000)
        dragged.receive(fromAhead.stamp, now: now)
        #expect(dragged.tick(now: now + 1).physical >= fromAhead.stamp.physical)
        // Not for ever: a concurrent change made once real time passed its stamp wins.
        let later = record(at: 200, stamp: honest.tick(now: now + 3601))
        #expect(SyncRecord.merge(fromAhead, later) == later)
        // A configured cap outside its range is held to it.
        #expect(HybridLogicalClock(device: device("x"), maxAheadMilliseconds: -5).maxAheadMilliseconds == 0)
        #expect(HybridLogicalClock(device: device("x"), maxAheadMilliseconds: .max).maxAheadMilliseconds == 86_400_000)
    }

    /// A cleared bookmark stays cleared when a stale write made offline before the clear arrives, in
    /// either order.
    @Test func aClearedBookmarkStaysClearedAfterAStaleOfflineWrite() {
        var box1 = HybridLogicalClock(device: device("box1"))
        var box2 = HybridLogicalClock(device: device("box2"))
        // Box 2, offline, saves at 12:00; box 1 clears the profile an hour later.
        let stale = record(at: 720, stamp: box2.tick(now: now))
        let cleared = tombstone(.cleared, stamp: box1.tick(now: now + 3600))
        #expect(SyncRecord.merge(cleared, stale) == cleared)
        #expect(SyncRecord.merge(stale, cleared) == cleared)
        // A new save after the clear (one that read it) brings the bookmark back: the viewer's choice.
        let again = record(at: 30, stamp: box2.stamp(now: now + 10, after: cleared.stamp))
        #expect(SyncRecord.merge(cleared, again) == again)
    }

    @Test func aLocalClockSetBackKeepsStampsIncreasing() {
        var clock = HybridLogicalClock(device: device("box"))
        var last = clock.tick(now: now)
        for step in [0.0, -3600, -1e9, 0.001, .nan, -.infinity] {
            let next = clock.tick(now: now + step)
            #expect(next > last)
            last = next
        }
    }
}

/// Every number and name from a peer is checked where it enters; no conversion traps.
@Suite struct SyncInputTests {
    @Test func stampsOutOfRangeAreRefused() {
        #expect(throws: SyncInputError.self) { try SyncStamp(physical: UInt64.max, counter: 0, device: "a") }
        #expect(throws: SyncInputError.self) {
            try SyncStamp(physical: UInt64(SyncStamp.maxPhysical) + 1, counter: 0, device: "a")
        }
        #expect(throws: SyncInputError.self) { try SyncStamp(physical: 0, counter: UInt64(UInt32.max) + 1, device: "a") }
        #expect(throws: SyncInputError.self) { try SyncStamp(physical: 0, counter: 0, device: "") }
        #expect(throws: SyncInputError.self) { try SyncStamp(physical: 0, counter: 0, device: "box 1") }
        #expect(throws: SyncInputError.self) { try SyncStamp(physical: 0, counter: 0, device: "bö") }
        #expect(throws: SyncInputError.self) {
            try SyncStamp(physical: 0, counter: 0, device: String(repeating: "a", count: 65))
        }
        let top = try? SyncStamp(physical: UInt64(SyncStamp.maxPhysical), counter: UInt64(UInt32.max), device: "a")
        #expect(top != nil)
    }

    @Test func wallTimesConvertWithoutTrapping() {
        #expect(SyncStamp.milliseconds(ofSeconds: 1e300) == SyncStamp.maxPhysical)
        #expect(SyncStamp.milliseconds(ofSeconds: .infinity) == 0)
        #expect(SyncStamp.milliseconds(ofSeconds: .nan) == 0)
        #expect(SyncStamp.milliseconds(ofSeconds: -5) == 0)
        #expect(SyncStamp.milliseconds(ofSeconds: 1.2345) == 1234)
        var clock = HybridLogicalClock(device: device("a"))
        let far = clock.tick(now: 1e300)
        #expect(far.physical == SyncStamp.maxPhysical)
        clock.receive(try! SyncStamp(physical: 0, counter: UInt64(UInt32.max), device: "b"), now: 1e300)
        _ = clock.tick(now: 1e300)
    }

    /// A counter at its top moves to the next millisecond; both at their top saturate.
    @Test func countersAtTheirTopDoNotTrap() throws {
        let b = device("b")
        let atMax = try SyncStamp(physical: 1000, counter: UInt64(UInt32.max), device: "a")
        let next = atMax.successor(by: b)
        #expect(next > atMax)
        #expect(next.physical == 1001 && next.counter == 0)
        let top = try SyncStamp(physical: UInt64(SyncStamp.maxPhysical), counter: UInt64(UInt32.max), device: "a")
        #expect(top.successor(by: b) > top)  // "b" > "a": the device still orders it after
        var clock = HybridLogicalClock(device: b)
        clock.receive(atMax, now: 1.0)
        let stamp = clock.tick(now: 1.0)
        #expect(stamp > atMax)
        var pinned = HybridLogicalClock(device: b, physical: SyncStamp.maxPhysical, counter: UInt32.max)
        _ = pinned.tick(now: 0)
        #expect(pinned.physical == SyncStamp.maxPhysical)
    }

    @Test func recordsOutOfRangeAreRefused() {
        let stamp = SyncStamp(physical: 1, counter: 0, device: device("a"))
        func value(_ t: Double, updatedAt: Double = 1, stream: String = "s") -> SyncValue {
            .bookmark(SyncedBookmark(contentTime: t, streamId: stream, streamTime: t, finished: false, updatedAt: updatedAt))
        }
        for bad in [Double.nan, .infinity, -1, 1e300] {
            #expect(throws: SyncInputError.self) { try SyncRecord(profile: "", contentId: "c", value: value(bad), stamp: stamp) }
            #expect(throws: SyncInputError.self) {
                try SyncRecord(profile: "", contentId: "c", value: value(1, updatedAt: bad), stamp: stamp)
            }
            #expect(throws: SyncInputError.self) { try WatchedBreaks(contentId: "c", watchedAt: ["b": bad]) }
        }
        let long = String(repeating: "x", count: SyncLimits.idBytes + 1)
        #expect(throws: SyncInputError.self) { try SyncRecord(profile: long, contentId: "c", value: value(1), stamp: stamp) }
        #expect(throws: SyncInputError.self) { try SyncRecord(profile: "", contentId: "", value: value(1), stamp: stamp) }
        #expect(throws: SyncInputError.self) {
            try SyncRecord(profile: "", contentId: "c", value: value(1, stream: long), stamp: stamp)
        }
        #expect(throws: SyncInputError.self) { try WatchedBreaks(contentId: "c", watchedAt: ["": 1]) }
        // -0 is stored as 0: one value, one representation.
        let negativeZero = try? SyncRecord(profile: "", contentId: "c", value: value(-0.0), stamp: stamp)
        #expect(negativeZero?.value.bookmark?.contentTime.sign == .plus)
    }
}

/// The merge is a join: commutative, associative and idempotent, over random records, stamps and
/// orders; every box that receives the same records in any order ends with the same one.
@Suite struct SyncMergePropertyTests {
    private static let devices = ["a", "b", "c"].map { device($0) }

    private func randomRecord(_ rng: inout SplitMix64) -> SyncRecord {
        // Few distinct stamps and values, so that ties (equal stamps, equal values) come up often.
        let stamp = SyncStamp(
            physical: Int64.random(in: 0...3, using: &rng),
            counter: rng.chance(0.1) ? UInt32.max : UInt32.random(in: 0...2, using: &rng),
            device: rng.pick(Self.devices))
        let value: SyncValue =
            rng.chance(0.3)
            ? .tombstone(rng.pick(TombstoneKind.allCases))
            : .bookmark(
                SyncedBookmark(
                    contentTime: Double(Int.random(in: 0...3, using: &rng)), streamId: rng.pick(["s", "t"]),
                    streamTime: Double(Int.random(in: 0...1, using: &rng)), finished: rng.chance(0.3),
                    updatedAt: Double(Int.random(in: 0...1, using: &rng))))
        return try! SyncRecord(profile: "p", contentId: "c", value: value, stamp: stamp)
    }

    private func randomWatched(_ rng: inout SplitMix64) -> WatchedBreaks {
        var breaks: [String: Double] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            breaks[rng.pick(["b1", "b2", "b3", "b4"])] = Double(Int.random(in: 0...3, using: &rng))
        }
        return try! WatchedBreaks(contentId: "c", watchedAt: breaks)
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func recordMergeIsCommutativeAssociativeAndIdempotent(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let a = randomRecord(&rng), b = randomRecord(&rng), c = randomRecord(&rng)
            #expect(SyncRecord.merge(a, b) == SyncRecord.merge(b, a), "seed \(seed): \(a) \(b)")
            #expect(
                SyncRecord.merge(SyncRecord.merge(a, b), c) == SyncRecord.merge(a, SyncRecord.merge(b, c)),
                "seed \(seed)")
            #expect(SyncRecord.merge(a, a) == a)
            // The winner is one of the two, and wins over the other by stamp unless the stamps are equal.
            let m = SyncRecord.merge(a, b)
            #expect(m == a || m == b)
            if a.stamp != b.stamp { #expect(m.stamp == max(a.stamp, b.stamp)) }
        }
    }

    /// Boxes receiving the same records in different orders, each merged into what it holds, agree.
    @Test(arguments: [5, 6, 7] as [UInt64])
    func anyDeliveryOrderConverges(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let records = (0..<Int.random(in: 1...8, using: &rng)).map { _ in randomRecord(&rng) }
            var outcomes: [SyncRecord] = []
            for _ in 0..<4 {
                // Shuffled, some delivered twice.
                var delivery = records.shuffled(using: &rng)
                if rng.chance(0.5) { delivery += records.shuffled(using: &rng).prefix(3) }
                outcomes.append(delivery.dropFirst().reduce(delivery[0]) { SyncRecord.merge($0, $1) })
            }
            #expect(Set(outcomes.map { "\($0)" }).count == 1, "seed \(seed)")
        }
    }

    @Test(arguments: [8, 9] as [UInt64])
    func watchedBreaksMergeIsCommutativeAssociativeAndIdempotent(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let a = randomWatched(&rng), b = randomWatched(&rng), c = randomWatched(&rng)
            #expect(WatchedBreaks.merge(a, b) == WatchedBreaks.merge(b, a))
            #expect(WatchedBreaks.merge(WatchedBreaks.merge(a, b), c) == WatchedBreaks.merge(a, WatchedBreaks.merge(b, c)))
            #expect(WatchedBreaks.merge(a, a) == a)
            // Union: nothing watched is lost.
            let m = WatchedBreaks.merge(a, b)
            #expect(Set(m.watchedAt.keys) == Set(a.watchedAt.keys).union(b.watchedAt.keys))
        }
    }

    /// The clock's stamps of one box only increase, whatever it hears and whatever its wall clock does.
    @Test(arguments: [10, 11] as [UInt64])
    func aClocksStampsOnlyIncrease(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var clock = HybridLogicalClock(device: device("me"), maxAheadMilliseconds: Int64.random(in: 0...120_000, using: &rng))
        var last: SyncStamp?
        var wall = 1_700_000_000.0
        for _ in 0..<5000 {
            wall += rng.pick([0, 0.0005, 1, -30, 600, -86_400])
            if rng.chance(0.3) {
                let heard = SyncStamp(
                    physical: SyncStamp.milliseconds(ofSeconds: wall + Double.random(in: -7200...7200, using: &rng)),
                    counter: rng.chance(0.2) ? UInt32.max : UInt32.random(in: 0...10, using: &rng),
                    device: rng.pick(Self.devices))
                if rng.chance(0.5) {
                    clock.receive(heard, now: wall)
                } else {
                    let stamp = clock.stamp(now: wall, after: heard)
                    #expect(stamp > heard)
                    // A successor beyond the clock is not adopted: compare with the clock's own stamps only.
                    if stamp.physical <= clock.physical, let l = last { #expect(stamp > l) }
                    if stamp == clock.last { last = stamp }
                    continue
                }
            }
            let stamp = clock.tick(now: wall)
            if let last { #expect(stamp > last, "seed \(seed)") }
            last = stamp
        }
    }
}
