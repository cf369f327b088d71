// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

// The requests as Swift values are generated (Generated/WireRequest.swift, scripts/gen-wire.py) but for the
// session events, mapped here by hand onto the timeline's `TimelineEvent` (its cases are the timeline's
// shape, not the messages'), and the daemon's reader, whose round trip reads its two events straight
// from their bytes.

extension WireRequest {
    /// Decodes the body of a REQUEST frame for `method`.
    ///
    /// Bytes that do not parse as the method's message throw `.malformed`; an unknown preset name or enum
    /// value throws `.invalidArgument` (both INVALID_ARGUMENT on the wire). Unknown fields are ignored.
    /// A number outside its range (`Limits`) or a string that is not UTF-8 throws `.invalidArgument`
    /// naming the field. `defaultPreset` is the policy of an OpenSession that names no preset. An
    /// OpenSession or UpdateBreaks with more than `maxBreaks` breaks throws `.tooLarge`
    /// (RESOURCE_EXHAUSTED) before its breaks are read.
    public static func decode(
        method: WireMethod, body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset = .snapback, maxBreaks: Int = TimelineLayout.maxBreaks
    ) throws(WireError) -> WireRequest {
        // The snapback round trip's events are read here, straight from their bytes in their clean form
        // (the generated `init?(clean:)`): the round trip runs these few lines, not the code of
        // `decodeFields`' switch over every method (never inlined here).
        let request: WireRequest
        switch method {
        case .seekEnded:
            if let m = SnapbackV1.SeekEndedRequest(clean: body) {
                request = event(m)
            } else {
                request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
            }
        case .reportPlayhead:
            if let m = SnapbackV1.ReportPlayheadRequest(clean: body) {
                request = event(m)
            } else {
                request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
            }
        default:
            request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
        }
        try request.checkRanges()
        return request
    }

    /// The session events, from the rpc's generated request message (those of plain scalars, the round
    /// trip's SeekEnded and ReportPlayhead among them, read straight from their bytes in their clean form:
    /// `ProtoPlainMessage`).
    static func decodeEvent(
        method: WireMethod, body: UnsafeRawBufferPointer, maxBreaks: Int
    ) throws(WireError) -> WireRequest {
        switch method {
        case .reportPlayhead: return event(try SnapbackV1.ReportPlayheadRequest.decode(body))
        case .seekStarted:
            let m = try SnapbackV1.SeekStartedRequest.decode(body)
            return .event(sessionId: m.sessionId, .seekStarted(from: m.fromStreamTime))
        case .seekEnded: return event(try SnapbackV1.SeekEndedRequest.decode(body))
        case .adBreakStarted:
            let m = try SnapbackV1.AdBreakStartedRequest.decode(body)
            return .event(sessionId: m.sessionId, .adBreakStarted(breakId: m.breakId, streamTime: m.streamTime))
        case .adBreakEnded:
            let m = try SnapbackV1.AdBreakEndedRequest.decode(body)
            return .event(sessionId: m.sessionId, .adBreakEnded(breakId: m.breakId, streamTime: m.streamTime))
        case .adStarted:
            let m = try SnapbackV1.AdStartedRequest.decode(body)
            return .event(sessionId: m.sessionId, .adStarted(breakId: m.breakId, index: Int(m.index), streamTime: m.streamTime))
        case .adEnded:
            let m = try SnapbackV1.AdEndedRequest.decode(body)
            return .event(sessionId: m.sessionId, .adEnded(breakId: m.breakId, index: Int(m.index), streamTime: m.streamTime))
        case .trickPlayStarted:
            let m = try SnapbackV1.TrickPlayStartedRequest.decode(body)
            return .event(sessionId: m.sessionId, .trickPlayStarted(streamTime: m.streamTime, rate: m.rate))
        case .trickPlayEnded:
            let m = try SnapbackV1.TrickPlayEndedRequest.decode(body)
            return .event(sessionId: m.sessionId, .trickPlayEnded(streamTime: m.streamTime))
        case .contentComplete:
            return .event(sessionId: try SnapbackV1.ContentCompleteRequest.decode(body).sessionId, .contentCompleted)
        case .updateBreaks:
            let m = try SnapbackV1.UpdateBreaksRequest.decode(body, maxElements: maxBreaks)
            guard m.midrollTimes.isEmpty else {
                guard m.breaks.isEmpty else {
                    throw WireError.invalidArgument("UpdateBreaks with both breaks and midroll_times: one or the other")
                }
                return .event(sessionId: m.sessionId, .midrollsScheduled(m.midrollTimes))
            }
            return .event(sessionId: m.sessionId, .breaksUpdated(m.breaks))
        case .pause:
            let m = try SnapbackV1.PauseRequest.decode(body)
            return .event(sessionId: m.sessionId, .paused(streamTime: m.streamTime))
        default: preconditionFailure("\(method) is not an event")
        }
    }

