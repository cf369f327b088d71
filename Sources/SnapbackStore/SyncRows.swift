// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// Reading stamps and records from rows. A row that does not make a valid record (a file edited by
/// hand, a bit flipped) is reported as a decode failure, never trapped on.
enum SyncRows {
    /// The stamp in columns `at`, `at + 1`, `at + 2` (physical, counter, device).
    static func stamp(_ s: SQLiteStatement, at column: Int32) throws(SyncInputError) -> SyncStamp {
        try SyncStamp(
            physical: UInt64(clamping: s.int64(column)), counter: UInt64(clamping: s.int64(column + 1)),
            device: s.text(column + 2))
    }

    /// A bookmark row: content_time, stream_time, stream_id, updated_at, finished, then its stamp.
    /// `updated_at` is the wall time of the box that saved it, whatever that clock said (shown, never
    /// compared): held to the range a record carries rather than keeping the bookmark from syncing.
    static func bookmarkRecord(
        profile: String, contentId: String, _ s: SQLiteStatement, at c: Int32
    ) throws(SyncInputError) -> SyncRecord {
        let wall = SyncLimits.wallTime.range
        let updatedAt = s.double(c + 3)
        let value = SyncedBookmark(
            contentTime: s.double(c), streamId: s.text(c + 2), streamTime: s.double(c + 1), finished: s.int64(c + 4) != 0,
            updatedAt: updatedAt.isNaN ? 0 : min(max(updatedAt, wall.lowerBound), wall.upperBound))
        return try SyncRecord(profile: profile, contentId: contentId, value: .bookmark(value), stamp: stamp(s, at: c + 5))
    }

    /// A tombstone row: its kind in column `kind`, its stamp from column `stampAt`.
    static func tombstoneRecord(
        profile: String, contentId: String, _ s: SQLiteStatement, kind k: Int32, stampAt: Int32
    ) throws(SyncInputError) -> SyncRecord {
        guard let kind = TombstoneKind(rawValue: UInt8(clamping: s.int64(k))) else {
            throw .outOfRange(field: "tombstone kind", allowed: "1 (deleted) or 2 (cleared)")
        }
        return try SyncRecord(profile: profile, contentId: contentId, value: .tombstone(kind), stamp: stamp(s, at: stampAt))
    }

    /// The record a key holds in the database of `bookmark` and `tombstone` (statements binding profile and
    /// content id), nil if neither has it.
    static func record(
        profile: String, contentId: String, bookmark: SQLiteStatement, tombstone: SQLiteStatement
    ) throws(SQLiteError) -> Result<SyncRecord, SyncInputError>? {
        for (s, isBookmark) in [(bookmark, true), (tombstone, false)] {
            defer { s.reset() }
            try s.bind(1, profile)
            try s.bind(2, contentId)
            guard try s.step() else { continue }
            do {
                return .success(
                    isBookmark
                        ? try bookmarkRecord(profile: profile, contentId: contentId, s, at: 0)
                        : try tombstoneRecord(profile: profile, contentId: contentId, s, kind: 0, stampAt: 1))
            } catch {
                return .failure(error)
            }
        }
        return nil
    }
}
