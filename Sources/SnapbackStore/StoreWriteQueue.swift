// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackTimeline

/// The one part of the SQLite store that two threads share: the writes the loop thread made, on
/// their way to the writer thread, and the writer's reports, on their way back. Everything in it is
/// guarded by one pthread mutex (TSan-clean, unlike a futex-based Mutex).
///
/// **Group commit.** A write the loop makes is queued but not yet *released*: the writer does not see
/// it until ``release()``, which the store's front posts to run on the loop thread after the loop's
/// current turn. Every write made in one turn — the periodic saves of all the sessions whose timers
/// fired together, a pause and its watched break — so reaches the writer at once and goes into one
/// transaction, one fdatasync, instead of the writer waking at the first and committing the rest
/// behind it.
///
/// `@unchecked Sendable`: the loop thread and the writer thread both hold it, and the compiler cannot
/// see that the mutex guards every mutable field. `onReports`, the front's delivery, is set once
/// before the writer thread starts and only ever called on the loop thread (through `post`).
final class StoreWriteQueue: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled when writes are released or the store stops.
    private let workReady: UnsafeMutablePointer<pthread_cond_t>
    /// Signalled when the writer thread has finished.
    private let writerDone: UnsafeMutablePointer<pthread_cond_t>

    // Guarded by `mutex`.
    private var queue = FIFO<WriteOp>()
    /// How many of the queued writes (from the front) the writer may take.
    private var released = 0
    private var outbox: [BatchReport] = []
    private var deliveryPosted = false
    private var stopping = false
    private var writerExited = false
    /// The writer waits for work: only then does a release need to signal it.
    private var writerWaiting = false

    /// The front's handler of the writer's reports. Loop thread only; set before the writer starts.
    var onReports: () -> Void = {}

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        workReady = .allocate(capacity: 1)
        pthread_cond_init(workReady, nil)
        writerDone = .allocate(capacity: 1)
        pthread_cond_init(writerDone, nil)
    }

    deinit {
        pthread_cond_destroy(workReady)
        workReady.deallocate()
        pthread_cond_destroy(writerDone)
        writerDone.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: Loop thread

    /// Queues a write, not yet released. Returns true for the first write since the last release: the
    /// caller then posts ``release()`` to run after the loop's current turn.
    func enqueue(_ op: WriteOp) -> Bool {
        locked {
            queue.append(op)
            return queue.count == released + 1
        }
    }

    /// Lets the writer take every write queued so far, in one batch (up to its batch size).
    func release() {
        locked {
            released = queue.count
            // A busy writer takes these with its next batch without a wake-up (no futex call here).
            if released > 0 && writerWaiting { pthread_cond_signal(workReady) }
        }
    }

    /// The writer's finished batches, in commit order.
    func takeReports() -> [BatchReport] {
        locked {
            defer {
                outbox = []
                deliveryPosted = false
            }
            return outbox
        }
    }

    /// Releases what is queued and tells the writer to finish once it has committed it.
    func stop() {
        locked {
            released = queue.count
            stopping = true
            pthread_cond_signal(workReady)
        }
    }

    /// Waits until the writer has finished, at most `seconds`; false when it has not.
    func waitForWriter(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let timeout = max(0, min(seconds, 86_400))
        deadline.tv_sec += Int(timeout)
        deadline.tv_nsec += Int((timeout - timeout.rounded(.down)) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        return locked {
            while !writerExited {
                if pthread_cond_timedwait(writerDone, mutex, &deadline) == ETIMEDOUT { break }
            }
            return writerExited
        }
    }

    // MARK: Writer thread

    /// Moves up to `limit` released writes into `batch`, waiting for some; false once the store is
    /// stopping and nothing released is left.
    func nextBatch(_ batch: inout [WriteOp], limit: Int) -> Bool {
        locked {
            while released == 0 && !stopping {
                writerWaiting = true
                pthread_cond_wait(workReady, mutex)
                writerWaiting = false
            }
            guard released > 0 else { return false }
            let n = min(released, max(1, limit))
            queue.moveFirst(n, into: &batch)
            released -= n
            return true
        }
    }

    /// Hands a finished batch to the loop. Returns true when the caller must post a delivery (none is
    /// pending yet).
    func deliver(_ report: BatchReport) -> Bool {
        locked {
            outbox.append(report)
            defer { deliveryPosted = true }
            return !deliveryPosted
        }
    }

    /// The writer thread is done (or could not start): wakes `waitForWriter`.
    func writerFinished() {
        locked {
            writerExited = true
            pthread_cond_broadcast(writerDone)
        }
    }
}

/// A write for the writer thread.
enum WriteOp: Sendable {
    case save(Bookmark)
    case delete(profile: String, contentId: String)
    case clear(profile: String)
    case watched(contentId: String, breakId: String, at: Double)
    case lastBreak(Double)
    case pruneWatched(keeping: [ClosedRange<Double>])
    /// A record from another box, applied under the sync rule.
    case merge(SyncRecord)
    case mergeWatched(WatchedBreaks)
    /// The daemon's counters, every series.
    case metrics(StoredMetrics)

    var changesBookmarks: Bool {
        switch self {
        case .save, .delete, .clear, .merge: true
        case .watched, .lastBreak, .pruneWatched, .mergeWatched, .metrics: false
        }
    }
}

/// What the writer hands back to the loop for one batch: a result per write, in order.
struct BatchReport: Sendable {
    var results: [Result<Int, StoreError>] = []
    /// The bookmark count after the batch, if it changed bookmarks.
    var count: Int?
    /// Transactions committed for this batch: 1, 0 when it failed, more when it was retried write by
    /// write. Each is one fdatasync of the WAL.
    var commits = 0
    /// The database was (re)opened by the writer: the loop opens its read connection.
    var reopened = false
    /// A recovery to keep in `lastError` (a file moved aside).
    var note: String?
    /// The device id of the database (re)opened.
    var device: DeviceID?
}

/// The thread an object belongs to, checked in debug builds: one `pthread_self` and a compare.
struct ThreadOwner {
    private var thread = pthread_self()

    /// The object moves to the calling thread (the writer, when its thread starts).
    mutating func adopt() { thread = pthread_self() }

    func check(_ what: StaticString = "store object") {
        assert(pthread_equal(pthread_self(), thread) != 0, "\(what) used off its thread")
    }
}

/// First in, first out on an array with a moving head: taking from the front shifts nothing; what
/// was taken is let go at once (its slot emptied) and the array compacted once it is mostly taken.
struct FIFO<Element> {
    private var slots: [Element?] = []
    private var head = 0

    var count: Int { slots.count - head }
    var isEmpty: Bool { head == slots.count }

    mutating func append(_ element: Element) { slots.append(element) }

    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        defer {
            slots[head] = nil
            head += 1
            compact()
        }
        return slots[head]
    }

    /// Moves the first `n` (at most `count`) to the end of `into`.
    mutating func moveFirst(_ n: Int, into target: inout [Element]) {
        for _ in 0..<min(max(0, n), count) {
            if let element = popFirst() { target.append(element) }
        }
    }

    private mutating func compact() {
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 256 && head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
