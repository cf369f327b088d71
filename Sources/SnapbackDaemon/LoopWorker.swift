// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Work too long for a turn of the loop (the 5 ms stall rule), run away from it: one worker thread,
/// started at the first job, runs the jobs in the order they came, and a ``LoopMailbox`` brings each
/// result back to the loop thread, where its completion runs. The ``WorkQueue`` and mailbox of
/// ``RequestDecodeThread``, for any Sendable result, the thread at a lower priority than the loop's:
/// snapback-web reads the manifests pages send (`readCues`) on it.
///
/// Loop-confined but for the worker's two Sendable parts (its job queue and the mailbox).
public final class LoopWorker {
    private typealias Finished = (ticket: UInt64, result: any Sendable)
    /// The worker thread's nice value above the process's.
    static let niceness: Int32 = 10

    private let loop: EventLoop
    private var worker: (jobs: WorkQueue, thread: pthread_t, results: LoopMailbox<Finished>)?
    private var completions: [UInt64: (any Sendable) -> Void] = [:]
    private var nextTicket: UInt64 = 0
    private var closed = false

    /// Loop thread. Nothing is started until the first job.
    public init(loop: EventLoop) {
        self.loop = loop
    }

    /// Runs `work` on the worker thread and `completion` with its result later on the loop thread, in
    /// the order of the calls. Returns false, without running either, when it takes no more work
    /// (closed, or no thread could be started): the caller does the work itself.
    public func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result, completion: @escaping (Result) -> Void)
        -> Bool
    {
        precondition(loop.isOnLoopThread, "LoopWorker used off the loop thread")
        guard !closed, let worker = startedWorker() else { return false }
        nextTicket &+= 1
        let ticket = nextTicket
        // The mailbox carries `any Sendable`; this completion is the one that knows the type it was given.
        completions[ticket] = { result in
            guard let result = result as? Result else { preconditionFailure("LoopWorker: a result of another job") }
            completion(result)
        }
        let results = worker.results
        worker.jobs.push { results.send((ticket, work())) }
        return true
    }

    private func startedWorker() -> (jobs: WorkQueue, thread: pthread_t, results: LoopMailbox<Finished>)? {
        if let worker { return worker }
        let results: LoopMailbox<Finished>
        do {
            results = try LoopMailbox(loop: loop.raw) { [unowned self] finished in self.finish(finished) }
        } catch {
            loop.logger.warning("long work is done on the loop thread: \(error)")
            closed = true
            return nil
        }
        // Below the loop thread's priority: on a core they share, a page's call is not held by a read.
        let jobs = WorkQueue(niceness: Self.niceness)
        guard let thread = jobs.startThread() else {
            loop.logger.warning("long work is done on the loop thread: cannot start a thread")
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

    /// Finishes what was handed over and runs its completions now, then takes no more work. Loop
    /// thread, at shutdown.
    public func close() {
        guard !closed else { return }
        closed = true
        guard let worker else { return }
        self.worker = nil
        worker.jobs.stop()
        pthread_join(worker.thread, nil)
        worker.results.close()
    }
}
