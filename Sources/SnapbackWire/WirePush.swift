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
        if case .seek(let to, let why) = action.kind {
            let reason = PushReason(action.reason)
            _ = WireFastPath.append(to: &out, bound: WireFastPath.seekPushBound(reason: reason)) {
                WireFastPath.encodeSeekPush(
                    sessionId: sessionId, seq: seq, reason: reason, to: to, seekReason: UInt64(why.proto.rawValue), into: $0)
            }
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

/// The snapback's `seek` push — the round trip's — written straight into a connection's outbound buffer
/// from the action itself: reserve ``bound(_:)`` bytes, then ``encode(_:sessionId:seq:into:)``. Same bytes
/// as ``WirePush/encodePush(sessionId:seq:action:into:)``. Nothing is copied out of the action: an owned
/// value built from it (the action copied in, its reason's break id retained, all of it destroyed after)
/// cost 477 instructions per round trip (make check-budget: 6,688 with it, 6,211 without).
public enum WireSeekPush {
    /// The most bytes ``encode(_:sessionId:seq:into:)`` writes for `action`; nil unless it is a seek with a
    /// snapback's reason (any other push goes through ``WirePush/encodePush(sessionId:seq:action:into:)``).
    public static func bound(_ action: TimelineAction) -> Int? {
        guard case .seek = action.kind, case .snapback(_, _, _, let breakId, _) = action.reason else { return nil }
        return WireFastPath.seekPushBound(reasonBound: PushReason.snapbackBound(breakId: breakId))
    }

    /// Writes the Push body of `action` (one ``bound(_:)`` is not nil for) at the start of `buffer` (at
    /// least that many bytes); returns its length.
    public static func encode(
        _ action: TimelineAction, sessionId: UInt64, seq: UInt64, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        guard case .seek(let streamTime, let why) = action.kind,
            case .snapback(let jump, let from, let to, let breakId, let start) = action.reason
        else { preconditionFailure("WireSeekPush.encode: not a snapback's seek: \(action)") }
        return WireFastPath.encodeSeekPush(
            sessionId: sessionId, seq: seq, hasReason: true,
            writeReason: {
                PushReason.writeSnapback(jump: jump, from: from, to: to, breakId: breakId, start: start, into: $0)
            },
            to: streamTime, seekReason: UInt64(why.proto.rawValue), into: buffer)
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
    /// By field name: the server sends the pushes other than seeks this way, a few per session (a seek,
    /// the snapback round trip's, is written by `WireFastPath`). Decoding, below, stays on protobuf-c's
    /// generated struct: a client reads every push, the round trip's seek among them.
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int { ProtoC.append(Self.descriptor, to: &out, write(to:)) }

    func write(to m: ProtoBuilder) {
        m.set("session_id", sessionId)
        m.set("seq", seq)
        m.set("reason", reason)
        switch kind {
        case .seek(let to, let why):
            m.set("seek") { s in
                s.set("stream_time", to)
                s.set("reason", why)
            }
        case .breakWatched(let id): m.set("break_watched") { $0.set("break_id", id) }
        case .bookmarkSaved(let contentTime, let streamTime, let trigger):
            m.set("bookmark_saved") { s in
                s.set("content_time", contentTime)
                s.set("stream_time", streamTime)
                s.set("trigger", trigger)
            }
        case .bookmarkCleared: m.set("bookmark_cleared") { _ in }
        case .breakSkipped(let id, let why):
            m.set("break_skipped") { s in
                s.set("break_id", id)
                s.set("reason", why)
            }
        case .playBreak(let id): m.set("play_break") { $0.set("break_id", id) }
        case .allAdsCompleted: m.set("all_ads_completed") { _ in }
        case .sessionError(let code, let message):
            m.set("session_error") { s in
                s.set("code", UInt32(code.rawValue))
                s.set("message", message)
            }
        case .unknown: break
        }
    }

    /// protobuf-c's descriptor of `snapback.v1.Push`, read off an initialised message (no rpc replies
    /// with one).
    private static var descriptor: ProtoDescriptor {
        var m = Snapback__V1__Push()
        snapback__v1__push__init(&m)
        return m.base.descriptor
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
