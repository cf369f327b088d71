// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackDaemon

/// Work too long for a turn of the loop (the 5 ms stall rule), run away from it: one worker thread,
/// started at the first job, runs the jobs in the order they came, at a nice value ``niceness`` above
/// the loop's, and a ``LoopPost`` brings each result back to the loop thread, where its completion runs.
/// snapback-web reads the manifests pages send (`readCues`) on it. The bridge's own, not the daemon's:
/// snapbackd has no work of that length.
///
/// Loop-confined but for the job queue and the post, which the worker thread uses.
final class LoopWorker {
    /// The worker thread's nice value above the loop thread's.
    static let niceness: Int32 = 10

    private let loop: EventLoop
    private var worker: (jobs: JobQueue, thread: pthread_t, post: LoopPost)?
    private var closed = false

    /// Loop thread. Nothing is started until the first job.
    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Runs `work` on the worker thread and `completion` with its result later on the loop thread, in
    /// the order of the calls. Returns false, without running either, when it takes no more work
    /// (closed, or no thread could be started): the caller does the work itself.
    func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result, completion: @escaping (Result) -> Void)
        -> Bool
    {
        precondition(loop.isOnLoopThread, "LoopWorker used off the loop thread")
        guard !closed, let worker = startedWorker() else { return false }
        // The completion is the loop thread's: it only travels through the worker to come back there.
        let back = LoopOnly(completion)
        let post = worker.post
        worker.jobs.push {
            let result = work()
            post.post { back.value(result) }
        }
        return true
    }

    /// Takes no more work; the job running finishes (its result is dropped), those waiting are not run.
    /// Loop thread, at shutdown.
    func close() {
        closed = true
        guard let worker else { return }
        self.worker = nil
        worker.jobs.close()
        pthread_join(worker.thread, nil)
        worker.post.close()
    }

    private func startedWorker() -> (jobs: JobQueue, thread: pthread_t, post: LoopPost)? {
        if let worker { return worker }
        guard let post = try? LoopPost(loop: loop) else { return nil }
        let jobs = JobQueue()
        var thread = pthread_t()
        let context = Unmanaged.passRetained(jobs).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let jobs = Unmanaged<JobQueue>.fromOpaque(context!).takeRetainedValue()
                // Linux's nice is the thread's own (who 0: the calling thread): the loop thread keeps its priority.
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                _ = setpriority(which, 0, min(getpriority(which, 0) + LoopWorker.niceness, 19))
                while let job = jobs.pop() { job() }
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<JobQueue>.fromOpaque(context).release()
            post.close()
            return nil
        }
        worker = (jobs, thread, post)
        return worker
    }
}

/// A value made and used on the loop thread that passes through another thread untouched.
private struct LoopOnly<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The worker's jobs: a pthread mutex and condition over a FIFO. `pop` waits for a job and returns nil
/// once closed.
private final class JobQueue: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`.
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var closed = false

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func push(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        if !closed { jobs.append(job) }
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func pop() -> (@Sendable () -> Void)? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == jobs.count && !closed { pthread_cond_wait(condition, mutex) }
        if closed { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }

    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        jobs.removeAll()
        head = 0
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
