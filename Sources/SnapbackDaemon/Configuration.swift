// SPDX-License-Identifier: Apache-2.0
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// What the operator configures: built-in defaults, overlaid by `/etc/snapback/snapbackd.conf`, then by
/// its drop-ins (`snapbackd.conf.d/*.conf`, in lexical order), then by the command line.
///
/// The file format, every key and its default are in `snapbackd.conf(5)` (`docs/man/snapbackd.conf.5`)
/// and in the installed default file (`config/snapbackd.conf`); ``ConfigurationFile`` parses it.
///
/// What a reload (SIGHUP) changes: the policy and bookmark timing of sessions opened afterwards, the
/// allow-list and the connection limits for connections accepted afterwards, the session limit for
/// OpenSession calls afterwards, the frame and queue limits and the timeouts of connections accepted
/// afterwards, and the
/// log level at once. Open connections and sessions keep what they have.
public struct DaemonConfiguration: Sendable, Equatable {
    // [policy]
    /// The preset of sessions whose OpenSession names none.
    public var defaultPreset: AdPolicy.Preset = .snapback
    /// Changes to ``defaultPreset`` for sessions that name no preset (a session naming a preset gets that
    /// preset as it is). The device-wide fields are never set here: see below.
    public var policyOverrides = PolicyOverrides()

    // [bookmarks]: the policy's device-wide fields (`AdPolicy.Field.deviceWide`: the bookmark timing,
    // for flash wear) apply to every session, whatever its preset; a session's own overrides still win.
    /// The values of the device-wide fields (its other fields are not used).
    public var deviceWidePolicy = AdPolicy()
    /// Seconds between periodic bookmarks while content plays; 0 = none.
    public var bookmarkInterval: Double {
        get { deviceWidePolicy.bookmarkInterval }
        set { deviceWidePolicy.bookmarkInterval = newValue }
    }
    /// Within this many seconds of the content's end, the bookmark is cleared as finished.
    public var finishedMargin: Double {
        get { deviceWidePolicy.finishedMargin }
        set { deviceWidePolicy.finishedMargin = newValue }
    }
    /// How long a watched break stays watched for a later session of the same content (on demand only;
    /// live sessions never carry watched state). 0 = not kept at all.
    public var watchedRetention: Double = 24 * 3600

    // [metrics]
    /// Seconds between a count and the counters' write to the store, at most (`flush-interval`): what an
    /// unclean stop can lose. A clean stop loses nothing. Within `metricsFlushIntervalRange`.
    public var metricsFlushInterval: Double = 60
    public static let metricsFlushIntervalRange: ClosedRange<Double> = 1...3600

    // [limits]
    /// Connections admitted at once, all peers together; beyond it, RESOURCE_EXHAUSTED and close.
    public var maxConnections = 1024
    /// Connections admitted at once from one uid.
    public var maxConnectionsPerUid = 256
    /// Sessions open at once on one connection; beyond it, OpenSession is answered RESOURCE_EXHAUSTED.
    public var maxSessionsPerConnection = 64
    /// Ad breaks held at once across every open session (about 150 bytes each): a session over it —
    /// an OpenSession or UpdateBreaks — is answered RESOURCE_EXHAUSTED. Without a daemon-wide bound a few
    /// connections, each with its sessions at their limit, could exhaust the box's memory.
    public var maxBreaks = 200_000
    /// Ad breaks one session may hold: an OpenSession or UpdateBreaks carrying more, or a live session
    /// that would grow past it, is answered RESOURCE_EXHAUSTED. A day of a live channel's breaks is a
    /// few hundred; the loop spends a few microseconds per break on each OpenSession, UpdateBreaks and
    /// GetSessionState, and 1,000 keeps each well under 10 ms.
    public var maxBreaksPerSession = Int(WireProtocol.defaultMaxBreaksPerSession)
    /// Largest request body accepted (`--max-frame-size`). 256 KiB holds an OpenSession of 1,000 breaks
    /// with long ids and ad durations; the breaks of a larger body are counted over its bytes before any
    /// is unpacked, and a count over the session's limit refused then.
    public var maxFrameSize = Int(WireProtocol.defaultMaxFrameSize)
    /// Output queued for a client that is not reading before it is disconnected (`--max-outbound-bytes`).
    public var maxOutboundBytes = 8_388_608
    /// Seconds a new connection has to complete Hello before it is closed (`--hello-timeout`).
    public var helloTimeout: Double = 5
    /// Seconds a frame may take to arrive once its first byte has: a connection holding a partial
    /// header or body longer is closed (`--partial-frame-timeout`). A player idle between frames is
    /// never touched.
    public var partialFrameTimeout: Double = 10
    /// Output queued for a WatchDecisions watcher beyond which it is dropped: far below the players'
    /// bound, so that a watcher that stops reading costs little memory and is gone quickly. A
    /// Sync/WatchChanges stream has the same bound (paced at half of it).
    public var maxWatchQueueBytes = 262_144

    // [access]
    public var access = AccessList()

    // [sync]
    public var sync = SyncSettings()

    // [log]
    public var logLevel = Logger.Level.info

    /// Not read from a file: the group of the listening socket's file, which the daemon fills in once
    /// the socket is bound or adopted (for `@socket` in `allow-groups`).
    public var socketGroup: UInt32?

