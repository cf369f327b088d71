import Foundation
@testable import SnapbackDaemon
import Testing

/// An actor that lives on the loop, as TimelineService does.
actor LoopActor {
    let loop: EventLoop
    var counter = 0
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
    init(loop: EventLoop) { self.loop = loop }

    func increment() -> Bool {
        counter += 1
        return loop.isOnLoopThread
    }

    /// Closes the loop's own handles so `run()` returns.
    func stopLoop() {
        loop.closeAllTimers()
        loop.closeOwnHandles()
    }
}

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

@Suite struct LoopExecutorTests {
    @Test func jobsFromOtherThreadsRunOnTheLoopThread() async throws {
        let thread = LoopThread()
        let loop = thread.start()
        let actor = LoopActor(loop: loop)
        #expect(!loop.isOnLoopThread)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<2000 {
                group.addTask { await actor.increment() }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 2000)
        #expect(results.allSatisfy { $0 })
        #expect(await actor.counter == 2000)
        await actor.stopLoop()
        #expect(thread.waitUntilStopped() == 0)
    }

    @Test func timerCallbacksEnterTheActorWithAssumeIsolated() async throws {
        let thread = LoopThread()
        let box = Box()
        let loop = thread.start { loop in
            let actor = LoopActor(loop: loop)
            box.actor = actor
            var fired: [Int] = []
            var timers: [LoopTimer] = []
            for (index, delay) in [30, 10, 20].enumerated() {
                let timer = LoopTimer(loop: loop) {
                    fired.append(index)
                    _ = actor.assumeIsolated { $0.increment() }
                    if fired.count == 3 {
                        box.fired = fired
                        timers.removeAll()  // deinit closes them
                        actor.assumeIsolated { $0.stopLoop() }
                    }
                }
                timer.start(after: UInt64(delay))
                timers.append(timer)
            }
        }
        #expect(thread.waitUntilStopped() == 0)
        #expect(box.fired == [1, 2, 0])
        _ = loop
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
    var actor: LoopActor?
    var fired: [Int] = []
    var timers: [LoopTimer] = []
    var stopper: LoopTimer?
}
