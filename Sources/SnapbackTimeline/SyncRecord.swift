// SPDX-License-Identifier: Apache-2.0
/// What household sync exchanges, and the rule that merges it (docs/sync.md). Pure values: the store
/// applies the rule to its rows, the agent to what it hears.

/// The bounds of a synced record's fields, checked where a record enters (``SyncRecord/init(profile:contentId:value:stamp:)``).
public enum SyncLimits {
    /// Profile, content, stream and break ids: 1 KiB of UTF-8 each (empty allowed but for content and
    /// break ids).
    public static let idBytes = 1024
    /// Wall times carried in records (a bookmark's `updatedAt`, a break's watched time), in seconds:
    /// the stamp's range.
    public static let wallTime = Limit(0...(Double(SyncStamp.maxPhysical) / 1000), "a wall time from 0 to year 9999")
}

/// A bookmark's value as it syncs: what `Bookmark` holds but its key.
public struct SyncedBookmark: Sendable, Equatable {
    public var contentTime: Double
    public var streamId: String
    public var streamTime: Double
    public var finished: Bool
    /// Wall time of the save on the box that made it (shown, never compared: the stamp orders).
    public var updatedAt: Double

    public init(contentTime: Double, streamId: String, streamTime: Double, finished: Bool, updatedAt: Double) {
        self.contentTime = contentTime
        self.streamId = streamId
        self.streamTime = streamTime
        self.finished = finished
        self.updatedAt = updatedAt
    }

    public init(_ bookmark: Bookmark) {
        self.init(
            contentTime: bookmark.contentTime, streamId: bookmark.streamId, streamTime: bookmark.streamTime,
            finished: bookmark.finished, updatedAt: bookmark.updatedAt)
    }

    public func bookmark(profile: String, contentId: String) -> Bookmark {
        Bookmark(
            profile: profile, contentId: contentId, contentTime: contentTime, streamTime: streamTime, streamId: streamId,
            updatedAt: updatedAt, finished: finished)
    }
}

/// Why a bookmark is gone: the viewer deleted it, or cleared the profile.
public enum TombstoneKind: UInt8, Sendable, Equatable, CaseIterable {
    case deleted = 1
    case cleared = 2
}

/// A synced key's state: a bookmark, or the tombstone that keeps an older write from bringing it back.
public enum SyncValue: Sendable, Equatable {
    case bookmark(SyncedBookmark)
    case tombstone(TombstoneKind)

    public var bookmark: SyncedBookmark? { if case .bookmark(let b) = self { b } else { nil } }
}

/// The synced state of one bookmark key (profile, content id): its value and the stamp of the change
/// that made it. The stamp's device is the record's origin.
public struct SyncRecord: Sendable, Equatable {
    public let profile: String
    public let contentId: String
    public let value: SyncValue
    public let stamp: SyncStamp

    public var origin: DeviceID { stamp.device }

    /// A record, refused unless every field is in range: ids of at most ``SyncLimits/idBytes`` (content id
    /// not empty), times within ``Limits/position``, `updatedAt` within ``SyncLimits/wallTime``.
    public init(profile: String, contentId: String, value: SyncValue, stamp: SyncStamp) throws(SyncInputError) {
        try Self.checkId(profile, "profile", allowEmpty: true)
        try Self.checkId(contentId, "content id", allowEmpty: false)
        var value = value
        if case .bookmark(var b) = value {
            try Self.checkId(b.streamId, "stream id", allowEmpty: true)
            guard Limits.position.contains(b.contentTime) else {
                throw .outOfRange(field: "content time", allowed: Limits.position.text)
            }
            guard Limits.position.contains(b.streamTime) else {
                throw .outOfRange(field: "stream time", allowed: Limits.position.text)
            }
            guard SyncLimits.wallTime.contains(b.updatedAt) else {
                throw .outOfRange(field: "updated at", allowed: SyncLimits.wallTime.text)
            }
            // -0 and 0 are one value: one representation, so that equal records are identical.
            b.contentTime += 0
            b.streamTime += 0
            b.updatedAt += 0
            value = .bookmark(b)
        }
        self.profile = profile
        self.contentId = contentId
        self.value = value
        self.stamp = stamp
    }

