// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// The OpenMetrics 1.0 text (`application/openmetrics-text; version=1.0.0`) of a GetMetrics reply, for
/// `snapback metrics` and the node_exporter textfile the agent writes. It knows no metric: it writes what
/// the reply's families say (name, help, type, unit, samples), so a metric added to the daemon needs no
/// change here. Every sample name and label is the daemon's (closed sets); values are escaped anyway.
public enum OpenMetrics {
    public static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// OpenMetrics 1.0 (`snapback metrics`), or the Prometheus text format 0.0.4 that node_exporter's
    /// textfile collector reads: there a counter's TYPE and HELP name its `_total` samples (else they are
    /// untyped families without help), and there is no `# UNIT` or `# EOF`.
    public enum Format: Sendable {
        case openMetrics, prometheus
    }

    /// The text, ending with `# EOF`. `identity`: the reply's start and boot ids and start time as gauges
    /// (`snapbackd_start_identity`, `snapbackd_start_time_seconds`); false leaves them out. Counters carry
    /// no `_created`: the Prometheus text format a textfile is read in would take it for a series.
    public static func render(_ reply: SnapbackV1.MetricsReply, identity: Bool = true, format: Format = .openMetrics)
        -> String
    {
        var out = ""
        let openMetrics = format == .openMetrics
        for family in reply.families {
            guard let type = MetricType(proto: family.type) else { continue }
            let name = !openMetrics && type == .counter ? family.name + "_total" : family.name
            out += "# TYPE \(name) \(type.rawValue)\n"
            if openMetrics && !family.unit.isEmpty { out += "# UNIT \(name) \(family.unit)\n" }
            out += "# HELP \(name) \(escape(family.help, quotes: false))\n"
            for sample in family.series {
                switch type {
                case .counter:
                    out += "\(family.name)_total\(labels(sample.labels)) \(sample.value)\n"
                case .histogram:
                    for (bound, count) in zip(sample.bucketBounds, sample.bucketCounts) {
                        let le = SnapbackV1.MetricLabel(name: "le", value: bound.isInfinite ? "+Inf" : number(bound))
                        out += "\(family.name)_bucket\(labels(sample.labels + [le])) \(count)\n"
                    }
                    out += "\(family.name)_sum\(labels(sample.labels)) \(number(sample.sum))\n"
                    out += "\(family.name)_count\(labels(sample.labels)) \(sample.count)\n"
                }
            }
        }
        if identity && !reply.startId.isEmpty {
            // A gauge, not OpenMetrics' info type: node_exporter's textfile reader takes the Prometheus
            // text format, where `info` is no type (`# UNIT` and `# EOF` are comments there).
            out += "# TYPE snapbackd_start_identity gauge\n"
            out += "# HELP snapbackd_start_identity This run of the daemon (its start id) on this boot of the box (its boot id)\n"
            let ids = [
                SnapbackV1.MetricLabel(name: "start_id", value: reply.startId),
                SnapbackV1.MetricLabel(name: "boot_id", value: reply.bootId)
            ]
            out += "snapbackd_start_identity\(labels(ids)) 1\n"
            out += "# TYPE snapbackd_start_time_seconds gauge\n"
            if openMetrics { out += "# UNIT snapbackd_start_time_seconds seconds\n" }
            out += "# HELP snapbackd_start_time_seconds Wall time this run of the daemon started\n"
            out += "snapbackd_start_time_seconds \(number(reply.startTime))\n"
        }
        if openMetrics { out += "# EOF\n" }
        return out
    }

    static func labels(_ labels: [SnapbackV1.MetricLabel]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.name)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
    }

    /// A number as OpenMetrics writes it: integers without a fraction, others as Swift prints a Double
    /// (the shortest text that reads back the same).
    static func number(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value.isNaN { return "NaN" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A label value's escapes (backslash, double quote, line feed); a help text's leave the quote.
    static func escape(_ text: String, quotes: Bool = true) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case "\"" where quotes: out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