    public init() {}

    /// The policy of sessions that name no preset.
    public var defaultPolicy: AdPolicy {
        withDeviceWideFields(policyOverrides.applied(to: AdPolicy(preset: defaultPreset)))
    }

    /// The policy of a session: the preset it named as it is (or the configured default policy if it
    /// named none), with the configured device-wide fields, then the session's own overrides.
    public func policy(requestedPreset: AdPolicy.Preset?, overrides: PolicyOverrides) -> AdPolicy {
        let base = requestedPreset.map { withDeviceWideFields(AdPolicy(preset: $0)) } ?? defaultPolicy
        return overrides.applied(to: base)
    }

    private func withDeviceWideFields(_ policy: AdPolicy) -> AdPolicy {
        var p = policy
        for field in AdPolicy.fields where field.deviceWide { field.copy(from: deviceWidePolicy, to: &p) }
        return p
    }

    /// The per-connection limits for connections accepted from now on.
    public var connectionConfiguration: Connection.Configuration {
        Connection.Configuration(
            maxFrameSize: maxFrameSize, maxOutboundBytes: maxOutboundBytes,
            helloTimeoutMilliseconds: Self.milliseconds(helloTimeout),
            partialFrameTimeoutMilliseconds: Self.milliseconds(partialFrameTimeout))
    }

    /// Whole milliseconds, at least 1; the timeouts are bounded where they are parsed
    /// (``DaemonOptions/timeoutRange``), and the clamp keeps a value that bypassed that from trapping.
    private static func milliseconds(_ seconds: Double) -> UInt64 {
        let range = DaemonOptions.timeoutRange
        return UInt64((min(max(seconds, range.lowerBound), range.upperBound) * 1000).rounded())
    }

    /// What the store opens with: the [sync] keys. Read once, at start.
    public var storeConfiguration: SQLiteViewerStateStore.Configuration {
        var store = SQLiteViewerStateStore.Configuration()
        store.deviceId = sync.deviceId
        store.maxClockAheadMilliseconds = Int64((min(max(sync.maxClockAhead, 0), 86_400) * 1000).rounded())
        store.tombstoneCapacity = sync.tombstones
        return store
    }

    /// This configuration with the values given on the command line in place of the file's.
    public func overridden(by options: DaemonOptions) -> DaemonConfiguration {
        var result = self
        if let level = options.logLevel { result.logLevel = level }
        if let size = options.maxFrameSize { result.maxFrameSize = size }
        if let bytes = options.maxOutboundBytes { result.maxOutboundBytes = bytes }
        if let seconds = options.helloTimeout { result.helloTimeout = seconds }
        if let seconds = options.partialFrameTimeout { result.partialFrameTimeout = seconds }
        return result
    }
}

/// The store's household-sync values (docs/sync.md). The store reads them when it opens, at start: a
/// reload keeps the values in force and says that a change waits for the next start.
public struct SyncSettings: Sendable, Equatable {
    /// The name this box signs its bookmark changes with; nil: the id the store minted.
    public var deviceId: DeviceID?
    /// How far past this box's wall time a stamp from another box may move its clock, in seconds.
    public var maxClockAhead: Double = Double(HybridLogicalClock.defaultMaxAheadMilliseconds) / 1000
    /// The most tombstones (deleted and cleared bookmarks) kept, the oldest dropped first.
    public var tombstones = 10_000

    public init() {}
}

/// Who may talk to the daemon: a peer is admitted if its uid is listed, or its primary group or one of
/// its supplementary groups is (SO_PEERCRED, SO_PEERGROUPS), or if `anyone` is set. By default: root
/// and the socket's group.
public struct AccessList: Sendable, Equatable {
    /// `allow-users = *`: access control off (for development machines).
    public var anyone = false
    public var users: [UInt32] = [0]
    public var groups: [UInt32] = []
    /// `@socket` in `allow-groups`: the group that owns the socket file.
    public var socketGroup = true
    /// `admin-groups`: besides root, the groups whose members may watch every session's decisions and
    /// see every session (Control/WatchDecisions, ListSessions, GetSession) and use the Sync service
    /// (WatchChanges, Merge). None by default.
    public var adminGroups: [UInt32] = []

    public init() {}

    /// Root, or a member (primary or supplementary group) of an admin group.
    public func isAdmin(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 { return true }
        if adminGroups.contains(peer.gid) { return true }
        return peer.groups.contains { adminGroups.contains($0) }
    }

    /// Who is allowed, for the start-up log line: "uid 0, gid 1001 (the socket's group)".
    func describe(socketGroup socketGid: UInt32?) -> String {
        if anyone { return "anyone" }
        var parts = users.map { "uid \($0)" } + groups.map { "gid \($0)" }
        if socketGroup {
            parts.append(socketGid.map { "gid \($0) (the socket's group)" } ?? "the socket's group (unknown)")
        }
        return parts.isEmpty ? "nobody" : parts.joined(separator: ", ")
    }

    public func allows(_ peer: PeerCredentials, socketGroup socketGid: UInt32?) -> Bool {
        if anyone || users.contains(peer.uid) { return true }
        var allowed = groups
        if socketGroup, let socketGid { allowed.append(socketGid) }
        if allowed.contains(peer.gid) { return true }
        return peer.groups.contains { allowed.contains($0) }
    }
}
