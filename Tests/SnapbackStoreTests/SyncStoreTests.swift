// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTestSupport
import SnapbackTimeline
import Testing

@testable import SnapbackStore

/// A wall clock a test sets (a box whose clock is behind, ahead, set back).
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Double
    init(_ now: Double) { value = now }
    var now: Double {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
    var read: @Sendable () -> Double { { [self] in now } }
}

private func device(_ name: String) -> DeviceID { try! DeviceID(name) }

/// A box: a store with its own device id and wall clock.
private func box(_ name: String, clock: TestClock, directory: String? = nil) throws -> StoreFixture {
    var configuration = SQLiteViewerStateStore.Configuration()
    configuration.deviceId = device(name)
    let f = try StoreFixture(directory: directory, configuration: configuration, open: false)
    f.clock = clock.read
    f.reopen()
    return f
}

private func remote(
    _ contentId: String, at contentTime: Double, stamp: SyncStamp, profile: String = "p"
) -> SyncRecord {
    try! SyncRecord(
        profile: profile, contentId: contentId,
        value: .bookmark(
            SyncedBookmark(contentTime: contentTime, streamId: "s", streamTime: contentTime + 30, finished: false, updatedAt: 5)),
        stamp: stamp)
}

/// The store's side of household sync: stamps on local changes, tombstones, the merge under the rule
/// (atomic with the store, acknowledged once committed), the change sequence, the migration.
@Suite struct SyncStoreTests {
    let t0 = 1_800_000_000.0

