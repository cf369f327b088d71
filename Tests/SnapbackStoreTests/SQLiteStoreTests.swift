// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTimeline
import Testing

@testable import SnapbackStore

/// The SQLite store against real database files in temporary directories.
@Suite struct SQLiteStoreTests {
    // MARK: Round trips

    @Test func bookmarkRoundTripsAndSurvivesReopening() throws {
        let f = try StoreFixture()
        #expect(try f.store.bookmark(profile: "p", contentId: "movie") == nil)
        let first = Bookmark(
            profile: "p", contentId: "movie", contentTime: 910.5, streamTime: 1000.25,
            streamId: "stream-ä", updatedAt: 1_700_000_123.5, finished: false)
        #expect(f.save(first).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "movie") == first)
        #expect(f.store.bookmarkCount == 1)

        // Same key: replaced; another profile: its own.
        var second = first
        second.contentTime = 1200
        second.finished = true
        second.updatedAt += 10
        #expect(f.save(second).isSuccess)
        var other = first
        other.profile = ""
        other.contentTime = 5
        #expect(f.save(other).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "movie") == second)
        #expect(try f.store.bookmark(profile: "", contentId: "movie") == other)
        #expect(f.store.bookmarkCount == 2)

        f.reopen()
        #expect(try f.store.bookmark(profile: "p", contentId: "movie") == second)
        #expect(try f.store.bookmark(profile: "", contentId: "movie") == other)
        #expect(f.store.bookmarkCount == 2)
        #expect(f.store.lastError == nil)
        #expect(f.store.kind == "sqlite")
        #expect(f.store.path == f.path)
    }

    /// A save or delete still queued for the writer is what a read sees: a player that reconnects at
    /// once resumes at its latest position, before the commit's completion has run.
    @Test func readsSeeWritesStillQueuedForTheWriter() throws {
        let f = try StoreFixture()
        let first = Bookmark(profile: "p", contentId: "m", contentTime: 10, streamTime: 10, streamId: "s", updatedAt: 1)
        #expect(f.save(first).isSuccess)
        var later = first
        later.contentTime = 20
        var saved: Result<Void, StoreError>?
        f.store.save(later) { saved = $0 }
        #expect(try f.store.bookmark(profile: "p", contentId: "m") == later)
        #expect(f.loop.run { saved != nil })
        #expect(try f.store.bookmark(profile: "p", contentId: "m") == later)

        var deleted: Result<Bool, StoreError>?
        f.store.deleteBookmark(profile: "p", contentId: "m") { deleted = $0 }
        #expect(try f.store.bookmark(profile: "p", contentId: "m") == nil)
        #expect(f.loop.run { deleted != nil })
        #expect(try f.store.bookmark(profile: "p", contentId: "m") == nil)
    }

    @Test func databaseIsWalWithFullSync() throws {
        let f = try StoreFixture()
        #expect(f.save(bookmark("a")).isSuccess)
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(try db.texts("PRAGMA journal_mode") == ["wal"])
        #expect(try db.integer("PRAGMA user_version") == Int64(SQLiteSchema.version))
    }

    @Test func stateDirectoryFileIsCreatedIfMissing() throws {
        let f = try StoreFixture()
        #expect(FileManager.default.fileExists(atPath: f.path))
        #expect(f.store.lastError == nil)
    }

    // MARK: Listing, deleting, clearing

    @Test func listPagesMostRecentlySavedFirstWithoutGapsOrRepeats() throws {
        let f = try StoreFixture()
        // 25 bookmarks, their wall times tied (three share each) and stepped back once (the clock set
        // back at the 13th): the order is the order of the saves, whatever the times say.
        for i in 0..<25 {
            let updatedAt = (i < 12 ? 1000 : 500) + Double(i / 3)
            #expect(f.save(bookmark("c\(String(format: "%02d", i))", updatedAt: updatedAt)).isSuccess)
        }
        #expect(f.save(bookmark("elsewhere", profile: "q")).isSuccess)
        let pages = try f.allPages("p", pageSize: 10)
        #expect(pages.map(\.count) == [10, 10, 5])
        let ids = pages.flatMap { $0 }.map(\.contentId)
        let expected = (0..<25).reversed().map { "c\(String(format: "%02d", $0))" }
        #expect(ids == expected)
        #expect(Set(ids).count == 25)
        // Exactly one page: no next token.
        let (one, next) = try f.store.bookmarks(profile: "q", after: nil, limit: 10)
        #expect(one.map(\.contentId) == ["elsewhere"])
        #expect(next == nil)
        // An unknown profile: empty.
        #expect(try f.store.bookmarks(profile: "nobody", after: nil, limit: 10).page.isEmpty)
        // A page of exactly the remaining count has no next token.
        #expect(try f.allPages("p", pageSize: 25).map(\.count) == [25])
    }

