// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon

/// Time that moves only when told to: a wall clock and a monotonic clock that ``advance(by:)`` moves
/// together, firing the timers due on the way in deadline order, and that ``stepWall(by:)`` and
/// ``setWall(to:)`` set apart, as NTP or an operator steps a box's clock.
public final class ManualClock: ServiceClock {
    /// Wall time.
    public private(set) var time: Double
    /// Monotonic time: timers run on it.
    public private(set) var monotonicTime: Double
    private var timers: [Timer] = []
    private var created = 0
    /// Timer callbacks run so far (a clock step must not set off a storm of them).
    public private(set) var firings = 0

    /// `monotonic` defaults to the wall time, so that a test of durations alone reads one clock.
    public init(at time: Double = 1_800_000_000, monotonic: Double? = nil) {
        self.time = time
        self.monotonicTime = monotonic ?? time
    }

    public func now() -> Double { time }
    public func monotonic() -> Double { monotonicTime }

    public func makeTimer(_ callback: @escaping () -> Void) -> any ServiceTimer {
        created += 1
        let timer = Timer(clock: self, order: created, callback: callback)
        timers.append(timer)
        return timer
    }

    /// Timers started and not yet fired, stopped or closed.
    public var activeTimers: Int { timers.count { $0.deadline != nil } }
    /// Timers made and not yet closed (closed ones are let go at the next ``advance(by:)``).
    public var liveTimers: Int { timers.count { $0.callback != nil } }

    /// Moves time forward by `seconds`, firing every timer due on the way (those a callback starts
    /// within the span fire too), each with the clocks at its deadline.
    public func advance(by seconds: Double) {
        let target = monotonicTime + max(0, seconds.isFinite ? seconds : 0)
        while let next = timers.filter({ $0.deadline != nil && $0.deadline! <= target })
            .min(by: { ($0.deadline!, $0.order) < ($1.deadline!, $1.order) })
        {
            let at = max(monotonicTime, next.deadline!)
            time += at - monotonicTime
            monotonicTime = at
            next.deadline = nil
            firings += 1
            next.callback?()
        }
        time += target - monotonicTime
        monotonicTime = target
        timers.removeAll { $0.callback == nil }
    }

    /// Steps the wall clock by `seconds` (back when negative); monotonic time and timers do not move.
    public func stepWall(by seconds: Double) {
        time += seconds
    }

    /// Sets the wall clock; monotonic time and timers do not move.
    public func setWall(to time: Double) {
        self.time = time
    }

    final class Timer: ServiceTimer {
        unowned let clock: ManualClock
        let order: Int
        var callback: (() -> Void)?
        var deadline: Double?

        init(clock: ManualClock, order: Int, callback: @escaping () -> Void) {
            self.clock = clock
            self.order = order
            self.callback = callback
        }

        func start(afterSeconds seconds: Double) {
            guard callback != nil else { return }
            // As LoopTimer: whole milliseconds, rounded up, NaN and negatives at once.
            deadline = clock.monotonicTime + Double(LoopTimer.milliseconds(seconds)) / 1000
        }

        func stop() { deadline = nil }

        func close() {
            callback = nil
            deadline = nil
        }

        var isActive: Bool { deadline != nil }
    }
}
