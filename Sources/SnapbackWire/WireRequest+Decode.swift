// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

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

    @inline(never)
    private static func decodeFields(
        method: WireMethod, body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset, maxBreaks: Int
    ) throws(WireError) -> WireRequest {
        switch method {
        case .hello:
            return .hello(try SnapbackV1.HelloRequest.decode(body))
        case .openSession:
            return .openSession(try OpenSessionRequest.decode(body, defaultPreset: defaultPreset, maxBreaks: maxBreaks))
        case .reportPlayhead, .seekStarted, .seekEnded, .adBreakStarted, .adBreakEnded, .adStarted, .adEnded,
            .trickPlayStarted, .trickPlayEnded, .contentComplete, .updateBreaks, .pause, .closeSession:
            return try decodeEvent(method: method, body: body, maxBreaks: maxBreaks)
        case .getStatus, .listSessions, .getSession, .watchDecisions, .contentTimeForStreamTime,
            .streamTimeForContentTime, .breakAt, .getSessionState, .getBookmark, .listBookmarks, .deleteBookmark,
            .clearBookmarks:
            return try query(method, body)
        case .watchChanges:
            return .watchChanges(after: try SnapbackV1.WatchChangesRequest.decode(body).after)
        case .merge:
            return .merge(try SyncMerge.decode(body))
        }
    }

    /// The requests off the event path, from the rpc's generated request message.
    private static func query(_ method: WireMethod, _ body: UnsafeRawBufferPointer) throws(WireError) -> WireRequest {
        switch method {
        case .getStatus:
            _ = try SnapbackV1.StatusRequest.decode(body)
            return .getStatus
        case .listSessions:
            let m = try SnapbackV1.ListSessionsRequest.decode(body)
            return .listSessions(pageSize: m.pageSize, pageToken: m.pageToken)
        case .getSession: return .getSession(sessionId: try SnapbackV1.GetSessionRequest.decode(body).sessionId)
        case .watchDecisions:
            let m = try SnapbackV1.WatchDecisionsRequest.decode(body)
            return .watchDecisions(sessionId: m.sessionId, contentId: m.contentId)
        case .contentTimeForStreamTime:
            let m = try SnapbackV1.ContentTimeForStreamTimeRequest.decode(body)
            return .contentTimeForStreamTime(sessionId: m.sessionId, streamTime: m.streamTime)
        case .streamTimeForContentTime:
            let m = try SnapbackV1.StreamTimeForContentTimeRequest.decode(body)
            return .streamTimeForContentTime(sessionId: m.sessionId, contentTime: m.contentTime)
        case .breakAt:
            let m = try SnapbackV1.BreakAtRequest.decode(body)
            return .breakAt(sessionId: m.sessionId, streamTime: m.streamTime)
        case .getSessionState:
            let m = try SnapbackV1.GetSessionStateRequest.decode(body)
            return .getSessionState(sessionId: m.sessionId, firstBreak: m.firstBreak, maxBreaks: m.maxBreaks)
        case .getBookmark:
            let m = try SnapbackV1.GetBookmarkRequest.decode(body)
            return .getBookmark(profile: m.profile, contentId: m.contentId)
        case .listBookmarks:
            let m = try SnapbackV1.ListBookmarksRequest.decode(body)
            return .listBookmarks(profile: m.profile, pageSize: m.pageSize, pageToken: m.pageToken)
        case .deleteBookmark:
            let m = try SnapbackV1.DeleteBookmarkRequest.decode(body)
            return .deleteBookmark(profile: m.profile, contentId: m.contentId)
        case .clearBookmarks: return .clearBookmarks(profile: try SnapbackV1.ClearBookmarksRequest.decode(body).profile)
        default: preconditionFailure("\(method) is decoded elsewhere")
        }
    }

    /// The session events, from the rpc's generated request message (those of plain scalars, the round
    /// trip's SeekEnded and ReportPlayhead among them, read straight from their bytes in their clean form:
    /// `ProtoPlainMessage`).
    private static func decodeEvent(
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
            return .event(sessionId: m.sessionId, .breaksUpdated(m.breaks))
        case .pause:
            let m = try SnapbackV1.PauseRequest.decode(body)
            return .event(sessionId: m.sessionId, .paused(streamTime: m.streamTime))
        case .closeSession: return .closeSession(sessionId: try SnapbackV1.CloseSessionRequest.decode(body).sessionId)
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
