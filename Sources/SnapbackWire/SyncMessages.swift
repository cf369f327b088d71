// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

// The Sync service's messages (proto/snapback/v1/sync.proto) onto the pure core's records. A record from
// a peer is checked where it enters, by the core's own limits (`SyncStamp`, `DeviceID`, `SyncRecord`,
// `WatchedBreaks`), and refused naming its proto field: "records[2].stamp.counter".

/// `snapback.v1.MergeRequest` as the daemon takes it: every record and watched break in range.
public struct SyncMerge: WireMessage, Equatable {
    /// The most records, and the most watched breaks, one Merge may carry (more is RESOURCE_EXHAUSTED,
    /// refused before they are read): a batch is applied in the writer's next transaction with the
    /// players' saves, which it must not hold back for long.
    public static let maxRecords = 256

    public var records: [SyncRecord]
    /// One break each, in request order (the reply answers per break).
    public var watched: [WatchedBreaks]

    public init(records: [SyncRecord] = [], watched: [WatchedBreaks] = []) {
        self.records = records
        self.watched = watched
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> SyncMerge {
        let m = try SnapbackV1.MergeRequest.decode(body, maxElements: maxRecords)
        var merge = SyncMerge()
        merge.records.reserveCapacity(m.records.count)
        for (i, r) in m.records.enumerated() { merge.records.append(try SyncRecord(proto: r, path: "records[\(i)].")) }
        merge.watched.reserveCapacity(m.watched.count)
        for (i, w) in m.watched.enumerated() { merge.watched.append(try WatchedBreaks(proto: w, path: "watched[\(i)].")) }
        return merge
    }

    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        SnapbackV1.MergeRequest(records: records.map(\.proto), watched: watched.flatMap(\.protoBreaks)).encode(into: &out)
    }
}

extension SyncStamp {
    init(proto p: SnapbackV1.SyncStamp?, path: String) throws(WireError) {
        guard let p else { throw .invalidArgument("\(path)stamp: missing") }
        guard p.physical <= UInt64(SyncStamp.maxPhysical) else {
            throw .invalidArgument("\(path)stamp.physical out of range: 0 to \(SyncStamp.maxPhysical) ms")
        }
        guard p.counter <= UInt64(UInt32.max) else {
            throw .invalidArgument("\(path)stamp.counter out of range: 0 to \(UInt32.max)")
        }
        do {
            self = try SyncStamp(physical: p.physical, counter: p.counter, device: p.device)
        } catch {
            throw .invalidArgument("\(path)stamp.device out of range: 1 to \(DeviceID.maxBytes) bytes of A-Z a-z 0-9 . _ -")
        }
    }

    var proto: SnapbackV1.SyncStamp {
        SnapbackV1.SyncStamp(physical: UInt64(physical), counter: UInt64(counter), device: device.text)
    }
}

extension SyncRecord {
    /// The record, checked field by field against the core's limits; refused naming the proto field.
    init(proto p: SnapbackV1.SyncRecord, path: String) throws(WireError) {
        let stamp = try SyncStamp(proto: p.stamp, path: path)
        let value: SyncValue
        switch p.value {
        case .bookmark(let b):
            try Self.check(b.streamId, "\(path)bookmark.stream_id", allowEmpty: true)
            try Self.check(b.contentTime, Limits.position, "\(path)bookmark.content_time")
            try Self.check(b.streamTime, Limits.position, "\(path)bookmark.stream_time")
            try Self.check(b.updatedAt, SyncLimits.wallTime, "\(path)bookmark.updated_at")
            value = .bookmark(
                SyncedBookmark(
                    contentTime: b.contentTime, streamId: b.streamId, streamTime: b.streamTime, finished: b.finished,
                    updatedAt: b.updatedAt))
        case .tombstone(let t):
            guard let kind = TombstoneKind(rawValue: UInt8(clamping: t.kind.rawValue)) else {
                throw .invalidArgument("\(path)tombstone.kind: unknown kind \(t.kind.rawValue): 1 (DELETED) or 2 (CLEARED)")
            }
            value = .tombstone(kind)
        case nil:
            throw .invalidArgument("\(path)value: missing (a bookmark or a tombstone)")
        }
        try Self.check(p.profile, "\(path)profile", allowEmpty: true)
        try Self.check(p.contentId, "\(path)content_id", allowEmpty: false)
        do {
            try self.init(profile: p.profile, contentId: p.contentId, value: value, stamp: stamp)
        } catch {
            // Every field was checked above by the same limits; kept as a refusal, never a trap.
            throw .invalidArgument("\(path)\(error)")
        }
    }

