import CSnapbackProto
import SnapbackTimeline

extension WireRequest {
    /// Decodes the body of a REQUEST frame for `method`.
    ///
    /// Bytes that do not parse as the method's message throw `.malformed`; an unknown preset name or enum
    /// value throws `.invalidArgument` (both INVALID_ARGUMENT on the wire). Unknown fields are ignored.
    /// A number outside its range (`Limits`) or a string that is not UTF-8 throws `.invalidArgument`
    /// naming the field. `defaultPreset` is the policy of an OpenSession that names no preset.
    public static func decode(method: WireMethod, body: UnsafeRawBufferPointer,
                              defaultPreset: AdPolicy.Preset = .snapback) throws(WireError) -> WireRequest {
        let request = try decodeFields(method: method, body: body, defaultPreset: defaultPreset)
        try request.checkRanges()
        return request
    }

    private static func decodeFields(method: WireMethod, body: UnsafeRawBufferPointer,
                                     defaultPreset: AdPolicy.Preset) throws(WireError) -> WireRequest {
        switch method {
        case .hello:
            return .hello(try HelloRequest.decode(body))

        case .getStatus:
            return try ProtoC.unpack(body, "snapback.v1.StatusRequest", snapback__v1__status_request__unpack,
                                     snapback__v1__status_request__free_unpacked) { _ throws(WireError) in .getStatus }

        case .listSessions:
            return try ProtoC.unpack(body, "snapback.v1.ListSessionsRequest", snapback__v1__list_sessions_request__unpack,
                                     snapback__v1__list_sessions_request__free_unpacked) { _ throws(WireError) in .listSessions }

        case .getSession:
            return try ProtoC.unpack(body, "snapback.v1.GetSessionRequest", snapback__v1__get_session_request__unpack,
                                     snapback__v1__get_session_request__free_unpacked) { p throws(WireError) in
                .getSession(sessionId: p.pointee.session_id)
            }

        case .watchDecisions:
            return try ProtoC.unpack(body, "snapback.v1.WatchDecisionsRequest",
                                     snapback__v1__watch_decisions_request__unpack,
                                     snapback__v1__watch_decisions_request__free_unpacked) { p throws(WireError) in
                .watchDecisions(sessionId: p.pointee.session_id,
                                contentId: try ProtoC.string(p.pointee.content_id, "content_id"))
            }

        case .openSession:
            return .openSession(try OpenSessionRequest.decode(body, defaultPreset: defaultPreset))

        case .reportPlayhead:
            if let m = WireFastPath.decodeReportPlayhead(body) {
                return .event(sessionId: m.session, .playheadReported(streamTime: m.streamTime, rate: m.rate, playing: m.playing))
            }
            return try ProtoC.unpack(body, "snapback.v1.ReportPlayheadRequest",
                                     snapback__v1__report_playhead_request__unpack,
                                     snapback__v1__report_playhead_request__free_unpacked) { p throws(WireError) in
                let m = p.pointee
                return .event(sessionId: m.session_id, .playheadReported(
                    streamTime: m.stream_time, rate: m.rate, playing: ProtoC.bool(m.playing)))
            }

        case .seekStarted:
            return try ProtoC.unpack(body, "snapback.v1.SeekStartedRequest", snapback__v1__seek_started_request__unpack,
                                     snapback__v1__seek_started_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .seekStarted(from: p.pointee.from_stream_time))
            }

        case .seekEnded:
            if let m = WireFastPath.decodeSeekEnded(body) {
                return .event(sessionId: m.session, .seekEnded(from: m.from, to: m.to))
            }
            return try ProtoC.unpack(body, "snapback.v1.SeekEndedRequest", snapback__v1__seek_ended_request__unpack,
                                     snapback__v1__seek_ended_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id,
                       .seekEnded(from: p.pointee.from_stream_time, to: p.pointee.to_stream_time))
            }

