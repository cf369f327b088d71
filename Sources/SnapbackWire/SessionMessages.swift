import CSnapbackProto
import SnapbackTimeline

// The operator's side of the Control service: ListSessions, GetSession and the WatchDecisions stream.

/// `snapback.v1.SessionInfo`: an open session as an operator sees it.
public struct SessionInfo: Sendable, Equatable {
    public var sessionId: UInt64
    public var contentId: String
    public var streamId: String
    public var profile: String
    public var kind: SessionKind
    public var policyPreset: String
    public var clientName: String
    public var peerUid: UInt32
    public var peerPid: Int32
    /// Wall time the session opened, unix seconds.
    public var openedAt: Double
    /// The last push's seq.
    public var pushes: UInt64
    public var breakCount: UInt32
    /// Without breaks in a ListSessions reply.
    public var state: SessionStateReply
    /// Ads excluded; nil when the player gave none.
    public var contentDuration: Double?

    public init(sessionId: UInt64, contentId: String, streamId: String, profile: String, kind: SessionKind,
                policyPreset: String, clientName: String, peerUid: UInt32, peerPid: Int32, openedAt: Double,
                pushes: UInt64, breakCount: UInt32, state: SessionStateReply, contentDuration: Double? = nil) {
        self.sessionId = sessionId
        self.contentId = contentId
        self.streamId = streamId
        self.profile = profile
        self.kind = kind
        self.policyPreset = policyPreset
        self.clientName = clientName
        self.peerUid = peerUid
        self.peerPid = peerPid
        self.openedAt = openedAt
        self.pushes = pushes
        self.breakCount = breakCount
        self.state = state
        self.contentDuration = contentDuration
    }
}

extension SessionInfo: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = proto(arena)
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    func proto(_ arena: CArena) -> Snapback__V1__SessionInfo {
        var m = Snapback__V1__SessionInfo()
        snapback__v1__session_info__init(&m)
        m.session_id = sessionId
        m.content_id = arena.string(contentId)
        m.stream_id = arena.string(streamId)
        m.profile = arena.string(profile)
        m.kind = kind.proto
        m.policy_preset = arena.string(policyPreset)
        m.client_name = arena.string(clientName)
        m.peer_uid = peerUid
        m.peer_pid = peerPid
        m.opened_at = openedAt
        m.pushes = pushes
        m.break_count = breakCount
        m.state = arena.box(state.proto(arena))
        if let contentDuration {
            m._content_duration_case = SNAPBACK__V1__SESSION_INFO___CONTENT_DURATION_CONTENT_DURATION
            m.content_duration = contentDuration
        }
        return m
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> SessionInfo {
        try ProtoC.unpack(body, "snapback.v1.SessionInfo", snapback__v1__session_info__unpack,
                          snapback__v1__session_info__free_unpacked) { p throws(WireError) in
            try SessionInfo(proto: p.pointee)
        }
    }

    init(proto m: Snapback__V1__SessionInfo) throws(WireError) {
        let state = try m.state.map { (s) throws(WireError) in try SessionStateReply(proto: s.pointee) }
            ?? SessionStateReply(phase: nil, streamTime: 0, contentTime: 0, playing: false, rate: 0)
        self.init(
            sessionId: m.session_id, contentId: try ProtoC.string(m.content_id, "content_id"),
            streamId: try ProtoC.string(m.stream_id, "stream_id"), profile: try ProtoC.string(m.profile, "profile"),
            kind: SessionKind(proto: m.kind) ?? .onDemand,
            policyPreset: try ProtoC.string(m.policy_preset, "policy_preset"),
            clientName: try ProtoC.string(m.client_name, "client_name"), peerUid: m.peer_uid, peerPid: m.peer_pid,
            openedAt: m.opened_at, pushes: m.pushes, breakCount: m.break_count, state: state,
            contentDuration: m._content_duration_case.rawValue != 0 ? m.content_duration : nil)
    }
}

/// `snapback.v1.ListSessionsReply`.
public struct ListSessionsReply: Sendable, Equatable {
    public var sessions: [SessionInfo]
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

extension ListSessionsReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__ListSessionsReply()
        snapback__v1__list_sessions_reply__init(&m)
        m.n_sessions = sessions.count
        if !sessions.isEmpty {
            let items = arena.allocate(UnsafeMutablePointer<Snapback__V1__SessionInfo>?.self, count: sessions.count)
            for (i, session) in sessions.enumerated() { (items + i).initialize(to: arena.box(session.proto(arena))) }
            m.sessions = items
        }
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ListSessionsReply {
        try ProtoC.unpack(body, "snapback.v1.ListSessionsReply", snapback__v1__list_sessions_reply__unpack,
                          snapback__v1__list_sessions_reply__free_unpacked) { p throws(WireError) in
            var sessions: [SessionInfo] = []
            for i in 0..<p.pointee.n_sessions {
                guard let s = p.pointee.sessions[i] else { continue }
                sessions.append(try SessionInfo(proto: s.pointee))
            }
            return ListSessionsReply(sessions: sessions)
        }
    }
}

