// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SnapbackStore

/// Group commit: the writes of one loop turn share one transaction, each is acknowledged only once
/// that transaction committed, and a transaction that fails fails every write in it.
@Suite struct GroupCommitTests {
    /// Saves made in one turn (before the loop runs: the release is posted) commit as one transaction;
    /// at each acknowledgement the bookmark is already in the database, seen from another connection.
    @Test func writesOfOneLoopTurnCommitTogetherAndAreAcknowledgedAfterTheCommit() throws {
        let f = try StoreFixture()
        #expect(f.save(bookmark("warm-up")).isSuccess)
        let before = f.store.commits
        let observer = try SQLiteConnection(path: f.path, create: false)
        var acknowledged = 0
        var notYetCommitted: [String] = []
        for i in 0..<100 {
            let id = "session-\(i)"
            f.store.save(bookmark(id, at: Double(i))) { result in
                #expect(result.isSuccess)
                acknowledged += 1
                let rows = (try? observer.integer("SELECT count(*) FROM bookmarks WHERE content_id = '\(id)'")) ?? -1
                if rows != 1 { notYetCommitted.append(id) }
            }
        }
        #expect(f.store.unfinishedWrites == 100)
        #expect(f.loop.run { acknowledged == 100 })
        #expect(notYetCommitted.isEmpty, "acknowledged before their commit: \(notYetCommitted.prefix(5))")
        #expect(f.store.commits == before + 1, "\(f.store.commits - before) commits for one turn's 100 saves")
        #expect(f.store.unfinishedWrites == 0)
        #expect(f.store.bookmarkCount == 101)
    }

    /// Each turn is its own transaction, and a turn larger than `maxBatch` is split.
    @Test func eachTurnCommitsAloneAndLargeTurnsAreSplitAtTheBatchSize() throws {
        var configuration = SQLiteViewerStateStore.Configuration()
        configuration.maxBatch = 10
        let f = try StoreFixture(configuration: configuration)
        let before = f.store.commits
        var done = 0
        for i in 0..<35 { f.store.save(bookmark("c\(i)")) { _ in done += 1 } }
        #expect(f.loop.run { done == 35 })
        #expect(f.store.commits == before + 4)
        for turn in 0..<3 {
            f.store.save(bookmark("t\(turn)")) { _ in done += 1 }
            #expect(f.loop.run { done == 36 + turn })
        }
        #expect(f.store.commits == before + 7)
    }

    /// A batch whose transaction fails for a reason of the database (here out of space: SQLite's own
    /// size limit, the same SQLITE_FULL a full disk gives) fails every save in it with that error —
    /// none retried alone, none acknowledged, none in the database — and the store works again once
    /// there is room.
    @Test func aFailingBatchFailsEverySaveInItWithTheError() throws {
        let probe = try StoreFixture()
        #expect(probe.save(bookmark("a")).isSuccess)
        let db = try SQLiteConnection(path: probe.path, create: false)
        let pages = try db.integer("PRAGMA page_count")
        probe.close()

        var configuration = SQLiteViewerStateStore.Configuration()
        // Room for a few more pages: one big save fits, twenty in one transaction do not.
        configuration.maxPageCount = pages + 4
        let f = try StoreFixture(configuration: configuration)
        #expect(f.save(bookmark("small")).isSuccess)
        let before = f.store.commits
        var results: [String: Result<Void, StoreError>] = [:]
        for i in 0..<20 {
            let id = "big-\(i)"
            f.store.save(bookmark(id, streamId: String(repeating: "x", count: 3000))) { results[id] = $0 }
        }
        #expect(f.loop.run { results.count == 20 })
        let errors = results.values.compactMap(\.failure)
        #expect(errors.count == 20, "acknowledged: \(results.filter { $0.value.isSuccess }.keys.sorted())")
        #expect(errors.allSatisfy { $0.isFull }, "\(errors.first.map { "\($0)" } ?? "")")
        #expect(errors.allSatisfy { $0 == errors[0] }, "every save fails with the batch's one error")
        #expect(f.store.commits == before)
        let observer = try SQLiteConnection(path: f.path, create: false)
        #expect(try observer.integer("SELECT count(*) FROM bookmarks WHERE content_id LIKE 'big-%'") == 0)
        #expect(f.store.lastError?.contains("full") == true)
        #expect(f.logs.all.contains { $0.hasPrefix("error:") && $0.contains("writes failing") })

        // One that fits goes through on its own, and the store is healthy again.
        #expect(f.save(bookmark("big-alone", streamId: String(repeating: "x", count: 3000))).isSuccess)
        #expect(f.store.commits == before + 1)
        #expect(f.store.lastError == nil)
    }

    /// The same on a real full filesystem (a 1 MiB tmpfs filled by another file), where this process
    /// may mount one.
    @Test func aBatchOnAFullDiskFailsEverySaveInIt() throws {
        guard let mount = TmpfsMount(size: "1m") else { return }
        let f = try StoreFixture(directory: mount.directory)
        #expect(f.save(bookmark("before")).isSuccess)
        let filler = mount.directory + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 1, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        let before = f.store.commits
        var results: [Result<Void, StoreError>] = []
        for i in 0..<50 {
            f.store.save(bookmark("b\(i)", streamId: String(repeating: "y", count: 2000))) { results.append($0) }
        }
        #expect(f.loop.run { results.count == 50 })
        #expect(results.allSatisfy { $0.failure != nil }, "\(results.filter(\.isSuccess).count) acknowledged on a full disk")
        let errors = results.compactMap(\.failure)
        #expect(errors.allSatisfy { $0 == errors[0] })
        #expect(f.store.commits == before)
        unlink(filler)
        #expect(f.save(bookmark("after")).isSuccess)
        f.close()
    }
}
