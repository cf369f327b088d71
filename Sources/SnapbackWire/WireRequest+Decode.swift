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
        let request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
        try request.checkRanges()
        return request
    }

    private static func decodeFields(
        method: WireMethod, body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset, maxBreaks: Int
    ) throws(WireError) -> WireRequest {
        switch method {
        case .hello:
            return .hello(try HelloRequest.decode(body))
        case .openSession:
            return .openSession(try OpenSessionRequest.decode(body, defaultPreset: defaultPreset, maxBreaks: maxBreaks))
        case .reportPlayhead:
            if let m = WireFastPath.decodeReportPlayhead(body) {
                return .event(sessionId: m.session, .playheadReported(streamTime: m.streamTime, rate: m.rate, playing: m.playing))
            }
            return try decodeEvent(method: method, body: body, maxBreaks: maxBreaks)
        case .seekEnded:
            if let m = WireFastPath.decodeSeekEnded(body) {
                return .event(sessionId: m.session, .seekEnded(from: m.from, to: m.to))
            }
            return try decodeEvent(method: method, body: body, maxBreaks: maxBreaks)
        case .seekStarted, .adBreakStarted, .adBreakEnded, .adStarted, .adEnded, .trickPlayStarted, .trickPlayEnded,
            .contentComplete, .updateBreaks, .pause, .closeSession:
            return try decodeEvent(method: method, body: body, maxBreaks: maxBreaks)
        case .getStatus, .listSessions, .getSession, .watchDecisions, .contentTimeForStreamTime,
            .streamTimeForContentTime, .breakAt, .getSessionState, .getBookmark, .listBookmarks, .deleteBookmark,
            .clearBookmarks:
            return try ProtoC.read(body, method.requestDescriptor) { m throws(WireError) in
                try query(method, m)
            }
        }
    }

    /// The requests off the event path, read by field name from the rpc's request message.
    private static func query(_ method: WireMethod, _ m: ProtoReader) throws(WireError) -> WireRequest {
        switch method {
        case .getStatus: return .getStatus
        case .listSessions: return .listSessions(pageSize: m.uint32("page_size"), pageToken: try m.string("page_token"))
        case .getSession: return .getSession(sessionId: m.uint64("session_id"))
        case .watchDecisions: return .watchDecisions(sessionId: m.uint64("session_id"), contentId: try m.string("content_id"))
        case .contentTimeForStreamTime:
            return .contentTimeForStreamTime(sessionId: m.uint64("session_id"), streamTime: m.double("stream_time"))
        case .streamTimeForContentTime:
            return .streamTimeForContentTime(sessionId: m.uint64("session_id"), contentTime: m.double("content_time"))
        case .breakAt: return .breakAt(sessionId: m.uint64("session_id"), streamTime: m.double("stream_time"))
        case .getSessionState:
            return .getSessionState(
                sessionId: m.uint64("session_id"), firstBreak: m.uint32("first_break"), maxBreaks: m.uint32("max_breaks"))
        case .getBookmark: return .getBookmark(profile: try m.string("profile"), contentId: try m.string("content_id"))
        case .listBookmarks:
            return .listBookmarks(
                profile: try m.string("profile"), pageSize: m.uint32("page_size"),
                pageToken: try m.string("page_token"))
        case .deleteBookmark: return .deleteBookmark(profile: try m.string("profile"), contentId: try m.string("content_id"))
        case .clearBookmarks: return .clearBookmarks(profile: try m.string("profile"))
        default: preconditionFailure("\(method) is decoded elsewhere")
        }
    }

    /// The session events off the fast path (ReportPlayhead and SeekEnded in their clean form are read by
    /// `WireFastPath` above), by field name from the rpc's request message, as the queries are.
    private static func decodeEvent(
        method: WireMethod, body: UnsafeRawBufferPointer, maxBreaks: Int
    ) throws(WireError) -> WireRequest {
        try ProtoC.read(body, method.requestDescriptor) { m throws(WireError) in try event(method, m, maxBreaks: maxBreaks) }
    }

    private static func event(_ method: WireMethod, _ m: ProtoReader, maxBreaks: Int) throws(WireError) -> WireRequest {
        let id = m.uint64("session_id")
        let event: TimelineEvent
        switch method {
        case .reportPlayhead:
            event = .playheadReported(streamTime: m.double("stream_time"), rate: m.double("rate"), playing: m.bool("playing"))
        case .seekStarted: event = .seekStarted(from: m.double("from_stream_time"))
        case .seekEnded: event = .seekEnded(from: m.double("from_stream_time"), to: m.double("to_stream_time"))
        case .adBreakStarted:
            event = .adBreakStarted(breakId: try m.string("break_id"), streamTime: m.optionalDouble("stream_time"))
        case .adBreakEnded:
            event = .adBreakEnded(breakId: try m.string("break_id"), streamTime: m.optionalDouble("stream_time"))
        case .adStarted:
            event = .adStarted(
                breakId: try m.string("break_id"), index: Int(m.uint32("index")), streamTime: m.optionalDouble("stream_time"))
        case .adEnded:
            event = .adEnded(
                breakId: try m.string("break_id"), index: Int(m.uint32("index")), streamTime: m.optionalDouble("stream_time"))
        case .trickPlayStarted: event = .trickPlayStarted(streamTime: m.double("stream_time"), rate: m.double("rate"))
        case .trickPlayEnded: event = .trickPlayEnded(streamTime: m.double("stream_time"))
        case .contentComplete: event = .contentCompleted
        case .updateBreaks: event = .breaksUpdated(try m.messages("breaks", atMost: maxBreaks))
        case .pause: event = .paused(streamTime: m.double("stream_time"))
        case .closeSession: return .closeSession(sessionId: id)
        default: preconditionFailure("\(method) is not an event")
        }
        return .event(sessionId: id, event)
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
