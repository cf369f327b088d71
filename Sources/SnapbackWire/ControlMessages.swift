// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.HelloRequest`: the first call on a connection.
public struct HelloRequest: Sendable, Equatable {
    public var protocolVersion: UInt32
    public var clientName: String

    public init(protocolVersion: UInt32 = WireProtocol.version, clientName: String = "") {
        self.protocolVersion = protocolVersion
        self.clientName = clientName
    }
}

extension HelloRequest: ProtoMapped {
    init(proto p: SnapbackV1.HelloRequest) { self.init(protocolVersion: p.protocolVersion, clientName: p.clientName) }
    var proto: SnapbackV1.HelloRequest { SnapbackV1.HelloRequest(protocolVersion: protocolVersion, clientName: clientName) }
}

/// `snapback.v1.HelloReply`: what the server speaks and its limits.
public struct HelloReply: Sendable, Equatable {
    public var protocolVersion: UInt32
    public var serverName: String
    public var serverVersion: String
    public var maxFrameSize: UInt32
    public var maxOutboundQueueBytes: UInt64
    public var policyPresets: [String]
    public var defaultPolicyPreset: String
    public var maxBreaksPerSession: UInt32

    public init(
        protocolVersion: UInt32 = WireProtocol.version, serverName: String = "snapbackd",
        serverVersion: String, maxFrameSize: UInt32 = WireProtocol.defaultMaxFrameSize,
        maxOutboundQueueBytes: UInt64 = WireProtocol.defaultMaxOutboundQueueBytes,
        policyPresets: [String] = AdPolicy.Preset.allCases.map(\.rawValue),
        defaultPolicyPreset: String = AdPolicy.Preset.snapback.rawValue,
        maxBreaksPerSession: UInt32 = WireProtocol.defaultMaxBreaksPerSession
    ) {
        self.protocolVersion = protocolVersion
        self.serverName = serverName
        self.serverVersion = serverVersion
        self.maxFrameSize = maxFrameSize
        self.maxOutboundQueueBytes = maxOutboundQueueBytes
        self.policyPresets = policyPresets
        self.defaultPolicyPreset = defaultPolicyPreset
        self.maxBreaksPerSession = maxBreaksPerSession
    }
}

extension HelloReply: ProtoMapped {
    init(proto p: SnapbackV1.HelloReply) {
        self.init(
            protocolVersion: p.protocolVersion, serverName: p.serverName, serverVersion: p.serverVersion,
            maxFrameSize: p.maxFrameSize, maxOutboundQueueBytes: p.maxOutboundQueueBytes, policyPresets: p.policyPresets,
            defaultPolicyPreset: p.defaultPolicyPreset, maxBreaksPerSession: p.maxBreaksPerSession)
    }

    var proto: SnapbackV1.HelloReply {
        SnapbackV1.HelloReply(
            protocolVersion: protocolVersion, serverName: serverName, serverVersion: serverVersion,
            maxFrameSize: maxFrameSize, maxOutboundQueueBytes: maxOutboundQueueBytes, policyPresets: policyPresets,
            defaultPolicyPreset: defaultPolicyPreset, maxBreaksPerSession: maxBreaksPerSession)
    }
}

/// `snapback.v1.StoreStatus`: the bookmark store's health.
public struct StoreStatus: Sendable, Equatable {
    /// "sqlite", "memory", …
    public var kind: String
    public var path: String
    public var bookmarks: UInt64
    /// Empty when the store works.
    public var error: String

    public init(kind: String = "", path: String = "", bookmarks: UInt64 = 0, error: String = "") {
        self.kind = kind
        self.path = path
        self.bookmarks = bookmarks
        self.error = error
    }
}

extension StoreStatus {
    init(proto p: SnapbackV1.StoreStatus) { self.init(kind: p.kind, path: p.path, bookmarks: p.bookmarks, error: p.error) }
    var proto: SnapbackV1.StoreStatus { SnapbackV1.StoreStatus(kind: kind, path: path, bookmarks: bookmarks, error: error) }
}

/// `snapback.v1.StatusReply`: daemon health and counters (Control/GetStatus).
public struct StatusReply: Sendable, Equatable {
    /// Seconds since the daemon started.
    public var uptime: Double
    public var serverVersion: String
    public var protocolVersion: UInt32
    public var connections: UInt32
    public var sessions: UInt32
    public var requests: UInt64
    public var pushes: UInt64
    public var store: StoreStatus
    /// Log lines dropped since start because stderr did not take them.
    public var logLinesDropped: UInt64

    public init(
        uptime: Double, serverVersion: String, protocolVersion: UInt32 = WireProtocol.version,
        connections: UInt32, sessions: UInt32, requests: UInt64 = 0, pushes: UInt64 = 0,
        store: StoreStatus = StoreStatus(), logLinesDropped: UInt64 = 0
    ) {
        self.uptime = uptime
        self.serverVersion = serverVersion
        self.protocolVersion = protocolVersion
        self.connections = connections
        self.sessions = sessions
        self.requests = requests
        self.pushes = pushes
        self.store = store
        self.logLinesDropped = logLinesDropped
    }
}

extension StatusReply: ProtoMapped {
    init(proto p: SnapbackV1.StatusReply) {
        self.init(
            uptime: p.uptime, serverVersion: p.serverVersion, protocolVersion: p.protocolVersion,
            connections: p.connections, sessions: p.sessions, requests: p.requests, pushes: p.pushes,
            store: p.store.map(StoreStatus.init(proto:)) ?? StoreStatus(), logLinesDropped: p.logLinesDropped)
    }

    var proto: SnapbackV1.StatusReply {
        SnapbackV1.StatusReply(
            uptime: uptime, serverVersion: serverVersion, protocolVersion: protocolVersion, connections: connections,
            sessions: sessions, requests: requests, pushes: pushes, store: store.proto, logLinesDropped: logLinesDropped)
    }
}
