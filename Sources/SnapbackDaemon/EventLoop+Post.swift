import CLibUV
import Glibc

/// Runs closures posted from other threads on the loop thread, in the order they were posted: how the
/// store's writer thread hands commit results back (`SQLiteViewerStateStore(post: context.post.post)`),
/// without SnapbackStore importing libuv.
///
/// A pthread mutex guards the queue (TSan-clean); `uv_async_send` wakes the loop, and because libuv
/// coalesces wake-ups the async callback drains until the queue is empty, then flushes the output the
/// closures queued. The daemon creates one in `setUp` (``DaemonContext/post``) and closes it in its
/// last step, after the handler's `shutdown()`: closing runs what is still queued, then closes the
/// handle; later posts are dropped.
public final class LoopPost: @unchecked Sendable {
    // Immutable after init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let async: UnsafeMutablePointer<uv_async_t>
    private unowned let loop: EventLoop

    // Guarded by `mutex`.
    private var queue: [@Sendable () -> Void] = []
    private var closed = false

    // Loop thread only.
    private var running: [@Sendable () -> Void] = []
    /// Loop thread only: set while `drain` runs.
    private var isDraining = false

    /// Loop thread.
    public init(loop: EventLoop) throws(LibUVError) {
        precondition(loop.isOnLoopThread, "LoopPost must be created on the loop thread")
        self.loop = loop
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        async = .allocate(capacity: 1)
        let result = uv_async_init(loop.raw, async) { handle in
            let post = Unmanaged<LoopPost>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            post.drain()
            owningEventLoop(of: handle!).flushPending()
        }
        if result != 0 {
            async.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            throw LibUVError("uv_async_init", result)
        }
        // The handle keeps this object alive until its close callback.
        async.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Queues `body` to run on the loop thread. Any thread. Dropped once the post is closed.
    public func post(_ body: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !closed else { return }
        let wasEmpty = queue.isEmpty
        queue.append(body)
        // Under the lock, so close() cannot free the handle in between; a non-empty queue already has
        // a wake-up pending.
        if wasEmpty {
            uv_async_send(async)
        }
    }

    /// Runs queued closures until none are left, including those they post. Loop thread.
    func drain() {
        // A closure that closes the post (or drains it again) must not run the batch in hand twice.
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while true {
            pthread_mutex_lock(mutex)
            swap(&queue, &running)
            pthread_mutex_unlock(mutex)
            if running.isEmpty { return }
            for body in running {
                body()
            }
            running.removeAll(keepingCapacity: true)
        }
    }

    /// Refuses further posts, runs what is queued and closes the handle. Loop thread, at shutdown.
    public func close() {
        pthread_mutex_lock(mutex)
        let wasClosed = closed
        closed = true
        pthread_mutex_unlock(mutex)
        guard !wasClosed else { return }
        drain()
        loop.flushPending()
        uv_close(asHandle(async)) { handle in
            Unmanaged<LoopPost>.fromOpaque(handle!.pointee.data).release()
            handle!.deallocate()
        }
    }
}
