/// Viewer state kept in memory: the store the daemon uses until the durable SQLite store lands. Nothing
/// survives a restart; `description` says so, and `snapbackd --help` repeats it.
public final class InMemoryViewerStateStore: ViewerStateStore {
    private struct Key: Hashable { var profile: String; var contentId: String }
    private var bookmarksByKey: [Key: Bookmark] = [:]
    private var watched: [String: [String: Double]] = [:]
    private var lastCompleted: Double?
    /// The most bookmarks kept; the least recently updated go first.
    public let capacity: Int

    public init(capacity: Int = 10_000) { self.capacity = max(1, capacity) }

    public var description: String { "in memory (not durable: lost when snapbackd stops)" }
    public var lastError: String? { nil }
    public var kind: String { "memory" }
    public var path: String { "" }
    public var bookmarkCount: Int { bookmarksByKey.count }

    public func bookmark(profile: String, contentId: String) throws(StoreError) -> Bookmark? {
        bookmarksByKey[Key(profile: profile, contentId: contentId)]
    }

    public func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?) {
        let all = bookmarksByKey.values.filter { $0.profile == profile }.sorted {
            $0.updatedAt != $1.updatedAt ? $0.updatedAt > $1.updatedAt : $0.contentId < $1.contentId
        }
        var start = 0
        if let token = after, let n = Int(token), n >= 0 { start = min(n, all.count) }
        let n = max(1, limit)
        let end = min(all.count, start + n)
        return (Array(all[start..<end]), end < all.count ? String(end) : nil)
    }

    public func save(_ bookmark: Bookmark, completion: @escaping (Result<Void, StoreError>) -> Void) {
        let key = Key(profile: bookmark.profile, contentId: bookmark.contentId)
        if bookmarksByKey[key] == nil, bookmarksByKey.count >= capacity,
           let oldest = bookmarksByKey.min(by: { $0.value.updatedAt < $1.value.updatedAt })?.key {
            bookmarksByKey[oldest] = nil
        }
        bookmarksByKey[key] = bookmark
        completion(.success(()))
    }

    public func deleteBookmark(profile: String, contentId: String, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        completion(.success(bookmarksByKey.removeValue(forKey: Key(profile: profile, contentId: contentId)) != nil))
    }

    public func clearBookmarks(profile: String, completion: @escaping (Result<Int, StoreError>) -> Void) {
        let keys = bookmarksByKey.keys.filter { $0.profile == profile }
        for k in keys { bookmarksByKey[k] = nil }
        completion(.success(keys.count))
    }

    public func watchedBreaks(contentId: String, since: Double) throws(StoreError) -> Set<String> {
        Set((watched[contentId] ?? [:]).filter { $0.value >= since }.keys)
    }

    public func markWatched(contentId: String, breakId: String, at: Double, completion: @escaping (Result<Void, StoreError>) -> Void) {
        watched[contentId, default: [:]][breakId] = at
        completion(.success(()))
    }

    public func lastBreakCompletedAt() -> Double? { lastCompleted }
    public func setLastBreakCompleted(at: Double) { lastCompleted = max(lastCompleted ?? at, at) }
}
