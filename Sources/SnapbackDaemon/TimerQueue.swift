// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// The loop's timers: a min-heap of deadlines behind one `timerfd` that libuv polls like any socket.
///
/// Why not `uv_timer_t`: with a libuv timer active, every `epoll_wait` gets a finite timeout, and the
/// kernel then arms and cancels an hrtimer each time the loop sleeps — measured here at about 0.5 µs per
/// wake-up, a tenth of the daemon's whole cost on a round trip. A playing session always has a timer
/// (its break end or its periodic bookmark), so that was every message. With the timerfd, `epoll_wait`
/// sleeps without a timeout and the timer costs a syscall only when the earliest deadline moves earlier:
/// restarting a timer later (the break-end timer on every seek) only updates the heap, and the timerfd,
/// left at the earlier deadline, wakes the loop once to be set again.
///
/// While the heap is not empty the poll handle is active and keeps the loop alive, as active libuv
/// timers do; an empty queue lets `uv_run` return. Loop-confined.
final class TimerQueue {
    private let fd: Int32
    private let poll: UnsafeMutablePointer<uv_poll_t>
    private var heap: [LoopTimer.State] = []
    /// The absolute `CLOCK_MONOTONIC` time the timerfd is set to; `.max` when it is not set.
    private var armedAt: UInt64 = .max
    private var isClosed = false
    /// Where the loop's lag goes (`snapbackd_loop_lag_seconds`), if anywhere.
    var metrics: DaemonMetrics?

    init(loop: UnsafeMutablePointer<uv_loop_t>) throws(LibUVError) {
        fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw LibUVError("timerfd_create", uv_translate_sys_error(errno)) }
        poll = .allocate(capacity: 1)
        let result = uv_poll_init(loop, poll, fd)
        guard result == 0 else {
            poll.deallocate()
            Glibc.close(fd)
            throw LibUVError("uv_poll_init", result)
        }
        poll.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Whether libuv watches the timerfd: while timers are queued.
    var isPolling: Bool { !isClosed && uv_is_active(asHandle(poll)) != 0 }

    /// The monotonic clock in nanoseconds: the timers' time base.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Queues `timer` at `deadline`, or moves it there if it is queued.
    func schedule(_ timer: LoopTimer.State, at deadline: UInt64) {
        guard !isClosed else { return }  // shutting down: nothing fires any more
        timer.deadline = deadline
        if timer.heapIndex >= 0 {
            if heap.count > 1 { siftDown(siftUp(timer.heapIndex)) }
        } else {
            timer.heapIndex = heap.count
            heap.append(timer)
            siftUp(timer.heapIndex)
        }
        if deadline < armedAt { arm(deadline) }
        if !isPolling { startPolling() }
    }

    /// Takes `timer` out of the queue if it is there.
    func remove(_ timer: LoopTimer.State) {
        let index = timer.heapIndex
        guard index >= 0 else { return }
        timer.heapIndex = -1
        let last = heap.removeLast()
        if index < heap.count {
            heap[index] = last
            last.heapIndex = index
            siftDown(siftUp(index))
        }
        // The timerfd stays set: if it goes off first, `fire()` finds nothing due and sets it again.
        if heap.isEmpty && isPolling { stopPolling() }
    }

    /// Runs every timer that is due, then sets the timerfd for the next one.
    private func fire() {
        var expirations: UInt64 = 0
        _ = read(fd, &expirations, MemoryLayout<UInt64>.size)  // EAGAIN when woken for nothing: fine
        armedAt = .max  // a one-shot timerfd that went off is no longer set
        let now = Self.now()
        // The loop's lag: how late the first due timer runs, against its deadline, once per wake-up (the
        // others due with it are as late or less). Timers, not the requests, because their due time is
        // known: a request's arrival time is not, short of a clock read per request. Not enough to arm the
        // counters' write by itself (that write is a timer, whose lag would arm the next one forever):
        // it goes with the next write.
        if let metrics, let first = heap.first, first.deadline <= now {
            metrics.observe(.loopLag, nanoseconds: now &- first.deadline, marksDirty: false)
        }
        // Timers started by a callback for "now" run on the next wake-up, so a callback that restarts
        // itself cannot keep the loop here.
        while let first = heap.first, first.deadline <= now {
            if first.interval > 0 {
                schedule(first, at: now &+ first.interval)
            } else {
                remove(first)
            }
            first.fire()
        }
        if let first = heap.first {
            if first.deadline < armedAt { arm(first.deadline) }
        } else if isPolling {
            stopPolling()
        }
    }

    private func arm(_ deadline: UInt64) {
        // Set as a delay from now, not as the absolute time: libfaketime (which tests and operators preload
        // to set a box's wall clock off) moves an absolute deadline by its offset even on CLOCK_MONOTONIC,
        // and with the clock ten minutes behind, a timer due in a millisecond fired ten minutes late.
        // 0 would disarm the timerfd; a deadline already passed fires at once.
        let now = Self.now()
        let delay = max(deadline > now ? deadline &- now : 0, 1)
        var value = itimerspec()
        value.it_value.tv_sec = Int(delay / 1_000_000_000)
        value.it_value.tv_nsec = Int(delay % 1_000_000_000)
        if timerfd_settime(fd, 0, &value, nil) == 0 {
            armedAt = deadline
        } else {
            // Not expected with a valid fd and time; the next schedule() tries again.
            armedAt = .max
        }
    }

    private func startPolling() {
        uv_poll_start(poll, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            let queue = Unmanaged<TimerQueue>.fromOpaque(handle!.pointee.data!).takeUnretainedValue()
            queue.fire()
        }
    }

    private func stopPolling() {
        uv_poll_stop(poll)
    }

    /// Closes the poll handle and the timerfd (after libuv's close callback, as libuv requires). Every
    /// timer must have been closed first.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for timer in heap { timer.heapIndex = -1 }
        heap = []
        uv_close(asHandle(poll)) { handle in
            var fd: uv_os_fd_t = -1
            if uv_fileno(handle, &fd) == 0 { Glibc.close(fd) }
            handle!.deallocate()
        }
    }

    // MARK: Heap

    /// Moves the timer at `start` towards the root while it is earlier than its parent; returns where it
    /// ends. Reads only when it is in place (the usual case: the one timer of a session restarted).
    @discardableResult
    private func siftUp(_ start: Int) -> Int {
        let timer = heap[start]
        let deadline = timer.deadline
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            let above = heap[parent]
            guard deadline < above.deadline else { break }
            heap[index] = above
            above.heapIndex = index
            index = parent
        }
        if index != start {
            heap[index] = timer
            timer.heapIndex = index
        }
        return index
    }

    private func siftDown(_ start: Int) {
        let timer = heap[start]
        let deadline = timer.deadline
        let count = heap.count
        var index = start
        while true {
            var child = 2 * index + 1
            guard child < count else { break }
            if child + 1 < count && heap[child + 1].deadline < heap[child].deadline { child += 1 }
            let below = heap[child]
            guard below.deadline < deadline else { break }
            heap[index] = below
            below.heapIndex = index
            index = child
        }
        if index != start {
            heap[index] = timer
            timer.heapIndex = index
        }
    }
}
