// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackCLI
import SnapbackWire
import Testing

/// The OpenMetrics renderer, from replies made here: what it writes, and that Prometheus' own parser
/// (python3-prometheus-client, mk/packages.list) reads it back to the same values.
@Suite struct OpenMetricsTests {
    static let reply = SnapbackV1.MetricsReply(
        families: [
            SnapbackV1.MetricFamily(
                name: "snapbackd_seeks_commanded", help: "Seeks, by \\reason", type: MetricType.counter.proto,
                series: [
                    SnapbackV1.MetricSample(labels: [SnapbackV1.MetricLabel(name: "reason", value: "snapback")], value: 7),
                    SnapbackV1.MetricSample(labels: [SnapbackV1.MetricLabel(name: "reason", value: "odd\"one\\")], value: 0)
                ]),
            SnapbackV1.MetricFamily(
                name: "snapbackd_starts", help: "Starts", type: MetricType.counter.proto,
                series: [SnapbackV1.MetricSample(value: 18_446_744_073_709_551_615)]),
            SnapbackV1.MetricFamily(
                name: "snapbackd_loop_lag_seconds", help: "Lag", type: MetricType.histogram.proto, unit: "seconds",
                series: [
                    SnapbackV1.MetricSample(bucketBounds: [0.0005, 0.25, .infinity], sum: 1.25, count: 5, bucketCounts: [2, 4, 5])
                ])
        ], startId: "00112233445566778899aabbccddeeff", bootId: "b8cb6e38-6eaa-4f29-b2a3-dc862bb3a3b7",
        startTime: 1_700_000_000.5, starts: 3)

    @Test func familiesAreWrittenWithTheirTypeUnitHelpAndSamples() {
        let text = OpenMetrics.render(Self.reply)
        let expected = """
            # TYPE snapbackd_seeks_commanded counter
            # HELP snapbackd_seeks_commanded Seeks, by \\\\reason
            snapbackd_seeks_commanded_total{reason="snapback"} 7
            snapbackd_seeks_commanded_total{reason="odd\\"one\\\\"} 0
            # TYPE snapbackd_starts counter
            # HELP snapbackd_starts Starts
            snapbackd_starts_total 18446744073709551615
            # TYPE snapbackd_loop_lag_seconds histogram
            # UNIT snapbackd_loop_lag_seconds seconds
            # HELP snapbackd_loop_lag_seconds Lag
            snapbackd_loop_lag_seconds_bucket{le="0.0005"} 2
            snapbackd_loop_lag_seconds_bucket{le="0.25"} 4
            snapbackd_loop_lag_seconds_bucket{le="+Inf"} 5
            snapbackd_loop_lag_seconds_sum 1.25
            snapbackd_loop_lag_seconds_count 5
            # TYPE snapbackd_start_identity gauge
            # HELP snapbackd_start_identity This run of the daemon (its start id) on this boot of the box (its boot id)
            snapbackd_start_identity{start_id="00112233445566778899aabbccddeeff",boot_id="b8cb6e38-6eaa-4f29-b2a3-dc862bb3a3b7"} 1
            # TYPE snapbackd_start_time_seconds gauge
            # UNIT snapbackd_start_time_seconds seconds
            # HELP snapbackd_start_time_seconds Wall time this run of the daemon started
            snapbackd_start_time_seconds 1700000000.5
            # EOF

            """
        #expect(text == expected)
        #expect(OpenMetrics.render(Self.reply, identity: false).contains("start_identity") == false)
    }

    /// The Prometheus text format, for node_exporter's textfile collector: a counter's TYPE and HELP name
    /// its `_total` samples, no `# UNIT`, no `# EOF`.
    @Test func thePrometheusTextFormatTypesTheTotals() {
        let text = OpenMetrics.render(Self.reply, identity: false, format: .prometheus)
        let expected = """
            # TYPE snapbackd_seeks_commanded_total counter
            # HELP snapbackd_seeks_commanded_total Seeks, by \\\\reason
            snapbackd_seeks_commanded_total{reason="snapback"} 7
            snapbackd_seeks_commanded_total{reason="odd\\"one\\\\"} 0
            # TYPE snapbackd_starts_total counter
            # HELP snapbackd_starts_total Starts
            snapbackd_starts_total 18446744073709551615
            # TYPE snapbackd_loop_lag_seconds histogram
            # HELP snapbackd_loop_lag_seconds Lag
            snapbackd_loop_lag_seconds_bucket{le="0.0005"} 2
            snapbackd_loop_lag_seconds_bucket{le="0.25"} 4
            snapbackd_loop_lag_seconds_bucket{le="+Inf"} 5
            snapbackd_loop_lag_seconds_sum 1.25
            snapbackd_loop_lag_seconds_count 5

            """
        #expect(text == expected)
    }

    /// A family of a type this reader does not know (a newer daemon's) is left out, not written wrong.
    @Test func aFamilyOfAnUnknownTypeIsLeftOut() {
        var reply = Self.reply
        reply.families[1].type = MetricType.Proto(rawValue: 99)
        #expect(!OpenMetrics.render(reply).contains("snapbackd_starts"))
    }

    @Test func prometheusParserReadsTheTextBack() throws {
        let script = """
            import sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            for f in text_string_to_metric_families(sys.stdin.read()):
                for s in f.samples:
                    print(f.type, s.name, sorted(s.labels.items()), repr(s.value))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(OpenMetrics.render(Self.reply).utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("counter snapbackd_seeks_commanded_total [('reason', 'snapback')] 7"), "\(lines)")
        #expect(lines.contains("counter snapbackd_seeks_commanded_total [('reason', 'odd\"one\\\\')] 0"), "\(lines)")
        #expect(lines.contains("counter snapbackd_starts_total [] 18446744073709551615"), "\(lines)")
        #expect(lines.contains("histogram snapbackd_loop_lag_seconds_bucket [('le', '+Inf')] 5"), "\(lines)")
        #expect(lines.contains("histogram snapbackd_loop_lag_seconds_sum [] 1.25"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("gauge snapbackd_start_identity [('boot_id', 'b8cb6e38") }, "\(lines)")
    }
}
