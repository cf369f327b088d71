// SPDX-License-Identifier: Apache-2.0
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
    /// Through ``WirePushMessage``: a `seek` — the snapback round trip's — is written by hand (WireFastPath,
    /// same bytes as protobuf-c), the other kinds through the generated message and protobuf-c.
    @discardableResult
    public static func encodePush(
        sessionId: UInt64, seq: UInt64, action: TimelineAction,
        into out: inout [UInt8]
    ) -> Bool {
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
/// as ``WirePush/encodePush(sessionId:seq:action:into:)``. Nothing is copied out of the action (an owned
/// value built from it would retain its reason's break id and destroy it after, on every round trip).
public enum WireSeekPush {
    /// The most bytes ``encode(_:sessionId:seq:into:)`` writes for `action`; nil unless it is a seek with a
    /// snapback's reason (any other push goes through ``WirePush/encodePush(sessionId:seq:action:into:)``).
    public static func bound(_ action: TimelineAction) -> Int? {
        guard case .seek = action.kind, case .snapback(_, _, _, let breakId, _) = action.reason else { return nil }
        return WireFastPath.seekPushBound(reasonBound: ReasonWriter.snapbackBound(breakId: breakId))
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
            writeReason: { buffer in
                var words = ReasonWriter(buffer)
                TimelineReason.writeSnapback(jump: jump, from: from, to: to, breakId: breakId, start: start, into: &words)
                return words.count
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
    /// A seek is written by `WireFastPath`, the seek push's one encoder (the snapback round trip's); every
    /// other kind through the generated `snapback.v1.Push`, a few per session.
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        if case .seek(let to, let why) = kind {
            return WireFastPath.append(to: &out, bound: WireFastPath.seekPushBound(reasonBound: reason.utf8.count)) {
                WireFastPath.encodeSeekPush(
                    sessionId: sessionId, seq: seq, reason: reason, to: to, seekReason: UInt64(why.proto.rawValue), into: $0)
            }
        }
        return proto.encode(into: &out)
    }

    public var proto: SnapbackV1.Push {
        var m = SnapbackV1.Push(sessionId: sessionId, seq: seq, reason: reason)
        switch kind {
        case .seek(let to, let why): m.kind = .seek(SnapbackV1.SeekCommand(streamTime: to, reason: why.proto))
        case .breakWatched(let id): m.kind = .breakWatched(SnapbackV1.BreakWatched(breakId: id))
        case .bookmarkSaved(let contentTime, let streamTime, let trigger):
            m.kind = .bookmarkSaved(
                SnapbackV1.BookmarkSaved(contentTime: contentTime, streamTime: streamTime, trigger: trigger.proto))
        case .bookmarkCleared: m.kind = .bookmarkCleared(SnapbackV1.BookmarkCleared())
        case .breakSkipped(let id, let why): m.kind = .breakSkipped(SnapbackV1.BreakSkipped(breakId: id, reason: why.proto))
        case .playBreak(let id): m.kind = .playBreak(SnapbackV1.PlayBreak(breakId: id))
        case .allAdsCompleted: m.kind = .allAdsCompleted(SnapbackV1.AllAdsCompleted())
        case .sessionError(let code, let message):
            m.kind = .sessionError(SnapbackV1.SessionError(code: UInt32(code.rawValue), message: message))
        case .unknown: break
        }
        return m
    }

    init(proto m: SnapbackV1.Push) {
        let kind: Kind
        switch m.kind {
        case .seek(let s): kind = .seek(to: s.streamTime, reason: SeekReason(proto: s.reason))
        case .breakWatched(let s): kind = .breakWatched(breakId: s.breakId)
        case .bookmarkSaved(let s):
            kind = .bookmarkSaved(
                contentTime: s.contentTime, streamTime: s.streamTime, trigger: BookmarkTrigger(proto: s.trigger))
        case .bookmarkCleared: kind = .bookmarkCleared
        case .breakSkipped(let s): kind = .breakSkipped(breakId: s.breakId, reason: BreakSkipReason(proto: s.reason))
        case .playBreak(let s): kind = .playBreak(breakId: s.breakId)
        case .allAdsCompleted: kind = .allAdsCompleted
        case .sessionError(let s):
            let code = s.code <= UInt32(UInt8.max) ? StatusCode(rawValue: UInt8(s.code)) : nil
            kind = .sessionError(code: code ?? .unknown, message: s.message)
        case nil: kind = .unknown
        }
        self.init(sessionId: m.sessionId, seq: m.seq, reason: m.reason, kind: kind)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WirePushMessage {
        WirePushMessage(proto: try SnapbackV1.Push.decode(body))
    }
}
