import CSnapbackProto
import SnapbackTimeline

extension WireRequest {
    /// Decodes the body of a REQUEST frame for `method`.
    ///
    /// Bytes that do not parse as the method's message throw `.malformed`; an unknown preset name or enum
    /// value throws `.invalidArgument` (both INVALID_ARGUMENT on the wire). Unknown fields are ignored.
    /// A number outside its range (`Limits`) or a string that is not UTF-8 throws `.invalidArgument`
    /// naming the field. `defaultPreset` is the policy of an OpenSession that names no preset.
    public static func decode(
        method: WireMethod, body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset = .snapback
    ) throws(WireError) -> WireRequest {
        let request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset)
        try request.checkRanges()
        return request
    }

    private static func decodeFields(
        method: WireMethod, body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset
    ) throws(WireError) -> WireRequest {
        switch method {
        case .hello:
            return .hello(try HelloRequest.decode(body))
        case .openSession:
            return .openSession(try OpenSessionRequest.decode(body, defaultPreset: defaultPreset))
        case .reportPlayhead:
            if let m = WireFastPath.decodeReportPlayhead(body) {
                return .event(sessionId: m.session, .playheadReported(streamTime: m.streamTime, rate: m.rate, playing: m.playing))
            }
            return try decodeEvent(method: method, body: body)
        case .seekEnded:
            if let m = WireFastPath.decodeSeekEnded(body) {
                return .event(sessionId: m.session, .seekEnded(from: m.from, to: m.to))
            }
            return try decodeEvent(method: method, body: body)
        case .seekStarted, .adBreakStarted, .adBreakEnded, .adStarted, .adEnded, .trickPlayStarted, .trickPlayEnded,
            .contentComplete, .updateBreaks, .pause, .closeSession:
            return try decodeEvent(method: method, body: body)
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
        case .listSessions: return .listSessions
        case .getSession: return .getSession(sessionId: m.uint64("session_id"))
        case .watchDecisions: return .watchDecisions(sessionId: m.uint64("session_id"), contentId: try m.string("content_id"))
        case .contentTimeForStreamTime:
            return .contentTimeForStreamTime(sessionId: m.uint64("session_id"), streamTime: m.double("stream_time"))
        case .streamTimeForContentTime:
            return .streamTimeForContentTime(sessionId: m.uint64("session_id"), contentTime: m.double("content_time"))
        case .breakAt: return .breakAt(sessionId: m.uint64("session_id"), streamTime: m.double("stream_time"))
        case .getSessionState: return .getSessionState(sessionId: m.uint64("session_id"))
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

    /// The session events, hand-written against the generated structs: the event path (ReportPlayhead
    /// and SeekEnded in their clean form do not get here: `WireFastPath` reads them above).
    private static func decodeEvent(method: WireMethod, body: UnsafeRawBufferPointer) throws(WireError) -> WireRequest {
        switch method {
        case .reportPlayhead:
            return try ProtoC.unpack(
                body, "snapback.v1.ReportPlayheadRequest",
                snapback__v1__report_playhead_request__unpack,
                snapback__v1__report_playhead_request__free_unpacked
            ) { p throws(WireError) in
                let m = p.pointee
                return .event(
                    sessionId: m.session_id,
                    .playheadReported(
                        streamTime: m.stream_time, rate: m.rate, playing: ProtoC.bool(m.playing)))
            }

        case .seekStarted:
            return try ProtoC.unpack(
                body, "snapback.v1.SeekStartedRequest", snapback__v1__seek_started_request__unpack,
                snapback__v1__seek_started_request__free_unpacked
            ) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .seekStarted(from: p.pointee.from_stream_time))
            }

        case .seekEnded:
            return try ProtoC.unpack(
                body, "snapback.v1.SeekEndedRequest", snapback__v1__seek_ended_request__unpack,
                snapback__v1__seek_ended_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .seekEnded(from: p.pointee.from_stream_time, to: p.pointee.to_stream_time))
            }

        case .adBreakStarted:
            return try ProtoC.unpack(
                body, "snapback.v1.AdBreakStartedRequest",
                snapback__v1__ad_break_started_request__unpack,
                snapback__v1__ad_break_started_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .adBreakStarted(
                        breakId: try ProtoC.string(p.pointee.break_id, "break_id"),
                        streamTime: p.pointee._stream_time_case.rawValue != 0 ? p.pointee.stream_time : nil))
            }

        case .adBreakEnded:
            return try ProtoC.unpack(
                body, "snapback.v1.AdBreakEndedRequest",
                snapback__v1__ad_break_ended_request__unpack,
                snapback__v1__ad_break_ended_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .adBreakEnded(
                        breakId: try ProtoC.string(p.pointee.break_id, "break_id"),
                        streamTime: p.pointee._stream_time_case.rawValue != 0 ? p.pointee.stream_time : nil))
            }

        case .adStarted:
            return try ProtoC.unpack(
                body, "snapback.v1.AdStartedRequest", snapback__v1__ad_started_request__unpack,
                snapback__v1__ad_started_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .adStarted(
                        breakId: try ProtoC.string(p.pointee.break_id, "break_id"), index: Int(p.pointee.index),
                        streamTime: p.pointee._stream_time_case.rawValue != 0 ? p.pointee.stream_time : nil))
            }

        case .adEnded:
            return try ProtoC.unpack(
                body, "snapback.v1.AdEndedRequest", snapback__v1__ad_ended_request__unpack,
                snapback__v1__ad_ended_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .adEnded(
                        breakId: try ProtoC.string(p.pointee.break_id, "break_id"), index: Int(p.pointee.index),
                        streamTime: p.pointee._stream_time_case.rawValue != 0 ? p.pointee.stream_time : nil))
            }

        case .trickPlayStarted:
            return try ProtoC.unpack(
                body, "snapback.v1.TrickPlayStartedRequest",
                snapback__v1__trick_play_started_request__unpack,
                snapback__v1__trick_play_started_request__free_unpacked
            ) { p throws(WireError) in
                .event(
                    sessionId: p.pointee.session_id,
                    .trickPlayStarted(streamTime: p.pointee.stream_time, rate: p.pointee.rate))
            }

        case .trickPlayEnded:
            return try ProtoC.unpack(
                body, "snapback.v1.TrickPlayEndedRequest",
                snapback__v1__trick_play_ended_request__unpack,
                snapback__v1__trick_play_ended_request__free_unpacked
            ) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .trickPlayEnded(streamTime: p.pointee.stream_time))
            }

        case .contentComplete:
            return try ProtoC.unpack(
                body, "snapback.v1.ContentCompleteRequest",
                snapback__v1__content_complete_request__unpack,
                snapback__v1__content_complete_request__free_unpacked
            ) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .contentCompleted)
            }

        case .updateBreaks:
            // Breaks are many fields deep: read by name, like the queries.
            return try ProtoC.read(body, method.requestDescriptor) { m throws(WireError) in
                .event(sessionId: m.uint64("session_id"), .breaksUpdated(try AdBreak.list(m, "breaks")))
            }

        case .pause:
            return try ProtoC.unpack(
                body, "snapback.v1.PauseRequest", snapback__v1__pause_request__unpack,
                snapback__v1__pause_request__free_unpacked
            ) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .paused(streamTime: p.pointee.stream_time))
            }

        case .closeSession:
            return try ProtoC.unpack(
                body, "snapback.v1.CloseSessionRequest", snapback__v1__close_session_request__unpack,
                snapback__v1__close_session_request__free_unpacked
            ) { p throws(WireError) in
                .closeSession(sessionId: p.pointee.session_id)
            }

        default:
            preconditionFailure("\(method) is not an event")
        }
    }

    /// `decode(method:body:defaultPreset:)` over an array.
    public static func decode(
        method: WireMethod, body: [UInt8],
        defaultPreset: AdPolicy.Preset = .snapback
    ) throws(WireError) -> WireRequest {
        try body.withUnsafeBytes { raw in
            Result { () throws(WireError) in try decode(method: method, body: raw, defaultPreset: defaultPreset) }
        }.get()
    }
}
