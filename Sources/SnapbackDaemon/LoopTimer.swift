// SPDX-License-Identifier: Apache-2.0
/// A one-shot or repeating timer on the loop calling a closure on the loop thread (the loop's
/// ``TimerQueue``: one timerfd for all timers, so `epoll_wait` never needs a timeout).
///
/// One Swift owner: the timer is closed when ``close()`` is called or when the owner lets go of it,
/// whichever comes first. The callback is released on close, so a callback that captures its owner
/// does not keep it alive past ``close()`` (but does until then: capture `unowned` or call
/// ``close()``). A shutdown closes timers their owners left open; ``start(after:repeatingEvery:)`` on a
/// closed timer does nothing.
///
/// Loop-confined: create, start and close it on the loop thread.
public final class LoopTimer {
    /// The queue's record of the timer; the loop keeps it until it is closed.
    final class State {
        unowned let loop: EventLoop
        var callback: (() -> Void)?
        var isClosed = false
        /// Absolute `CLOCK_MONOTONIC` nanoseconds; meaningful while queued.
        var deadline: UInt64 = 0
        /// Nanoseconds between firings of a repeating timer; 0 for a one-shot.
        var interval: UInt64 = 0
        /// Position in the queue's heap; -1 when not queued.
        var heapIndex = -1

        init(loop: EventLoop, callback: @escaping () -> Void) {
            self.loop = loop
            self.callback = callback
            loop.register(self)
        }

        func fire() {
            // A local reference: the callback may close this timer (and so release itself) while it runs.
            if let callback {
                callback()
            }
            loop.flushPending()
        }

        func close() {
            guard !isClosed else { return }
            isClosed = true
            callback = nil
            loop.timerQueue.remove(self)
            loop.unregister(self)
        }
    }

    private let state: State

    /// Creates a stopped timer.
    public init(loop: EventLoop, _ callback: @escaping () -> Void) {
        precondition(loop.isOnLoopThread, "LoopTimer must be created on the loop thread")
        state = State(loop: loop, callback: callback)
    }

    deinit {
        state.close()
    }

    /// Fires once after `milliseconds` from now (the monotonic clock), then every `repeatingEvery`
    /// milliseconds if non-zero. Restarts a running timer.
    public func start(after milliseconds: UInt64, repeatingEvery interval: UInt64 = 0) {
        guard !state.isClosed else { return }
        // Clamped so the nanosecond sums below cannot wrap into a deadline in the past.
        let limit = UInt64(Self.maxDelay * 1000)
        state.interval = min(interval, limit) * 1_000_000
        state.loop.timerQueue.schedule(state, at: TimerQueue.now() &+ min(milliseconds, limit) * 1_000_000)
    }

    /// Fires once after `seconds` (rounded up to the millisecond). Whatever the value — NaN, negative,
    /// 1e300 — the conversion cannot trap: it is clamped to 0…`maxDelay` first (the timeline's inputs are
    /// bounded, this is the second line of defence).
    public func start(afterSeconds seconds: Double) {
        start(after: Self.milliseconds(seconds))
    }

    /// About 31 years: far beyond any deadline a bounded timeline asks for.
    static let maxDelay: Double = 1e9

    /// Rounded up, without `rounded(.up)`: on x86-64's baseline that is a call into libm's `ceil`, whose
    /// page in the static executable the round trip would run for this alone (`make check-budget`
    /// counts the pages of code each round trip runs).
    package static func milliseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }  // also NaN
        let exact = min(seconds, maxDelay) * 1000  // ≤ 1e12: every whole number below is exact
        let whole = UInt64(exact)
        return Double(whole) < exact ? whole + 1 : whole
    }

    /// Stops the timer; it can be started again.
    public func stop() {
        guard !state.isClosed else { return }
        state.loop.timerQueue.remove(state)
    }

    /// Whether the timer is started and has not fired (or repeats).
    public var isActive: Bool {
        !state.isClosed && state.heapIndex >= 0
    }

    /// Closes the timer for good and releases the callback.
    public func close() {
        state.close()
    }

    public var isClosed: Bool { state.isClosed }
}
