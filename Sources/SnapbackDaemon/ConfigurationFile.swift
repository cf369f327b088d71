// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import SnapbackTimeline
import SnapbackWire

/// Turns user and group names into ids (`getpwnam`, `getgrnam` in the daemon; a table in tests).
public protocol AccountResolver {
    func userId(named name: String) -> UInt32?
    func groupId(named name: String) -> UInt32?
}

/// The format of `snapbackd.conf` and its drop-ins (`snapbackd.conf(5)`), with no I/O:
///
/// ```
/// # a comment; blank lines are ignored
/// [policy]                      # optional section headers: [policy] [bookmarks] [limits] [access] [sync] [log]
/// preset = ima
/// cooldown = 2min               # durations: seconds, or a number with ms, s, min or h
/// [limits]
/// max-frame-size = 512K         # sizes: bytes, or a number with K, M or G (powers of 1024)
/// [access]
/// allow-groups = @socket video  # lists: separated by spaces or commas
/// ```
///
/// Every key lives in one section; a key before any section header is taken for its own section, and a
/// key under the wrong header is an error. Keys are kebab-case `AdPolicy` field names and the limits'
/// names; enum values are the policy's raw values. A key given twice keeps the last value, and a later
/// file overrides an earlier one key by key.
public enum ConfigurationFile {
    public enum Section: String, CaseIterable, Sendable {
        case policy, bookmarks, metrics, limits, access, sync, log
    }

    /// One key: its section, how a value is applied, and how the value in force is written back.
    struct Key {
        let section: Section
        let name: String
        let apply: (inout DaemonConfiguration, String, any AccountResolver) throws(Reason) -> Void
        let render: (DaemonConfiguration) -> String
    }

    /// Why a value was refused (the reader adds the file, the line and the key).
    package typealias Reason = ConfigurationReason

