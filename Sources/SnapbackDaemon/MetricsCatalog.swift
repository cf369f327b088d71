// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// The daemon's metrics, declared once: each family's name, help, type, unit and labels. The counter
/// table's layout (``DaemonMetrics``), the GetMetrics reply, the OpenMetrics text (from the reply) and
/// the table of docs/telemetry.md (checked by MetricsCatalogTests) all come from here.
///
/// Labels come only from closed enums (a seek reason, a break position, a status code): never a content
/// id, a profile, a session or a device, which would be viewing history and one series each. The
/// largest family, `snapbackd_breaks_skipped`, has 90 series.
public enum Metric: Int, CaseIterable, Sendable {
    case seeksCommanded, seeksRefused
    case breaksPlayed, breaksWatched, breaksSkipped
    case bookmarksSaved, bookmarksResumed
    case sessionsOpened, sessionsClosed, sessionsClosedInBreak
    case replies
    case storeCommits, storeFailures
    case starts, uncleanStarts
    case loopLag, eventHandling

    /// The catalog, in this order (the reply's order).
    public static let catalog: [MetricDefinition] = allCases.map(\.definition)

    public var definition: MetricDefinition {
        switch self {
        case .seeksCommanded:
            return .counter(
                "snapbackd_seeks_commanded", "Seeks the daemon told a player to make, by the timeline's reason",
                [.of(SeekReason.self), .of(AdPolicy.Preset.self)])
        case .seeksRefused:
            return .counter(
                "snapbackd_seeks_refused",
                "Seeks and trick play refused while an unwatched break played (the player sent back into it)",
                [.of(RefusedMove.self)])
        case .breaksPlayed:
            return .counter("snapbackd_breaks_played", "Ad breaks played to their end", [.of(BreakPosition.self)])
        case .breaksWatched:
            return .counter(
                "snapbackd_breaks_watched", "Ad breaks that came to count as watched (under the session's policy)",
                [.of(BreakPosition.self)])
        case .breaksSkipped:
            return .counter(
                "snapbackd_breaks_skipped", "Ad breaks not played where the viewer met them, by why",
                [.of(BreakSkipReason.self), .of(BreakPosition.self), .of(AdPolicy.Preset.self)])
        case .bookmarksSaved:
            return .counter(
                "snapbackd_bookmarks_saved", "Bookmarks written to the store, by what saved them",
                [MetricLabels(name: "trigger", values: BookmarkTrigger.allCases.map(\.rawValue) + ["finished"])])
        case .bookmarksResumed:
            return .counter("snapbackd_bookmarks_resumed", "Sessions opened at their stored bookmark", [])
        case .sessionsOpened:
            return .counter(
                "snapbackd_sessions_opened", "Sessions opened", [.of(SessionKind.self), .of(AdPolicy.Preset.self)])
        case .sessionsClosed:
            return .counter("snapbackd_sessions_closed", "Sessions closed, by what closed them", [.of(CloseCause.self)])
        case .sessionsClosedInBreak:
            return .counter(
                "snapbackd_sessions_closed_in_break", "Sessions closed while an ad break played (the viewer left in it)",
                [.of(CloseCause.self)])
        case .replies:
            return .counter("snapbackd_replies", "Responses sent, by status code", [.of(StatusCode.self)])
        case .storeCommits:
            return .counter("snapbackd_store_commits", "Transactions the viewer-state store committed", [])
        case .storeFailures:
            return .counter("snapbackd_store_failures", "Store writes that failed (disk full, I/O error, unavailable)", [])
        case .starts:
            return .counter("snapbackd_starts", "Starts of the daemon on this store", [])
        case .uncleanStarts:
            return .counter(
                "snapbackd_unclean_starts", "Starts that found the previous run had not stopped cleanly", [])
        case .loopLag:
            return .histogram(
                "snapbackd_loop_lag_seconds", "How late the loop ran its timers (due time to run time)")
        case .eventHandling:
            return .histogram(
                "snapbackd_event_handling_seconds",
                "Time the loop spent on a read of a connection (one in 16): its requests decoded, decided, answered")
        }
    }
}

/// One family of the catalog.
public struct MetricDefinition: Sendable {
    public let name: String
    public let help: String
    public let kind: MetricType
    /// "seconds", or "".
    public let unit: String
    /// Outermost first: series `i` of a family labelled (a, b) is value `i / b.count` of a, `i % b.count` of b.
    public let labels: [MetricLabels]

    static func counter(_ name: String, _ help: String, _ labels: [MetricLabels]) -> MetricDefinition {
        MetricDefinition(name: name, help: help, kind: .counter, unit: "", labels: labels)
    }