        case .adBreakStarted:
            return try ProtoC.unpack(body, "snapback.v1.AdBreakStartedRequest",
                                     snapback__v1__ad_break_started_request__unpack,
                                     snapback__v1__ad_break_started_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .adBreakStarted(breakId: try ProtoC.string(p.pointee.break_id, "break_id")))
            }

        case .adBreakEnded:
            return try ProtoC.unpack(body, "snapback.v1.AdBreakEndedRequest",
                                     snapback__v1__ad_break_ended_request__unpack,
                                     snapback__v1__ad_break_ended_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .adBreakEnded(breakId: try ProtoC.string(p.pointee.break_id, "break_id")))
            }

        case .adStarted:
            return try ProtoC.unpack(body, "snapback.v1.AdStartedRequest", snapback__v1__ad_started_request__unpack,
                                     snapback__v1__ad_started_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id,
                       .adStarted(breakId: try ProtoC.string(p.pointee.break_id, "break_id"), index: Int(p.pointee.index)))
            }

        case .adEnded:
            return try ProtoC.unpack(body, "snapback.v1.AdEndedRequest", snapback__v1__ad_ended_request__unpack,
                                     snapback__v1__ad_ended_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id,
                       .adEnded(breakId: try ProtoC.string(p.pointee.break_id, "break_id"), index: Int(p.pointee.index)))
            }

        case .trickPlayStarted:
            return try ProtoC.unpack(body, "snapback.v1.TrickPlayStartedRequest",
                                     snapback__v1__trick_play_started_request__unpack,
                                     snapback__v1__trick_play_started_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id,
                       .trickPlayStarted(streamTime: p.pointee.stream_time, rate: p.pointee.rate))
            }

        case .trickPlayEnded:
            return try ProtoC.unpack(body, "snapback.v1.TrickPlayEndedRequest",
                                     snapback__v1__trick_play_ended_request__unpack,
                                     snapback__v1__trick_play_ended_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .trickPlayEnded(streamTime: p.pointee.stream_time))
            }

        case .contentComplete:
            return try ProtoC.unpack(body, "snapback.v1.ContentCompleteRequest",
                                     snapback__v1__content_complete_request__unpack,
                                     snapback__v1__content_complete_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .contentCompleted)
            }

        case .updateBreaks:
            return try ProtoC.unpack(body, "snapback.v1.UpdateBreaksRequest", snapback__v1__update_breaks_request__unpack,
                                     snapback__v1__update_breaks_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .breaksUpdated(try AdBreak.list(p.pointee.breaks, p.pointee.n_breaks)))
            }

        case .pause:
            return try ProtoC.unpack(body, "snapback.v1.PauseRequest", snapback__v1__pause_request__unpack,
                                     snapback__v1__pause_request__free_unpacked) { p throws(WireError) in
                .event(sessionId: p.pointee.session_id, .paused(streamTime: p.pointee.stream_time))
            }

        case .closeSession:
            return try ProtoC.unpack(body, "snapback.v1.CloseSessionRequest", snapback__v1__close_session_request__unpack,
                                     snapback__v1__close_session_request__free_unpacked) { p throws(WireError) in
                .closeSession(sessionId: p.pointee.session_id)
            }

        case .contentTimeForStreamTime:
            return try ProtoC.unpack(body, "snapback.v1.ContentTimeForStreamTimeRequest",
                                     snapback__v1__content_time_for_stream_time_request__unpack,
                                     snapback__v1__content_time_for_stream_time_request__free_unpacked) {
                p throws(WireError) in
                .contentTimeForStreamTime(sessionId: p.pointee.session_id, streamTime: p.pointee.stream_time)
            }

        case .streamTimeForContentTime:
            return try ProtoC.unpack(body, "snapback.v1.StreamTimeForContentTimeRequest",
                                     snapback__v1__stream_time_for_content_time_request__unpack,
                                     snapback__v1__stream_time_for_content_time_request__free_unpacked) {
                p throws(WireError) in
                .streamTimeForContentTime(sessionId: p.pointee.session_id, contentTime: p.pointee.content_time)
            }

        case .breakAt:
            return try ProtoC.unpack(body, "snapback.v1.BreakAtRequest", snapback__v1__break_at_request__unpack,
                                     snapback__v1__break_at_request__free_unpacked) { p throws(WireError) in
                .breakAt(sessionId: p.pointee.session_id, streamTime: p.pointee.stream_time)
            }

        case .getSessionState:
            return try ProtoC.unpack(body, "snapback.v1.GetSessionStateRequest",
                                     snapback__v1__get_session_state_request__unpack,
                                     snapback__v1__get_session_state_request__free_unpacked) { p throws(WireError) in
                .getSessionState(sessionId: p.pointee.session_id)
            }

        case .getBookmark:
            return try ProtoC.unpack(body, "snapback.v1.GetBookmarkRequest", snapback__v1__get_bookmark_request__unpack,
                                     snapback__v1__get_bookmark_request__free_unpacked) { p throws(WireError) in
                .getBookmark(profile: try ProtoC.string(p.pointee.profile, "profile"), contentId: try ProtoC.string(p.pointee.content_id, "content_id"))
            }

        case .listBookmarks:
            return try ProtoC.unpack(body, "snapback.v1.ListBookmarksRequest", snapback__v1__list_bookmarks_request__unpack,
                                     snapback__v1__list_bookmarks_request__free_unpacked) { p throws(WireError) in
                .listBookmarks(profile: try ProtoC.string(p.pointee.profile, "profile"), pageSize: p.pointee.page_size,
                               pageToken: try ProtoC.string(p.pointee.page_token, "page_token"))
            }

        case .deleteBookmark:
            return try ProtoC.unpack(body, "snapback.v1.DeleteBookmarkRequest",
                                     snapback__v1__delete_bookmark_request__unpack,
                                     snapback__v1__delete_bookmark_request__free_unpacked) { p throws(WireError) in
                .deleteBookmark(profile: try ProtoC.string(p.pointee.profile, "profile"), contentId: try ProtoC.string(p.pointee.content_id, "content_id"))
            }

        case .clearBookmarks:
            return try ProtoC.unpack(body, "snapback.v1.ClearBookmarksRequest",
                                     snapback__v1__clear_bookmarks_request__unpack,
                                     snapback__v1__clear_bookmarks_request__free_unpacked) { p throws(WireError) in
                .clearBookmarks(profile: try ProtoC.string(p.pointee.profile, "profile"))
            }
        }
    }

    /// `decode(method:body:defaultPreset:)` over an array.
    public static func decode(method: WireMethod, body: [UInt8],
                              defaultPreset: AdPolicy.Preset = .snapback) throws(WireError) -> WireRequest {
        try body.withUnsafeBytes { raw in
            Result { () throws(WireError) in try decode(method: method, body: raw, defaultPreset: defaultPreset) }
        }.get()
    }
}
