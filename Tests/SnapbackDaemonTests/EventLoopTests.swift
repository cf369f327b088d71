// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SnapbackDaemon

/// Runs a loop on its own thread; `body` runs on that thread before `uv_run`.
final class LoopThread: @unchecked Sendable {
    private var loop: EventLoop?
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private(set) var closeResult: Int32 = -1

    func start(_ body: @escaping @Sendable (EventLoop) -> Void = { _ in }) -> EventLoop {
        let thread = Thread { [self] in
            let loop = try! EventLoop()
            self.loop = loop
            body(loop)
            ready.signal()
            loop.run()
            closeResult = loop.close()
            done.signal()
        }
        thread.start()
        ready.wait()
        return loop!
    }

    func waitUntilStopped() -> Int32 {
        done.wait()
        return closeResult
    }
}

/// The loop on its own thread: its timers, and a clean close.
@Suite struct EventLoopTests {
    @Test func timersFireOnTheLoopThreadInDeadlineOrder() throws {
        let thread = LoopThread()
        let box = Box()
        let loop = thread.start { loop in
            var fired: [Int] = []
            var timers: [LoopTimer] = []
            for (index, delay) in [30, 10, 20].enumerated() {
                let timer = LoopTimer(loop: loop) {
                    precondition(loop.isOnLoopThread)
                    fired.append(index)
                    if fired.count == 3 {
                        box.fired = fired
                        timers.removeAll()  // deinit closes them
                        loop.closeAllTimers()
                        loop.closeOwnHandles()
                    }
                }
                timer.start(after: UInt64(delay))
                timers.append(timer)
            }
        }
        #expect(!loop.isOnLoopThread)
        #expect(thread.waitUntilStopped() == 0)
        #expect(box.fired == [1, 2, 0])
    }

    @Test func timersLeftOpenAreClosedAtShutdownAndTheLoopClosesCleanly() throws {
        let thread = LoopThread()
        let box = Box()
        _ = thread.start { loop in
            // Owned elsewhere and never closed by their owner.
            box.timers = (0..<5).map { _ in
                let timer = LoopTimer(loop: loop) {}
                timer.start(after: 60_000)
                return timer
            }
            let stopper = LoopTimer(loop: loop) {
                loop.closeAllTimers()
                loop.closeOwnHandles()
            }
            stopper.start(after: 5)
            box.stopper = stopper
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(box.timers.allSatisfy { $0.isClosed && !$0.isActive })
    }
}

final class Box: @unchecked Sendable {
    var fired: [Int] = []
    var timers: [LoopTimer] = []
    var stopper: LoopTimer?
}
