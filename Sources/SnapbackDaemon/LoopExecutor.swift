import CLibUV
import Glibc

/// A serial executor whose jobs run on the libuv loop thread.
///
/// An actor that must live on the loop (the timeline service) declares
///
/// ```swift
/// nonisolated var unownedExecutor: UnownedSerialExecutor { loopExecutor.asUnownedSerialExecutor() }
/// ```
///
/// and libuv callbacks, already on the loop thread, enter it synchronously with
/// `service.assumeIsolated { ... }`: no hop and no Task per frame (a hop costs as much as a whole
/// round trip). This executor only carries work that arrives from elsewhere: `await`s on the actor
/// from other threads and continuations resumed off the loop.
///
/// Jobs are queued under a pthread mutex (TSan-clean, unlike a futex-based Mutex) and the loop is woken
/// with `uv_async_send`; libuv coalesces wake-ups, so the async callback drains until the queue is
/// empty.
public final class LoopExecutor: SerialExecutor, @unchecked Sendable {
    // Immutable after init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let async: UnsafeMutablePointer<uv_async_t>
    private let thread: pthread_t

    // Guarded by `mutex`.
    private var queue: [UnownedJob] = []
    private var closed = false

    // Loop thread only.
    private var running: [UnownedJob] = []
    private var isDraining = false

    /// Must be called on the thread that will run the loop.
    init(loop: UnsafeMutablePointer<uv_loop_t>) throws(LibUVError) {
        thread = pthread_self()
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        async = .allocate(capacity: 1)
        let result = uv_async_init(loop, async) { handle in
            let executor = Unmanaged<LoopExecutor>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            executor.drain()
            owningEventLoop(of: handle!).flushPending()
        }
        if result != 0 {
            async.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            throw LibUVError("uv_async_init", result)
        }
        // The handle keeps the executor alive until its close callback.
        async.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !closed else {
            // The loop is gone; nothing could ever run the job.
            return
        }
        let wasEmpty = queue.isEmpty
        queue.append(job)
        // Sent under the lock so that close() cannot free the handle in between. An empty queue means
        // no wake-up is pending yet; otherwise the coming drain picks this job up too.
        if wasEmpty {
            uv_async_send(async)
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// True on the thread running the loop.
    public var isOnLoopThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

    public func checkIsolated() {
        precondition(isOnLoopThread, "expected to run on the libuv loop thread")
    }

    public func isIsolatingCurrentContext() -> Bool? {
        isOnLoopThread
    }

    /// Runs queued jobs until none are left, including jobs those jobs enqueue. A job that ends up
    /// here again (closing the loop from actor code) returns at once: the outer drain goes on.
    func drain() {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while true {
            pthread_mutex_lock(mutex)
            swap(&queue, &running)
            pthread_mutex_unlock(mutex)
            if running.isEmpty { return }
            let executor = asUnownedSerialExecutor()
            for job in running {
                job.runSynchronously(on: executor)
            }
            running.removeAll(keepingCapacity: true)
        }
    }

    /// Refuses further jobs, runs what is queued and closes the async handle. Loop thread only, at the
    /// end of a shutdown.
    func close() {
        pthread_mutex_lock(mutex)
        let wasClosed = closed
        closed = true
        pthread_mutex_unlock(mutex)
        guard !wasClosed else { return }
        drain()
        uv_close(asHandle(async)) { handle in
            Unmanaged<LoopExecutor>.fromOpaque(handle!.pointee.data).release()
            handle!.deallocate()
        }
    }
}
