// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackWire

/// A ``RequestDecoding`` that decodes when told to, on the caller's thread: what the daemon's worker
/// thread does, at the moments a test chooses (a player that sends more meanwhile, or goes away).
public final class ManualRequestDecoder: RequestDecoding {
    private var jobs: [(job: RequestDecodeJob, completion: (Result<WireRequest, WireError>) -> Void)] = []
    public private(set) var isClosed = false
    /// Jobs handed over in total.
    public private(set) var taken = 0

    public init() {}

    /// Jobs handed over and not yet decoded.
    public var pending: Int { jobs.count }

    public func decode(_ job: RequestDecodeJob, completion: @escaping (Result<WireRequest, WireError>) -> Void) -> Bool {
        guard !isClosed else { return false }
        jobs.append((job, completion))
        taken += 1
        return true
    }

    /// Decodes the oldest job and runs its completion; false if there was none.
    @discardableResult
    public func runNext() -> Bool {
        guard !jobs.isEmpty else { return false }
        let (job, completion) = jobs.removeFirst()
        completion(job.run())
        return true
    }

    /// Decodes every job, including those handed over meanwhile.
    public func runAll() {
        while runNext() {}
    }

    public func close() {
        guard !isClosed else { return }
        runAll()
        isClosed = true
    }
}
