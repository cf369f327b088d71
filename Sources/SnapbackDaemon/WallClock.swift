import Glibc

/// Wall-clock time, which the timeline takes with every event (ad schedules and bookmarks are in
/// wall time). Timers use the loop's monotonic clock instead.
public enum WallClock {
    /// Seconds since the Unix epoch (CLOCK_REALTIME).
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }
}

/// The daemon's ``ServiceClock``: wall time from `CLOCK_REALTIME`, timers on the loop's monotonic
/// ``TimerQueue``.
public final class LoopClock: ServiceClock {
    private let loop: EventLoop
    public init(loop: EventLoop) { self.loop = loop }
    public func now() -> Double { WallClock.now() }
    public func makeTimer(_ callback: @escaping () -> Void) -> any ServiceTimer { LoopTimer(loop: loop, callback) }
}

extension LoopTimer: ServiceTimer {}
