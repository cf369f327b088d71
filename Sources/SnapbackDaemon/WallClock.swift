// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The system's clocks in seconds: the wall clock, which dates things and may be stepped, and the
/// boot clock, which measures durations (see ``ServiceClock``).
public enum WallClock {
    /// Seconds since the Unix epoch (CLOCK_REALTIME).
    public static func now() -> Double { read(CLOCK_REALTIME) }

    /// Seconds since boot, sleep included (CLOCK_BOOTTIME): never stepped, and a box woken from standby
    /// has had its cooldowns and retention run on.
    public static func monotonic() -> Double { read(CLOCK_BOOTTIME) }

    private static func read(_ id: clockid_t) -> Double {
        var spec = timespec()
        clock_gettime(id, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }
}

/// The daemon's ``ServiceClock``: wall time from `CLOCK_REALTIME`, durations from `CLOCK_BOOTTIME`,
/// timers on the loop's monotonic ``TimerQueue``.
public final class LoopClock: ServiceClock {
    private let loop: EventLoop
    public init(loop: EventLoop) { self.loop = loop }
    public func now() -> Double { WallClock.now() }
    public func monotonic() -> Double { WallClock.monotonic() }
    public func makeTimer(_ callback: @escaping () -> Void) -> any ServiceTimer { LoopTimer(loop: loop, callback) }
}

extension LoopTimer: ServiceTimer {}
