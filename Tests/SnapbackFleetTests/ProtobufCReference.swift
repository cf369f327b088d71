// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Glibc
import SnapbackSync

@testable import SnapbackFleet

// The fleet's decoder as it was before it read reports in place: protobuf-c's unpack, then the checks over
// the unpacked message. Kept as the reference ``FleetReportReader`` is held to (FleetReaderReferenceTests):
// what protobuf-c refuses, the reader refuses, and what it lets in, both check alike.
extension FleetReport {
    /// Decodes and checks a report's bytes through protobuf-c, its allocations in `arena` (one for many reports).
    static func referenceParse(_ bytes: [UInt8], arena: UnpackArena) throws(Rejection) -> FleetReport {
        guard bytes.count <= maxBytes else { throw Rejection("\(bytes.count) bytes, more than \(maxBytes)") }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(Rejection) in
            try arena.unpack(buffer) { (unpacked) throws(Rejection) in
                guard let unpacked else { throw Rejection("not a TelemetryReport (protobuf-c refused it)") }
                return try referenceCheck(unpacked)
            }
        }
    }

    static func referenceCheck(_ report: Snapback__V1__TelemetryReport) throws(Rejection) -> FleetReport {
        guard let boxId = Self.string(report.box_id, max: 32), isBoxId(boxId) else {
            throw Rejection("box_id is not 32 hex digits")
        }
        guard report.seq > 0 else { throw Rejection("seq 0") }
        guard report.counting_since.isFinite, report.counting_since > 0, report.counting_since < 1e10 else {
            throw Rejection("counting_since \(report.counting_since) is not a time")
        }
        guard report.time.isFinite, report.time >= 0, report.time < 1e10 else { throw Rejection("time is not a time") }
        var operatorLabels: [String] = []
        for (name, value) in [("firmware", report.firmware), ("model", report.model), ("region", report.region)] {
            guard let text = Self.string(value, max: TelemetryConfiguration.maxLabelBytes), TelemetryConfiguration.isLabel(text)
            else {
                throw Rejection("\(name) is not 0 to \(TelemetryConfiguration.maxLabelBytes) bytes of A-Z a-z 0-9 . _ -")
            }
            operatorLabels.append(text)
        }
        guard let startId = Self.string(report.start_id, max: 64), startId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Rejection("start_id is not 0 to 64 printable ASCII bytes")
        }
        guard report.n_families <= maxFamilies else { throw Rejection("\(report.n_families) families, more than \(maxFamilies)") }
        var keys: [UInt8] = []
        var series: [FleetSeries] = []
        // About the report's size in keys; a series for every 30 bytes or so.
        keys.reserveCapacity(4096)
        series.reserveCapacity(64)
        var labelText: [UInt8] = []
        labelText.reserveCapacity(256)
        var families: [UnsafeMutablePointer<CChar>] = []
        for f in 0..<report.n_families {
            guard let family = report.families[f]?.pointee, let name = family.name else {
                throw Rejection("a family without a name")
            }
            let nameCount = Self.length(name, max: maxNameBytes)
            guard nameCount <= maxNameBytes, isMetricName(name, count: nameCount) else {
                throw Rejection("family name '\(String(cString: name).prefix(64))' is not a metric name")
            }
            guard !families.contains(where: { strcmp($0, name) == 0 }) else {
                throw Rejection("family \(String(cString: name)) twice")
            }
            families.append(name)
            // A type this version does not know (a newer daemon's gauge): the family is left out, the rest
            // of the report counts.
            let histogram: Bool
            switch family.type.rawValue {
            case 1: histogram = false
            case 2: histogram = true
            default: continue
            }
            guard series.count + family.n_series <= maxSamples else { throw Rejection("more than \(maxSamples) samples") }
            let familyName = UnsafeRawBufferPointer(start: name, count: nameCount)
            for s in 0..<family.n_series {
                guard let sample = family.series[s]?.pointee else { throw Rejection("an empty sample") }
                guard sample.n_labels <= maxLabels else {
                    throw Rejection(
                        "family \(String(cString: name)): a sample with \(sample.n_labels) labels, more than \(maxLabels)")
                }
                // The labels, as the key writes them: `a="x",b="y"`.
                labelText.removeAll(keepingCapacity: true)
                for l in 0..<sample.n_labels {
                    guard let label = sample.labels[l]?.pointee, let labelName = label.name, let labelValue = label.value else {
                        throw Rejection("family \(String(cString: name)): an empty label")
                    }
                    let nameBytes = Self.length(labelName, max: maxLabelBytes)
                    guard nameBytes <= maxLabelBytes, isMetricName(labelName, count: nameBytes),
                        !reservedLabels.contains(where: { $0.count == nameBytes && memcmp($0, labelName, nameBytes) == 0 })
                    else {
                        throw Rejection(
                            "family \(String(cString: name)): label name '\(String(cString: labelName).prefix(64))' refused")
                    }
                    let valueBytes = Self.length(labelValue, max: maxLabelBytes)
                    guard valueBytes <= maxLabelBytes, isLabelValue(labelValue, count: valueBytes) else {
                        throw Rejection(
                            "family \(String(cString: name)): a value of label \(String(cString: labelName)) is not a closed value"
                        )
                    }
                    if l > 0 { labelText.append(0x2c) }
                    labelText.append(contentsOf: UnsafeRawBufferPointer(start: labelName, count: nameBytes))
                    labelText.append(0x3d)
                    labelText.append(0x22)
                    labelText.append(contentsOf: UnsafeRawBufferPointer(start: labelValue, count: valueBytes))
                    labelText.append(0x22)
                }
                if !histogram {
                    append(familyName, "_total", labelText, nil, Double(sample.value), to: &keys, &series)
                    continue
                }
                let buckets = sample.n_bucket_bounds
                guard buckets == sample.n_bucket_counts, (1...maxBuckets).contains(buckets) else {
                    throw Rejection("family \(String(cString: name)): 1 to \(maxBuckets) buckets, each with its count")
                }
                let bounds = UnsafeBufferPointer(start: sample.bucket_bounds, count: buckets)
                guard bounds.last == .infinity, zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }),
                    bounds.dropLast().allSatisfy({ $0.isFinite })
                else { throw Rejection("family \(String(cString: name)): bucket bounds not ascending to +Inf") }
                guard sample.sum.isFinite, sample.sum >= 0 else {
                    throw Rejection("family \(String(cString: name)): sum not finite")
                }
                guard series.count + buckets + 2 <= maxSamples else { throw Rejection("more than \(maxSamples) samples") }
                for b in 0..<buckets {
                    append(familyName, "_bucket", labelText, bounds[b], Double(sample.bucket_counts[b]), to: &keys, &series)
                }
                append(familyName, "_sum", labelText, nil, sample.sum, to: &keys, &series)
                append(familyName, "_count", labelText, nil, Double(sample.count), to: &keys, &series)
            }
        }
        try checkDistinct(series, keys)
        return FleetReport(
            boxId: boxId, seq: report.seq, countingSince: report.counting_since, startId: startId,
            firmware: operatorLabels[0], model: operatorLabels[1], region: operatorLabels[2], time: report.time, keys: keys,
            series: series)
    }
}

