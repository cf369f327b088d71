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
            return .counter(
                "snapbackd_breaks_played", "Ad breaks played to their end, by what told the daemon they ended",
                [.of(BreakEnding.self), .of(BreakPosition.self), .of(AdPolicy.Preset.self)])
        case .breaksWatched:
            return .counter(
                "snapbackd_breaks_watched",
                "Ad breaks that came to count as watched, by the rule that counted them (under the session's policy)",
                [.of(WatchedRule.self), .of(BreakPosition.self), .of(AdPolicy.Preset.self)])
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
        // Debug builds (the tests') check every label the catalog uses: a series counted at a wrong
        // index would be counted under another label's name, silently.
        assert(E.allCases.enumerated().allSatisfy { $0.offset == $0.element.metricIndex }, "\(E.self).metricIndex")
        return MetricLabels(name: E.metricLabelName, values: E.allCases.map(\.metricLabelValue))
    }
}

/// A closed enum whose cases label a family's series.
protocol MetricLabel: CaseIterable {
    static var metricLabelName: String { get }
    var metricLabelValue: String { get }
    /// The case's place in `allCases`: its series' index along this label. Each label says it, by its
    /// `Int` raw value or a switch the compiler checks is exhaustive (and the optimizer makes the case's
    /// stored ordinal); MetricsCatalogTests checks that it is the place in `allCases` for every label.
    var metricIndex: Int { get }
}

extension MetricLabel where Self: RawRepresentable, RawValue == Int {
    @inline(__always) var metricIndex: Int { rawValue }
}

extension SeekReason: MetricLabel {
    static var metricLabelName: String { "reason" }
    var metricLabelValue: String { rawValue }
    @inline(__always) var metricIndex: Int {
        switch self {
        case .snapback: return 0
        case .resumeAfterSnapback: return 1
        case .resumeFromBookmark: return 2
        case .breakBeforeResume: return 3
        case .skipWatchedBreak: return 4
        case .skipDuringCooldown: return 5
        case .skipDisabledBreak: return 6
        case .startOfBreak: return 7
        case .seekRefusedDuringAd: return 8
        }
    }
}

extension BookmarkTrigger: MetricLabel {
    static var metricLabelName: String { "trigger" }
    var metricLabelValue: String { rawValue }
    @inline(__always) var metricIndex: Int {
        switch self {
        case .paused: return 0
        case .closed: return 1
        case .disconnected: return 2
        case .seek: return 3
        case .periodic: return 4
        case .snapbackReturn: return 5
        }
    }
}

extension BreakSkipReason: MetricLabel {
    static var metricLabelName: String { "reason" }
    var metricLabelValue: String { rawValue }
    @inline(__always) var metricIndex: Int {
        switch self {
        case .trickPlay: return 0
        case .resumePlan: return 1
        case .cooldown: return 2
        case .exempt: return 3
        case .watched: return 4
        case .disabled: return 5
        }
    }
}

/// How a break was seen to its end (``TimelineReason/Completion`` without its times), as a label.
enum BreakEnding: Int, MetricLabel {
    case playheadReachedEnd, adBreakEnded, lastAdEnded, noAdBreakEnded, expectedEndPassed

    init(_ how: TimelineReason.Completion) {
        switch how {
        case .playheadReachedEnd: self = .playheadReachedEnd
        case .adBreakEndedEvent: self = .adBreakEnded
        case .lastAdEnded: self = .lastAdEnded
        case .noAdBreakEnded: self = .noAdBreakEnded
        case .expectedEndPassed: self = .expectedEndPassed
        }
    }

    static var metricLabelName: String { "reason" }
    var metricLabelValue: String {
        switch self {
        case .playheadReachedEnd: return "playhead-reached-end"
        case .adBreakEnded: return "ad-break-ended"
        case .lastAdEnded: return "last-ad-ended"
        case .noAdBreakEnded: return "no-ad-break-ended"
        case .expectedEndPassed: return "expected-end-passed"
        }
    }
}

/// The rule that made a break count as watched: the reason of a `breakWatched` action.
enum WatchedRule: Int, MetricLabel {
    case onBegin, onEnd, loopGuard

    /// The rule of a `breakWatched` action's reason; nil for a reason that never comes with one.
    @inline(__always)
    static func of(_ reason: TimelineReason) -> WatchedRule? {
        switch reason {
        case .watchedOnBegin: return .onBegin
        case .watchedOnEnd: return .onEnd
        case .loopGuard: return .loopGuard
        default: return nil
        }
    }

    static var metricLabelName: String { "reason" }
    var metricLabelValue: String {
        switch self {
        case .onBegin: return "on-begin"
        case .onEnd: return "on-end"
        case .loopGuard: return "loop-guard"
        }
    }
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
    @inline(__always) var metricIndex: Int {
        switch self {
        case .preroll: return 0
        case .midroll: return 1
        case .postroll: return 2
        }
    }
}

extension AdPolicy.Preset: MetricLabel {
    static var metricLabelName: String { "preset" }
    var metricLabelValue: String { rawValue }
    @inline(__always) var metricIndex: Int {
        switch self {
        case .snapback: return 0
        case .ima: return 1
        case .tvsdk: return 2
        case .media3: return 3
        case .hlsjs: return 4
        }
    }
}

extension SessionKind: MetricLabel {
    static var metricLabelName: String { "kind" }
    var metricLabelValue: String { self == .live ? "live" : "on-demand" }
    @inline(__always) var metricIndex: Int { self == .onDemand ? 0 : 1 }
}

extension StatusCode: MetricLabel {
    static var metricLabelName: String { "code" }
    var metricLabelValue: String { name }
    /// gRPC's numbers, 0 to 16 in declaration order.
    @inline(__always) var metricIndex: Int { Int(rawValue) }
}

/// What a refused seek was.
enum RefusedMove: Int, MetricLabel {
    case seek, trickPlay
    static var metricLabelName: String { "move" }
    var metricLabelValue: String { self == .seek ? "seek" : "trick-play" }
}

/// What closed a session (``TimelineService/CloseTrigger`` as a label).
enum CloseCause: Int, MetricLabel {
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
