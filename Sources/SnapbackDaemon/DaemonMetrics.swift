// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// The counter table: every series of the catalog (``Metric``) in one fixed block of UInt64 slots,
/// allocated once, counted in place on the loop thread: a count is an add at a fixed offset, no
/// allocation, no hashing, no lock. Histograms keep a count per bucket (not cumulative: one add per
/// observation), the sum in nanoseconds and the count.
///
/// Cumulative across restarts: the service loads the stored values at start and writes them back
/// through the store's queue (see `TimelineService+Metrics.swift`). The first count after a write tells
/// `onDirty`, which arms the one write timer: a daemon that counts nothing never wakes for its counters.
///
/// Loop-confined.
public final class DaemonMetrics {
    /// Every slot, in catalog order.
    private let slots: UnsafeMutablePointer<UInt64>
    /// Each family's first slot, by `Metric.rawValue`.
    private let bases: UnsafeMutablePointer<Int>
    public let slotCount: Int
    /// The histograms' upper bounds in nanoseconds (the +Inf bucket is past the last).
    private let boundsNanoseconds: UnsafeMutablePointer<UInt64>
    private let boundCount: Int
    /// Counted since the last write was taken (``takeDirty()``).
    private(set) var dirty = false
    /// Called at the first count after a write was taken.
    var onDirty: (() -> Void)?

    public init() {
        let catalog = Metric.catalog
        bases = .allocate(capacity: catalog.count)
        var total = 0
        for (i, family) in catalog.enumerated() {
            bases[i] = total
            total += family.slotCount
        }
        slotCount = total
        slots = .allocate(capacity: total)
        slots.initialize(repeating: 0, count: total)
        boundCount = HistogramBuckets.bounds.count
        boundsNanoseconds = .allocate(capacity: boundCount)
        for (i, bound) in HistogramBuckets.bounds.enumerated() { boundsNanoseconds[i] = UInt64(bound * 1e9) }
    }

    deinit {
        slots.deallocate()
        bases.deallocate()
        boundsNanoseconds.deallocate()
    }

    /// Adds `n` to series `series` of counter `metric`.
    @inline(__always)
    func count(_ metric: Metric, _ series: Int = 0, by n: UInt64 = 1) {
        slots[bases[metric.rawValue] &+ series] &+= n
        if !dirty { becameDirty() }
    }

    /// Records one observation of `nanoseconds` in histogram `metric`. `marksDirty: false` for an
    /// observation that must not arm the write by itself (the write timer's own lateness: it would
    /// re-arm the timer forever); it is written with the next write.
    @inline(__always)
    func observe(_ metric: Metric, nanoseconds: UInt64, marksDirty: Bool = true) {
        var bucket = 0
        while bucket < boundCount && nanoseconds > boundsNanoseconds[bucket] { bucket &+= 1 }
        let base = bases[metric.rawValue]
        slots[base &+ bucket] &+= 1
        slots[base &+ boundCount &+ 1] &+= nanoseconds
        slots[base &+ boundCount &+ 2] &+= 1
        if marksDirty && !dirty { becameDirty() }
    }

    private func becameDirty() {
        dirty = true
        onDirty?()
    }

    /// The value of series `series` of counter `metric`.
    public func value(_ metric: Metric, _ series: Int = 0) -> UInt64 { slots[bases[metric.rawValue] + series] }

    /// Sets a counter the service reads from elsewhere (the store's commits), without dirtying.
    func set(_ metric: Metric, _ series: Int = 0, to value: UInt64) { slots[bases[metric.rawValue] + series] = value }

    /// Takes the dirty mark: counts after this arm the next write.
    func takeDirty() -> Bool {
        defer { dirty = false }
        return dirty
    }

    // MARK: Persistence

    /// Each slot's key in the store: the series as OpenMetrics names it (a histogram's bucket counts by
    /// their `le`, not cumulative), so that a catalog that grows or is reordered reads what was stored.
    public static let slotKeys: [String] = {
        var keys: [String] = []
        for family in Metric.catalog {
            switch family.kind {
            case .counter:
                for series in 0..<family.seriesCount {
                    let labels = family.labelValues(ofSeries: series).map { "\($0.name)=\"\($0.value)\"" }
                    keys.append(family.name + "_total" + (labels.isEmpty ? "" : "{" + labels.joined(separator: ",") + "}"))
                }
            case .histogram:
                for bound in HistogramBuckets.bounds { keys.append(family.name + "_bucket{le=\"\(bound)\"}") }
                keys.append(family.name + "_bucket{le=\"+Inf\"}")
                keys.append(family.name + "_sum_nanoseconds")
                keys.append(family.name + "_count")
            }
        }
        return keys
    }()

    /// Every slot, in `slotKeys` order.
    func values() -> [UInt64] { Array(UnsafeBufferPointer(start: slots, count: slotCount)) }

    /// Takes in stored values by key; unknown keys (a newer catalog's) are left out.
    func load(_ stored: [String: UInt64]) {
        // A new store: the keys are not made (330 strings, at every start of a new box).
        guard !stored.isEmpty else { return }
        for (i, key) in Self.slotKeys.enumerated() {
            if let value = stored[key] { slots[i] = value }
        }
    }

    // MARK: The reply

    /// The families, in catalog order, as GetMetrics carries them.
    func families() -> [SnapbackV1.MetricFamily] {
        Metric.allCases.map { metric in
            let family = metric.definition
            let base = bases[metric.rawValue]
            var samples: [SnapbackV1.MetricSample] = []
            switch family.kind {
            case .counter:
                for series in 0..<family.seriesCount {
                    samples.append(
                        SnapbackV1.MetricSample(
                            labels: family.labelValues(ofSeries: series).map {
                                SnapbackV1.MetricLabel(name: $0.name, value: $0.value)
                            },
                            value: slots[base + series]))
                }
            case .histogram:
                var cumulative: UInt64 = 0
                var counts: [UInt64] = []
                for i in 0...boundCount {
                    cumulative &+= slots[base + i]
                    counts.append(cumulative)
                }
                samples.append(
                    SnapbackV1.MetricSample(
                        bucketBounds: HistogramBuckets.bounds + [.infinity], sum: Double(slots[base + boundCount + 1]) / 1e9,
                        count: slots[base + boundCount + 2], bucketCounts: counts))
            }
            return SnapbackV1.MetricFamily(
                name: family.name, help: family.help, type: family.kind.proto,
                unit: family.unit, series: samples)
        }
    }
}
