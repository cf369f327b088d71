// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SnapbackStore

/// The SQLite store's completions: in order, on the calling thread, what was queued committed together,
/// and a close that commits what is queued first.
@Suite struct StoreOrderingTests {
    @Test func completionsRunInOrderOnTheCallingThread() throws {
        let f = try StoreFixture()
        let thread = pthread_self()
        var order: [Int] = []
        var offThread = 0
        let n = 600
        for i in 0..<n {
            let check = { (k: Int) in
                order.append(k)
                if pthread_equal(pthread_self(), thread) == 0 { offThread += 1 }
            }
            switch i % 4 {
            case 0: f.store.save(bookmark("c\(i % 50)", at: Double(i))) { _ in check(i) }
            case 1: f.store.markWatched(contentId: "c\(i)", breakId: "b", at: wallClockNow()) { _ in check(i) }
            case 2: f.store.deleteBookmark(profile: "p", contentId: "c\(i % 7)") { _ in check(i) }
            default:
                f.store.setLastBreakCompleted(at: Double(i))
                f.store.save(bookmark("d\(i)", at: Double(i))) { _ in check(i) }
            }
        }
        #expect(f.loop.run { order.count == n })
        #expect(order == Array(0..<n))
        #expect(offThread == 0)
        // What was queued while a commit ran went in one transaction: fewer deliveries than writes.
        #expect(f.loop.posts < n)
    }

    @Test func closeCommitsWhatIsQueuedAndRunsItsCompletions() throws {
        let f = try StoreFixture()
        var done = 0
        for i in 0..<200 {
            f.store.save(bookmark("c\(i)", at: Double(i))) { result in
                if case .success = result { done += 1 }
            }
        }
        f.close()
        #expect(done == 200)
        // After close: refused at once.
        var late: Result<Void, StoreError>?
        f.store.save(bookmark("late")) { late = $0 }
        #expect(late?.failure?.isUnavailable == true)
        f.reopen()
        #expect(f.store.bookmarkCount == 200)
        #expect(try f.store.bookmark(profile: "p", contentId: "c199")?.contentTime == 199)
    }
}
