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

    public init(
        sessionId: UInt64, contentId: String, streamId: String, profile: String, kind: SessionKind,
        policyPreset: String, clientName: String, peerUid: UInt32, peerPid: Int32, openedAt: Double,
        pushes: UInt64, breakCount: UInt32, state: SessionStateReply, contentDuration: Double? = nil
    ) {
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

extension SessionInfo: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.getSession.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        let state =
            try m.message("state") ?? SessionStateReply(phase: nil, streamTime: 0, contentTime: 0, playing: false, rate: 0)
        self.init(
            sessionId: m.uint64("session_id"), contentId: try m.string("content_id"), streamId: try m.string("stream_id"),
            profile: try m.string("profile"), kind: m.knownEnumValue("kind", as: SessionKind.self) ?? .onDemand,
            policyPreset: try m.string("policy_preset"), clientName: try m.string("client_name"),
            peerUid: m.uint32("peer_uid"), peerPid: m.int32("peer_pid"), openedAt: m.double("opened_at"),
            pushes: m.uint64("pushes"), breakCount: m.uint32("break_count"), state: state,
            contentDuration: m.optionalDouble("content_duration"))
    }

    func write(to m: ProtoBuilder) {
        m.set("session_id", sessionId)
        m.set("content_id", contentId)
        m.set("stream_id", streamId)
        m.set("profile", profile)
        m.set("kind", kind)
        m.set("policy_preset", policyPreset)
        m.set("client_name", clientName)
        m.set("peer_uid", peerUid)
        m.set("peer_pid", peerPid)
        m.set("opened_at", openedAt)
        m.set("pushes", pushes)
        m.set("break_count", breakCount)
        m.set("state", state)
        m.set("content_duration", contentDuration)
    }

}

/// `snapback.v1.ListSessionsReply`.
public struct ListSessionsReply: Sendable, Equatable {
    public var sessions: [SessionInfo]
    /// "" on the last page; else what the next ListSessions passes as its page token.
    public var nextPageToken: String
    public init(sessions: [SessionInfo], nextPageToken: String = "") {
        self.sessions = sessions
        self.nextPageToken = nextPageToken
    }
}

extension ListSessionsReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.listSessions.replyDescriptor }
    init(_ m: ProtoReader) throws(WireError) {
        self.init(sessions: try m.messages("sessions"), nextPageToken: try m.string("next_page_token"))
    }
    func write(to m: ProtoBuilder) {
        m.set("sessions", sessions)
        m.set("next_page_token", nextPageToken)
    }
}

/// `snapback.v1.Decision`: one decision of a session's timeline, as the WatchDecisions stream carries it.
public struct WireDecision: Sendable, Equatable {
    /// Which action it was; the raw value is its kebab-case name.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case seek, breakWatched = "break-watched", breakCompleted = "break-completed", playBreak = "play-break"
        case allAdsCompleted = "all-ads-completed", saveBookmark = "save-bookmark", clearBookmark = "clear-bookmark"
        case breakSkipped = "break-skipped"
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
    /// BREAK_SKIPPED: why; nil otherwise or when unknown to this version.
    public var skipReason: BreakSkipReason?

    public init(
        seq: UInt64 = 0, sessionId: UInt64, contentId: String, streamId: String = "", profile: String = "",
        at: Double, kind: Kind?, reason: String, streamTime: Double = 0, seekReason: SeekReason? = nil,
        breakId: String = "", contentTime: Double = 0, bookmarkTrigger: BookmarkTrigger? = nil,
        skipReason: BreakSkipReason? = nil
    ) {
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
        self.skipReason = skipReason
    }

    /// The decision a timeline action stands for; nil for the timers, which are the daemon's own business.
    public init?(
        _ action: TimelineAction, sessionId: UInt64, contentId: String, streamId: String, profile: String,
        at: Double
    ) {
        self.init(
            sessionId: sessionId, contentId: contentId, streamId: streamId, profile: profile, at: at,
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
        case .breakSkipped(let id, let why):
            kind = .breakSkipped
            breakId = id
            skipReason = why
        case .scheduleTimer, .cancelTimer, .noEffect:
            return nil
        }
    }
}

extension WireDecision: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.watchDecisions.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            seq: m.uint64("seq"), sessionId: m.uint64("session_id"), contentId: try m.string("content_id"),
            streamId: try m.string("stream_id"), profile: try m.string("profile"), at: m.double("at"),
            kind: m.knownEnumValue("kind", as: Kind.self), reason: try m.string("reason"),
            streamTime: m.double("stream_time"), seekReason: m.knownEnumValue("seek_reason", as: SeekReason.self),
            breakId: try m.string("break_id"), contentTime: m.double("content_time"),
            bookmarkTrigger: m.knownEnumValue("bookmark_trigger", as: BookmarkTrigger.self),
            skipReason: m.knownEnumValue("skip_reason", as: BreakSkipReason.self))
    }

    func write(to m: ProtoBuilder) {
        m.set("seq", seq)
        m.set("session_id", sessionId)
        m.set("content_id", contentId)
        m.set("stream_id", streamId)
        m.set("profile", profile)
        m.set("at", at)
        m.set("kind", kind)
        m.set("reason", reason)
        m.set("stream_time", streamTime)
        m.set("seek_reason", seekReason)
        m.set("break_id", breakId)
        m.set("content_time", contentTime)
        m.set("bookmark_trigger", bookmarkTrigger)
        m.set("skip_reason", skipReason)
    }

}
