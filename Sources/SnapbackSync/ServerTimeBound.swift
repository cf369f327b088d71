// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// The household-wide bound of a value read from the bucket against the server's time of the message
/// that carries it (docs/sync.md, "Stamps and the server's time"). Every box reads the same message with
/// the same server timestamp, so every box takes or refuses a value alike: a box's own clock plays no
/// part. A record whose stamp is more than ``maxAheadMilliseconds`` past its message's time is refused
/// (never merged, and never let win a publish), as is a watched break marked so far ahead.
///
/// Without it, one member's record stamped at the top of the stamp's range (9999-12-31, counter 2³²−1,
/// device `z`×64) would beat every later change: no stamp is after it, so the hand-off rule ("the next
/// change a box makes after reading a record wins") could not hold.
public enum ServerTimeBound {
    /// 24 h: the most a box's clock may be off (a clock set to local time instead of UTC is at most 14 h
    /// off) and still have its changes taken; the top of `max-clock-ahead` too. One value for the whole
    /// household: it is not configurable, so that no two boxes decide differently.
    public static let maxAheadMilliseconds: Int64 = 86_400_000

    /// The server's time in milliseconds (nanoseconds from libnats; 0 when it gave none).
    public static func milliseconds(ofNanoseconds nanoseconds: Int64) -> Int64 { max(0, nanoseconds / 1_000_000) }

    /// How far past the bound `physical` (milliseconds) is, against a message of `serverNanoseconds`;
    /// nil when it is within it.
    public static func excess(physical: Int64, serverNanoseconds: Int64) -> Int64? {
        let limit = milliseconds(ofNanoseconds: serverNanoseconds) + maxAheadMilliseconds
        return physical > limit ? physical - limit : nil
    }

    /// Whether a record read from a message of `serverNanoseconds` may be taken.
    public static func accepts(_ record: SyncRecord, serverNanoseconds: Int64) -> Bool {
        excess(physical: record.stamp.physical, serverNanoseconds: serverNanoseconds) == nil
    }

    /// The breaks of `watched` within the bound, and the ids of those beyond it.
    public static func split(_ watched: WatchedBreaks, serverNanoseconds: Int64) -> (kept: WatchedBreaks, refused: [String]) {
        var kept: [String: Double] = [:]
        var refused: [String] = []
        for (breakId, at) in watched.watchedAt {
            if excess(physical: SyncStamp.milliseconds(ofSeconds: at), serverNanoseconds: serverNanoseconds) == nil {
                kept[breakId] = at
            } else {
                refused.append(breakId)
            }
        }
        guard !refused.isEmpty, let bounded = try? WatchedBreaks(contentId: watched.contentId, watchedAt: kept) else {
            return (watched, [])
        }
        return (bounded, refused.sorted())
    }

    /// A stamp as a log line shows it: its time (UTC) and counter.
    public static func shown(_ stamp: SyncStamp) -> String { "\(stamp.physical) ms, counter \(stamp.counter)" }
}
