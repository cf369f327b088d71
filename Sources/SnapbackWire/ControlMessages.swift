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

extension HelloRequest: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.hello.requestDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(protocolVersion: m.uint32("protocol_version"), clientName: try m.string("client_name"))
    }

    func write(to m: ProtoBuilder) {
        m.set("protocol_version", protocolVersion)
        m.set("client_name", clientName)
    }

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

extension HelloReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.hello.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            protocolVersion: m.uint32("protocol_version"), serverName: try m.string("server_name"),
            serverVersion: try m.string("server_version"), maxFrameSize: m.uint32("max_frame_size"),
            maxOutboundQueueBytes: m.uint64("max_outbound_queue_bytes"), policyPresets: try m.strings("policy_presets"),
            defaultPolicyPreset: try m.string("default_policy_preset"),
            maxBreaksPerSession: m.uint32("max_breaks_per_session"))
    }

    func write(to m: ProtoBuilder) {
        m.set("protocol_version", protocolVersion)
        m.set("server_name", serverName)
        m.set("server_version", serverVersion)
        m.set("max_frame_size", maxFrameSize)
        m.set("max_outbound_queue_bytes", maxOutboundQueueBytes)
        m.set("policy_presets", policyPresets)
        m.set("default_policy_preset", defaultPolicyPreset)
        m.set("max_breaks_per_session", maxBreaksPerSession)
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

extension StoreStatus: ProtoFields {
    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            kind: try m.string("kind"), path: try m.string("path"), bookmarks: m.uint64("bookmarks"),
            error: try m.string("error"))
    }

    func write(to m: ProtoBuilder) {
        m.set("kind", kind)
        m.set("path", path)
        m.set("bookmarks", bookmarks)
        m.set("error", error)
    }
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

extension StatusReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.getStatus.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        let store = try m.message("store") ?? StoreStatus()
        self.init(
            uptime: m.double("uptime"), serverVersion: try m.string("server_version"),
            protocolVersion: m.uint32("protocol_version"), connections: m.uint32("connections"),
            sessions: m.uint32("sessions"), requests: m.uint64("requests"), pushes: m.uint64("pushes"),
            store: store, logLinesDropped: m.uint64("log_lines_dropped"))
    }

    func write(to m: ProtoBuilder) {
        m.set("uptime", uptime)
        m.set("server_version", serverVersion)
        m.set("protocol_version", protocolVersion)
        m.set("connections", connections)
        m.set("sessions", sessions)
        m.set("requests", requests)
        m.set("pushes", pushes)
        m.set("store", store)
        m.set("log_lines_dropped", logLinesDropped)
    }

}
