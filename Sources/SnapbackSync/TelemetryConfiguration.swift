// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile

/// `[telemetry]` in sync.conf (`snapback-sync(8)`, docs/telemetry.md): the box's counters as a
/// node_exporter textfile and as reports to a JetStream stream. On unless `enabled = false`; it works
/// without household sync (a sync.conf with `servers` and no `household`).
public struct TelemetryConfiguration: Equatable, Sendable {
    public var enabled = true
    /// Seconds between reports (each jittered ±10 %).
    public var interval = 300
    /// The node_exporter textfile (`*.prom` in its textfile directory); nil: none is written.
    public var textfile: String?
    /// The JetStream stream the reports go to (created when missing, with ``streamLimits``).
    public var stream = "SNAPBACK_TELEMETRY"
    /// The operator's labels of every series this box reports ("" when not set).
    public var firmware = ""
    public var model = ""
    public var region = ""
    /// The box's id as the operator drew it, given with the box's NATS credentials (whose permissions
    /// name its report subject, config/nats-server.conf); nil: the agent makes one (`STATE_DIR/box-id`).
    public var boxId: String?

    public init() {}

    public static let intervalRange = 1...86_400
    /// Operator labels: at most this many bytes of A-Z a-z 0-9 . _ - (a closed charset: the value is a
    /// label of the fleet's series, and never a serial number).
    public static let maxLabelBytes = 64
    public static let keyNames = ["enabled", "interval", "textfile", "stream", "firmware", "model", "region", "box-id"]
    /// Every report's subject starts so; the box id is its last token.
    public static let subjectPrefix = "snapback.telemetry."

    /// The limits of a stream the agent creates: a box's reports are cumulative, so only the latest few
    /// per box matter (older ones are superseded); the duplicate window covers a re-publish after a lost ack.
    public static let maxMessagesPerBox: Int64 = 16
    public static let maxAgeSeconds: Int64 = 72 * 3600
    public static let maxBytes: Int64 = 1 << 30
    public static let maxReportBytes: Int32 = 256 * 1024
    public static let duplicateWindowSeconds: Int64 = 600

    mutating func apply(_ name: String, _ value: String) throws(ConfigurationReason) {
        switch name {
        case "enabled":
            switch value {
            case "true", "yes", "on": enabled = true
            case "false", "no", "off": enabled = false
            default: throw ConfigurationReason("'\(value)' is not true or false")
            }
        case "interval": interval = try SyncConfiguration.count(value, in: Self.intervalRange)
        case "textfile": textfile = try SyncConfiguration.path(value)
        case "stream": stream = try SyncConfiguration.name(value)
        case "firmware": firmware = try Self.label(value)
        case "model": model = try Self.label(value)
        case "region": region = try Self.label(value)
        case "box-id":
            guard TelemetryReporter.isBoxId(value) else { throw ConfigurationReason("'\(value)' is not 32 hex digits (0-9 a-f)") }
            boxId = value
        default: throw ConfigurationReason("unknown key")
        }
    }

    /// Whether `value` is an operator label: 0 to ``maxLabelBytes`` bytes of A-Z a-z 0-9 . _ -.
    public static func isLabel(_ value: some StringProtocol) -> Bool {
        value.utf8.count <= maxLabelBytes
            && value.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2e || b == 0x5f
                    || b == 0x2d
            }
    }

    static func label(_ value: String) throws(ConfigurationReason) -> String {
        guard isLabel(value) else {
            throw ConfigurationReason("'\(value)' is not 0 to \(maxLabelBytes) bytes of A-Z a-z 0-9 . _ -")
        }
        return value
    }

    /// The section as a file (after the top-level keys of ``SyncConfiguration/render()``).
    func render() -> String {
        "\n[telemetry]\nenabled = \(enabled)\ninterval = \(interval)\n"
            + (textfile.map { "textfile = \($0)\n" } ?? "# textfile =\n")
            + "stream = \(stream)\nfirmware = \(firmware)\nmodel = \(model)\nregion = \(region)\n"
            + (boxId.map { "box-id = \($0)\n" } ?? "# box-id =\n")
    }
}
