import SnapbackTimeline

/// Viewer state in memory, for the in-process service under tests and the fuzzer: nothing durable, no
/// thread. Writes complete when the owner calls ``completeWrites()`` — as the SQLite store's commits do
/// a moment later on the loop — so the order of replies and acknowledgements is the daemon's. It can be
/// told to fail writes (``failWrites``) to reach the service's error paths.
public final class MemoryViewerStateStore: ViewerStateStore {
    private var stored: [String: [String: Bookmark]] = [:]
    private var watched: [String: [String: Double]] = [:]
    private var lastCompleted: Double?
    private var pending: [() -> Void] = []
    private var closed = false
    /// When set, writes complete with this error (a full or failing disk).
    public var failWrites: StoreError?

    public init() {}

    public var description: String { "in memory (not durable)" }
    public var kind: String { "memory" }
    public var path: String { "" }
    public var bookmarkCount: Int { stored.values.reduce(0) { $0 + $1.count } }
    public var lastError: String? { failWrites.map { "\($0)" } }

    /// Runs the completions of the writes made so far, in order; returns how many.
    @discardableResult
    public func completeWrites() -> Int {
        var count = 0
        while !pending.isEmpty {
            let batch = pending
            pending = []
            for completion in batch { completion() }
            count += batch.count
        }
        return count
    }

    public func bookmark(profile: String, contentId: String) throws(StoreError) -> Bookmark? {
        stored[profile]?[contentId]
    }

    public func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?) {
        let all = (stored[profile] ?? [:]).values.sorted {
            ($0.updatedAt, $0.contentId) > ($1.updatedAt, $1.contentId)
        }
        let start = after.flatMap { token in all.firstIndex { $0.contentId == token }.map { $0 + 1 } } ?? 0
        let page = Array(all.dropFirst(start).prefix(max(limit, 1)))
        let next = start + page.count < all.count ? page.last?.contentId : nil
        return (page, next)
    }

    public func save(_ bookmark: Bookmark, completion: @escaping (Result<Void, StoreError>) -> Void) {
        write(completion) { $0.stored[bookmark.profile, default: [:]][bookmark.contentId] = bookmark }
    }

    public func deleteBookmark(profile: String, contentId: String, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        write(completion) { $0.stored[profile]?.removeValue(forKey: contentId) != nil }
    }

    public func clearBookmarks(profile: String, completion: @escaping (Result<Int, StoreError>) -> Void) {
        write(completion) { $0.stored.removeValue(forKey: profile)?.count ?? 0 }
    }

    public func watchedBreaks(contentId: String, since: Double) throws(StoreError) -> Set<String> {
        Set((watched[contentId] ?? [:]).filter { $0.value >= since }.keys)
    }

    public func markWatched(
        contentId: String, breakId: String, at: Double,
        completion: @escaping (Result<Void, StoreError>) -> Void
    ) {
        write(completion) { $0.watched[contentId, default: [:]][breakId] = at }
    }

    public func lastBreakCompletedAt() -> Double? { lastCompleted }
    public func setLastBreakCompleted(at: Double) { lastCompleted = at }

    public func close() {
        completeWrites()
        closed = true
    }

    private func write<T>(
        _ completion: @escaping (Result<T, StoreError>) -> Void, _ body: @escaping (MemoryViewerStateStore) -> T
    ) {
        let failure = closed ? .unavailable("the store is closed") : failWrites
        pending.append { [unowned self] in
            if let failure { completion(.failure(failure)) } else { completion(.success(body(self))) }
        }
    }
}
