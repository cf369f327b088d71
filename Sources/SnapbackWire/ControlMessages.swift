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

extension HelloRequest: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        var m = Snapback__V1__HelloRequest()
        snapback__v1__hello_request__init(&m)
        m.protocol_version = protocolVersion
        return clientName.withCString { name in
            m.client_name = UnsafeMutablePointer(mutating: name)
            return ProtoC.append(&m, to: &out)
        }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> HelloRequest {
        try ProtoC.unpack(body, "snapback.v1.HelloRequest", snapback__v1__hello_request__unpack,
                          snapback__v1__hello_request__free_unpacked) { m throws(WireError) in
            HelloRequest(protocolVersion: m.pointee.protocol_version, clientName: try ProtoC.string(m.pointee.client_name, "client_name"))
        }
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

    public init(protocolVersion: UInt32 = WireProtocol.version, serverName: String = "snapbackd",
                serverVersion: String, maxFrameSize: UInt32 = WireProtocol.defaultMaxFrameSize,
                maxOutboundQueueBytes: UInt64 = WireProtocol.defaultMaxOutboundQueueBytes,
                policyPresets: [String] = AdPolicy.Preset.allCases.map(\.rawValue),
                defaultPolicyPreset: String = AdPolicy.Preset.snapback.rawValue,
                maxBreaksPerSession: UInt32 = UInt32(clamping: TimelineLayout.maxBreaks)) {
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

extension HelloReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__HelloReply()
        snapback__v1__hello_reply__init(&m)
        m.protocol_version = protocolVersion
        m.server_name = arena.string(serverName)
        m.server_version = arena.string(serverVersion)
        m.max_frame_size = maxFrameSize
        m.max_outbound_queue_bytes = maxOutboundQueueBytes
        m.n_policy_presets = policyPresets.count
        m.policy_presets = arena.strings(policyPresets)
        m.default_policy_preset = arena.string(defaultPolicyPreset)
        m.max_breaks_per_session = maxBreaksPerSession
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> HelloReply {
        try ProtoC.unpack(body, "snapback.v1.HelloReply", snapback__v1__hello_reply__unpack,
                          snapback__v1__hello_reply__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            return HelloReply(protocolVersion: m.protocol_version, serverName: try ProtoC.string(m.server_name, "server_name"),
                              serverVersion: try ProtoC.string(m.server_version, "server_version"), maxFrameSize: m.max_frame_size,
                              maxOutboundQueueBytes: m.max_outbound_queue_bytes,
                              policyPresets: try ProtoC.strings(m.policy_presets, m.n_policy_presets, "policy_presets"),
                              defaultPolicyPreset: try ProtoC.string(m.default_policy_preset, "default_policy_preset"),
                              maxBreaksPerSession: m.max_breaks_per_session)
        }
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

    public init(uptime: Double, serverVersion: String, protocolVersion: UInt32 = WireProtocol.version,
                connections: UInt32, sessions: UInt32, requests: UInt64 = 0, pushes: UInt64 = 0,
                store: StoreStatus = StoreStatus(), logLinesDropped: UInt64 = 0) {
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

extension StatusReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var s = Snapback__V1__StoreStatus()
        snapback__v1__store_status__init(&s)
        s.kind = arena.string(store.kind)
        s.path = arena.string(store.path)
        s.bookmarks = store.bookmarks
        s.error = arena.string(store.error)
        var m = Snapback__V1__StatusReply()
        snapback__v1__status_reply__init(&m)
        m.uptime = uptime
        m.server_version = arena.string(serverVersion)
        m.protocol_version = protocolVersion
        m.connections = connections
        m.sessions = sessions
        m.requests = requests
        m.pushes = pushes
        m.store = arena.box(s)
        m.log_lines_dropped = logLinesDropped
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> StatusReply {
        try ProtoC.unpack(body, "snapback.v1.StatusReply", snapback__v1__status_reply__unpack,
                          snapback__v1__status_reply__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            var store = StoreStatus()
            if let s = m.store?.pointee {
                store = StoreStatus(kind: try ProtoC.string(s.kind, "kind"), path: try ProtoC.string(s.path, "path"), bookmarks: s.bookmarks,
                                    error: try ProtoC.string(s.error, "error"))
            }
            return StatusReply(uptime: m.uptime, serverVersion: try ProtoC.string(m.server_version, "server_version"),
                               protocolVersion: m.protocol_version, connections: m.connections, sessions: m.sessions,
                               requests: m.requests, pushes: m.pushes, store: store,
                               logLinesDropped: m.log_lines_dropped)
        }
    }
}
