// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import SnapbackTimeline

/// `sync.conf` (`snapback-sync(8)`): the same `key = value` syntax as snapbackd.conf; the top-level keys,
/// then one `[telemetry]` section (``TelemetryConfiguration``). Every value is checked where it is read;
/// a value out of range refuses the whole file, naming its line.
public struct SyncConfiguration: Equatable, Sendable {
    public static let defaultPath = "/etc/snapback/sync.conf"

    /// NATS server URLs (`nats://` or `tls://`), tried in turn.
    public var servers: [String] = []
    /// The household: the first token of every key, the subject permissions name (`$KV.<bucket>.<household>.>`).
    /// Empty: no household sync (the agent then only reports telemetry).
    public var household = ""
    /// The device id this box signs its changes with; nil: the one snapbackd reports. When set, it must
    /// be the one snapbackd reports (else nothing could tell this box's own changes from the others').
    public var deviceId: String?
    /// A NATS `.creds` file (user JWT and NKey seed).
    public var credentialsFile: String?
    public var user: String?
    /// A file whose first line is `user`'s password (kept out of the configuration, which is readable).
    public var passwordFile: String?
    public var tlsCA: String?
    public var tlsCert: String?
    public var tlsKey: String?
    public var socket = "/run/snapback/snapbackd.sock"
    public var stateDirectory = "/var/lib/snapback-sync"
    public var bucket = "snapback"
    /// Values kept per key, and the bucket's replicas: used when the agent creates the bucket.
    public var history = 5
    public var replicas = 1
    public var statusFile = "/run/snapback-sync/status"
    /// The most outbox entries sent a second (each a read and a write of the bucket): a repair after the
    /// server lost its store sends everything the box holds, and a household's boxes do it at once.
    public var publishRate = 100
    public var telemetry = TelemetryConfiguration()

    public init() {}

    /// Whether household sync is configured (else the agent only reports telemetry).
    public var syncEnabled: Bool { !household.isEmpty }

    /// Bounds of the values.
    public static let maxServers = 16
    public static let maxURLBytes = 256
    public static let maxPathBytes = 4096
    public static let historyRange = 1...64
    public static let replicasRange = 1...5
    public static let publishRateRange = 1...10_000
    /// Household and bucket names: one NATS subject token of these bytes.
    public static let maxNameBytes = 64

    /// The keys, in the order of the documentation and of ``render()``.
    public static let keyNames = [
        "servers", "household", "device-id", "credentials-file", "user", "password-file", "tls-ca", "tls-cert",
        "tls-key", "socket", "state-directory", "bucket", "history", "replicas", "status-file", "publish-rate"
    ]

