// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackSync

/// What publishing an entry does against the bucket's value: the store's rule, decided without I/O.
@Suite struct PublishStepTests {
    static func stamp(_ physical: Int64, _ device: String) throws -> SyncStamp {
        SyncStamp(physical: physical, counter: 0, device: try DeviceID(device))
    }

    static func bookmark(_ time: Double, _ stamp: SyncStamp, content: String = "film") throws -> SyncRecord {
        try SyncRecord(
            profile: "kids", contentId: content,
            value: .bookmark(SyncedBookmark(contentTime: time, streamId: "s", streamTime: time, finished: false, updatedAt: 1)),
            stamp: stamp)
    }

    @Test func aRecordIsWrittenUnlessTheBucketHoldsItOrOneThatWins() throws {
        let mine = try Self.bookmark(600, try Self.stamp(2_000, "box-1"))
        #expect(PublishStep.record(mine, remote: nil) == .write(KVValue.encode(mine)))
        #expect(PublishStep.record(mine, remote: mine) == .nothing)
        let older = try Self.bookmark(3_000, try Self.stamp(1_000, "box-2"))
        #expect(PublishStep.record(mine, remote: older) == .write(KVValue.encode(mine)))
        // Newer by stamp: the bucket's record wins even with a smaller position (not "furthest wins").
        let newer = try Self.bookmark(10, try Self.stamp(3_000, "box-2"))
        #expect(PublishStep.record(mine, remote: newer) == .mergeLocally(newer))
        // Same physical time and counter: the device id decides, the same way on every box.
        let tie = try Self.bookmark(10, try Self.stamp(2_000, "box-0"))
        #expect(PublishStep.record(mine, remote: tie) == .write(KVValue.encode(mine)))
        // A later tombstone wins over this box's bookmark; an older one is replaced.
        let deleted = try SyncRecord(
            profile: "kids", contentId: "film", value: .tombstone(.deleted), stamp: try Self.stamp(2_500, "box-2"))
        #expect(PublishStep.record(mine, remote: deleted) == .mergeLocally(deleted))
        let oldDelete = try SyncRecord(
            profile: "kids", contentId: "film", value: .tombstone(.cleared), stamp: try Self.stamp(1_500, "box-2"))
        #expect(PublishStep.record(mine, remote: oldDelete) == .write(KVValue.encode(mine)))
    }

    @Test func watchedBreaksAreWrittenOnlyWhenTheyAddToTheUnion() throws {
        let remote = try WatchedBreaks(contentId: "film", watchedAt: ["b1": 10, "b2": 20])
        let known = try WatchedBreaks(contentId: "film", watchedAt: ["b1": 5])
        #expect(PublishStep.watched(known, remote: remote) == .nothing)
        let more = try WatchedBreaks(contentId: "film", watchedAt: ["b3": 30, "b1": 15])
        let union = try WatchedBreaks(contentId: "film", watchedAt: ["b1": 15, "b2": 20, "b3": 30])
        #expect(PublishStep.watched(more, remote: remote) == .write(KVValue.encode(union)))
        #expect(PublishStep.watched(more, remote: nil) == .write(KVValue.encode(more)))
    }

    @Test func aContentsValueKeepsTheLatestWatchedBreaksWithinAMerge() throws {
        var all: [String: Double] = [:]
        for i in 0..<300 { all["b\(i)"] = Double(i) }
        let value = KVValue.encode(try WatchedBreaks(contentId: "film", watchedAt: all))
        let read = try #require(KVValue.watched(value, contentId: "film"))
        #expect(read.watchedAt.count == KVValue.maxWatched)
        #expect(read.watchedAt["b299"] == 299 && read.watchedAt["b43"] == nil && read.watchedAt["b44"] == 44)
        // The value is one Merge snapbackd takes as it is.
        #expect(try SyncMerge.decode(value).watched.count == SyncMerge.maxRecords)
    }

    @Test func aValueIsReadOnlyUnderItsOwnKey() throws {
        let mine = try Self.bookmark(600, try Self.stamp(2_000, "box-1"))
        let bytes = KVValue.encode(mine)
        #expect(KVValue.record(bytes, profile: "kids", contentId: "film") == mine)
        #expect(KVValue.record(bytes, profile: "", contentId: "film") == nil)
        #expect(KVValue.record(bytes, profile: "kids", contentId: "other") == nil)
        #expect(KVValue.watched(bytes, contentId: "film") == nil)
        #expect(KVValue.record([0xff, 0xff, 0xff], profile: "kids", contentId: "film") == nil)
        let two = SyncMerge(records: [mine, mine]).encoded()
        #expect(KVValue.record(two, profile: "kids", contentId: "film") == nil)
        let watched = KVValue.encode(try WatchedBreaks(contentId: "film", watchedAt: ["b1": 1]))
        #expect(KVValue.record(watched, profile: "kids", contentId: "film") == nil)
        #expect(KVValue.watched(watched, contentId: "other") == nil)
    }
}
