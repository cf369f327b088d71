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
    /// The daemon is stopping: commits the writes already made and runs their completions before it
    /// returns; later writes fail. Called on the loop thread by the service's shutdown.
    func close()
}

extension ViewerStateStore {
    public func close() {}
}
