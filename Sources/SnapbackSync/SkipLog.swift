// SPDX-License-Identifier: Apache-2.0
/// The log lines of values the agent does not take (a bucket value that does not decode, a stamp beyond
/// the server's time, an id too long to sync): each value once, named by its key and why, and at most
/// ``burst`` lines at once, then one every ``interval`` — a flood of bad values (a hostile member, a
/// damaged bucket) does not flood the journal. Lines held back are counted, and the next line says how
/// many. Time is passed in: no timer of its own.
final class SkipLog {
    static let burst = 20
    static let interval: Duration = .seconds(3)
    /// The values logged lately (key, revision and why): the same one read again (a watcher's replay
    /// after a reconnection) is not logged again. Forgotten when full.
    static let remembered = 4096

    private let log: (String) -> Void
    private var seen: Set<String> = []
    private var tokens = Double(burst)
    private var refilled: ContinuousClock.Instant
    private var held = 0
    /// Every value skipped since the agent started (the status's `skipped`).
    private(set) var count = 0

    init(log: @escaping (String) -> Void, now: ContinuousClock.Instant = .now) {
        self.log = log
        refilled = now
    }

    /// Logs `line` about the value `identity` (key, revision) unless it was logged already; returns
    /// whether the value is new.
    @discardableResult
    func skip(_ identity: String, _ line: String, now: ContinuousClock.Instant = .now) -> Bool {
        guard !seen.contains(identity) else { return false }
        if seen.count >= Self.remembered { seen.removeAll(keepingCapacity: true) }
        seen.insert(identity)
        count += 1
        let elapsed = now - refilled
        refilled = now
        tokens = min(Double(Self.burst), tokens + elapsed / Self.interval)
        guard tokens >= 1 else {
            held += 1
            return true
        }
        tokens -= 1
        let note = held > 0 ? " (\(held) more skipped value(s) not logged before this one)" : ""
        held = 0
        log("snapback-sync: \(line)\(note)")
        return true
    }
}
