// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackDaemon

/// The catalog, the counter table and what they write: every rule the readers (OpenMetrics, the store,
/// the docs) rely on.
@Suite struct MetricsCatalogTests {
    /// `metricIndex` reads a case's ordinal from its storage: it must be the case's place in `allCases`.
    func expectOrdinals<E: MetricLabel & Equatable>(_: E.Type) {
        for (i, c) in E.allCases.enumerated() { #expect(c.metricIndex == i, "\(E.self).\(c)") }
    }

    @Test func everyLabelsIndexIsItsPlaceInAllCases() {
        expectOrdinals(SeekReason.self)
        expectOrdinals(BreakSkipReason.self)
        expectOrdinals(BookmarkTrigger.self)
        expectOrdinals(BreakPosition.self)
        expectOrdinals(AdPolicy.Preset.self)
        expectOrdinals(SessionKind.self)
        expectOrdinals(StatusCode.self)
        expectOrdinals(RefusedMove.self)
        expectOrdinals(CloseCause.self)
        expectOrdinals(BreakEnding.self)
        expectOrdinals(WatchedRule.self)
    }

    @Test func aBreaksEndingAndItsWatchedRuleComeFromTheActionsReason() {
        let endings: [(TimelineReason.Completion, String)] = [
            (.playheadReachedEnd(30), "playhead-reached-end"), (.adBreakEndedEvent, "ad-break-ended"),
            (.lastAdEnded, "last-ad-ended"), (.noAdBreakEnded, "no-ad-break-ended"),
            (.expectedEndPassed, "expected-end-passed")
        ]
        for (how, label) in endings { #expect(BreakEnding(how).metricLabelValue == label, "\(how)") }
        #expect(WatchedRule.of(.watchedOnBegin(breakId: "b")) == .onBegin)
        #expect(WatchedRule.of(.watchedOnEnd(breakId: "b", .lastAdEnded)) == .onEnd)
        #expect(WatchedRule.of(.loopGuard(max: 3, breakId: "b")) == .loopGuard)
        #expect(WatchedRule.of(.breakCompleted(.lastAdEnded)) == nil)
        #expect(WatchedRule.allCases.map(\.metricLabelValue) == ["on-begin", "on-end", "loop-guard"])
    }

    @Test func namesAreOpenMetricsNamesAndSeriesAreFewAndUnique() {
        let names = Metric.catalog.map(\.name)
        #expect(Set(names).count == names.count)
        for family in Metric.catalog {
            #expect(family.name.hasPrefix("snapbackd_"), "\(family.name)")
            #expect(family.name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(family.name)")
            for suffix in ["_total", "_created", "_count", "_sum", "_bucket", "_info"] {
                #expect(!family.name.hasSuffix(suffix), "\(family.name)")
            }
            if !family.unit.isEmpty { #expect(family.name.hasSuffix("_" + family.unit), "\(family.name)") }
            #expect(family.seriesCount <= 100, "\(family.name): \(family.seriesCount) series")
            for labels in family.labels {
                #expect(Set(labels.values).count == labels.values.count && labels.name != "le", "\(family.name)")
            }
        }
        #expect(Set(DaemonMetrics.slotKeys).count == DaemonMetrics.slotKeys.count)
        #expect(DaemonMetrics.slotKeys.count == DaemonMetrics().slotCount)
    }

    @Test func aSeriesIsItsLabelsInOrderOutermostFirst() throws {
        let skipped = Metric.breaksSkipped.definition
        let presets = AdPolicy.Preset.allCases.count
        let series =
            (BreakSkipReason.cooldown.metricIndex * 3 + BreakPosition.postroll.metricIndex) * presets
            + AdPolicy.Preset.ima.metricIndex
        #expect(skipped.labelValues(ofSeries: series).map(\.value) == ["cooldown", "post", "ima"])
        #expect(skipped.seriesCount == BreakSkipReason.allCases.count * 3 * presets)
    }

    @Test func countsLandInTheirSeriesAndTheFirstOfEachRoundTellsOnce() {
        let metrics = DaemonMetrics()
        var told = 0
        metrics.onDirty = { told += 1 }
        metrics.count(.seeksCommanded, 7)
        metrics.count(.seeksCommanded, 7)
        metrics.count(.replies, StatusCode.notFound.metricIndex, by: 3)
        #expect(told == 1)
        #expect(metrics.value(.seeksCommanded, 7) == 2 && metrics.value(.seeksCommanded, 6) == 0)
        #expect(metrics.value(.replies, StatusCode.notFound.metricIndex) == 3)
        #expect(metrics.takeDirty() && !metrics.takeDirty())
        metrics.count(.starts)
        #expect(told == 2)
        // The loop's lag does not arm a write by itself.
        _ = metrics.takeDirty()
        metrics.observe(.loopLag, nanoseconds: 5, marksDirty: false)
        #expect(told == 2 && !metrics.dirty)
    }

    @Test func observationsGoInTheFirstBucketAtOrOverThemWithTheirSumAndCount() throws {
        let metrics = DaemonMetrics()
        for ns: UInt64 in [0, 500_000, 500_001, 1_000_000_000, 2_000_000_000] {
            metrics.observe(.eventHandling, nanoseconds: ns)
        }
        let family = try #require(metrics.families().first { $0.name == "snapbackd_event_handling_seconds" })
        let sample = try #require(family.series.first)
        #expect(sample.bucketBounds == HistogramBuckets.bounds + [.infinity])
        // le 0.0005: 0 and 500,000 ns; le 0.001: + 500,001; … le 1: + 1 s; +Inf: + 2 s.
        #expect(sample.bucketCounts.first == 2 && sample.bucketCounts[1] == 3)
        #expect(sample.bucketCounts[sample.bucketCounts.count - 2] == 4 && sample.bucketCounts.last == 5)
        #expect(sample.count == 5 && abs(sample.sum - 3.001000001) < 1e-9)
        #expect(MetricType(proto: family.type) == .histogram && family.unit == "seconds")
    }

    @Test func storedValuesAreReadBackByKeyAndUnknownKeysLeftOut() {
        let metrics = DaemonMetrics()
        let presets = AdPolicy.Preset.allCases.count
        metrics.count(
            .breaksWatched,
            (WatchedRule.loopGuard.metricIndex * 3 + BreakPosition.postroll.metricIndex) * presets
                + AdPolicy.Preset.ima.metricIndex)
        metrics.observe(.loopLag, nanoseconds: 3_000_000)
        var stored = Dictionary(uniqueKeysWithValues: zip(DaemonMetrics.slotKeys, metrics.values()))
        #expect(stored["snapbackd_breaks_watched_total{reason=\"loop-guard\",position=\"post\",preset=\"ima\"}"] == 1)
        #expect(stored["snapbackd_loop_lag_seconds_bucket{le=\"0.005\"}"] == 1)
        stored["snapbackd_no_such_metric_total"] = 9
        let again = DaemonMetrics()
        again.load(stored)
        #expect(again.values() == metrics.values())
    }

    @Test func theDocsTableIsTheCatalogs() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/telemetry.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(text.contains(Metric.documentationTable), "docs/telemetry.md's table should be:\n\(Metric.documentationTable)")
        // Its count of the series, as the catalog makes them.
        let counters = Metric.catalog.filter { $0.kind == .counter }
        let sentence =
            "all together \(counters.reduce(0) { $0 + $1.seriesCount }) counter series and "
            + "\(Metric.catalog.count - counters.count) histograms, \(DaemonMetrics.slotKeys.count) samples"
        #expect(text.contains(sentence), "docs/telemetry.md should say: \(sentence)")
    }
}
