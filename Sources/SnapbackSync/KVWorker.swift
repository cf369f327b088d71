// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

/// The agent's thread for the bucket's requests (`snapback-kv`); telemetry has one of its own for the
/// look-up of its stream (`snapback-telem`), so that neither waits behind the other. Each of them — binding the bucket,
/// get, create/update, the stream's info, making the watcher — waits for the server's answer, up to
/// libnats's 5 s JetStream wait, and a server that accepts the connection but answers slowly or not at all
/// would hold the agent's loop as long: snapbackd's change stream unread (snapbackd drops a reader that
/// takes nothing for 5 s), telemetry, the status file and the stop signals waiting. So the loop hands a
/// job to this thread and goes on; the job's requests run here, in order, and its result comes back
/// through a locked queue and the loop's eventfd (``Wakeup``), as the watcher's pump hands its entries over.
///
/// One job at a time: the loop submits the next only once it took the last one's result, so the queue
/// holds one result at most. The job touches NATS (``NatsKV``'s worker side) and immutable inputs only;
/// the result is a closure the loop runs, which does what the loop owns (the outbox, snapbackd).
///
/// Idle, the thread sleeps on a condition. Stopping does not wait for a job under way (an entry leaves the
/// outbox only once the loop ran the result that says the server acknowledged it, so nothing is lost): the
/// thread and what the job holds (the connection, the bound bucket) stay until the process exits.
final class KVWorker: @unchecked Sendable {
    // Allocated: a pthread object must not move, and `&` on a stored property promises no fixed address.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let work: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    private var job: (() -> (() -> Void))?
    private var results: [() -> Void] = []
    private var stopping = false
    private let wake: Wakeup
    private let name: String
    /// A job was submitted and its result not yet taken (the loop's).
    private(set) var busy = false

    /// `name`: the thread's (15 bytes at most, as Linux keeps them).
    init(wake: Wakeup, name: String = "snapback-kv") throws(AgentError) {
        self.wake = wake
        self.name = name
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(work, nil)
        var thread = pthread_t()
        let retained = Unmanaged.passRetained(self).toOpaque()
        let made = pthread_create(
            &thread, nil,
            { argument in
                let worker = Unmanaged<KVWorker>.fromOpaque(argument!).takeRetainedValue()
                worker.run()
                return nil
            }, retained)
        guard made == 0 else {
            Unmanaged<KVWorker>.fromOpaque(retained).release()
            throw AgentError(description: "\(name) thread: \(String(cString: strerror(made)))")
        }
        pthread_detach(thread)
    }

    deinit {
        pthread_cond_destroy(work)
        work.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `request` on the worker, then `then` with its answer on the loop (``takeResults()``). On the
    /// loop, when not ``busy``.
    func submit<Answer>(_ request: @escaping () -> Answer, then: @escaping (Answer) -> Void) {
        precondition(!busy, "one bucket job at a time")
        busy = true
        pthread_mutex_lock(mutex)
        job = {
            let answer = request()
            return { then(answer) }
        }
        pthread_cond_signal(work)
        pthread_mutex_unlock(mutex)
    }

    /// The finished job's result, to run on the loop (none while it is under way).
    func takeResults() -> [() -> Void] {
        pthread_mutex_lock(mutex)
        let taken = results
        results = []
        pthread_mutex_unlock(mutex)
        if !taken.isEmpty { busy = false }
        return taken
    }

    /// Ends the thread once its job (if one is under way) returns, without waiting for it.
    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        job = nil
        pthread_cond_signal(work)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        // Named, so that it can be told from libnats's threads and the watcher's pump (ps -L).
        _ = snapback_name_thread(name)
        pthread_mutex_lock(mutex)
        while true {
            while job == nil, !stopping { pthread_cond_wait(work, mutex) }
            guard !stopping, let next = job else { break }
            job = nil
            pthread_mutex_unlock(mutex)
            let result = next()
            pthread_mutex_lock(mutex)
            if stopping { break }
            results.append(result)
            pthread_mutex_unlock(mutex)
            wake.signal()
            pthread_mutex_lock(mutex)
        }
        pthread_mutex_unlock(mutex)
    }
}