    @Test func localChangesAreStampedByTheClockAndOrderAfterWhatTheBoxHeld() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        #expect(f.store.deviceId == device("box1"))
        #expect(f.save(bookmark("film", at: 10)).isSuccess)
        let first = try #require(try f.store.syncRecord(profile: "p", contentId: "film"))
        #expect(first.stamp.device == device("box1"))
        #expect(first.stamp.physical == SyncStamp.milliseconds(ofSeconds: t0))
        // The clock set back an hour: the next change still orders after.
        clock.now = t0 - 3600
        #expect(f.save(bookmark("film", at: 20)).isSuccess)
        let second = try #require(try f.store.syncRecord(profile: "p", contentId: "film"))
        #expect(second.stamp > first.stamp)
        // A record from a box an hour ahead wins (it is the later stamp) ...
        let ahead = remote(
            "film", at: 99, stamp: SyncStamp(physical: second.stamp.physical + 7_200_000, counter: 3, device: device("box2")))
        #expect(f.merge(ahead) == .success(true))
        #expect(try f.store.bookmark(profile: "p", contentId: "film")?.contentTime == 99)
        // ... but what the viewer does here next orders after it.
        #expect(f.save(bookmark("film", at: 30)).isSuccess)
        let third = try #require(try f.store.syncRecord(profile: "p", contentId: "film"))
        #expect(third.stamp > ahead.stamp)
        #expect(third.value.bookmark?.contentTime == 30)
    }

    @Test func mergeReplacesOnlyWhenTheRemoteRecordWinsAndSaysSo() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        #expect(f.save(bookmark("film", at: 100)).isSuccess)
        let mine = try #require(try f.store.syncRecord(profile: "p", contentId: "film"))
        let older = remote("film", at: 5, stamp: SyncStamp(physical: mine.stamp.physical - 1, counter: 0, device: device("box2")))
        #expect(f.merge(older) == .success(false))
        #expect(try f.store.bookmark(profile: "p", contentId: "film")?.contentTime == 100)
        let newer = remote(
            "film", at: 200, stamp: SyncStamp(physical: mine.stamp.physical + 1, counter: 0, device: device("box2")))
        #expect(f.merge(newer) == .success(true))
        #expect(f.merge(newer) == .success(false))  // idempotent
        #expect(try f.store.syncRecord(profile: "p", contentId: "film") == newer)
        #expect(try f.store.bookmark(profile: "p", contentId: "film")?.contentTime == 200)
        // A key the box did not hold: taken, listed, counted.
        let other = remote("other", at: 7, stamp: SyncStamp(physical: 1, counter: 0, device: device("box2")))
        #expect(f.merge(other) == .success(true))
        #expect(f.store.bookmarkCount == 2)
        #expect(try f.allPages("p", pageSize: 10).flatMap { $0 }.map(\.contentId) == ["other", "film"])
        // A newer tombstone removes the bookmark.
        let gone = try SyncRecord(
            profile: "p", contentId: "film", value: .tombstone(.deleted),
            stamp: SyncStamp(physical: newer.stamp.physical + 1, counter: 0, device: device("box3")))
        #expect(f.merge(gone) == .success(true))
        #expect(try f.store.bookmark(profile: "p", contentId: "film") == nil)
        #expect(f.store.bookmarkCount == 1)
        // It survives a restart.
        f.reopen()
        #expect(try f.store.syncRecord(profile: "p", contentId: "film") == gone)
        #expect(try f.store.bookmark(profile: "p", contentId: "film") == nil)
    }

    /// A cleared profile stays cleared when a stale write made offline before the clear arrives.
    @Test func deletesAndClearsLeaveTombstonesThatStaleWritesDoNotUndo() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        for id in ["a", "b", "c"] { #expect(f.save(bookmark(id)).isSuccess) }
        #expect(f.save(bookmark("a", profile: "kid")).isSuccess)
        let aBefore = try #require(try f.store.syncRecord(profile: "p", contentId: "a"))
        #expect(f.delete("p", "a") == .success(true))
        let deleted = try #require(try f.store.syncRecord(profile: "p", contentId: "a"))
        #expect(deleted.value == .tombstone(.deleted))
        #expect(deleted.stamp > aBefore.stamp)
        // Deleting what is not there leaves nothing.
        #expect(f.delete("p", "nothing") == .success(false))
        #expect(try f.store.syncRecord(profile: "p", contentId: "nothing") == nil)

        clock.now += 60
        #expect(f.clear("p") == .success(2))
        for id in ["b", "c"] {
            #expect(try f.store.syncRecord(profile: "p", contentId: id)?.value == .tombstone(.cleared))
        }
        #expect(try f.store.syncRecord(profile: "p", contentId: "a")?.value == .tombstone(.deleted))
        #expect(try f.store.bookmark(profile: "kid", contentId: "a") != nil)
        #expect(f.store.bookmarkCount == 1)

        // Box 2 saved "b" offline at t0 + 30 (before the clear); it arrives now.
        let stale = remote(
            "b", at: 999,
            stamp: SyncStamp(physical: SyncStamp.milliseconds(ofSeconds: t0 + 30), counter: 0, device: device("box2")))
        #expect(f.merge(stale) == .success(false))
        #expect(try f.store.bookmark(profile: "p", contentId: "b") == nil)
        #expect(try f.store.bookmarks(profile: "p", after: nil, limit: 10).page.isEmpty)
        // Saving it again here brings it back, stamped after the tombstone (so it wins on other boxes too).
        let cleared = try #require(try f.store.syncRecord(profile: "p", contentId: "b"))
        clock.now -= 3600
        #expect(f.save(bookmark("b", at: 1)).isSuccess)
        let again = try #require(try f.store.syncRecord(profile: "p", contentId: "b"))
        #expect(again.value.bookmark?.contentTime == 1)
        #expect(again.supersedes(cleared))
    }

    @Test func tombstonesHaveTheirOwnBoundAndDoNotCountInTheCap() throws {
        var configuration = SQLiteViewerStateStore.Configuration()
        configuration.capacity = 3
        configuration.tombstoneCapacity = 4
        let f = try StoreFixture(configuration: configuration)
        for i in 0..<6 { #expect(f.save(bookmark("c\(i)")).isSuccess) }
        #expect(f.store.bookmarkCount == 3)  // c3, c4, c5: evicted ones leave no tombstone
        #expect(try f.store.syncRecord(profile: "p", contentId: "c0") == nil)
        for i in 0..<3 { #expect(f.delete("p", "c\(3 + i)") == .success(true)) }
        for i in 0..<3 { #expect(f.save(bookmark("k\(i)")).isSuccess) }
        // Three tombstones and three bookmarks: none of the bookmarks evicted for them.
        #expect(f.store.bookmarkCount == 3)
        #expect(f.clear("p") == .success(3))
        // Six tombstones made, four kept: the oldest (c3, c4) went.
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(try db.integer("SELECT count(*) FROM bookmark_tombstones") == 4)
        #expect(try f.store.syncRecord(profile: "p", contentId: "c3") == nil)
        #expect(try f.store.syncRecord(profile: "p", contentId: "c5")?.value == .tombstone(.deleted))
        #expect(try f.store.syncRecord(profile: "p", contentId: "k2")?.value == .tombstone(.cleared))
    }

    /// Every change gets the next number; an agent asks for the changes after the last it handled and
    /// resumes there after a restart.
    @Test func changesAreNumberedInOrderAndResumeAfterARestart() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        #expect(f.save(bookmark("a", at: 1)).isSuccess)
        #expect(f.markWatched("a", "b1", at: t0).isSuccess)
        #expect(f.save(bookmark("b", at: 2)).isSuccess)
        #expect(f.save(bookmark("a", at: 3)).isSuccess)  // "a" again: its row moves to the end
        let all = try f.store.changes(after: 0, limit: 100)
        #expect(all.map(\.seq) == all.map(\.seq).sorted())
        #expect(Set(all.map(\.seq)).count == all.count)
        #expect(all.count == 3)
        guard all.count == 3 else { return }
        #expect(all[0].change == .watched(try WatchedBreaks(contentId: "a", watchedAt: ["b1": t0])))
        if case .record(let r) = all[2].change { #expect(r.contentId == "a" && r.value.bookmark?.contentTime == 3) }
        // Paging.
        #expect(try f.store.changes(after: 0, limit: 2).map(\.seq) == Array(all.map(\.seq).prefix(2)))
        let last = all[2].seq

        f.reopen()
        #expect(try f.store.changes(after: last, limit: 100).isEmpty)
        #expect(f.delete("p", "b") == .success(true))
        #expect(
            f.mergeWatched(try WatchedBreaks(contentId: "a", watchedAt: ["b1": t0 - 10, "b2": t0 + 5])) == .success(true))
        // Union: b1 kept its later time; b2 added.
        #expect(try f.store.watchedBreaks(contentId: "a", within: [0...1e12]) == ["b1", "b2"])
        #expect(f.mergeWatched(try WatchedBreaks(contentId: "a", watchedAt: ["b1": t0 - 10])) == .success(false))
        let after = try f.store.changes(after: last, limit: 100)
        #expect(after.allSatisfy { $0.seq > last })
        #expect(after.count == 2)
        guard after.count == 2 else { return }
        #expect(after[0].change == .record(try #require(try f.store.syncRecord(profile: "p", contentId: "b"))))
        #expect(after[1].change == .watched(try WatchedBreaks(contentId: "a", watchedAt: ["b2": t0 + 5])))
    }

    /// A change number is never handed out twice, even when the row that held the greatest one is gone
    /// (a watched break pruned) before a restart: an agent that saw it would miss the next change.
    @Test func changeNumbersDoNotRepeatAfterTheGreatestRowIsGone() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        #expect(f.save(bookmark("a")).isSuccess)
        #expect(f.markWatched("a", "b1", at: 1000).isSuccess)
        let seen = try #require(try f.store.changes(after: 0, limit: 10).last?.seq)
        f.store.pruneWatched(keeping: [t0 - 86_400...t0])
        f.reopen()  // closing commits the prune
        #expect(try f.store.watchedBreaks(contentId: "a", within: [0...1e12]).isEmpty)
        #expect(f.save(bookmark("b")).isSuccess)
        let next = try f.store.changes(after: 0, limit: 10).map(\.seq)
        #expect(next.allSatisfy { $0 != seen })
        #expect(next.last.map { $0 > seen } == true)
    }

    /// The clock's state survives a restart: after the wall clock was set back, a change to another
    /// bookmark still gets a later stamp.
    @Test func theClockResumesAfterARestart() throws {
        let clock = TestClock(t0)
        let f = try box("box1", clock: clock)
        #expect(f.save(bookmark("a")).isSuccess)
        let a = try #require(try f.store.syncRecord(profile: "p", contentId: "a"))
        clock.now = t0 - 86_400
        f.reopen()
        #expect(f.save(bookmark("b")).isSuccess)
        let b = try #require(try f.store.syncRecord(profile: "p", contentId: "b"))
        #expect(b.stamp > a.stamp)
    }

    /// Box 2's clock is 10 minutes behind. The viewer stops at 47:23 on box 1, resumes on box 2 (which
    /// has merged box 1's record) and rewinds to 0:10 there: 0:10 wins on both boxes.
    @Test func aHandOffToABoxWhoseClockIsBehindWinsEverywhere() throws {
        let clock1 = TestClock(t0), clock2 = TestClock(t0 - 600)
        let box1 = try box("box1", clock: clock1)
        let box2 = try box("box2", clock: clock2)
        #expect(box1.save(bookmark("film", at: 47 * 60 + 23)).isSuccess)
        let r1 = try #require(try box1.store.syncRecord(profile: "p", contentId: "film"))
        #expect(box2.merge(r1) == .success(true))
        #expect(try box2.store.bookmark(profile: "p", contentId: "film")?.contentTime == 47 * 60 + 23)
        clock1.now += 30
        clock2.now += 30
        #expect(box2.save(bookmark("film", at: 10)).isSuccess)
        let r2 = try #require(try box2.store.syncRecord(profile: "p", contentId: "film"))
        #expect(box1.merge(r2) == .success(true))
        #expect(box2.merge(r1) == .success(false))
        for b in [box1, box2] { #expect(try b.store.bookmark(profile: "p", contentId: "film")?.contentTime == 10) }
    }

    /// Random records from other boxes (frequent equal stamps, tombstones, keys the box holds or not)
    /// merged one by one: after each, the store holds what the pure rule folds to, and the merge said it
    /// changed exactly when that differs from what the store held before.
    @Test(arguments: [31, 32] as [UInt64])
    func theStoresMergeIsThePureRule(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let f = try box("here", clock: TestClock(t0))
        let devices = ["a", "b", "here"].map { device($0) }
        var expected: [String: SyncRecord] = [:]
        for i in 0..<150 {
            let key = rng.pick(["k1", "k2", "k3"])
            if rng.chance(0.1) {
                // A local save now and then: the store's own stamps join in.
                #expect(f.save(bookmark(key, profile: "p", at: Double(i))).isSuccess)
                expected[key] = try f.store.syncRecord(profile: "p", contentId: key)
                continue
            }
            let stamp = SyncStamp(
                physical: SyncStamp.milliseconds(ofSeconds: t0) + Int64.random(in: -2...2, using: &rng),
                counter: UInt32.random(in: 0...2, using: &rng), device: rng.pick(devices))
            let value: SyncValue =
                rng.chance(0.3)
                ? .tombstone(rng.pick(TombstoneKind.allCases))
                : .bookmark(
                    SyncedBookmark(
                        contentTime: Double(Int.random(in: 0...2, using: &rng)), streamId: "s", streamTime: 1,
                        finished: rng.chance(0.2), updatedAt: 1))
            let record = try SyncRecord(profile: "p", contentId: key, value: value, stamp: stamp)
            let before = expected[key]
            let after = before.map { SyncRecord.merge($0, record) } ?? record
            #expect(f.merge(record) == .success(after != before), "seed \(seed), step \(i)")
            expected[key] = after
            #expect(try f.store.syncRecord(profile: "p", contentId: key) == after, "seed \(seed), step \(i)")
            #expect(
                try f.store.bookmark(profile: "p", contentId: key) == after.value.bookmark?.bookmark(profile: "p", contentId: key)
            )
        }
        #expect(f.store.bookmarkCount == expected.values.filter { $0.value.bookmark != nil }.count)
    }

    /// Three boxes with skewed clocks make random local changes and exchange their changes (through
    /// the change sequence, as an agent would) in random order, some twice: once everything has been
    /// exchanged, every box holds, for every key, the record the rule picks among all the records any
    /// box ever made for it, and no watched break is lost.
    @Test(arguments: [21, 22, 23, 24] as [UInt64])
    func boxesExchangingChangesInAnyOrderConverge(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let clocks = [TestClock(t0), TestClock(t0 - 600), TestClock(t0 + 3600)]
        let boxes = try (0..<3).map { try box("box\($0)", clock: clocks[$0]) }
        // The last change of box i that box j was sent.
        var sent = [[Int64]](repeating: [0, 0, 0], count: 3)
        let keys = ["a", "b", "c"]
        var watched: Set<String> = []
        // Every record a box held after one of its own changes: the rule's winner is among them.
        var made: [String: [SyncRecord]] = [:]

        func exchange(from i: Int, to j: Int, all: Bool) throws {
            let changes = try boxes[i].store.changes(after: all ? 0 : sent[i][j], limit: 1000)
            if let last = changes.last { sent[i][j] = last.seq }
            for change in changes.shuffled(using: &rng) {
                switch change.change {
                case .record(let r): #expect(boxes[j].merge(r).isSuccess)
                case .watched(let w): #expect(boxes[j].mergeWatched(w).isSuccess)
                case .unsyncable: Issue.record("change \(change.seq): no valid record")
                }
            }
        }

        for _ in 0..<40 {
            let i = Int.random(in: 0..<3, using: &rng)
            for c in clocks { c.now += Double.random(in: -5...20, using: &rng) }
            let key = rng.pick(keys)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5: #expect(boxes[i].save(bookmark(key, at: Double(Int.random(in: 0...5000, using: &rng)))).isSuccess)
            case 5: #expect(boxes[i].delete("p", key).isSuccess)
            case 6: #expect(boxes[i].clear("p").isSuccess)
            case 7:
                let id = "br\(Int.random(in: 0..<4, using: &rng))"
                watched.insert("\(key)/\(id)")
                #expect(boxes[i].markWatched(key, id, at: clocks[i].now).isSuccess)
            default:
                let j = (i + Int.random(in: 1...2, using: &rng)) % 3
                try exchange(from: i, to: j, all: false)
                continue
            }
            for k in keys {
                if let r = try boxes[i].store.syncRecord(profile: "p", contentId: k) { made[k, default: []].append(r) }
            }
        }
        // Everything to everyone, twice, the pairs in random order.
        let pairs = (0..<3).flatMap { i in (0..<3).filter { $0 != i }.map { (i, $0) } }
        for _ in 0..<2 {
            for (i, j) in pairs.shuffled(using: &rng) { try exchange(from: i, to: j, all: true) }
        }
        for key in keys {
            let records = try boxes.map { try $0.store.syncRecord(profile: "p", contentId: key) }
            #expect(records[0] == records[1] && records[1] == records[2], "seed \(seed), key \(key): \(records)")
            let winner = made[key].map { $0.dropFirst().reduce($0[0]) { SyncRecord.merge($0, $1) } }
            #expect(records[0] == winner, "seed \(seed), key \(key)")
            let values = try boxes.map { try $0.store.bookmark(profile: "p", contentId: key) }
            #expect(values[0] == values[1] && values[1] == values[2], "seed \(seed), key \(key)")
        }
        for b in boxes {
            var held: Set<String> = []
            for key in keys {
                for id in try b.store.watchedBreaks(contentId: key, within: [0...1e12]) { held.insert("\(key)/\(id)") }
            }
            #expect(held == watched, "seed \(seed)")
        }
    }

    /// A schema-3 database (before sync) migrates: every bookmark stamped with its wall time and the
    /// id minted for the box, numbered in save order, then the watched breaks; reads, order and later
    /// saves as before.
    @Test func aSchema3DatabaseMigrates() throws {
        let f = try StoreFixture(open: false)
        do {
            let db = try SQLiteSchema.openWriter(path: f.path, busyTimeout: 1000, maxPageCount: nil, migrateTo: 3)
            try db.execute(
                """
                INSERT INTO bookmarks(profile, content_id, content_time, stream_time, stream_id, updated_at, finished, saved_seq)
                VALUES ('p', 'b', 1, 1, 's', 2000.5, 0, 1), ('p', 'a', 2, 2, 's', 1000, 1, 2),
                    ('q', 'c', 3, 3, 's', 1e300, 0, 3), ('p', 'd', 4, 4, 's', -5, 0, 7);
                INSERT INTO watched_breaks VALUES ('a', 'x', 50), ('a', 'y', 40);
                """)
        }
        f.reopen()
        #expect(f.store.lastError == nil)
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(try db.integer("PRAGMA user_version") == Int64(SQLiteSchema.version))
        let minted = try #require(f.store.deviceId)
        #expect(minted.text.count == 16 && minted.text.allSatisfy(\.isHexDigit))
        #expect(try f.allPages("p", pageSize: 2).flatMap { $0 }.map(\.contentId) == ["d", "a", "b"])
        #expect(
            try f.store.bookmark(profile: "p", contentId: "a")
                == Bookmark(
                    profile: "p", contentId: "a", contentTime: 2, streamTime: 2, streamId: "s", updatedAt: 1000, finished: true))
        let changes = try f.store.changes(after: 0, limit: 100)
        let expected: [(Int64, String, Int64)] = [
            (1, "b", 2_000_500), (2, "a", 1_000_000), (3, "c", SyncStamp.maxPhysical), (7, "d", 0)
        ]
        #expect(changes.count == 6)
        for (change, (seq, id, physical)) in zip(changes, expected) {
            #expect(change.seq == seq)
            guard case .record(let r) = change.change else {
                Issue.record("change \(change.seq) is not a bookmark")
                continue
            }
            #expect(r.contentId == id && r.stamp == SyncStamp(physical: physical, counter: 0, device: minted))
        }
        // Then the watched breaks, by time.
        #expect(changes.suffix(2).map(\.seq) == [8, 9])
        #expect(changes.last?.change == .watched(try WatchedBreaks(contentId: "a", watchedAt: ["x": 50])))
        // New changes come after; the migrated rows' stamps order before them.
        #expect(f.save(bookmark("a", at: 9)).isSuccess)
        let saved = try #require(try f.store.syncRecord(profile: "p", contentId: "a"))
        #expect(saved.stamp > SyncStamp(physical: 1_000_000, counter: 0, device: minted))
        #expect(try f.store.changes(after: 9, limit: 10).map(\.seq) == [10])
        // The id stays the box's across restarts.
        f.reopen()
        #expect(f.store.deviceId == minted)
    }
}
