// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import SnapbackSync

/// `fleet.conf` (`snapback-fleet(8)`): the `key = value` syntax of sync.conf, without sections. Every
/// value is checked where it is read; a value out of range refuses the whole file, naming its line.
public struct FleetConfiguration: Equatable, Sendable {
    public static let defaultPath = "/etc/snapback/fleet.conf"

    /// NATS server URLs (`nats://` or `tls://`), tried in turn.
    public var servers: [String] = []
    /// A NATS `.creds` file (user JWT and NKey seed).
    public var credentialsFile: String?
    /// Or a NATS user and the file holding its password (its first line).
    public var user: String?
    public var passwordFile: String?
    /// The boxes' stream (created when missing, with the agent's limits) and the durable consumer's name.
    public var stream = "SNAPBACK_TELEMETRY"
    public var consumer = "snapback-fleet"
    /// The fleet's SQLite database: per box the last report applied, per series the fleet's totals, and
    /// the consumer's position.
    public var database = "/var/lib/snapback-fleet/fleet.db"
    /// The metrics store's import API (VictoriaMetrics' Prometheus text import).
    public var importURL = "http://127.0.0.1:8428/api/v1/import/prometheus"
    /// Reports taken (and applied in one transaction) at a time.
    public var batch = 256
    /// Seconds between writes of every total to the store (changed totals are written after each batch).
    public var exportInterval = 60
    /// The stream's replicas, when snapback-fleet creates it.
    public var replicas = 1
    /// Boxes the fleet keeps (each one's last report is in memory): the report of a new box past it is
    /// logged, acked and dropped.
    public var maxBoxes = 2_000_000

    public init() {}

    public static let batchRange = 1...1024
    public static let exportIntervalRange = 1...3600
    public static let maxBoxesRange = 1...50_000_000
    public static let keyNames = [
        "servers", "credentials-file", "user", "password-file", "stream", "consumer", "database", "import-url", "batch",
        "export-interval", "replicas", "max-boxes"
    ]

    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> FleetConfiguration {
        var configuration = FleetConfiguration()
        var lines: [String: Int] = [:]
        try KeyValueFile.read(text, file: file, format: "fleet.conf", keys: keyNames.map { ($0, nil) }) {
            name, value, line throws(ConfigurationReason) in
            try configuration.apply(name, value)
            lines[name] = line
        }
        if configuration.servers.isEmpty {
            throw ConfigurationError(file: file, line: nil, reason: "servers is required (nats:// or tls:// URLs)")
        }
        if configuration.credentialsFile != nil, configuration.user != nil {
            throw ConfigurationError(
                file: file, line: lines["user"], reason: "user: give credentials-file or user and password-file, not both")
        }
        if (configuration.user == nil) != (configuration.passwordFile == nil) {
            let name = configuration.user == nil ? "password-file" : "user"
            throw ConfigurationError(file: file, line: lines[name], reason: "\(name): user and password-file go together")
        }
        return configuration
    }

    mutating func apply(_ name: String, _ value: String) throws(ConfigurationReason) {
        switch name {
        case "servers": servers = try SyncConfiguration.servers(value)
        case "credentials-file": credentialsFile = try SyncConfiguration.path(value)
        case "user": user = try SyncConfiguration.user(value)
        case "password-file": passwordFile = try SyncConfiguration.path(value)
        case "stream": stream = try SyncConfiguration.name(value)
        case "consumer": consumer = try SyncConfiguration.name(value)
        case "database": database = try SyncConfiguration.path(value)
        case "import-url":
            guard value.utf8.count <= SyncConfiguration.maxURLBytes, value.hasPrefix("http://") || value.hasPrefix("https://"),
                value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
            else { throw ConfigurationReason("'\(value)' is not an http:// or https:// URL of at most 256 bytes") }
            importURL = value
        case "batch": batch = try SyncConfiguration.count(value, in: Self.batchRange)
        case "export-interval": exportInterval = try SyncConfiguration.count(value, in: Self.exportIntervalRange)
        case "replicas": replicas = try SyncConfiguration.count(value, in: SyncConfiguration.replicasRange)
        case "max-boxes": maxBoxes = try SyncConfiguration.count(value, in: Self.maxBoxesRange)
        default: throw ConfigurationReason("unknown key")
        }
    }

    /// The configuration as a file, every key with its value in force.
    public func render() -> String {
        "servers = \(servers.map(SyncConfiguration.redacted).joined(separator: " "))\n"
            + (credentialsFile.map { "credentials-file = \($0)\n" } ?? "# credentials-file =\n")
            + (user.map { "user = \($0)\n" } ?? "# user =\n")
            + (passwordFile.map { "password-file = \($0)\n" } ?? "# password-file =\n")
            + "stream = \(stream)\nconsumer = \(consumer)\ndatabase = \(database)\nimport-url = \(importURL)\n"
            + "batch = \(batch)\nexport-interval = \(exportInterval)\nreplicas = \(replicas)\nmax-boxes = \(maxBoxes)\n"
    }
}