/// `snapback.v1.Decision`: one decision of a session's timeline, as the WatchDecisions stream carries it.
public struct WireDecision: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case seek = "seek"
        case breakWatched = "break-watched"
        case breakCompleted = "break-completed"
        case playBreak = "play-break"
        case allAdsCompleted = "all-ads-completed"
        case saveBookmark = "save-bookmark"
        case clearBookmark = "clear-bookmark"
    }

    public var seq: UInt64
    public var sessionId: UInt64
    public var contentId: String
    public var streamId: String
    public var profile: String
    public var at: Double
    /// nil when the server sent UNSPECIFIED or a kind this version does not know.
    public var kind: Kind?
    public var reason: String
    public var streamTime: Double
    public var seekReason: SeekReason?
    public var breakId: String
    public var contentTime: Double
    public var bookmarkTrigger: BookmarkTrigger?

    public init(seq: UInt64 = 0, sessionId: UInt64, contentId: String, streamId: String = "", profile: String = "",
                at: Double, kind: Kind?, reason: String, streamTime: Double = 0, seekReason: SeekReason? = nil,
                breakId: String = "", contentTime: Double = 0, bookmarkTrigger: BookmarkTrigger? = nil) {
        self.seq = seq
        self.sessionId = sessionId
        self.contentId = contentId
        self.streamId = streamId
        self.profile = profile
        self.at = at
        self.kind = kind
        self.reason = reason
        self.streamTime = streamTime
        self.seekReason = seekReason
        self.breakId = breakId
        self.contentTime = contentTime
        self.bookmarkTrigger = bookmarkTrigger
    }

    /// The decision a timeline action stands for; nil for the timers, which are the daemon's own business.
    public init?(_ action: TimelineAction, sessionId: UInt64, contentId: String, streamId: String, profile: String,
                 at: Double) {
        self.init(sessionId: sessionId, contentId: contentId, streamId: streamId, profile: profile, at: at,
                  kind: nil, reason: action.reason.description)
        switch action.kind {
        case .seek(let to, let why):
            kind = .seek
            streamTime = to
            seekReason = why
        case .breakWatched(let id):
            kind = .breakWatched
            breakId = id
        case .breakCompleted(let id):
            kind = .breakCompleted
            breakId = id
        case .playBreak(let id):
            kind = .playBreak
            breakId = id
        case .allAdsCompleted:
            kind = .allAdsCompleted
        case .saveBookmark(let c, let s, let trigger):
            kind = .saveBookmark
            contentTime = c
            streamTime = s
            bookmarkTrigger = trigger
        case .clearBookmark:
            kind = .clearBookmark
        case .scheduleTimer, .cancelTimer:
            return nil
        }
    }
}

extension WireDecision: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__Decision()
        snapback__v1__decision__init(&m)
        m.seq = seq
        m.session_id = sessionId
        m.content_id = arena.string(contentId)
        m.stream_id = arena.string(streamId)
        m.profile = arena.string(profile)
        m.at = at
        if let kind { m.kind = kind.proto }
        m.reason = arena.string(reason)
        m.stream_time = streamTime
        if let seekReason { m.seek_reason = seekReason.proto }
        m.break_id = arena.string(breakId)
        m.content_time = contentTime
        if let bookmarkTrigger { m.bookmark_trigger = bookmarkTrigger.proto }
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WireDecision {
        try ProtoC.unpack(body, "snapback.v1.Decision", snapback__v1__decision__unpack,
                          snapback__v1__decision__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            return WireDecision(
                seq: m.seq, sessionId: m.session_id, contentId: try ProtoC.string(m.content_id, "content_id"),
                streamId: try ProtoC.string(m.stream_id, "stream_id"), profile: try ProtoC.string(m.profile, "profile"),
                at: m.at, kind: Kind(proto: m.kind), reason: try ProtoC.string(m.reason, "reason"),
                streamTime: m.stream_time, seekReason: SeekReason(proto: m.seek_reason),
                breakId: try ProtoC.string(m.break_id, "break_id"), contentTime: m.content_time,
                bookmarkTrigger: BookmarkTrigger(proto: m.bookmark_trigger))
        }
    }
}
