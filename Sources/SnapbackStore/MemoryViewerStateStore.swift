// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// Viewer state in memory, for the in-process service under tests and the fuzzer: nothing durable, no
/// thread. Writes complete when the owner calls ``completeWrites()`` — as the SQLite store's commits do
/// a moment later on the loop — so the order of replies and acknowledgements is the daemon's. It can be
/// told to fail writes (``failWrites``) to reach the service's error paths. It keeps the SQLite
/// store's rules: at most `capacity` bookmarks, the least recently saved evicted first, pages in the
/// order of the saves, watched breaks pruned as asked.
public final class MemoryViewerStateStore: ViewerStateStore {
    private struct Saved {
        var bookmark: Bookmark
        /// Order of the save, as the SQLite store's `saved_seq`.
        var seq: UInt64
    }
    private var stored: [String: [String: Saved]] = [:]
    private var count = 0
    private var lastSeq: UInt64 = 0
    /// (seq, profile, content id) of saves in order, some stale (saved again or deleted since): the
    /// eviction order without a scan of every bookmark.
    private var saveOrder: [(seq: UInt64, profile: String, contentId: String)] = []
    private var saveOrderStart = 0
    private var watched: [String: [String: Double]] = [:]
    private var lastCompleted: Double?
    private var pending: [() -> Void] = []
    private var closed = false
    /// The most bookmarks kept.
    public let capacity: Int
    /// When set, writes complete with this error (a full or failing disk).
    public var failWrites: StoreError?

    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    public var description: String { "in memory (not durable)" }
    public var kind: String { "memory" }
    public var path: String { "" }
    public var bookmarkCount: Int { count }
    public var lastError: String? { failWrites.map { "\($0)" } }
    /// Saves committed since the store was made.
    public var savesCommitted: UInt64 { lastSeq }
    /// Watched-break rows held.
    public var watchedCount: Int { watched.values.reduce(0) { $0 + $1.count } }
    /// Writes made whose completion has not run yet.
    public var unfinishedWrites: Int { pending.count }
    /// Entries of the eviction order, stale ones included (bounded by twice the bookmarks, plus one).
    public var saveOrderEntries: Int { saveOrder.count }

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
        stored[profile]?[contentId]?.bookmark
    }

    /// The page token is the last row's save order, as the SQLite store's. Walks the save order back
    /// from the token: no sort of the profile's bookmarks per page.
    public func bookmarks(profile: String, after: String?, limit: Int) throws(StoreError) -> (page: [Bookmark], next: String?) {
        let n = max(limit, 1)
        let before = after.flatMap { UInt64($0) } ?? .max
        // The first entry at or after `before` (entries are in seq order).
        var low = saveOrderStart, high = saveOrder.count
        while low < high {
            let mid = (low + high) / 2
            if saveOrder[mid].seq < before { low = mid + 1 } else { high = mid }
        }
        var page: [Saved] = []
        var i = low
        while i > saveOrderStart, page.count <= n {
            i -= 1
            let entry = saveOrder[i]
            guard entry.profile == profile, let saved = stored[profile]?[entry.contentId], saved.seq == entry.seq else {
                continue
            }
            page.append(saved)
        }
        let more = page.count > n
        if more { page.removeLast(page.count - n) }
        return (page.map(\.bookmark), more ? page.last.map { String($0.seq) } : nil)
    }

    public func save(_ bookmark: Bookmark, completion: @escaping (Result<Void, StoreError>) -> Void) {
        write(completion) { $0.store(bookmark) }
    }

    private func store(_ bookmark: Bookmark) {
        lastSeq += 1
        if stored[bookmark.profile]?.updateValue(Saved(bookmark: bookmark, seq: lastSeq), forKey: bookmark.contentId) == nil {
            if stored[bookmark.profile] == nil {
                stored[bookmark.profile] = [bookmark.contentId: Saved(bookmark: bookmark, seq: lastSeq)]
            }
            count += 1
        }
        saveOrder.append((lastSeq, bookmark.profile, bookmark.contentId))
        while count > capacity, saveOrderStart < saveOrder.count {
            let oldest = saveOrder[saveOrderStart]
            saveOrderStart += 1
            if stored[oldest.profile]?[oldest.contentId]?.seq == oldest.seq { remove(oldest.profile, oldest.contentId) }
        }
        compactSaveOrder()
    }

    private func remove(_ profile: String, _ contentId: String) {
        guard stored[profile]?.removeValue(forKey: contentId) != nil else { return }
        count -= 1
        if stored[profile]?.isEmpty == true { stored[profile] = nil }
    }

    /// Drops the stale entries (evicted ones before `saveOrderStart` too) once they are as many as the
    /// live ones: amortised, each save pays for one entry's copy.
    private func compactSaveOrder() {
        guard saveOrder.count > 2 * count + 1 else { return }
        saveOrder = saveOrder[saveOrderStart...].filter { stored[$0.profile]?[$0.contentId]?.seq == $0.seq }
        saveOrderStart = 0
    }

    public func deleteBookmark(profile: String, contentId: String, completion: @escaping (Result<Bool, StoreError>) -> Void) {
        write(completion) { store in
            let found = store.stored[profile]?[contentId] != nil
            store.remove(profile, contentId)
            store.compactSaveOrder()
            return found
        }
    }

    public func clearBookmarks(profile: String, completion: @escaping (Result<Int, StoreError>) -> Void) {
        write(completion) { store in
            let n = store.stored.removeValue(forKey: profile)?.count ?? 0
            store.count -= n
            store.compactSaveOrder()
            return n
        }
    }

    public func watchedBreaks(contentId: String, within ranges: [ClosedRange<Double>]) throws(StoreError) -> Set<String> {
        Set((watched[contentId] ?? [:]).filter { entry in ranges.contains { $0.contains(entry.value) } }.keys)
    }

    public func pruneWatched(keeping ranges: [ClosedRange<Double>]) {
        guard let top = ranges.last?.upperBound else { return }
        let pass: (MemoryViewerStateStore) -> Void = { store in
            for contentId in Array(store.watched.keys) {
                store.watched[contentId] = store.watched[contentId]!.filter { entry in
                    entry.value > top || ranges.contains { $0.contains(entry.value) }
                }
                if store.watched[contentId]!.isEmpty { store.watched[contentId] = nil }
            }
        }
        write({ (_: Result<Void, StoreError>) in }, pass)
    }

    public func markWatched(
        contentId: String, breakId: String, at: Double,
        completion: @escaping (Result<Void, StoreError>) -> Void
    ) {
        write(completion) { $0.watched[contentId, default: [:]][breakId] = at }
    }

    public func lastBreakCompletedAt() -> Double? { lastCompleted }
    public func setLastBreakCompleted(at: Double) { lastCompleted = at }

    /// Each write that completes is one commit, or one failure.
    public private(set) var writeCounts = StoreWriteCounts()
    private var metrics = StoredMetrics()
    public func storedMetrics() -> StoredMetrics { metrics }
    private var running = false
    public func markRunning() -> Bool {
        defer { running = true }
        return running
    }
    public func clearRunning() { running = false }
    /// Kept at once, outside the writes' order: nothing waits for it, and the tests that complete writes
    /// count the service's own.
    public func saveMetrics(_ metrics: StoredMetrics) {
        guard !closed else { return }
        self.metrics = metrics
        writeCounts.commits += 1
    }

    public func close() {
        completeWrites()
        closed = true
    }

    private func write<T>(
        _ completion: @escaping (Result<T, StoreError>) -> Void, _ body: @escaping (MemoryViewerStateStore) -> T
    ) {
        let failure = closed ? .unavailable("the store is closed") : failWrites
        pending.append { [unowned self] in
            if let failure {
                writeCounts.failures += 1
                completion(.failure(failure))
            } else {
                writeCounts.commits += 1
                completion(.success(body(self)))
            }
        }
    }
}