    static func check(_ id: String, _ field: String, allowEmpty: Bool) throws(WireError) {
        let n = id.utf8.count
        guard n <= SyncLimits.idBytes, allowEmpty || n > 0 else {
            throw .invalidArgument("\(field) out of range: \(allowEmpty ? 0 : 1) to \(SyncLimits.idBytes) bytes of UTF-8")
        }
    }

    static func check(_ value: Double, _ limit: Limit, _ field: String) throws(WireError) {
        guard limit.contains(value) else { throw .invalidArgument("\(field) out of range: \(limit.text)") }
    }

    var proto: SnapbackV1.SyncRecord {
        let value: SnapbackV1.SyncRecord.Value
        switch self.value {
        case .bookmark(let b):
            value = .bookmark(
                SnapbackV1.SyncBookmark(
                    contentTime: b.contentTime, streamId: b.streamId, streamTime: b.streamTime, finished: b.finished,
                    updatedAt: b.updatedAt))
        case .tombstone(let kind):
            value = .tombstone(SnapbackV1.SyncTombstone(kind: Snapback__V1__TombstoneKind(rawValue: UInt32(kind.rawValue))))
        }
        return SnapbackV1.SyncRecord(profile: profile, contentId: contentId, stamp: stamp.proto, value: value)
    }
}

extension WatchedBreaks {
    init(proto w: SnapbackV1.SyncWatchedBreak, path: String) throws(WireError) {
        try SyncRecord.check(w.contentId, "\(path)content_id", allowEmpty: false)
        try SyncRecord.check(w.breakId, "\(path)break_id", allowEmpty: false)
        try SyncRecord.check(w.watchedAt, SyncLimits.wallTime, "\(path)watched_at")
        do {
            try self.init(contentId: w.contentId, watchedAt: [w.breakId: w.watchedAt])
        } catch {
            throw .invalidArgument("\(path)\(error)")
        }
    }

    /// One wire entry per break, in break id order.
    var protoBreaks: [SnapbackV1.SyncWatchedBreak] {
        watchedAt.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
            SnapbackV1.SyncWatchedBreak(contentId: contentId, breakId: $0.key, watchedAt: $0.value)
        }
    }
}

/// `snapback.v1.SyncChange`: one change of the stream, as the daemon pushes it and an agent reads it.
extension SyncChange: ProtoMapped {
    init(proto p: SnapbackV1.SyncChange) throws(WireError) {
        guard p.seq <= UInt64(Int64.max) else { throw .invalidArgument("seq out of range: 0 to \(Int64.max)") }
        switch p.change {
        case .record(let r): self.init(seq: Int64(p.seq), change: .record(try SyncRecord(proto: r, path: "record.")))
        case .watched(let w): self.init(seq: Int64(p.seq), change: .watched(try WatchedBreaks(proto: w, path: "watched.")))
        case nil: throw .invalidArgument("change: missing (a record or a watched break)")
        }
    }

    var proto: SnapbackV1.SyncChange {
        switch change {
        case .record(let r): return SnapbackV1.SyncChange(seq: UInt64(clamping: seq), change: .record(r.proto))
        case .watched(let w):
            // The store's changes carry one break each.
            return SnapbackV1.SyncChange(seq: UInt64(clamping: seq), change: w.protoBreaks.first.map { .watched($0) })
        }
    }
}