    static func checkId(_ id: String, _ field: String, allowEmpty: Bool) throws(SyncInputError) {
        let n = id.utf8.count
        guard n <= SyncLimits.idBytes, allowEmpty || n > 0 else {
            throw .outOfRange(field: field, allowed: "\(allowEmpty ? 0 : 1) to \(SyncLimits.idBytes) bytes of UTF-8")
        }
    }

    /// Last writer wins: the record with the greater stamp. Two records of one stamp are one change seen
    /// twice; should they differ anyway (a device that reused a stamp), a fixed order of values decides
    /// (a tombstone over a bookmark, then field by field), so every box picks the same one. The rule is
    /// a maximum under a total order: commutative, associative and idempotent.
    ///
    /// Both records must be of one key (the caller's key); `a` is returned for records of other keys.
    public static func merge(_ a: SyncRecord, _ b: SyncRecord) -> SyncRecord {
        guard a.profile == b.profile, a.contentId == b.contentId else { return a }
        return b.supersedes(a) ? b : a
    }

    /// Whether this record wins over `other` (of the same key) under the rule of ``merge(_:_:)``; false
    /// for equal records.
    public func supersedes(_ other: SyncRecord) -> Bool {
        if stamp != other.stamp { return stamp > other.stamp }
        return Self.valueOrder(other.value, value)
    }

    /// A strict total order on values (for equal stamps only).
    static func valueOrder(_ a: SyncValue, _ b: SyncValue) -> Bool {
        switch (a, b) {
        case (.bookmark, .tombstone): return true
        case (.tombstone, .bookmark): return false
        case (.tombstone(let x), .tombstone(let y)): return x.rawValue < y.rawValue
        case (.bookmark(let x), .bookmark(let y)):
            if x.contentTime != y.contentTime { return x.contentTime < y.contentTime }
            if x.streamTime != y.streamTime { return x.streamTime < y.streamTime }
            if x.updatedAt != y.updatedAt { return x.updatedAt < y.updatedAt }
            if x.finished != y.finished { return !x.finished }
            return x.streamId.utf8.lexicographicallyPrecedes(y.streamId.utf8)
        }
    }
}

/// The breaks of one content watched anywhere in the household: break id → when it was watched (wall
/// seconds). They merge by union; a break watched on two boxes keeps the later time (the one the
/// retention keeps longest). Union and max: commutative, associative and idempotent.
public struct WatchedBreaks: Sendable, Equatable {
    public let contentId: String
    public private(set) var watchedAt: [String: Double]

    /// Refused unless the content id and every break id are 1 to ``SyncLimits/idBytes`` bytes and every
    /// time is within ``SyncLimits/wallTime``.
    public init(contentId: String, watchedAt: [String: Double]) throws(SyncInputError) {
        try SyncRecord.checkId(contentId, "content id", allowEmpty: false)
        var normal: [String: Double] = [:]
        normal.reserveCapacity(watchedAt.count)
        for (id, at) in watchedAt {
            try SyncRecord.checkId(id, "break id", allowEmpty: false)
            guard SyncLimits.wallTime.contains(at) else {
                throw .outOfRange(field: "watched at", allowed: SyncLimits.wallTime.text)
            }
            normal[id] = at + 0
        }
        self.contentId = contentId
        self.watchedAt = normal
    }

    /// The union of both (of the same content; `a` for others).
    public static func merge(_ a: WatchedBreaks, _ b: WatchedBreaks) -> WatchedBreaks {
        guard a.contentId == b.contentId else { return a }
        var merged = a
        merged.watchedAt.merge(b.watchedAt) { max($0, $1) }
        return merged
    }
}

/// One change of the store's change sequence, as a sync agent reads them ("changes since N"): a
/// bookmark key's record (a bookmark or a tombstone) or one watched break.
public struct SyncChange: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        case record(SyncRecord)
        /// The content and the one break this change is about.
        case watched(WatchedBreaks)
        /// A change this box keeps but the Sync calls cannot carry: its row is no valid record (an id
        /// longer than ``SyncLimits/idBytes``). It stays on this box; the agent counts it.
        case unsyncable
    }

    /// Its number in the change sequence: increasing, with gaps (writes that changed nothing, rows
    /// changed again later, evicted or pruned).
    public var seq: Int64
    public var change: Change

    public init(seq: Int64, change: Change) {
        self.seq = seq
        self.change = change
    }
}
