// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// The libuv loop and the loop-wide bookkeeping of the I/O shell: the open connections, the
/// connections with output to flush, and the timers to close at shutdown.
///
/// Loop-confined: create it on the thread that will run it and use it only there (libuv callbacks run
/// there; other threads reach the loop through ``LoopPost``).
public final class EventLoop {
    package let raw: UnsafeMutablePointer<uv_loop_t>
    /// The thread that created the loop and runs it.
    private let thread: pthread_t
    public let logger: Logger

    /// Flushes output queued by code that ran outside a libuv callback of this shell (a safety net:
    /// every callback here flushes on its way out).
    private let prepare: UnsafeMutablePointer<uv_prepare_t>
    private var isClosed = false

    /// Open connections by id, until their close callback.
    private(set) var connections: [UInt64: Connection] = [:]
    private var nextConnectionId: UInt64 = 1
    /// Called once when the last connection has closed, if set.
    var whenNoConnections: (() -> Void)?

    /// Connections with queued output, flushed at the end of the current callback.
    private var needingFlush: [Connection] = []

    /// Connections that have a deadline (Hello not yet done, or a frame partly received), in no order,
    /// and the one timer that checks them at the earliest deadline. A connection stays listed until a
    /// check finds it without a deadline (completing a frame or the handshake costs nothing) or until it
    /// closes: a closed connection leaves at once, so that the list never holds what a peer has given
    /// back (each entry keeps a connection and its read buffer alive).
    private var watched: [Connection] = []
    private var deadlineTimer: LoopTimer?
    /// Loop time (milliseconds) the deadline timer is set for; `.max` when it is not set.
    private var deadlineTimerAt: UInt64 = .max

    /// stderr. Checked before the loop sleeps: while log lines wait for it, a timer retries them.
    private let logSink = LogSink.standardError
    private var logRetryTimer: LoopTimer?
    /// Milliseconds between attempts to write the log backlog.
    private static let logRetryMilliseconds: UInt64 = 50

    /// Live timers, so a shutdown can close the ones their owners left open.
    private var timers: [ObjectIdentifier: LoopTimer.State] = [:]
    /// Where started timers wait for their deadline.
    let timerQueue: TimerQueue
    /// The daemon's counters, when a service counts on this loop: the loop's own histograms (timer lag,
    /// the time a connection's read takes) go there.
    public var metrics: DaemonMetrics? {
        didSet { timerQueue.metrics = metrics }
    }

    public init(logger: Logger = Logger()) throws(LibUVError) {
        self.logger = logger
        raw = .allocate(capacity: 1)
        let result = uv_loop_init(raw)
        if result != 0 {
            raw.deallocate()
            throw LibUVError("uv_loop_init", result)
        }
        thread = pthread_self()
        do {
            timerQueue = try TimerQueue(loop: raw)
        } catch {
            uv_loop_close(raw)
            raw.deallocate()
            throw error
        }
        prepare = .allocate(capacity: 1)
        uv_prepare_init(raw, prepare)
        raw.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_prepare_start(prepare) { handle in
            let loop = owningEventLoop(of: handle!)
            loop.flushPending()
            if loop.logSink.hasBacklog { loop.retryLogBacklog() }
        }
        // Must not keep the loop alive on its own.
        uv_unref(asHandle(prepare))
    }

    deinit {
        // If uv_loop_close failed, libuv still points into this memory: leaking it is the safe choice.
        if isClosed {
            raw.deallocate()
        }
    }

    /// True on the loop's thread.
    public var isOnLoopThread: Bool { pthread_self() == thread }