    static func histogram(_ name: String, _ help: String) -> MetricDefinition {
        MetricDefinition(name: name, help: help, kind: .histogram, unit: "seconds", labels: [])
    }

    /// The family's series.
    public var seriesCount: Int { labels.reduce(1) { $0 * $1.values.count } }

    /// Slots in the counter table: one per series for a counter; for a histogram, a count per bucket
    /// (+Inf included), then the sum (nanoseconds) and the count.
    var slotCount: Int { kind == .counter ? seriesCount : HistogramBuckets.bounds.count + 3 }

    /// The label values of series `index`.
    public func labelValues(ofSeries index: Int) -> [(name: String, value: String)] {
        var rest = index
        var values: [(String, String)] = []
        for dimension in labels.reversed() {
            values.append((dimension.name, dimension.values[rest % dimension.values.count]))
            rest /= dimension.values.count
        }
        return values.reversed()
    }
}

/// A label and its closed set of values.
public struct MetricLabels: Sendable {
    public let name: String
    public let values: [String]

    static func of<E: MetricLabel>(_: E.Type) -> MetricLabels {
        MetricLabels(name: E.metricLabelName, values: E.allCases.map(\.metricLabelValue))
    }
}

/// A closed enum whose cases label a family's series.
protocol MetricLabel: CaseIterable {
    static var metricLabelName: String { get }
    var metricLabelValue: String { get }
}

extension MetricLabel {
    /// The case's position in `allCases`. A payload-free enum is stored as its case's ordinal, in
    /// declaration order, which is `allCases`' order (the Swift ABI): one byte read instead of a switch
    /// per counted action. MetricsCatalogTests checks it for every label.
    @inline(__always) var metricIndex: Int { Int(unsafeBitCast(self, to: UInt8.self)) }
}

extension SeekReason: MetricLabel {
    static var metricLabelName: String { "reason" }
    var metricLabelValue: String { rawValue }
}

extension BookmarkTrigger: MetricLabel {
    static var metricLabelName: String { "trigger" }
    var metricLabelValue: String { rawValue }
}

extension BreakSkipReason: MetricLabel {
    static var metricLabelName: String { "reason" }
    var metricLabelValue: String { rawValue }
}

typealias BreakPosition = TimelineSnapshot.BreakPosition

extension TimelineSnapshot.BreakPosition: MetricLabel {
    static var metricLabelName: String { "position" }
    var metricLabelValue: String {
        switch self {
        case .preroll: return "pre"
        case .midroll: return "mid"
        case .postroll: return "post"
        }
    }
}

extension AdPolicy.Preset: MetricLabel {
    static var metricLabelName: String { "preset" }
    var metricLabelValue: String { rawValue }
}

extension SessionKind: MetricLabel {
    static var metricLabelName: String { "kind" }
    var metricLabelValue: String { self == .live ? "live" : "on-demand" }
}

extension StatusCode: MetricLabel {
    static var metricLabelName: String { "code" }
    var metricLabelValue: String { name }
}

/// What a refused seek was.
enum RefusedMove: MetricLabel {
    case seek, trickPlay
    static var metricLabelName: String { "move" }
    var metricLabelValue: String { self == .seek ? "seek" : "trick-play" }
}

/// What closed a session (``TimelineService/CloseTrigger`` as a label).
enum CloseCause: MetricLabel {
    case player, disconnected, shutdown
    static var metricLabelName: String { "by" }
    var metricLabelValue: String {
        switch self {
        case .player: return "player"
        case .disconnected: return "disconnect"
        case .shutdown: return "shutdown"
        }
    }
}

/// The histograms' buckets, shared by all: 0.5 ms to 1 s, as the loop's latencies spread (a request takes
/// microseconds; a millisecond is slow; a second is a stall).
public enum HistogramBuckets {
    /// Upper bounds in seconds, ascending; +Inf follows.
    public static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
}

extension Metric {
    /// The table of docs/telemetry.md, made from the catalog (MetricsCatalogTests checks the file holds it).
    public static var documentationTable: String {
        var lines = ["| sample | type | labels (their values) | what it counts |", "|---|---|---|---|"]
        for family in catalog {
            let sample = family.kind == .counter ? family.name + "_total" : family.name + "_bucket, _sum, _count"
            let labels =
                family.labels.isEmpty
                ? "—" : family.labels.map { "`\($0.name)` (\($0.values.joined(separator: ", ")))" }.joined(separator: "; ")
            lines.append("| `\(sample)` | \(family.kind.rawValue) | \(labels) | \(family.help) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