    // The round trip's two events, read on the fast path and on protobuf-c's alike.
    @inline(__always)
    private static func event(_ m: SnapbackV1.SeekEndedRequest) -> WireRequest {
        .event(sessionId: m.sessionId, .seekEnded(from: m.fromStreamTime, to: m.toStreamTime))
    }

    @inline(__always)
    private static func event(_ m: SnapbackV1.ReportPlayheadRequest) -> WireRequest {
        .event(sessionId: m.sessionId, .playheadReported(streamTime: m.streamTime, rate: m.rate, playing: m.playing))
    }

    /// `decode(method:body:defaultPreset:maxBreaks:)` over an array.
    public static func decode(
        method: WireMethod, body: [UInt8],
        defaultPreset: AdPolicy.Preset = .snapback, maxBreaks: Int = TimelineLayout.maxBreaks
    ) throws(WireError) -> WireRequest {
        try body.withUnsafeBytes { raw in
            Result { () throws(WireError) in
                try decode(method: method, body: raw, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
            }
        }.get()
    }
}

extension WireRequest {
    /// The session the request is about, for the Timeline methods of the connection's own sessions
    /// (not GetSession, which looks at any connection's).
    public var sessionId: UInt64? {
        switch self {
        case .event(let id, _): id
        case .closeSession(let m): m.sessionId
        case .contentTimeForStreamTime(let m): m.sessionId
        case .streamTimeForContentTime(let m): m.sessionId
        case .breakAt(let m): m.sessionId
        case .getSessionState(let m): m.sessionId
        default: nil
        }
    }

    /// The request's body.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    static func method(for event: TimelineEvent) -> WireMethod {
        switch event {
        case .playheadReported: return .reportPlayhead
        case .seekStarted: return .seekStarted
        case .seekEnded: return .seekEnded
        case .adBreakStarted: return .adBreakStarted
        case .adBreakEnded: return .adBreakEnded
        case .adStarted: return .adStarted
        case .adEnded: return .adEnded
        case .trickPlayStarted: return .trickPlayStarted
        case .trickPlayEnded: return .trickPlayEnded
        case .contentCompleted: return .contentComplete
        case .breaksChanged: return .updateBreaks
        case .paused: return .pause
        case .closed: return .closeSession
        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")
        }
    }

    static func encode(sessionId id: UInt64, event: TimelineEvent, into out: inout [UInt8]) -> Int {
        switch event {
        case .playheadReported(let streamTime, let rate, let playing):
            return SnapbackV1.ReportPlayheadRequest(sessionId: id, streamTime: streamTime, rate: rate, playing: playing)
                .encode(into: &out)
        case .seekStarted(let from): return SnapbackV1.SeekStartedRequest(sessionId: id, fromStreamTime: from).encode(into: &out)
        case .seekEnded(let from, let to):
            return SnapbackV1.SeekEndedRequest(sessionId: id, fromStreamTime: from, toStreamTime: to).encode(into: &out)
        case .adBreakStarted(let breakId, let streamTime):
            return SnapbackV1.AdBreakStartedRequest(sessionId: id, breakId: breakId, streamTime: streamTime).encode(into: &out)
        case .adBreakEnded(let breakId, let streamTime):
            return SnapbackV1.AdBreakEndedRequest(sessionId: id, breakId: breakId, streamTime: streamTime).encode(into: &out)
        case .adStarted(let breakId, let index, let streamTime):
            return SnapbackV1.AdStartedRequest(
                sessionId: id, breakId: breakId, index: UInt32(clamping: index), streamTime: streamTime
            ).encode(into: &out)
        case .adEnded(let breakId, let index, let streamTime):
            return SnapbackV1.AdEndedRequest(
                sessionId: id, breakId: breakId, index: UInt32(clamping: index), streamTime: streamTime
            ).encode(into: &out)
        case .trickPlayStarted(let streamTime, let rate):
            return SnapbackV1.TrickPlayStartedRequest(sessionId: id, streamTime: streamTime, rate: rate).encode(into: &out)
        case .trickPlayEnded(let streamTime):
            return SnapbackV1.TrickPlayEndedRequest(sessionId: id, streamTime: streamTime).encode(into: &out)
        case .contentCompleted: return SnapbackV1.ContentCompleteRequest(sessionId: id).encode(into: &out)
        case .breaksChanged(.breaks(let breaks)):
            return SnapbackV1.UpdateBreaksRequest(sessionId: id, breaks: breaks).encode(into: &out)
        case .breaksChanged(.midrollTimes(let times)):
            return SnapbackV1.UpdateBreaksRequest(sessionId: id, midrollTimes: times).encode(into: &out)
        case .paused(let streamTime): return SnapbackV1.PauseRequest(sessionId: id, streamTime: streamTime).encode(into: &out)
        case .closed: return SnapbackV1.CloseSessionRequest(sessionId: id).encode(into: &out)
        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")
        }
    }
}
