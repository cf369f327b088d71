// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTestSupport
import Testing

@testable import SnapbackDaemon

/// The loop's timers (``LoopTimer`` on the ``TimerQueue``'s timerfd), on a real loop thread. Only lower
/// bounds of elapsed time are asserted: a timer never fires early; how late it is depends on the machine.
@Suite struct TimerQueueTests {
    /// Seconds to the timer's milliseconds cannot trap, whatever the double: a 1e300 s break once
    /// reached `UInt64((delay * 1000).rounded(.up))` and took the daemon down.
    @Test func anyDelayConvertsWithoutTrapping() {
        #expect(LoopTimer.milliseconds(0.0011) == 2)
        #expect(LoopTimer.milliseconds(30) == 30_000)
        // Rounded up, as `rounded(.up)` would: a whole millisecond stays, any part of one counts.
        for (seconds, ms) in [(0.001, 1), (1e-12, 1), (2.5, 2_500), (2.5004, 2_501), (604_800, 604_800_000)] as [(Double, UInt64)]
        {
            #expect(LoopTimer.milliseconds(seconds) == ms)
            #expect(LoopTimer.milliseconds(seconds) == UInt64((seconds * 1000).rounded(.up)))
        }
        for huge in [1e300, .infinity, Double.greatestFiniteMagnitude, 1.8446744073709552e16] {
            #expect(LoopTimer.milliseconds(huge) == UInt64(LoopTimer.maxDelay * 1000))
        }
        for nothing in [0, -1, -.infinity, .nan, -1e300] { #expect(LoopTimer.milliseconds(nothing) == 0) }
    }

    final class Record: @unchecked Sendable {
        var fired: [Int] = []
        var times: [Int: UInt64] = [:]
        var started: UInt64 = 0
        var restartedAt: UInt64 = 0
        var pollingAfter: [Bool] = []
        var active: [Bool] = []
        var timers: [LoopTimer] = []
    }

    /// Stops the loop thread from a callback.
    static func stop(_ loop: EventLoop) {
        loop.closeAllTimers()
        loop.closeOwnHandles()
    }

    @Test func timersFireInDeadlineOrderWhateverOrderTheyWereStartedIn() {
        let thread = LoopThread()
        let record = Record()
        // Distinct delays 2, 4, … 60 ms in a scrambled order (17 is coprime with 30); every third timer
        // is stopped before it fires. A deadline is taken when its timer starts: under an emulator
        // starting thirty timers takes longer than 2 ms, so the steps are as much longer as the run is.
        let step = 2 * Int(TestTime.scale.rounded(.up))
        let delays = (0..<30).map { step + ($0 * 17 % 30) * step }
        _ = thread.start { loop in
            for (index, delay) in delays.enumerated() {
                let timer = LoopTimer(loop: loop) {
                    record.fired.append(delay)
                    if record.fired.count == delays.count - delays.count / 3 {
                        record.pollingAfter.append(loop.timerQueue.isPolling)
                        Self.stop(loop)
                    }
                }
                timer.start(after: UInt64(delay))
                record.timers.append(timer)
                if index % 3 == 2 { timer.stop() }
            }
        }
        #expect(thread.waitUntilStopped() == 0)
        let expected = delays.enumerated().filter { $0.offset % 3 != 2 }.map(\.element).sorted()
        #expect(record.fired == expected)
        #expect(record.pollingAfter == [false])  // nothing queued: the timerfd is not watched
    }

    @Test func restartingATimerLaterMovesItsDeadlineAndTheEarlierTimerfdSettingIsHarmless() {
        let thread = LoopThread()
        let record = Record()
        _ = thread.start { loop in
            record.started = TimerQueue.now()
            let a = LoopTimer(loop: loop) {
                record.fired.append(1)
                record.times[1] = TimerQueue.now()
                Self.stop(loop)
            }
            let b = LoopTimer(loop: loop) {
                record.fired.append(2)
                record.times[2] = TimerQueue.now()
            }
            a.start(after: 5)  // sets the timerfd for 5 ms
            b.start(after: 20)
            record.restartedAt = TimerQueue.now()
            a.start(after: 40)  // later: only the heap changes; the 5 ms wake-up finds nothing due
            record.active = [a.isActive, b.isActive]
            record.timers = [a, b]
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(record.fired == [2, 1])
        #expect(record.active == [true, true])
        #expect((record.times[2] ?? 0) >= record.started + 20_000_000)
        #expect((record.times[1] ?? 0) >= record.restartedAt + 40_000_000)
    }

    @Test func repeatingTimersRepeatAndCallbacksMayStopOrCloseTheirOwnTimer() {
        let thread = LoopThread()
        let record = Record()
        _ = thread.start { loop in
            var ticks = 0
            var repeating: LoopTimer?
            repeating = LoopTimer(loop: loop) {
                ticks += 1
                record.fired.append(ticks)
                if ticks == 5 {
                    repeating?.close()  // closes itself from its own callback
                    repeating = nil
                }
            }
            repeating!.start(after: 1, repeatingEvery: 2)
            let once = LoopTimer(loop: loop) {
                record.fired.append(100)
            }
            once.start(after: 3)
            once.stop()
            once.start(after: 4)  // started again after a stop: fires once
            let last = LoopTimer(loop: loop) {
                record.active = [once.isActive, once.isClosed]
                Self.stop(loop)
            }
            last.start(after: 60)
            record.timers = [once, last]
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(record.fired.filter { $0 != 100 } == [1, 2, 3, 4, 5])
        #expect(record.fired.filter { $0 == 100 }.count == 1)
        #expect(record.active == [false, false])
    }

    @Test func aTimerRestartedForNowFromItsCallbackDoesNotStarveTheOthers() {
        let thread = LoopThread()
        let record = Record()
        _ = thread.start { loop in
            var spins = 0
            var spinner: LoopTimer?
            spinner = LoopTimer(loop: loop) {
                spins += 1
                spinner?.start(after: 0)  // due again at once: runs on the next wake-up, not in this one
            }
            spinner!.start(after: 0)
            let other = LoopTimer(loop: loop) {
                record.fired.append(spins)
                spinner?.close()
                Self.stop(loop)
            }
            other.start(after: 10)
            record.timers = [spinner!, other]
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(record.fired.count == 1)
        #expect((record.fired.first ?? 0) > 0)
    }

    @Test func closedTimersDoNotStartAndTheQueueStopsWatchingWhenEmpty() {
        let thread = LoopThread()
        let record = Record()
        _ = thread.start { loop in
            let timer = LoopTimer(loop: loop) { record.fired.append(1) }
            timer.start(after: 1)
            record.pollingAfter.append(loop.timerQueue.isPolling)
            timer.close()
            record.pollingAfter.append(loop.timerQueue.isPolling)
            timer.start(after: 1)  // closed: does nothing
            record.active = [timer.isActive, timer.isClosed]
            record.pollingAfter.append(loop.timerQueue.isPolling)
            let stopper = LoopTimer(loop: loop) { Self.stop(loop) }
            stopper.start(after: 20)
            record.timers = [timer, stopper]
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(record.fired.isEmpty)
        #expect(record.active == [false, true])
        #expect(record.pollingAfter == [true, false, false])
    }

    @Test func manyTimersRestartedAtRandomFireOnceEachInDeadlineOrder() {
        let thread = LoopThread()
        let record = Record()
        // A deadline is known between two clock reads around `start` (the queue reads the clock in between):
        // `at` the earliest it can be, `latest` the latest.
        final class Deadlines: @unchecked Sendable {
            var at: [Int: UInt64] = [:]
            var latest: [Int: UInt64] = [:]
            var firedAt: [(Int, UInt64)] = []
        }
        let deadlines = Deadlines()
        let count = 300
        _ = thread.start { loop in
            var timers: [LoopTimer] = []
            for index in 0..<count {
                let timer = LoopTimer(loop: loop) {
                    deadlines.firedAt.append((index, TimerQueue.now()))
                    if deadlines.firedAt.count == count { Self.stop(loop) }
                }
                timers.append(timer)
            }
            // Every timer started, then a third of them restarted earlier or later: the heap's moves both ways.
            for round in 0..<2 {
                for index in 0..<count where round == 0 || index % 3 == 0 {
                    let delay = UInt64(1 + (index * 37 + round * 29) % 80)  // scattered, repeatable
                    deadlines.at[index] = TimerQueue.now() + delay * 1_000_000
                    timers[index].start(after: delay)
                    deadlines.latest[index] = TimerQueue.now() + delay * 1_000_000
                }
            }
            record.timers = timers
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(deadlines.firedAt.count == count)
        #expect(Set(deadlines.firedAt.map(\.0)).count == count)
        // Never early, and in the order of their deadlines: a timer fired before another only if its
        // earliest possible deadline is not after the other's latest (a preempted test thread widens the
        // bracket; it cannot reorder a heap that is right).
        #expect(deadlines.firedAt.allSatisfy { $0.1 + 1_000 >= deadlines.at[$0.0]! })
        let fired = deadlines.firedAt.map(\.0)
        #expect(zip(fired, fired.dropFirst()).allSatisfy { deadlines.at[$0]! <= deadlines.latest[$1]! })
    }
}
