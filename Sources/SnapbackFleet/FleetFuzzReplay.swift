// SPDX-License-Identifier: Apache-2.0
/// What a report's bytes off the stream go through in snapback-fleet before its database, in process, for
/// libFuzzer and the tests: the reader and the checks (``FleetReport/parse(_:)``, ``FleetReportReader``: the bytes read in place), then, for a report
/// they let in, the series keys the fold makes of it and the import text the metrics store is given.
/// Invariants are checked with preconditions, so a violation is a crash the fuzzer keeps.
public enum FleetFuzzReplay {
    public static func run(_ input: UnsafeRawBufferPointer) {
        let report: FleetReport
        do {
            report = try FleetReport.parse(input)
        } catch {
            precondition(!error.reason.isEmpty, "a refusal names its reason")
            return
        }
        precondition(input.count <= FleetReport.maxBytes)
        precondition(FleetReport.isBoxId(report.boxId) && report.seq > 0)
        precondition(report.samples.count <= FleetReport.maxSamples)
        var keys = Set<String>()
        var totals: [(series: String, value: Double)] = []
        for sample in report.samples {
            // The fleet's labels first, then at most the metric's own and a bucket's `le`.
            precondition(sample.labels.count <= FleetReport.maxLabels + 1)
            precondition(sample.value.isFinite && sample.value >= 0, "a count or a sum the fold can subtract")
            precondition(FleetReport.isMetricName(String(sample.name.prefix(FleetReport.maxNameBytes))))
            let key = sample.series(extra: report.operatorLabels)
            // One series of a report is one total: the fold keeps a value per key.
            precondition(keys.insert(key).inserted, "series \(key) twice in one report")
            totals.append((key, sample.value))
        }
        let text = FleetExport.text(totals, milliseconds: 1_700_000_000_000)
        // One line a total, nothing a label value could break: no quote, backslash or newline inside one.
        precondition(text.utf8.reduce(0) { $1 == 0x0a ? $0 + 1 : $0 } == totals.count)
        precondition(!text.utf8.contains(0x5c))
    }
}