    /// Parses `text` (the contents of `file`) over the defaults and checks the whole: required keys
    /// present, keys that go in pairs given together.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> SyncConfiguration {
        var lines: [String: Int] = [:]
        return try parse(text, file: file, lines: &lines)
    }

    /// `parse(_:file:)`, and the last line that set each key, in `lines`.
    static func parse(_ text: String, file: String, lines: inout [String: Int]) throws(ConfigurationError)
        -> SyncConfiguration
    {
        var configuration = SyncConfiguration()
        var seen: [String: Int] = [:]
        var section: String?
        try KeyValueFile.read(
            text, file: file, format: "sync.conf", sections: ["telemetry"],
            keys: keyNames.map { ($0, nil) } + TelemetryConfiguration.keyNames.map { ($0, "telemetry") },
            enter: { name, _ in section = name }
        ) { name, value, line throws(Reason) in
            // A section's keys only under its header, and the top-level ones only before any header.
            if section == "telemetry" {
                guard TelemetryConfiguration.keyNames.contains(name) else {
                    throw Reason("a top-level key: it goes before [telemetry]")
                }
                try configuration.telemetry.apply(name, value)
                seen["telemetry." + name] = line
                return
            }
            guard keyNames.contains(name) else { throw Reason("belongs in [telemetry]") }
            try configuration.apply(name, value)
            seen[name] = line
        }
        lines = seen
        func fail(_ key: String, _ reason: String) -> ConfigurationError {
            ConfigurationError(file: file, line: lines[key], reason: reason)
        }
        if configuration.servers.isEmpty { throw fail("servers", "servers is required (nats:// or tls:// URLs)") }
        if configuration.household.isEmpty, !configuration.telemetry.enabled {
            throw fail("household", "household is required when [telemetry] is disabled (there is nothing else to do)")
        }
        if configuration.credentialsFile != nil, configuration.user != nil {
            throw fail("user", "user: give credentials-file or user and password-file, not both")
        }
        if (configuration.user == nil) != (configuration.passwordFile == nil) {
            throw fail(configuration.user == nil ? "password-file" : "user", "user and password-file go together")
        }
        if (configuration.tlsCert == nil) != (configuration.tlsKey == nil) {
            throw fail(configuration.tlsCert == nil ? "tls-key" : "tls-cert", "tls-cert and tls-key go together")
        }
        return configuration
    }

    package typealias Reason = ConfigurationReason

    /// A NATS user name (sync.conf's and fleet.conf's `user`).
    package static func user(_ value: String) throws(Reason) -> String {
        guard (1...256).contains(value.utf8.count), !value.utf8.contains(where: { $0 < 0x21 || $0 == 0x7f }) else {
            throw Reason("1 to 256 bytes, no spaces or control characters")
        }
        return value
    }

    mutating func apply(_ name: String, _ value: String) throws(Reason) {
        switch name {
        case "servers": servers = try Self.servers(value)
        case "household": household = try Self.name(value)
        case "device-id":
            guard DeviceID.isValid(value) else {
                throw Reason("'\(value)' is not a device id (1 to \(DeviceID.maxBytes) bytes of A-Z a-z 0-9 . _ -)")
            }
            deviceId = value
        case "credentials-file": credentialsFile = try Self.path(value)
        case "user": user = try Self.user(value)
        case "password-file": passwordFile = try Self.path(value)
        case "tls-ca": tlsCA = try Self.path(value)
        case "tls-cert": tlsCert = try Self.path(value)
        case "tls-key": tlsKey = try Self.path(value)
        case "socket":
            // sockaddr_un holds 107 bytes and the terminating NUL.
            guard (1...107).contains(value.utf8.count) else { throw Reason("a socket path of 1 to 107 bytes") }
            socket = try Self.path(value)
        case "state-directory": stateDirectory = try Self.path(value)
        case "bucket": bucket = try Self.name(value)
        case "history": history = try Self.count(value, in: Self.historyRange)
        case "replicas": replicas = try Self.count(value, in: Self.replicasRange)
        case "status-file": statusFile = try Self.path(value)
        case "publish-rate": publishRate = try Self.count(value, in: Self.publishRateRange)
        default: throw Reason("unknown key")
        }
    }

    /// The configuration as a file, every key with its value in force (unset optional keys commented).
    public func render() -> String {
        func line(_ key: String, _ value: String?) -> String {
            value.map { "\(key) = \($0)\n" } ?? "# \(key) =\n"
        }
        return line("servers", servers.joined(separator: " ")) + line("household", household.isEmpty ? nil : household)
            + line("device-id", deviceId) + line("credentials-file", credentialsFile) + line("user", user)
            + line("password-file", passwordFile) + line("tls-ca", tlsCA) + line("tls-cert", tlsCert)
            + line("tls-key", tlsKey) + line("socket", socket) + line("state-directory", stateDirectory)
            + line("bucket", bucket) + line("history", "\(history)") + line("replicas", "\(replicas)")
            + line("status-file", statusFile) + line("publish-rate", "\(publishRate)") + telemetry.render()
    }

    /// A server URL as logs and the status file show it: without the user and password it may carry
    /// (`nats://user:secret@host` → `nats://host`); the status file is readable by every user.
    public static func redacted(_ url: String) -> String {
        let scheme = ["nats://", "tls://"].first { url.hasPrefix($0) } ?? ""
        let rest = url.dropFirst(scheme.count)
        guard let at = rest.lastIndex(of: "@") else { return url }
        return scheme + String(rest[rest.index(after: at)...])
    }

    /// The servers as logs show them.
    public var serversShown: String { servers.map(Self.redacted).joined(separator: " ") }

    /// `servers = …`: 1 to ``maxServers`` URLs, separated by blanks or commas (sync.conf and fleet.conf).
    package static func servers(_ value: String) throws(Reason) -> [String] {
        let urls = value.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
        guard (1...maxServers).contains(urls.count) else { throw Reason("1 to \(maxServers) URLs") }
        for url in urls { try checkURL(url) }
        return urls
    }

    package static func checkURL(_ url: String) throws(Reason) {
        guard url.utf8.count <= maxURLBytes else { throw Reason("a URL longer than \(maxURLBytes) bytes") }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Reason("'\(url)': URLs are printable ASCII without spaces")
        }
        guard let scheme = ["nats://", "tls://"].first(where: { url.hasPrefix($0) }) else {
            throw Reason("'\(url)' is not a nats:// or tls:// URL")
        }
        let rest = url.dropFirst(scheme.count)
        let hostPart = rest.split(separator: "@", maxSplits: 1).last ?? ""
        guard !hostPart.isEmpty, !hostPart.hasPrefix(":"), !hostPart.hasPrefix("/") else {
            throw Reason("'\(url)' names no host")
        }
        if let colon = hostPart.lastIndex(of: ":"), !hostPart.hasSuffix("]") {
            let port = hostPart[hostPart.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else {
                throw Reason("'\(url)': the port is 1 to 65535")
            }
        }
    }

    package static func name(_ value: String) throws(Reason) -> String {
        guard (1...maxNameBytes).contains(value.utf8.count),
            value.utf8.allSatisfy({ KeyCodec.isPlain($0) && $0 != UInt8(ascii: "/") })
        else {
            throw Reason("'\(value)' is not 1 to \(maxNameBytes) bytes of A-Z a-z 0-9 _ -")
        }
        return value
    }

    package static func path(_ value: String) throws(Reason) -> String {
        guard (1...maxPathBytes).contains(value.utf8.count), !value.utf8.contains(0) else {
            throw Reason("a path of 1 to \(maxPathBytes) bytes")
        }
        return value
    }

    package static func count(_ value: String, in range: ClosedRange<Int>) throws(Reason) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw Reason("'\(value)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
