// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

/// The eventfd that wakes the agent's loop: written by libnats's threads (a connection lost, back or
/// closed, an error the server sent) and by the watcher's pump (an entry of the bucket), read by the
/// loop's poll. Writing it from any thread is one system call.
final class Wakeup: @unchecked Sendable {
    let fd: Int32

    init() throws(AgentError) {
        fd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard fd >= 0 else { throw AgentError(description: "eventfd: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    func signal() {
        var one: UInt64 = 1
        // Only EAGAIN can fail it (the counter at its top): the loop has a wake-up waiting anyway.
        _ = write(fd, &one, 8)
    }

    /// Takes the wake-ups written so far (the loop then looks at everything that may have changed).
    func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, 8)
    }
}

/// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread made after (call it before the
/// NATS client makes its own), and ignores SIGPIPE; returns the stop signals, for a signalfd or sigwait.
public func blockStopSignals() -> sigset_t {
    var stopSignals = sigset_t()
    sigemptyset(&stopSignals)
    sigaddset(&stopSignals, SIGTERM)
    sigaddset(&stopSignals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
    signal(SIGPIPE, SIG_IGN)
    return stopSignals
}

/// The stop signals (SIGTERM, SIGINT) as a descriptor of the loop's poll: blocked in every thread (the
/// process blocks them before libnats makes its threads), read here.
final class StopSignals {
    let fd: Int32

    init(_ signals: sigset_t) throws(AgentError) {
        var set = signals
        fd = signalfd(-1, &set, Int32(SFD_CLOEXEC) | Int32(SFD_NONBLOCK))
        guard fd >= 0 else { throw AgentError(description: "signalfd: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Whether a stop signal arrived (it is consumed).
    func received() -> Bool {
        var info = signalfd_siginfo()
        return read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size
    }
}

/// The agent's timers: one deadline each at most, set only while there is something to wait for (a
/// reconnection's backoff, the offline state coming, the publish rate), none at idle. The loop sleeps in
/// its poll until the earliest one or an event. A new timer is a case here and a line of
/// ``SyncAgent`` `timers(now:)` that says when it is due.
struct AgentTimers: Equatable {
    enum Timer: Int, CaseIterable {
        /// snapbackd is tried again (its backoff).
        case snapbackd
        /// NATS is tried again after a failed call.
        case nats
        /// The status turns offline.
        case offline
        /// The publish rate lets the next entry go.
        case publish
        /// The next telemetry report is due, or its publish is tried again (``TelemetryReporter``).
        case telemetry
    }

    private var deadlines = [ContinuousClock.Instant?](repeating: nil, count: Timer.allCases.count)
    /// Work is left for the next turn (more than a turn's share): the poll only takes what is ready.
    var again = false

    subscript(timer: Timer) -> ContinuousClock.Instant? {
        get { deadlines[timer.rawValue] }
        set { deadlines[timer.rawValue] = newValue }
    }

    var earliest: ContinuousClock.Instant? { deadlines.compactMap { $0 }.min() }

    /// The poll's timeout in milliseconds: -1 (an event only) with no timer, 0 with work left, else the
    /// time to the earliest deadline rounded up (a poll that returns early would turn for nothing).
    func pollTimeout(now: ContinuousClock.Instant) -> Int32 {
        if again { return 0 }
        guard let earliest else { return -1 }
        let remaining = now.duration(to: earliest)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
