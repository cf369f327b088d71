// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// A bucket value: the bytes of a `snapback.v1.MergeRequest` (sync.proto), the message snapbackd merges.
/// A record key holds one record; a watched-breaks key holds that content's breaks, one entry each. A
/// value is checked like a Merge request (every field in range) and against its key when read.
public enum KVValue {
    /// The most breaks a content's value keeps: a Merge carries at most this many, and a longer union
    /// keeps the latest watched.
    public static let maxWatched = SyncMerge.maxRecords

    public static func encode(_ record: SyncRecord) -> [UInt8] {
        SyncMerge(records: [record]).encoded()
    }

    public static func encode(_ watched: WatchedBreaks) -> [UInt8] {
        SyncMerge(watched: [bounded(watched)]).encoded()
    }

    /// The record of a value read under the key of (profile, contentId); nil for a value that is not one
    /// record of that key.
    public static func record(_ bytes: [UInt8], profile: String, contentId: String) -> SyncRecord? {
        guard let merge = try? SyncMerge.decode(bytes), merge.watched.isEmpty, merge.records.count == 1,
            let record = merge.records.first, record.profile == profile, record.contentId == contentId
        else { return nil }
        return record
    }

    /// The record of a value read under `key`: one record whose ids give that very key (spelled out or
    /// by digest); nil for anything else.
    public static func record(_ bytes: [UInt8], key: String, household: String) -> SyncRecord? {
        guard let merge = try? SyncMerge.decode(bytes), merge.watched.isEmpty, merge.records.count == 1,
            let record = merge.records.first,
            KeyCodec.key(household: household, .record(profile: record.profile, contentId: record.contentId)) == key
        else { return nil }
        return record
    }

    /// The breaks of a value read under `key`: breaks of one content whose watched key is that very key;
    /// nil for anything else.
    public static func watched(_ bytes: [UInt8], key: String, household: String) -> WatchedBreaks? {
        guard let merge = try? SyncMerge.decode(bytes), let contentId = merge.watched.first?.contentId,
            KeyCodec.key(household: household, .watched(contentId: contentId)) == key
        else { return nil }
        return watched(bytes, contentId: contentId)
    }

    /// The breaks of a value read under the watched key of `contentId`; nil for a value that is not
    /// breaks of that content.
    public static func watched(_ bytes: [UInt8], contentId: String) -> WatchedBreaks? {
        guard let merge = try? SyncMerge.decode(bytes), merge.records.isEmpty,
            merge.watched.allSatisfy({ $0.contentId == contentId })
        else { return nil }
        guard var all = try? WatchedBreaks(contentId: contentId, watchedAt: [:]) else { return nil }
        for one in merge.watched { all = WatchedBreaks.merge(all, one) }
        return all
    }

    /// At most ``maxWatched`` breaks: the latest watched (ties by break id, so every box keeps the same).
    static func bounded(_ watched: WatchedBreaks) -> WatchedBreaks {
        guard watched.watchedAt.count > maxWatched else { return watched }
        let kept = watched.watchedAt.sorted {
            $0.value != $1.value ? $0.value > $1.value : $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
        }.prefix(maxWatched)
        return (try? WatchedBreaks(contentId: watched.contentId, watchedAt: Dictionary(uniqueKeysWithValues: Array(kept))))
            ?? watched
    }
}

/// What publishing one outbox entry does, given the value the bucket holds for its key (the rule of
/// docs/sync.md, decided here without I/O).
public enum PublishStep: Equatable {
    /// Write this value with compare-and-set against the revision read.
    case write([UInt8])
    /// The bucket's record wins under the rule: merge it into snapbackd instead; nothing is written.
    case mergeLocally(SyncRecord)
    /// The bucket already holds what this entry carries (or more): nothing to do.
    case nothing

    /// A record of this box against the bucket's value (nil: absent, deleted, or not a record of the
    /// key, which this box's record replaces).
    public static func record(_ local: SyncRecord, remote: SyncRecord?) -> PublishStep {
        guard let remote else { return .write(KVValue.encode(local)) }
        if remote == local { return .nothing }
        return local.supersedes(remote) ? .write(KVValue.encode(local)) : .mergeLocally(remote)
    }

    /// Watched breaks of this box against the bucket's: their union, written only if it adds to it.
    public static func watched(_ local: WatchedBreaks, remote: WatchedBreaks?) -> PublishStep {
        guard let remote else { return .write(KVValue.encode(local)) }
        let union = KVValue.bounded(WatchedBreaks.merge(remote, local))
        return union == remote ? .nothing : .write(KVValue.encode(union))
    }
}
