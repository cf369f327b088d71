import CSnapbackProto
import SnapbackTimeline

/// The server side of `snapback.v1.Push`: a session's actions as PUSH bodies.
public enum WirePush {
    /// Whether the players see this action as a push. Timers are the daemon's own business; a
    /// `saveBookmark` is pushed as BookmarkSaved once the store has committed it.
    public static func isPushed(_ kind: TimelineAction.Kind) -> Bool {
        switch kind {
        case .seek, .breakWatched, .breakSkipped, .playBreak, .allAdsCompleted, .saveBookmark, .clearBookmark: return true
        case .scheduleTimer, .cancelTimer, .breakCompleted, .noEffect: return false
        }
    }

    /// Appends the Push body for `action`, with `action.reason` as its reason. Returns false, appending
    /// nothing, for an action that is not pushed (`isPushed` is false): take a seq only when it is.
    /// `seek` — the snapback round trip's — is written by hand (WireFastPath, same bytes as protobuf-c);
    /// the others go through ``WirePushMessage``, the one protobuf-c encoder of the message.
    @discardableResult
    public static func encodePush(
        sessionId: UInt64, seq: UInt64, action: TimelineAction,
        into out: inout [UInt8]
    ) -> Bool {
        if let seek = WireSeekPush(action) {
            _ = WireFastPath.append(to: &out, bound: seek.bound) { seek.encode(sessionId: sessionId, seq: seq, into: $0) }
            return true
        }
        guard let message = WirePushMessage(sessionId: sessionId, seq: seq, action: action) else { return false }
        message.encode(into: &out)
        return true
    }

    /// Appends a Push carrying a SessionError: a failure outside a call (e.g. a bookmark that could not be
    /// committed after the event's reply went out). `reason` is left empty; `message` says it all.
    @discardableResult
    public static func encodePushSessionError(
        sessionId: UInt64, seq: UInt64, code: StatusCode, message: String,
        into out: inout [UInt8]
    ) -> Int {
        WirePushMessage(sessionId: sessionId, seq: seq, reason: "", kind: .sessionError(code: code, message: message))
            .encode(into: &out)
    }
}

/// A `seek` push — the snapback round trip's — ready to be written straight into a connection's outbound
/// buffer (no copy in between): reserve ``bound`` bytes, then ``encode(sessionId:seq:into:)``. Same bytes
/// as ``WirePush/encodePush(sessionId:seq:action:into:)``.
public struct WireSeekPush {
    let reason: PushReason
    let streamTime: Double
    let seekReason: UInt64

    /// Nil for an action that is not a seek.
    public init?(_ action: TimelineAction) {
        guard case .seek(let to, let why) = action.kind else { return nil }
        reason = PushReason(action.reason)
        streamTime = to
        seekReason = UInt64(why.proto.rawValue)
    }

    /// The most bytes ``encode(sessionId:seq:into:)`` writes.
    public var bound: Int { WireFastPath.seekPushBound(reason: reason) }

    /// Writes the Push body at the start of `buffer` (at least ``bound`` bytes); returns its length.
    public func encode(sessionId: UInt64, seq: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        WireFastPath.encodeSeekPush(
            sessionId: sessionId, seq: seq, reason: reason, to: streamTime, seekReason: seekReason,
            into: buffer)
    }
}

/// The client side of `snapback.v1.Push`.
public struct WirePushMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Seek the player. `reason` is nil when the server sent a reason this version does not know: seek
        /// anyway.
        case seek(to: Double, reason: SeekReason?)
        case breakWatched(breakId: String)
        /// The bookmark was committed. `trigger` is nil when unknown to this version.
        case bookmarkSaved(contentTime: Double, streamTime: Double, trigger: BookmarkTrigger?)
        case bookmarkCleared
        /// `reason` is nil when unknown to this version.
        case breakSkipped(breakId: String, reason: BreakSkipReason?)
        case playBreak(breakId: String)
        case allAdsCompleted
        /// `code` is `.unknown` for a code this version does not know.
        case sessionError(code: StatusCode, message: String)
        /// A kind a newer server added: ignore it.
        case unknown
    }

    public var sessionId: UInt64
    public var seq: UInt64
    public var reason: String
    public var kind: Kind

    public init(sessionId: UInt64, seq: UInt64, reason: String = "", kind: Kind) {
        self.sessionId = sessionId
        self.seq = seq
        self.reason = reason
        self.kind = kind
    }

    /// The push as the server sends it for `action`; nil for actions that are not pushed.
    public init?(sessionId: UInt64, seq: UInt64, action: TimelineAction) {
        let kind: Kind
        switch action.kind {
        case .seek(let to, let why): kind = .seek(to: to, reason: why)
        case .breakWatched(let id): kind = .breakWatched(breakId: id)
        case .playBreak(let id): kind = .playBreak(breakId: id)
        case .allAdsCompleted: kind = .allAdsCompleted
        case .saveBookmark(let c, let s, let t): kind = .bookmarkSaved(contentTime: c, streamTime: s, trigger: t)
        case .clearBookmark: kind = .bookmarkCleared
        case .breakSkipped(let id, let why): kind = .breakSkipped(breakId: id, reason: why)
        case .scheduleTimer, .cancelTimer, .breakCompleted, .noEffect: return nil
        }
        self.init(sessionId: sessionId, seq: seq, reason: action.reason.description, kind: kind)
    }
}