    /// Runs until no referenced handle is left (after a shutdown) or ``stop()`` is called.
    public func run() {
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// Makes ``run()`` return after the current iteration, with handles still open.
    public func stop() {
        uv_stop(raw)
    }

    // MARK: Connections

    func makeConnectionId() -> UInt64 {
        defer { nextConnectionId += 1 }
        return nextConnectionId
    }

    func register(_ connection: Connection) {
        connections[connection.id] = connection
    }

    func unregister(_ connection: Connection) {
        connections[connection.id] = nil
        if connections.isEmpty, let body = whenNoConnections {
            whenNoConnections = nil
            body()
        }
    }

    /// Makes sure `connection`'s deadline is checked when it comes (see ``Connection/deadline``).
    func watch(_ connection: Connection) {
        guard let deadline = connection.deadline else { return }
        if connection.watchIndex < 0 {
            connection.watchIndex = watched.count
            watched.append(connection)
        }
        if deadline < deadlineTimerAt {
            setDeadlineTimer(at: deadline)
        }
    }

    /// Takes `connection` off the deadline list, if it is there (the last entry takes its place).
    func unwatch(_ connection: Connection) {
        let index = connection.watchIndex
        guard index >= 0 else { return }
        connection.watchIndex = -1
        let last = watched.removeLast()
        if index < watched.count {
            watched[index] = last
            last.watchIndex = index
        }
    }

    private func setDeadlineTimer(at deadline: UInt64) {
        let timer = deadlineTimer ?? LoopTimer(loop: self) { [unowned self] in self.checkDeadlines() }
        deadlineTimer = timer
        let now = uv_now(raw)
        timer.start(after: deadline > now ? deadline - now : 0)
        deadlineTimerAt = deadline
    }

    /// Closes the connections whose deadline passed, forgets those that have none any more, and sets
    /// the timer for the earliest deadline left.
    private func checkDeadlines() {
        deadlineTimerAt = .max
        // The loop's clock as of this wake-up, refreshed: the timer fires on the exact monotonic clock.
        uv_update_time(raw)
        let now = uv_now(raw)
        var earliest = UInt64.max
        var index = 0
        while index < watched.count {
            let connection = watched[index]
            if connection.isOpen, !connection.closeIfOverdue(now: now), let deadline = connection.deadline {
                earliest = min(earliest, deadline)
                index += 1
            } else {
                unwatch(connection)
            }
        }
        if earliest != .max {
            setDeadlineTimer(at: earliest)
        }
    }

    func setNeedsFlush(_ connection: Connection) {
        guard !connection.needsFlush else { return }
        connection.needsFlush = true
        needingFlush.append(connection)
    }

    /// Writes every connection's queued output: one write per connection for all the frames queued
    /// during the current callback. Every libuv callback of the shell calls it on its way out.
    public func flushPending() {
        // Last in, first out: the order among connections does not matter, and popLast() is cheaper than
        // walking the list and emptying it (this runs on every callback). flush() never queues output,
        // but a connection may be in the list twice; its flag says whether it still has work.
        while let connection = needingFlush.popLast() {
            if connection.needsFlush {
                connection.flush()
            }
        }
    }

    /// Log lines wait for stderr: retry them every ``logRetryMilliseconds`` until they are written.
    private func retryLogBacklog() {
        if let timer = logRetryTimer, timer.isActive || timer.isClosed { return }
        let timer =
            logRetryTimer
            ?? LoopTimer(loop: self) { [unowned self] in
                self.logSink.flush()
                if !self.logSink.hasBacklog { self.logRetryTimer?.stop() }
            }
        logRetryTimer = timer
        timer.start(after: Self.logRetryMilliseconds, repeatingEvery: Self.logRetryMilliseconds)
    }

    // MARK: Timers

    func register(_ timer: LoopTimer.State) {
        timers[ObjectIdentifier(timer)] = timer
    }

    func unregister(_ timer: LoopTimer.State) {
        timers[ObjectIdentifier(timer)] = nil
    }

    /// Closes every timer still open; returns how many there were.
    @discardableResult
    func closeAllTimers() -> Int {
        let open = Array(timers.values)
        for timer in open {
            timer.close()
        }
        return open.count
    }

    // MARK: Shutdown

    /// Closes the loop's own handles (the timers' timerfd and the flush safety
    /// net). The last step of a shutdown, after every other handle and timer was closed.
    func closeOwnHandles() {
        flushPending()
        deadlineTimer?.close()
        deadlineTimer = nil
        logRetryTimer?.close()
        logRetryTimer = nil
        for connection in watched { connection.watchIndex = -1 }
        watched = []
        timerQueue.close()
        if uv_is_closing(asHandle(prepare)) == 0 {
            uv_close(asHandle(prepare)) { handle in
                handle!.deallocate()
            }
        }
    }

    /// Runs the loop once more until every close callback has run.
    func runUntilClosed() {
        uv_run(raw, UV_RUN_DEFAULT)
    }

    /// `uv_loop_close`: 0, or UV_EBUSY when a handle is still open (each is then logged).
    func close() -> Int32 {
        let result = uv_loop_close(raw)
        if result == 0 {
            isClosed = true
        } else {
            logOpenHandles()
        }
        return result
    }

    private func logOpenHandles() {
        let logger = self.logger
        withUnsafePointer(to: logger) { loggerPointer in
            uv_walk(
                raw,
                { handle, argument in
                    let logger = argument!.assumingMemoryBound(to: Logger.self).pointee
                    let type = String(cString: uv_handle_type_name(uv_handle_get_type(handle)))
                    let state = uv_is_closing(handle) != 0 ? "closing" : (uv_is_active(handle) != 0 ? "active" : "inactive")
                    logger.error("handle still open at exit: \(type) (\(state))")
                }, UnsafeMutableRawPointer(mutating: loggerPointer))
        }
    }
}