    @Test func deleteAndClear() throws {
        let f = try StoreFixture()
        for id in ["a", "b", "c"] { #expect(f.save(bookmark(id)).isSuccess) }
        #expect(f.save(bookmark("a", profile: "other")).isSuccess)
        #expect(f.store.bookmarkCount == 4)

        #expect(f.delete("p", "a") == .success(true))
        #expect(f.delete("p", "a") == .success(false))
        #expect(try f.store.bookmark(profile: "p", contentId: "a") == nil)
        #expect(f.store.bookmarkCount == 3)

        #expect(f.clear("p") == .success(2))
        #expect(f.clear("p") == .success(0))
        #expect(f.store.bookmarkCount == 1)
        #expect(try f.store.bookmark(profile: "other", contentId: "a") != nil)
        f.reopen()
        #expect(f.store.bookmarkCount == 1)
    }

    // MARK: Bounded size

    @Test func evictsTheOldestBookmarksAtTheBound() throws {
        var configuration = SQLiteViewerStateStore.Configuration()
        configuration.capacity = 5
        let f = try StoreFixture(configuration: configuration)
        for i in 0..<5 { #expect(f.save(bookmark("c\(i)", updatedAt: 100 + Double(i))).isSuccess) }
        // Updating an existing one does not evict.
        #expect(f.save(bookmark("c0", at: 7, updatedAt: 200)).isSuccess)
        #expect(f.store.bookmarkCount == 5)
        #expect(try f.store.bookmark(profile: "p", contentId: "c0")?.contentTime == 7)
        // Three new ones push out the three least recently saved, c1, c2, c3 — though the clock was set
        // back before they were saved, and their times are the oldest.
        for i in 5..<8 { #expect(f.save(bookmark("c\(i)", updatedAt: 50 + Double(i))).isSuccess) }
        #expect(f.store.bookmarkCount == 5)
        for gone in ["c1", "c2", "c3"] { #expect(try f.store.bookmark(profile: "p", contentId: gone) == nil) }
        for kept in ["c0", "c4", "c5", "c6", "c7"] { #expect(try f.store.bookmark(profile: "p", contentId: kept) != nil) }
        f.reopen()
        #expect(f.store.bookmarkCount == 5)
    }

    @Test func defaultBoundIsTenThousand() {
        #expect(SQLiteViewerStateStore.Configuration().capacity == 10_000)
    }

    // MARK: Watched breaks and the last break

    @Test func watchedBreaksAreFoundWithinRangesAndPrunedOutsideThem() throws {
        let f = try StoreFixture()
        let now = 1_800_000_000.0
        #expect(f.markWatched("movie", "old", at: now - 25 * 3600).isSuccess)
        #expect(f.markWatched("movie", "b1", at: now - 3600).isSuccess)
        #expect(f.markWatched("movie", "b2", at: now).isSuccess)
        #expect(f.markWatched("movie", "boot", at: 100).isSuccess)  // dated by a clock that booted at 1970
        #expect(f.markWatched("movie", "ahead", at: now + 3600 * 24 * 365).isSuccess)  // a clock run ahead
        #expect(f.markWatched("other", "b1", at: now).isSuccess)
        let day = [50.0...150, (now - 24 * 3600)...now]
        #expect(try f.store.watchedBreaks(contentId: "movie", within: day) == ["boot", "b1", "b2"])
        #expect(try f.store.watchedBreaks(contentId: "movie", within: [(now - 60)...now]) == ["b2"])
        #expect(try f.store.watchedBreaks(contentId: "nothing", within: day) == [])
        // Below and between the ranges: gone from the table; beyond the last: left for later.
        f.store.pruneWatched(keeping: day)
        #expect(f.save(bookmark("x")).isSuccess)  // a write queued after the prune: committed after it
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(Set(try db.texts("SELECT break_id FROM watched_breaks")) == ["boot", "b1", "b2", "ahead"])
        #expect(try db.integer("SELECT count(*) FROM watched_breaks") == 5)
        f.reopen()
        #expect(try f.store.watchedBreaks(contentId: "movie", within: day) == ["boot", "b1", "b2"])
        // Watched again under a clock set back: the later mark wins, not the greater time.
        #expect(f.markWatched("movie", "ahead", at: now).isSuccess)
        #expect(try f.store.watchedBreaks(contentId: "movie", within: day) == ["boot", "b1", "b2", "ahead"])
    }

    /// The store prunes only when the service asks: opened by a daemon whose clock says 1970 (a box
    /// before NTP), it must not judge yesterday's rows by that clock.
    @Test func openingTheStorePrunesNothing() throws {
        let f = try StoreFixture()
        let now = wallClockNow()
        #expect(f.markWatched("movie", "old", at: now - 48 * 3600).isSuccess)
        #expect(f.markWatched("movie", "new", at: now).isSuccess)
        f.reopen()
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(try db.integer("SELECT count(*) FROM watched_breaks") == 2)
    }

    @Test func lastBreakTimeIsDeviceWideAndTheLatestSetWins() throws {
        let f = try StoreFixture()
        #expect(f.store.lastBreakCompletedAt() == nil)
        f.store.setLastBreakCompleted(at: 1000)
        // The clock was set back: the break that completed last is this one.
        f.store.setLastBreakCompleted(at: 900)
        #expect(f.store.lastBreakCompletedAt() == 900)
        // The write has no completion: a save queued after it completing means it committed too.
        #expect(f.save(bookmark("x")).isSuccess)
        f.reopen()
        #expect(f.store.lastBreakCompletedAt() == 900)
    }

    // MARK: Schema versions

    @Test func migratesAnOlderSchemaKeepingItsData() throws {
        let f = try StoreFixture(open: false)
        do {
            // A version-1 database (no finished column, no indexes) with one bookmark in it.
            let db = try SQLiteSchema.openWriter(path: f.path, busyTimeout: 1000, maxPageCount: nil, migrateTo: 1)
            #expect(try db.integer("PRAGMA user_version") == 1)
            try db.execute(
                """
                INSERT INTO bookmarks(profile, content_id, content_time, stream_time, stream_id, updated_at)
                VALUES ('p', 'old-movie', 42, 72, 'stream-1', 1000);
                INSERT INTO watched_breaks VALUES ('old-movie', 'b1', \(wallClockNow()));
                INSERT INTO device_state VALUES ('last_break_completed_at', 77);
                """)
        }
        f.reopen()
        #expect(f.store.lastError == nil)
        #expect(
            try f.store.bookmark(profile: "p", contentId: "old-movie")
                == Bookmark(
                    profile: "p", contentId: "old-movie", contentTime: 42, streamTime: 72, streamId: "stream-1",
                    updatedAt: 1000, finished: false))
        #expect(try f.store.watchedBreaks(contentId: "old-movie", within: [0...1e12]) == ["b1"])
        #expect(f.store.lastBreakCompletedAt() == 77)
        #expect(f.store.bookmarkCount == 1)
        #expect(f.save(bookmark("new", finished: true)).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "new")?.finished == true)
        let db = try SQLiteConnection(path: f.path, create: false)
        #expect(try db.integer("PRAGMA user_version") == Int64(SQLiteSchema.version))
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'bookmarks_by_save'") == 1)
    }

    /// Version 2 ordered bookmarks by their times; version 3 numbers them in that order, and saves
    /// after the migration come after them whatever their times.
    @Test func migratingToSaveOrderKeepsTheOrderOfTheTimes() throws {
        let f = try StoreFixture(open: false)
        do {
            let db = try SQLiteSchema.openWriter(path: f.path, busyTimeout: 1000, maxPageCount: nil, migrateTo: 2)
            try db.execute(
                """
                INSERT INTO bookmarks(profile, content_id, content_time, stream_time, stream_id, updated_at)
                VALUES ('p', 'b', 1, 1, 's', 2000), ('p', 'a', 1, 1, 's', 3000), ('p', 'c', 1, 1, 's', 1000),
                    ('q', 'd', 1, 1, 's', 2500);
                """)
        }
        f.reopen()
        #expect(f.store.lastError == nil)
        #expect(try f.allPages("p", pageSize: 2).flatMap { $0 }.map(\.contentId) == ["a", "b", "c"])
        #expect(f.save(bookmark("e", updatedAt: 10)).isSuccess)
        #expect(try f.allPages("p", pageSize: 2).flatMap { $0 }.map(\.contentId) == ["e", "a", "b", "c"])
    }

    @Test func aNewerSchemaIsMovedAsideAndAFreshStoreServes() throws {
        let f = try StoreFixture(open: false)
        do {
            let db = try SQLiteConnection(path: f.path, create: true)
            try db.execute(
                "PRAGMA journal_mode=WAL; CREATE TABLE future(x); INSERT INTO future VALUES (1); PRAGMA user_version=99")
        }
        f.reopen()
        let error = try #require(f.store.lastError)
        #expect(error.contains("schema version 99"))
        #expect(error.contains("snapback.db.newer-"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: f.directory).filter { $0.hasPrefix("snapback.db.newer-") }
        #expect(!aside.isEmpty)
        #expect(f.logs.all.contains { $0.hasPrefix("error:") && $0.contains("schema version 99") })
        // The old file is intact where it was moved.
        let moved = try SQLiteConnection(
            path: f.directory + "/" + aside.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }[0], create: false)
        #expect(try moved.integer("PRAGMA user_version") == 99)
        // The fresh store works.
        #expect(f.save(bookmark("a")).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "a") != nil)
    }

    // MARK: Corruption

    @Test func aFileThatIsNotADatabaseIsMovedAsideWithItsWal() throws {
        let f = try StoreFixture(open: false)
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: f.path))
        try Data(repeating: 0x17, count: 4096).write(to: URL(fileURLWithPath: f.path + "-wal"))
        f.reopen()
        let error = try #require(f.store.lastError)
        #expect(error.contains("corrupt"))
        let names = try FileManager.default.contentsOfDirectory(atPath: f.directory)
        let aside = names.filter { $0.hasPrefix("snapback.db.corrupt-") }
        // The database and its -wal (and the -shm SQLite made while looking at them) go together.
        #expect(aside.contains { $0.hasSuffix("-wal") }, "moved aside: \(names)")
        #expect(aside.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.count == 1, "moved aside: \(names)")
        let wal = try #require(aside.first { $0.hasSuffix("-wal") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.directory + "/" + wal)) == Data(repeating: 0x17, count: 4096))
        #expect(f.logs.all.contains { $0.hasPrefix("error:") && $0.contains("corrupt") })
        // Fresh and working; the status keeps saying what happened.
        #expect(f.store.bookmarkCount == 0)
        #expect(f.save(bookmark("a")).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "a") != nil)
        #expect(f.store.lastError?.contains("corrupt") == true)
    }

    @Test func damagedPagesFailTheQuickCheckAndAreMovedAside() throws {
        let f = try StoreFixture()
        for i in 0..<300 { f.store.save(bookmark("content-\(i)", streamId: String(repeating: "s", count: 200))) { _ in } }
        #expect(f.save(bookmark("last")).isSuccess)
        f.close()
        // Overwrite pages 3 to 6 (4 KiB pages) with garbage; the header stays valid.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: f.path))
        try handle.seek(toOffset: 2 * 4096)
        try handle.write(contentsOf: Data(repeating: 0xff, count: 4 * 4096))
        try handle.close()
        f.reopen()
        let error = try #require(f.store.lastError)
        #expect(error.contains("corrupt"))
        #expect(error.contains("quick_check") || error.contains("malformed"))
        #expect(f.store.bookmarkCount == 0)
        #expect(f.save(bookmark("a")).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "a") != nil)
    }

    // MARK: Read-only directory, full disk

    @Test func aReadOnlyDirectoryMakesWritesUnavailableUntilItIsWritable() throws {
        // Root ignores directory permissions: a read-only tmpfs mount then. Others: chmod 0555.
        let mount = TmpfsMount(size: "1m", readOnly: true)
        let directory: String
        if let mount {
            directory = mount.directory
        } else if geteuid() != 0 {
            directory = try makeTemporaryDirectory()
            chmod(directory, 0o555)
        } else {
            Issue.record("root without CAP_SYS_ADMIN: cannot make a directory read-only for this test")
            return
        }
        defer {
            if mount == nil {
                chmod(directory, 0o755)
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
        let f = try StoreFixture(directory: directory)
        #expect(f.store.lastError?.contains("unavailable") == true)
        let saved = f.save(bookmark("a"))
        #expect(saved.failure?.isUnavailable == true, "\(saved)")
        #expect(throws: StoreError.self) { try f.store.bookmark(profile: "p", contentId: "a") }
        // The daemon keeps serving: the service opens sessions without history.
        #expect(f.logs.all.contains { $0.hasPrefix("error:") && $0.contains("cannot open") })

        // Writable again: the next write opens the database, and reads work.
        if let mount { #expect(mount.remount(readOnly: false)) } else { chmod(directory, 0o755) }
        #expect(f.save(bookmark("b")).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "b") != nil)
        #expect(f.store.lastError == nil)
        #expect(f.logs.all.contains { $0.contains("open again") })
    }

    /// A real full filesystem: a 1 MiB tmpfs, filled up by another file. Without mount rights, SQLite's
    /// own size limit (PRAGMA max_page_count) stands in — the same SQLITE_FULL.
    @Test func aFullDiskFailsSavesWithFullUntilSpaceReturns() throws {
        if let mount = TmpfsMount(size: "1m") {
            let f = try StoreFixture(directory: mount.directory)
            #expect(f.save(bookmark("before")).isSuccess)
            // Fill the filesystem.
            let filler = mount.directory + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0)
            let chunk = [UInt8](repeating: 1, count: 4096)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            #expect(errno == ENOSPC)
            close(fd)
            try fillUntilFull(f, freeSpace: { unlink(filler) })
            f.close()
        } else {
            try aDatabaseSizeLimitFailsSavesWithFullUntilRowsAreDeleted()
        }
    }

    /// SQLite's own limit gives the same SQLITE_FULL; deleting rows frees pages for new ones.
    @Test func aDatabaseSizeLimitFailsSavesWithFullUntilRowsAreDeleted() throws {
        var configuration = SQLiteViewerStateStore.Configuration()
        configuration.maxPageCount = 40
        let f = try StoreFixture(configuration: configuration)
        try fillUntilFull(f, freeSpace: { _ = f.clear("filler") })
    }

    /// Saves bookmarks with large values until one fails with `.full`; then frees space and expects
    /// saves to work again, and every acknowledged one to be there.
    private func fillUntilFull(_ f: StoreFixture, freeSpace: () -> Void) throws {
        var acknowledged: [String] = []
        var failure: StoreError?
        for i in 0..<2000 {
            let b = bookmark("big-\(i)", profile: "filler", streamId: String(repeating: "x", count: 3000))
            switch f.save(b) {
            case .success: acknowledged.append(b.contentId)
            case .failure(let error): failure = error
            }
            if failure != nil { break }
        }
        let error = try #require(failure, "never ran out of space")
        #expect(error.isFull, "\(error)")
        #expect(f.store.lastError?.contains("full") == true)
        // Still readable while full.
        for id in acknowledged { #expect(try f.store.bookmark(profile: "filler", contentId: id) != nil) }
        freeSpace()
        #expect(f.save(bookmark("after")).isSuccess)
        #expect(try f.store.bookmark(profile: "p", contentId: "after") != nil)
        #expect(f.store.lastError == nil)
        #expect(f.logs.all.contains { $0.contains("writes succeed again") })
    }
}