extension WirePushMessage: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__Push()
        snapback__v1__push__init(&m)
        m.session_id = sessionId
        m.seq = seq
        m.reason = arena.string(reason)
        switch kind {
        case .seek(let to, let why):
            var s = Snapback__V1__SeekCommand()
            snapback__v1__seek_command__init(&s)
            s.stream_time = to
            if let why { s.reason = why.proto }
            m.kind_case = SNAPBACK__V1__PUSH__KIND_SEEK
            m.seek = arena.box(s)
        case .breakWatched(let id):
            var s = Snapback__V1__BreakWatched()
            snapback__v1__break_watched__init(&s)
            s.break_id = arena.string(id)
            m.kind_case = SNAPBACK__V1__PUSH__KIND_BREAK_WATCHED
            m.break_watched = arena.box(s)
        case .bookmarkSaved(let contentTime, let streamTime, let trigger):
            var s = Snapback__V1__BookmarkSaved()
            snapback__v1__bookmark_saved__init(&s)
            s.content_time = contentTime
            s.stream_time = streamTime
            if let trigger { s.trigger = trigger.proto }
            m.kind_case = SNAPBACK__V1__PUSH__KIND_BOOKMARK_SAVED
            m.bookmark_saved = arena.box(s)
        case .bookmarkCleared:
            var s = Snapback__V1__BookmarkCleared()
            snapback__v1__bookmark_cleared__init(&s)
            m.kind_case = SNAPBACK__V1__PUSH__KIND_BOOKMARK_CLEARED
            m.bookmark_cleared = arena.box(s)
        case .breakSkipped(let id, let why):
            var s = Snapback__V1__BreakSkipped()
            snapback__v1__break_skipped__init(&s)
            s.break_id = arena.string(id)
            if let why { s.reason = why.proto }
            m.kind_case = SNAPBACK__V1__PUSH__KIND_BREAK_SKIPPED
            m.break_skipped = arena.box(s)
        case .playBreak(let id):
            var s = Snapback__V1__PlayBreak()
            snapback__v1__play_break__init(&s)
            s.break_id = arena.string(id)
            m.kind_case = SNAPBACK__V1__PUSH__KIND_PLAY_BREAK
            m.play_break = arena.box(s)
        case .allAdsCompleted:
            var s = Snapback__V1__AllAdsCompleted()
            snapback__v1__all_ads_completed__init(&s)
            m.kind_case = SNAPBACK__V1__PUSH__KIND_ALL_ADS_COMPLETED
            m.all_ads_completed = arena.box(s)
        case .sessionError(let code, let message):
            var s = Snapback__V1__SessionError()
            snapback__v1__session_error__init(&s)
            s.code = UInt32(code.rawValue)
            s.message = arena.string(message)
            m.kind_case = SNAPBACK__V1__PUSH__KIND_SESSION_ERROR
            m.session_error = arena.box(s)
        case .unknown:
            break
        }
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WirePushMessage {
        try ProtoC.unpack(
            body, "snapback.v1.Push", snapback__v1__push__unpack,
            snapback__v1__push__free_unpacked
        ) { p throws(WireError) in
            let m = p.pointee
            var kind = Kind.unknown
            switch m.kind_case {
            case SNAPBACK__V1__PUSH__KIND_SEEK:
                if let s = m.seek?.pointee { kind = .seek(to: s.stream_time, reason: SeekReason(proto: s.reason)) }
            case SNAPBACK__V1__PUSH__KIND_BREAK_WATCHED:
                if let s = m.break_watched?.pointee { kind = .breakWatched(breakId: try ProtoC.string(s.break_id, "break_id")) }
            case SNAPBACK__V1__PUSH__KIND_BOOKMARK_SAVED:
                if let s = m.bookmark_saved?.pointee {
                    kind = .bookmarkSaved(
                        contentTime: s.content_time, streamTime: s.stream_time,
                        trigger: BookmarkTrigger(proto: s.trigger))
                }
            case SNAPBACK__V1__PUSH__KIND_BOOKMARK_CLEARED:
                kind = .bookmarkCleared
            case SNAPBACK__V1__PUSH__KIND_BREAK_SKIPPED:
                if let s = m.break_skipped?.pointee {
                    kind = .breakSkipped(
                        breakId: try ProtoC.string(s.break_id, "break_id"), reason: BreakSkipReason(proto: s.reason))
                }
            case SNAPBACK__V1__PUSH__KIND_PLAY_BREAK:
                if let s = m.play_break?.pointee { kind = .playBreak(breakId: try ProtoC.string(s.break_id, "break_id")) }
            case SNAPBACK__V1__PUSH__KIND_ALL_ADS_COMPLETED:
                kind = .allAdsCompleted
            case SNAPBACK__V1__PUSH__KIND_SESSION_ERROR:
                if let s = m.session_error?.pointee {
                    let code = s.code <= UInt32(UInt8.max) ? StatusCode(rawValue: UInt8(s.code)) : nil
                    kind = .sessionError(code: code ?? .unknown, message: try ProtoC.string(s.message, "message"))
                }
            default:
                kind = .unknown
            }
            return WirePushMessage(sessionId: m.session_id, seq: m.seq, reason: try ProtoC.string(m.reason, "reason"), kind: kind)
        }
    }
}
