// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// Why a store operation failed. The RPC layer maps `full` to RESOURCE_EXHAUSTED and `unavailable` to
/// UNAVAILABLE.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No space left (disk full, or the store's own bound could not make room).
    case full(String)
    /// The store cannot be written or read now (read-only directory, I/O error, closed).
    case unavailable(String)

    public var description: String {
        switch self {
        case .full(let why): return "bookmark store full: \(why)"
        case .unavailable(let why): return "bookmark store unavailable: \(why)"
        }
    }
}

/// The viewer state the daemon keeps across sessions: bookmarks, watched breaks, the device-wide time of
/// the last completed break.
///
/// All methods are called on the daemon's loop thread. Reads answer at once. Writes complete through
/// `completion`, which runs on the loop thread once the write is durable — the daemon acknowledges a
/// bookmark to the player only then ("acknowledged = durable"). An implementation may complete
/// synchronously.
public protocol ViewerStateStore: AnyObject {
    /// A short description for `--help` and the status query ("in memory (not durable)", "sqlite …").
    var description: String { get }
    /// "memory" or "sqlite", for the status query.
    var kind: String { get }
    /// Where the store keeps its data ("" in memory).
    var path: String { get }
    /// How many bookmarks it holds.
    var bookmarkCount: Int { get }
    /// The last error the store met, shown by the status query; nil when healthy.
    var lastError: String? { get }

    func bookmark(profile: String, contentId: String) throws(StoreError) -> Bookmark?
    /// Bookmarks of a profile, most recently saved first (the order of the saves, whatever the wall
    /// clock said: `updatedAt` is shown, never compared), `limit` at a time; `after` is the page token returned by
    /// the previous page.
    func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?)
    func save(_ bookmark: Bookmark, completion: @escaping (Result<Void, StoreError>) -> Void)
    func deleteBookmark(profile: String, contentId: String, completion: @escaping (Result<Bool, StoreError>) -> Void)
    func clearBookmarks(profile: String, completion: @escaping (Result<Int, StoreError>) -> Void)

    /// Break ids of `contentId` watched at a wall time within one of `ranges` (sorted, disjoint: the
    /// service's retention, see `WallClockSteps`).
    func watchedBreaks(contentId: String, within ranges: [ClosedRange<Double>]) throws(StoreError) -> Set<String>
    func markWatched(contentId: String, breakId: String, at: Double, completion: @escaping (Result<Void, StoreError>) -> Void)
    /// Forgets the watched breaks dated before the last of `ranges` (sorted, disjoint) and outside
    /// them; those dated after it (from a clock that ran ahead) are left until a later call judges
    /// them. A write nobody waits for.
    func pruneWatched(keeping ranges: [ClosedRange<Double>])
    /// The device-wide wall time a break last completed, for a cooldown that holds across players and
    /// restarts.
    func lastBreakCompletedAt() -> Double?
    /// Replaces it (not the greater of the two: after the clock was set back, the latest break is
    /// still the one that counts).
    func setLastBreakCompleted(at: Double)
    /// Transactions committed and writes failed since the store was opened (the daemon's
    /// `snapbackd_store_commits` and `snapbackd_store_failures` add them to what earlier runs counted).
    var writeCounts: StoreWriteCounts { get }
    /// The daemon's counters as last written; empty for a store that holds none.
    func storedMetrics() -> StoredMetrics
    /// Sets the running marker, durably, at the daemon's start; returns whether it was set already: the
    /// last run did not stop cleanly (killed, crashed, a power cut). No write through the queue: a
    /// file's creation, so a box whose daemon has counted nothing yet pays no transaction for it.
    func markRunning() -> Bool
    /// Clears the marker: the clean stop, once the store has committed its last writes.
    func clearRunning()
    /// Replaces the stored counters, in the store's write queue like any write (a write nobody waits for:
    /// a failure is counted in `writeCounts` and shown by `lastError`).
    func saveMetrics(_ metrics: StoredMetrics)
    /// The daemon is stopping: commits the writes already made and runs their completions before it
    /// returns; later writes fail. Called on the loop thread by the service's shutdown.
    func close()
}

extension ViewerStateStore {
    public func close() {}
}

/// What a store has committed and failed since it opened.
public struct StoreWriteCounts: Sendable, Equatable {
    public var commits: UInt64 = 0
    public var failures: UInt64 = 0
    public init(commits: UInt64 = 0, failures: UInt64 = 0) {
        self.commits = commits
        self.failures = failures
    }
}

/// The daemon's cumulative counters as the store keeps them: each series by its key (the counter table's
/// `slotKeys`) and the wall time they began counting.
public struct StoredMetrics: Sendable, Equatable {
    public var values: [String: UInt64]
    /// Wall time (unix seconds) of the first start that counted; nil: never counted.
    public var since: Double?

    public init(values: [String: UInt64] = [:], since: Double? = nil) {
        self.values = values
        self.since = since
    }
}

/// A store that keeps what household sync needs (docs/sync.md): stamped records, the change sequence,
/// the merge under the rule. The daemon's Sync service works on it; a store that is not one (the
/// in-memory store) does not sync.
public protocol SyncingStore: ViewerStateStore {
    /// The name this box signs its changes with; nil while the database is not open.
    var deviceId: DeviceID? { get }
    /// Up to `limit` committed changes numbered after `seq`, in order.
    func changes(after seq: Int64, limit: Int) throws(StoreError) -> [SyncChange]
    /// Which store the change numbers belong to: the id minted with the database (a store made afresh has
    /// another) and the greatest change number it holds.
    func changeStreamOrigin() throws(StoreError) -> (storeId: String, lastSeq: Int64)
    /// Applies a record from another box under the rule; completes once committed with whether it
    /// changed this box's record of the key.
    func merge(_ record: SyncRecord, completion: @escaping (Result<Bool, StoreError>) -> Void)
    /// Adds watched breaks from another box; completes once committed with whether any row changed.
    func mergeWatched(_ breaks: WatchedBreaks, completion: @escaping (Result<Bool, StoreError>) -> Void)
    /// Runs on the loop thread after each batch the writer committed, once its completions ran: new
    /// changes may be readable with `changes(after:limit:)`. One handler; setting it replaces the last.
    var onCommit: (() -> Void)? { get set }
}
