// SPDX-License-Identifier: Apache-2.0
import SnapbackWire
import Testing

@testable import SnapbackSync

/// What a report carries of the daemon's families: names, types and the series that counted.
@Suite struct TelemetryWireTests {
    @Test func aReportCarriesOnlyWhatCounted() {
        let seeks = SnapbackV1.MetricFamily(
            name: "snapbackd_seeks_commanded", help: "Seeks the daemon told a player to make", type: MetricType.counter.proto,
            series: [
                SnapbackV1.MetricSample(labels: [.init(name: "reason", value: "snapback")], value: 2),
                SnapbackV1.MetricSample(labels: [.init(name: "reason", value: "start-of-break")], value: 0)
            ])
        let refused = SnapbackV1.MetricFamily(
            name: "snapbackd_seeks_refused", help: "Refused", type: MetricType.counter.proto,
            series: [SnapbackV1.MetricSample(labels: [.init(name: "move", value: "seek")], value: 0)])
        let lag = SnapbackV1.MetricFamily(
            name: "snapbackd_loop_lag_seconds", help: "Lag", type: MetricType.histogram.proto, unit: "seconds",
            series: [SnapbackV1.MetricSample(bucketBounds: [0.001, .infinity], sum: 0.01, count: 1, bucketCounts: [0, 1])])
        let idle = SnapbackV1.MetricFamily(
            name: "snapbackd_event_handling_seconds", help: "Handling", type: MetricType.histogram.proto, unit: "seconds",
            series: [SnapbackV1.MetricSample(bucketBounds: [0.001, .infinity], sum: 0, count: 0, bucketCounts: [0, 0])])
        let wire = TelemetryReporter.wireFamilies([seeks, refused, lag, idle])
        #expect(wire.map(\.name) == ["snapbackd_seeks_commanded", "snapbackd_loop_lag_seconds"])
        #expect(wire.allSatisfy { $0.help.isEmpty && $0.unit.isEmpty })
        #expect(wire[0].series == [seeks.series[0]])
        // A histogram that observed something keeps every bucket, zero ones too (its shape is the fleet's).
        #expect(wire[1].series == lag.series)
        #expect(wire[0].type == seeks.type && wire[1].type == lag.type)
        #expect(TelemetryReporter.wireFamilies([refused, idle]).isEmpty)
    }
}
