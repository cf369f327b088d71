// SPDX-License-Identifier: Apache-2.0
/// How the wall clock stood against the monotonic clock during this run: one epoch per offset
/// (wall − monotonic), a new one each time the wall clock is stepped. It turns "the last 24 hours" —
/// real time, measured on the monotonic clock — into the wall-time ranges the store's rows were
/// dated in, so that a stored wall time is judged by the clock that wrote it.
///
/// A box that boots at 1970 and is set to 2026 by NTP keeps the breaks watched before the step (their
/// rows are dated 1970, in the first epoch's range); a clock set back keeps no row "from the future"
/// for ever (only the ranges of the clocks seen count, a row beyond them is never matched). Times
/// from before this run (the store outlives the daemon) are looked for with every offset seen: when
/// the clock has been stepped, which clock was right is unknown, and a watched break is better kept a
/// little longer than forgotten early.
///
/// A reading whose offset moved by no more than the tolerance (1 s, plus 1 ms per second since the
/// last reading: NTP slews at most 0.5 ms per second) is the same clock, slewed: the epoch follows it.
struct WallClockSteps {
    struct Epoch: Equatable {
        /// Monotonic time the epoch began.
        var since: Double
        /// Wall minus monotonic time.
        var offset: Double
    }

    /// Oldest first; never empty.
    private(set) var epochs: [Epoch]
    /// Monotonic time the run began.
    let startedAt: Double
    private var lastReading: Double
    /// Steps seen so far.
    private(set) var steps = 0

    static let tolerance = 1.0
    static let slewPerSecond = 0.001
    /// A clock stepped more often than this keeps its latest epochs: the oldest one's rows are no
    /// longer found (only a clock gone mad gets there).
    static let maxEpochs = 16

    init(wall: Double, monotonic: Double) {
        let offset = wall.isFinite && monotonic.isFinite ? wall - monotonic : 0
        epochs = [Epoch(since: monotonic, offset: offset)]
        startedAt = monotonic
        lastReading = monotonic
    }

    /// The current offset: wall = monotonic + offset.
    var offset: Double { epochs[epochs.count - 1].offset }

    /// Notes a reading of both clocks. Returns the step, in seconds (negative: back), when the wall
    /// clock was stepped since the last reading.
    @discardableResult
    mutating func observe(wall: Double, monotonic: Double) -> Double? {
        guard wall.isFinite, monotonic.isFinite else { return nil }
        let offset = wall - monotonic
        let step = offset - self.offset
        let allowed = Self.tolerance + Self.slewPerSecond * max(0, monotonic - lastReading)
        lastReading = max(lastReading, monotonic)
        guard abs(step) > allowed else {
            epochs[epochs.count - 1].offset = offset
            return nil
        }
        if epochs.count == Self.maxEpochs { epochs.removeFirst() }
        epochs.append(Epoch(since: monotonic, offset: offset))
        steps += 1
        return step
    }

    /// The wall-time ranges in which rows dated during the last `seconds` of monotonic time (up to
    /// `now`) lie: this run's part by the epoch that wrote them, the part before the run by every
    /// offset seen. Sorted, disjoint, each widened by the tolerance.
    func wallRanges(last seconds: Double, at now: Double) -> [ClosedRange<Double>] {
        guard seconds > 0, seconds.isFinite, now.isFinite else { return [] }
        let from = now - seconds
        var ranges: [ClosedRange<Double>] = []
        func add(_ lo: Double, _ hi: Double) {
            guard lo <= hi else { return }
            ranges.append((lo - Self.tolerance)...(hi + Self.tolerance))
        }
        if from < startedAt {
            for epoch in epochs { add(from + epoch.offset, startedAt + epoch.offset) }
        }
        for (i, epoch) in epochs.enumerated() {
            let until = i + 1 < epochs.count ? epochs[i + 1].since : now
            add(max(from, epoch.since) + epoch.offset, min(until, now) + epoch.offset)
        }
        return Self.merged(ranges)
    }

    static func merged(_ ranges: [ClosedRange<Double>]) -> [ClosedRange<Double>] {
        var out: [ClosedRange<Double>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, range.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }
}
