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
/// Jobs travel in a `LoopMailbox`, the mechanism `LoopPost` uses for closures too.
public final class LoopExecutor: SerialExecutor, @unchecked Sendable {
    private let thread: pthread_t
    /// Set once at the end of init (its closure refers back to the executor).
    private var mailbox: LoopMailbox<UnownedJob>!

    /// Must be called on the thread that will run the loop.
    init(loop: UnsafeMutablePointer<uv_loop_t>) throws(LibUVError) {
        thread = pthread_self()
        mailbox = try LoopMailbox(loop: loop) { [unowned self] job in
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        // After close() the loop is gone: nothing could ever run the job, and it is dropped.
        mailbox.send(UnownedJob(job))
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

    /// Runs the queued jobs now (loop thread).
    func drain() { mailbox.drain() }

    /// Refuses further jobs, runs what is queued and closes the async handle. Loop thread only, at the
    /// end of a shutdown.
    func close() { mailbox.close() }
}