/// protobuf-c's allocations while it unpacks a report, taken from one block that is used again for the
/// next report: unpacking a report is a few thousand small allocations (a message, a pointer array and the
/// strings of every sample and label), all freed together. What does not fit goes to malloc.
final class UnpackArena {
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    private var used = 0
    /// Allocations that went to malloc since the last reset.
    private var spilled = 0
    fileprivate var allocator = ProtobufCAllocator()

    init(capacity: Int = 1 << 19) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
        allocator.alloc = { data, size in
            let arena = Unmanaged<UnpackArena>.fromOpaque(data!).takeUnretainedValue()
            let start = (arena.used + 15) & ~15
            if size <= arena.capacity - start {
                arena.used = start + size
                return arena.base + start
            }
            arena.spilled += 1
            return malloc(size)
        }
        allocator.free = { data, pointer in
            guard let pointer else { return }
            let arena = Unmanaged<UnpackArena>.fromOpaque(data!).takeUnretainedValue()
            if pointer >= UnsafeMutableRawPointer(arena.base), pointer < arena.base + arena.capacity { return }
            free(pointer)
        }
        allocator.allocator_data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { base.deallocate() }

    /// Unpacks `bytes` into the block, gives the message to `body`, then releases it.
    fileprivate func unpack<T>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (Snapback__V1__TelemetryReport?) throws(FleetReport.Rejection) -> T
    ) throws(FleetReport.Rejection) -> T {
        used = 0
        spilled = 0
        var none: UInt8 = 0
        let message =
            bytes.baseAddress.map { snapback__v1__telemetry_report__unpack(&allocator, bytes.count, $0) }
            ?? snapback__v1__telemetry_report__unpack(&allocator, 0, &none)
        defer {
            // Only what went to malloc needs freeing; the block is simply used again.
            if let message, spilled > 0 { snapback__v1__telemetry_report__free_unpacked(message, &allocator) }
            used = 0
        }
        return try body(message?.pointee)
    }
}
