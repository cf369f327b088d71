// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import Testing

@testable import SnapbackDaemon

/// The request decoder's worker queue: jobs run in order on its thread, and each job — with the copy of
/// the request it holds — is let go of once it has run, even while the queue never empties (many players
/// sending large requests one after another).
@Suite struct WorkQueueTests {
    final class Tracker: Sendable {}

    @Test func aJobIsReleasedOnceItRanWhileTheQueueGoesOn() throws {
        let queue = WorkQueue()
        let thread = try #require(queue.startThread())
        let inFirst = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let inThird = DispatchSemaphore(value: 0)
        let releaseThird = DispatchSemaphore(value: 0)
        queue.push {
            inFirst.signal()
            releaseFirst.wait()
        }
        inFirst.wait()
        weak var tracked: Tracker?
        do {
            let tracker = Tracker()
            tracked = tracker
            queue.push { _ = tracker }
        }
        queue.push {
            inThird.signal()
            releaseThird.wait()
        }
        #expect(tracked != nil)
        releaseFirst.signal()
        inThird.wait()
        // The second job ran; the third is running, so the queue was never empty in between.
        #expect(tracked == nil)
        releaseThird.signal()
        queue.stop()
        pthread_join(thread, nil)
    }

    @Test func jobsRunInOrderAndStopLetsTheQueuedOnesFinish() throws {
        final class Log: @unchecked Sendable {
            private var mutex = pthread_mutex_t()
            private var entries: [Int] = []
            init() { pthread_mutex_init(&mutex, nil) }
            func add(_ n: Int) {
                pthread_mutex_lock(&mutex)
                entries.append(n)
                pthread_mutex_unlock(&mutex)
            }
            var all: [Int] {
                pthread_mutex_lock(&mutex)
                defer { pthread_mutex_unlock(&mutex) }
                return entries
            }
        }
        let queue = WorkQueue()
        let log = Log()
        let thread = try #require(queue.startThread())
        for n in 0..<100 { queue.push { log.add(n) } }
        queue.stop()
        pthread_join(thread, nil)
        #expect(log.all == Array(0..<100))
    }
}
