// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// Work handed to the loop thread from any thread, run there in the order it was sent: the mechanism
/// under `LoopPost` (closures from the store's writer thread).
///
/// A pthread mutex guards the queue (TSan-clean, unlike a futex-based Mutex) and `uv_async_send` wakes
/// the loop; libuv coalesces wake-ups, so the async callback drains until the queue is empty, then
/// flushes the output the work queued. `close()` refuses further items, runs what is queued and
/// closes the handle; items sent after it are dropped.
class LoopWakeup {
    /// Called on the loop thread by the async callback.
    func drain() {}
}

final class LoopMailbox<Item>: LoopWakeup, @unchecked Sendable {
    // Immutable after init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let async: UnsafeMutablePointer<uv_async_t>
    private let run: (Item) -> Void

    // Guarded by `mutex`.
    private var queue: [Item] = []
    private var closed = false

    // Loop thread only.
    private var running: [Item] = []
    private var isDraining = false

    /// Loop thread. `run` is called on the loop thread for each item.
    init(loop: UnsafeMutablePointer<uv_loop_t>, run: @escaping (Item) -> Void) throws(LibUVError) {
        self.run = run
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        async = .allocate(capacity: 1)
        super.init()
        let result = uv_async_init(loop, async) { handle in
            Unmanaged<LoopWakeup>.fromOpaque(handle!.pointee.data).takeUnretainedValue().drain()
            owningEventLoop(of: handle!).flushPending()
        }
        if result != 0 {
            async.deallocate()
            throw LibUVError("uv_async_init", result)
        }
        // The handle keeps the mailbox alive until its close callback.
        async.pointee.data = Unmanaged.passRetained(self as LoopWakeup).toOpaque()
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Queues `item` for the loop thread. Any thread. Returns false (dropping it) once closed.
    @discardableResult
    func send(_ item: Item) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !closed else { return false }
        let wasEmpty = queue.isEmpty
        queue.append(item)
        // Under the lock, so close() cannot free the handle in between; a non-empty queue already has a
        // wake-up pending, and the coming drain picks this item up too.
        if wasEmpty { uv_async_send(async) }
        return true
    }

    /// Runs queued items until none are left, including those they send. An item that ends up here
    /// again (closing from inside an item) returns at once: the outer drain goes on, and no batch runs
    /// twice.
    override func drain() {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while true {
            pthread_mutex_lock(mutex)
            swap(&queue, &running)
            pthread_mutex_unlock(mutex)
            if running.isEmpty { return }
            for item in running { run(item) }
            running.removeAll(keepingCapacity: true)
        }
    }

    /// Refuses further items, runs what is queued and closes the handle. Loop thread, at shutdown.
    func close() {
        pthread_mutex_lock(mutex)
        let wasClosed = closed
        closed = true
        pthread_mutex_unlock(mutex)
        guard !wasClosed else { return }
        drain()
        uv_close(asHandle(async)) { handle in
            Unmanaged<LoopWakeup>.fromOpaque(handle!.pointee.data).release()
            handle!.deallocate()
        }
    }
}
