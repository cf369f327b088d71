// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackTimeline
import SnapbackWire

/// A request to decode, with what its decoding depends on (the configuration when it arrived).
public struct RequestDecodeJob: Sendable {
    public let method: WireMethod
    /// A copy of the frame's body: the connection's read buffer is not the job's to keep.
    public let body: [UInt8]
    public let defaultPreset: AdPolicy.Preset
    public let maxBreaks: Int

    public func run() -> Result<WireRequest, WireError> {
        body.withUnsafeBytes { body in
            Result { () throws(WireError) in
                try WireRequest.decode(method: method, body: body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
            }
        }
    }
}

/// Decodes large requests away from the service's thread, so that reading an OpenSession of a thousand
/// ad breaks does not hold every other player's requests: the daemon's ``RequestDecodeThread``. In
/// process there is none (the service decodes every request itself), or a test's own.
public protocol RequestDecoding: AnyObject {
    /// Decodes `job` elsewhere and calls `completion` later on the service's thread with the result, in
    /// the order of the calls. Returns false, without calling it, when it takes no more work (closed):
    /// the caller decodes the request itself.
    func decode(_ job: RequestDecodeJob, completion: @escaping (Result<WireRequest, WireError>) -> Void) -> Bool

    /// Decodes what was handed over and not yet completed and runs its completions now, then takes no
    /// more work. Service thread, at shutdown.
    func close()
}

/// The daemon's ``RequestDecoding``: one worker thread, started at the first large request, decodes the
/// jobs in the order they came; a ``LoopMailbox`` brings each result back to the loop thread.
///
/// Loop-confined but for the worker's two Sendable parts (its job queue and the mailbox).
public final class RequestDecodeThread: RequestDecoding {
    private typealias Finished = (ticket: UInt64, result: Result<WireRequest, WireError>)

    private let loop: EventLoop
    private var worker: (jobs: WorkQueue, thread: pthread_t, results: LoopMailbox<Finished>)?
    private var completions: [UInt64: (Result<WireRequest, WireError>) -> Void] = [:]
    private var nextTicket: UInt64 = 0
    private var closed = false

    /// Loop thread. Nothing is started until the first job.
    public init(loop: EventLoop) {
        self.loop = loop
    }

    public func decode(_ job: RequestDecodeJob, completion: @escaping (Result<WireRequest, WireError>) -> Void) -> Bool {
        precondition(loop.isOnLoopThread, "RequestDecodeThread used off the loop thread")
        guard !closed, let worker = startedWorker() else { return false }
        nextTicket &+= 1
        let ticket = nextTicket
        completions[ticket] = completion
        let results = worker.results
        worker.jobs.push { results.send((ticket, job.run())) }
        return true
    }

    private func startedWorker() -> (jobs: WorkQueue, thread: pthread_t, results: LoopMailbox<Finished>)? {
        if let worker { return worker }
        let results: LoopMailbox<Finished>
        do {
            results = try LoopMailbox(loop: loop.raw) { [unowned self] finished in self.finish(finished) }
        } catch {
            loop.logger.warning("large requests are decoded on the loop thread: \(error)")
            closed = true
            return nil
        }
        let jobs = WorkQueue()
        guard let thread = jobs.startThread() else {
            loop.logger.warning("large requests are decoded on the loop thread: cannot start a thread")
            results.close()
            closed = true
            return nil
        }
        worker = (jobs, thread, results)
        return worker
    }

    private func finish(_ finished: Finished) {
        completions.removeValue(forKey: finished.ticket)?(finished.result)
    }

    public func close() {
        guard !closed else { return }
        closed = true
        guard let worker else { return }
        self.worker = nil
        // The worker finishes what it was given (each job a millisecond or two), then its results run here.
        worker.jobs.stop()
        pthread_join(worker.thread, nil)
        worker.results.close()
    }
}

/// Closures run one after another, in order, on a thread of their own until ``stop()``. A pthread mutex
/// and condition variable guard the queue.
final class WorkQueue: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let ready: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    // Guarded by `mutex`. At most a job per connection waits (its requests are held meanwhile).
    private var queue: [@Sendable () -> Void] = []
    private var stopping = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
    }

    deinit {
        pthread_cond_destroy(ready)
        pthread_mutex_destroy(mutex)
        ready.deallocate()
        mutex.deallocate()
    }

    func push(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        queue.append(job)
        pthread_cond_signal(ready)
        pthread_mutex_unlock(mutex)
    }

    /// The thread ends once the queue is empty.
    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(ready)
        pthread_mutex_unlock(mutex)
    }

    /// The next job, taken out of the queue (its request's bytes go with it once it has run), waiting for
    /// one; nil once stopped and empty.
    private func next() -> (@Sendable () -> Void)? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while queue.isEmpty {
            if stopping { return nil }
            pthread_cond_wait(ready, mutex)
        }
        return queue.removeFirst()
    }

    /// Starts the thread that runs the jobs; it keeps the queue until stopped. Nil if it cannot start.
    func startThread() -> pthread_t? {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                let queue = Unmanaged<WorkQueue>.fromOpaque(raw!).takeRetainedValue()
                while let job = queue.next() { job() }
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<WorkQueue>.fromOpaque(context).release()
            return nil
        }
        return thread
    }
}
