// SPDX-License-Identifier: Apache-2.0
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

extension SessionInfo: ProtoMapped {
    init(proto p: SnapbackV1.SessionInfo) throws(WireError) {
        let state = p.state.map(SessionStateReply.init(proto:))
        self.init(
            sessionId: p.sessionId, contentId: p.contentId, streamId: p.streamId, profile: p.profile,
            kind: SessionKind(proto: p.kind) ?? .onDemand, policyPreset: p.policyPreset, clientName: p.clientName,
            peerUid: p.peerUid, peerPid: p.peerPid, openedAt: p.openedAt, pushes: p.pushes, breakCount: p.breakCount,
            state: state ?? SessionStateReply(phase: nil, streamTime: 0, contentTime: 0, playing: false, rate: 0),
            contentDuration: p.contentDuration)
    }

    public var proto: SnapbackV1.SessionInfo {
        SnapbackV1.SessionInfo(
            sessionId: sessionId, contentId: contentId, streamId: streamId, profile: profile, kind: kind.proto,
            policyPreset: policyPreset, clientName: clientName, peerUid: peerUid, peerPid: peerPid, openedAt: openedAt,
            pushes: pushes, breakCount: breakCount, state: state.proto, contentDuration: contentDuration)
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

extension ListSessionsReply: ProtoMapped {
    init(proto p: SnapbackV1.ListSessionsReply) throws(WireError) {
        var sessions: [SessionInfo] = []
        for s in p.sessions { sessions.append(try SessionInfo(proto: s)) }
        self.init(sessions: sessions, nextPageToken: p.nextPageToken)
    }

    var proto: SnapbackV1.ListSessionsReply {
        SnapbackV1.ListSessionsReply(sessions: sessions.map(\.proto), nextPageToken: nextPageToken)
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

extension WireDecision: ProtoMapped {
    init(proto p: SnapbackV1.Decision) {
        self.init(
            seq: p.seq, sessionId: p.sessionId, contentId: p.contentId, streamId: p.streamId, profile: p.profile, at: p.at,
            kind: Kind(proto: p.kind), reason: p.reason, streamTime: p.streamTime, seekReason: SeekReason(proto: p.seekReason),
            breakId: p.breakId, contentTime: p.contentTime, bookmarkTrigger: BookmarkTrigger(proto: p.bookmarkTrigger),
            skipReason: BreakSkipReason(proto: p.skipReason))
    }

    public var proto: SnapbackV1.Decision {
        SnapbackV1.Decision(
            seq: seq, sessionId: sessionId, contentId: contentId, streamId: streamId, profile: profile, at: at,
            kind: kind.proto, reason: reason, streamTime: streamTime, seekReason: seekReason.proto, breakId: breakId,
            contentTime: contentTime, bookmarkTrigger: bookmarkTrigger.proto, skipReason: skipReason.proto)
    }
}
