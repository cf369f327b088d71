// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTimeline
import Testing

@testable import SnapbackStore

/// Stands in for the daemon's loop: the store's writer posts closures here, and the test thread runs
/// them while it waits (so completions run on the thread that made the calls, as on the loop).
final class TestLoop: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    /// Closures posted so far (each is one delivery of one or more batches).
    private(set) var posts = 0

    var post: SQLiteViewerStateStore.Post {
        { [self] body in
            condition.lock()
            queue.append(body)
            posts += 1
            condition.signal()
            condition.unlock()
        }
    }

    /// Runs posted closures until `done()` holds; false after `timeout` seconds.
    @discardableResult
    func run(timeout: Double = 10, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !done() {
            condition.lock()
            while queue.isEmpty {
                if !condition.wait(until: deadline) {
                    condition.unlock()
                    return done()
                }
            }
            let bodies = queue
            queue = []
            condition.unlock()
            for body in bodies { body() }
        }
        return true
    }
}

/// Log lines of a store, for assertions.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var log: SQLiteViewerStateStore.Log {
        { [self] level, message in
            lock.lock()
            lines.append("\(level): \(message)")
            lock.unlock()
        }
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// A store in a temporary directory, with its loop and log.
final class StoreFixture {
    let directory: String
    let loop = TestLoop()
    let logs = LogLines()
    var configuration: SQLiteViewerStateStore.Configuration
    /// The store's wall clock (its sync stamps), from the next `reopen`.
    var clock: @Sendable () -> Double = wallClockNow
    private(set) var store: SQLiteViewerStateStore!
    private let removeDirectory: Bool

    init(directory: String? = nil, configuration: SQLiteViewerStateStore.Configuration = .init(), open: Bool = true) throws {
        if let directory {
            self.directory = directory
            removeDirectory = false
        } else {
            self.directory = try makeTemporaryDirectory()
            removeDirectory = true
        }
        self.configuration = configuration
        if open { reopen() }
    }

    deinit {
        store?.close()
        if removeDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    var path: String { directory + "/" + SQLiteViewerStateStore.fileName }

    /// Closes the store (if open) and opens a new one on the same directory.
    @discardableResult
    func reopen() -> SQLiteViewerStateStore {
        store?.close()
        store = SQLiteViewerStateStore(
            directory: directory, configuration: configuration, post: loop.post, log: logs.log, clock: clock)
        return store
    }

    func close() {
        store?.close()
    }

    // MARK: Writes, waiting for their completion

    func save(_ bookmark: Bookmark) -> Result<Void, StoreError> {
        var result: Result<Void, StoreError>?
        store.save(bookmark) { result = $0 }
        #expect(loop.run { result != nil }, "save did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    func delete(_ profile: String, _ contentId: String) -> Result<Bool, StoreError> {
        var result: Result<Bool, StoreError>?
        store.deleteBookmark(profile: profile, contentId: contentId) { result = $0 }
        #expect(loop.run { result != nil }, "delete did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    func clear(_ profile: String) -> Result<Int, StoreError> {
        var result: Result<Int, StoreError>?
        store.clearBookmarks(profile: profile) { result = $0 }
        #expect(loop.run { result != nil }, "clear did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    func markWatched(_ contentId: String, _ breakId: String, at: Double) -> Result<Void, StoreError> {
        var result: Result<Void, StoreError>?
        store.markWatched(contentId: contentId, breakId: breakId, at: at) { result = $0 }
        #expect(loop.run { result != nil }, "markWatched did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    func merge(_ record: SyncRecord) -> Result<Bool, StoreError> {
        var result: Result<Bool, StoreError>?
        store.merge(record) { result = $0 }
        #expect(loop.run { result != nil }, "merge did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    func mergeWatched(_ breaks: WatchedBreaks) -> Result<Bool, StoreError> {
        var result: Result<Bool, StoreError>?
        store.mergeWatched(breaks) { result = $0 }
        #expect(loop.run { result != nil }, "mergeWatched did not complete")
        return result ?? .failure(.unavailable("timed out"))
    }

    /// Every page of a profile.
    func allPages(_ profile: String, pageSize: Int) throws -> [[Bookmark]] {
        var pages: [[Bookmark]] = []
        var token: String?
        repeat {
            let (page, next) = try store.bookmarks(profile: profile, after: token, limit: pageSize)
            pages.append(page)
            token = next
        } while token != nil && pages.count < 10_000
        return pages
    }
}

func makeTemporaryDirectory() throws -> String {
    let path = "/tmp/snapback-store-test-\(UUID().uuidString.prefix(12))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func bookmark(
    _ contentId: String, profile: String = "p", at contentTime: Double = 100, updatedAt: Double = 1_700_000_000,
    streamId: String = "s", finished: Bool = false
) -> Bookmark {
    Bookmark(
        profile: profile, contentId: contentId, contentTime: contentTime, streamTime: contentTime + 30,
        streamId: streamId, updatedAt: updatedAt, finished: finished)
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
    var failure: Failure? { if case .failure(let e) = self { e } else { nil } }
}

extension StoreError {
    var isFull: Bool { if case .full = self { true } else { false } }
    var isUnavailable: Bool { if case .unavailable = self { true } else { false } }
}

// MARK: Small filesystems (root with CAP_SYS_ADMIN: tmpfs mounts)

/// Runs a command, returns its exit status.
@discardableResult
func shell(_ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        return -1
    }
    process.waitUntilExit()
    return process.terminationStatus
}

/// A tmpfs of `size` mounted on a fresh directory, or nil when this process may not mount (not root,
/// or no CAP_SYS_ADMIN in this container).
final class TmpfsMount {
    let directory: String

    init?(size: String, readOnly: Bool = false) {
        guard geteuid() == 0, let dir = try? makeTemporaryDirectory() else { return nil }
        directory = dir
        let options = "size=\(size),mode=0755" + (readOnly ? ",ro" : "")
        guard shell(["mount", "-t", "tmpfs", "-o", options, "snapback-test", dir]) == 0 else {
            try? FileManager.default.removeItem(atPath: dir)
            return nil
        }
    }

    func remount(readOnly: Bool) -> Bool {
        shell(["mount", "-o", "remount,\(readOnly ? "ro" : "rw")", directory]) == 0
    }

    deinit {
        shell(["umount", "-l", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }
}