    /// Applies `text` (the contents of `file`) over `configuration`.
    public static func parse(
        _ text: String,
        file: String,
        into configuration: inout DaemonConfiguration,
        resolver: any AccountResolver
    ) throws(ConfigurationError) {
        let keys = keys
        let keysByName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })
        try KeyValueFile.read(
            text, file: file, format: "snapbackd.conf", sections: Section.allCases.map(\.rawValue),
            keys: keys.map { ($0.name, $0.section.rawValue) }
        ) { name, value, _ throws(Reason) in
            try keysByName[name]?.apply(&configuration, value, resolver)
        }
    }

    /// The configuration as a file: every key with its value in force, by section. Parsing the result
    /// gives a configuration with the same effect.
    public static func render(_ configuration: DaemonConfiguration) -> String {
        var text = ""
        for section in Section.allCases {
            text += "[\(section.rawValue)]\n"
            for key in keys where key.section == section {
                text += "\(key.name) = \(key.render(configuration))\n"
            }
            if section != Section.allCases.last { text += "\n" }
        }
        return text
    }

    /// Every key, in the order of the documentation.
    public static var keyNames: [(section: Section, name: String)] {
        keys.map { ($0.section, $0.name) }
    }

    // MARK: The keys

    /// Built per use: loading a configuration is rare, and a table of closures is no `Sendable` global.
    static var keys: [Key] {
        var keys: [Key] = []
        func value<Value>(
            _ section: Section,
            _ name: String,
            _ parse: @escaping (String) throws(Reason) -> Value,
            _ render: @escaping (Value) -> String,
            _ field: WritableKeyPath<DaemonConfiguration, Value>
        ) {
            keys.append(
                Key(
                    section: section, name: name,
                    apply: { configuration, text, _ throws(Reason) in
                        configuration[keyPath: field] = try parse(text)
                    }, render: { render($0[keyPath: field]) }))
        }

        value(
            .policy, "preset",
            { text throws(Reason) in
                guard let preset = AdPolicy.Preset(rawValue: text) else {
                    throw notOneOf(text, AdPolicy.Preset.allCases.map(\.rawValue))
                }
                return preset
            }, { $0.rawValue }, \.defaultPreset)
        // The policy's own fields, from its table: [policy], then the device-wide ones in [bookmarks].
        keys += AdPolicy.fields.map(policyKey)
        value(.bookmarks, "watched-retention", duration, seconds, \.watchedRetention)
        value(
            .metrics, "flush-interval",
            { text throws(Reason) in
                let value = try duration(text)
                let range = DaemonConfiguration.metricsFlushIntervalRange
                guard range.contains(value) else {
                    throw Reason("'\(text)' is not within \(seconds(range.lowerBound)) to \(seconds(range.upperBound)) seconds")
                }
                return value
            }, seconds, \.metricsFlushInterval)

        value(.limits, "max-connections", count(in: 1...65536), { "\($0)" }, \.maxConnections)
        value(.limits, "max-connections-per-uid", count(in: 1...65536), { "\($0)" }, \.maxConnectionsPerUid)
        value(.limits, "max-sessions-per-connection", count(in: 1...65536), { "\($0)" }, \.maxSessionsPerConnection)
        value(.limits, "max-breaks", count(in: 1...10_000_000), { "\($0)" }, \.maxBreaks)
        value(
            .limits, "max-breaks-per-session", count(in: 1...TimelineLayout.maxBreaks), { "\($0)" },
            \.maxBreaksPerSession)
        value(.limits, "max-frame-size", size(in: DaemonOptions.frameSizeRange), { "\($0)" }, \.maxFrameSize)
        value(.limits, "max-outbound-bytes", size(in: DaemonOptions.outboundBytesRange), { "\($0)" }, \.maxOutboundBytes)
        value(.limits, "hello-timeout", timeout, seconds, \.helloTimeout)
        value(.limits, "partial-frame-timeout", timeout, seconds, \.partialFrameTimeout)
        value(.limits, "max-watch-queue-bytes", size(in: 4096...(1 << 30)), { "\($0)" }, \.maxWatchQueueBytes)

        /// An account list: names or ids, and a wildcard word when `everyone` says what it stands for.
        func accounts(
            _ name: String, wildcard: String?, everyone: WritableKeyPath<DaemonConfiguration, Bool>?,
            _ ids: WritableKeyPath<DaemonConfiguration, [UInt32]>,
            resolve: @escaping (any AccountResolver, String) -> UInt32?, unknown: @escaping (String) -> String
        ) {
            keys.append(
                Key(
                    section: .access, name: name,
                    apply: { configuration, text, resolver throws(Reason) in
                        let (all, list) = try idList(
                            text, wildcard: wildcard ?? "", resolve: { resolve(resolver, $0) }, unknown: unknown)
                        if let everyone { configuration[keyPath: everyone] = all }
                        configuration[keyPath: ids] = list
                    },
                    render: { configuration in
                        let all = everyone.map { configuration[keyPath: $0] } ?? false
                        return renderIdList(wildcard: all ? wildcard : nil, configuration[keyPath: ids])
                    }))
        }
        accounts(
            "allow-users", wildcard: "*", everyone: \.access.anyone, \.access.users,
            resolve: { $0.userId(named: $1) }, unknown: { "no user '\($0)' (give a user name, a uid, or * for anyone)" })
        accounts(
            "allow-groups", wildcard: "@socket", everyone: \.access.socketGroup, \.access.groups,
            resolve: { $0.groupId(named: $1) },
            unknown: { "no group '\($0)' (give a group name, a gid, or @socket for the socket's group)" })
        accounts(
            "admin-groups", wildcard: nil, everyone: nil, \.access.adminGroups,
            resolve: { $0.groupId(named: $1) }, unknown: { "no group '\($0)' (give a group name or a gid)" })

        value(
            .sync, "device-id",
            { text throws(Reason) in
                if text.isEmpty { return nil }
                guard let id = try? DeviceID(text) else {
                    throw Reason("'\(text)' is not a device id (1 to \(DeviceID.maxBytes) bytes of A-Z a-z 0-9 . _ -)")
                }
                return id
            }, { $0?.text ?? "" }, \.sync.deviceId)
        value(
            .sync, "max-clock-ahead",
            { text throws(Reason) in
                let value = try duration(text)
                let limit = Double(HybridLogicalClock.maxAheadRange.upperBound) / 1000
                guard value <= limit else { throw Reason("'\(text)' is more than \(seconds(limit)) seconds (24h)") }
                return value
            }, seconds, \.sync.maxClockAhead)
        value(.sync, "tombstones", count(in: 0...1_000_000), { "\($0)" }, \.sync.tombstones)

        value(
            .log, "level",
            { text throws(Reason) in
                guard let level = Logger.Level(name: text) else {
                    throw Reason("'\(text)' is not a level (\(Logger.Level.allCases.map(\.description).joined(separator: ", ")))")
                }
                return level
            }, { $0.description }, \.logLevel)
        return keys
    }

    /// A field of the policy: a change to the default preset, or in [bookmarks] a value for every session.
    static func policyKey(_ field: AdPolicy.Field) -> Key {
        Key(
            section: field.deviceWide ? .bookmarks : .policy, name: field.key,
            apply: { configuration, text, _ throws(Reason) in
                var policy = AdPolicy()
                try assign(text, to: field, of: &policy)
                if field.deviceWide {
                    field.copy(from: policy, to: &configuration.deviceWidePolicy)
                } else {
                    configuration.policyOverrides.set(field, from: policy)
                }
            }, render: { field.text(in: $0.defaultPolicy) })
    }
}
