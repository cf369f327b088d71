// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing

@testable import SnapbackDaemon

/// The loop's worker (snapback-web's readCues): each job runs on the worker thread, below the loop
/// thread's priority, and its completion on the loop thread with the job's result, in the order given.
@Suite struct LoopWorkerTests {
    final class Seen: @unchecked Sendable {
        var results: [Int] = []
        var completedOnLoop: [Bool] = []
        var ranOffLoop: [Bool] = []
        var workerNice: [Int32] = []
        var loopNice: Int32 = 0
    }

    @Test func jobsRunOffTheLoopBelowItsPriorityAndCompleteOnItInOrder() throws {
        let thread = LoopThread()
        let seen = Seen()
        _ = thread.start { loop in
            seen.loopNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            let loopThread = pthread_self()
            let worker = LoopWorker(loop: loop)
            for i in 0..<3 {
                let taken = worker.run({ () -> (Int, Bool, Int32) in
                    (
                        i * 10, pthread_equal(pthread_self(), loopThread) == 0,
                        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                    )
                }) { (value, offLoop, nice) in
                    seen.completedOnLoop.append(loop.isOnLoopThread)
                    seen.results.append(value)
                    seen.ranOffLoop.append(offLoop)
                    seen.workerNice.append(nice)
                    if seen.results.count == 3 {
                        worker.close()
                        loop.closeOwnHandles()
                    }
                }
                precondition(taken, "the worker refused a job")
            }
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(seen.results == [0, 10, 20])
        #expect(seen.completedOnLoop == [true, true, true])
        #expect(seen.ranOffLoop == [true, true, true])
        #expect(seen.workerNice == Array(repeating: min(seen.loopNice + LoopWorker.niceness, 19), count: 3))
    }

    @Test func aClosedWorkerTakesNoJob() throws {
        let thread = LoopThread()
        final class Taken: @unchecked Sendable { var value: Bool? }
        let taken = Taken()
        _ = thread.start { loop in
            let worker = LoopWorker(loop: loop)
            worker.close()
            taken.value = worker.run({ 1 }) { _ in preconditionFailure("a closed worker completed a job") }
            loop.closeOwnHandles()
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(taken.value == false)
    }
}
