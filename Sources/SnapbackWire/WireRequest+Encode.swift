import CSnapbackProto
import SnapbackTimeline

// The client side: Swift values to request bodies. The per-event requests pack from stack values with
// `withCString`, so a client's hot path (ReportPlayhead, SeekEnded) allocates nothing but `out`'s growth.

extension WireRequest {
    /// Appends the request's body to `out`; send it with `method` in the frame header. Returns its length.
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        switch self {
        case .hello(let hello):
            return hello.encode(into: &out)

        case .getStatus:
            var m = Snapback__V1__StatusRequest()
            snapback__v1__status_request__init(&m)
            return ProtoC.append(&m, to: &out)

        case .listSessions:
            var m = Snapback__V1__ListSessionsRequest()
            snapback__v1__list_sessions_request__init(&m)
            return ProtoC.append(&m, to: &out)

        case .getSession(let sessionId):
            var m = Snapback__V1__GetSessionRequest()
            snapback__v1__get_session_request__init(&m)
            m.session_id = sessionId
            return ProtoC.append(&m, to: &out)

        case .watchDecisions(let sessionId, let contentId):
            var m = Snapback__V1__WatchDecisionsRequest()
            snapback__v1__watch_decisions_request__init(&m)
            m.session_id = sessionId
            return contentId.withCString { id in
                m.content_id = UnsafeMutablePointer(mutating: id)
                return ProtoC.append(&m, to: &out)
            }

        case .openSession(let open):
            return open.encode(into: &out)

        case .event(let sessionId, let event):
            return WireRequest.encode(sessionId: sessionId, event: event, into: &out)

        case .closeSession(let sessionId):
            var m = Snapback__V1__CloseSessionRequest()
            snapback__v1__close_session_request__init(&m)
            m.session_id = sessionId
            return ProtoC.append(&m, to: &out)

        case .contentTimeForStreamTime(let sessionId, let streamTime):
            var m = Snapback__V1__ContentTimeForStreamTimeRequest()
            snapback__v1__content_time_for_stream_time_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            return ProtoC.append(&m, to: &out)

        case .streamTimeForContentTime(let sessionId, let contentTime):
            var m = Snapback__V1__StreamTimeForContentTimeRequest()
            snapback__v1__stream_time_for_content_time_request__init(&m)
            m.session_id = sessionId
            m.content_time = contentTime
            return ProtoC.append(&m, to: &out)

        case .breakAt(let sessionId, let streamTime):
            var m = Snapback__V1__BreakAtRequest()
            snapback__v1__break_at_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            return ProtoC.append(&m, to: &out)

        case .getSessionState(let sessionId):
            var m = Snapback__V1__GetSessionStateRequest()
            snapback__v1__get_session_state_request__init(&m)
            m.session_id = sessionId
            return ProtoC.append(&m, to: &out)

        case .getBookmark(let profile, let contentId):
            var m = Snapback__V1__GetBookmarkRequest()
            snapback__v1__get_bookmark_request__init(&m)
            return profile.withCString { p in
                contentId.withCString { c in
                    m.profile = UnsafeMutablePointer(mutating: p)
                    m.content_id = UnsafeMutablePointer(mutating: c)
                    return ProtoC.append(&m, to: &out)
                }
            }

        case .listBookmarks(let profile, let pageSize, let pageToken):
            var m = Snapback__V1__ListBookmarksRequest()
            snapback__v1__list_bookmarks_request__init(&m)
            m.page_size = pageSize
            return profile.withCString { p in
                pageToken.withCString { t in
                    m.profile = UnsafeMutablePointer(mutating: p)
                    m.page_token = UnsafeMutablePointer(mutating: t)
                    return ProtoC.append(&m, to: &out)
                }
            }

        case .deleteBookmark(let profile, let contentId):
            var m = Snapback__V1__DeleteBookmarkRequest()
            snapback__v1__delete_bookmark_request__init(&m)
            return profile.withCString { p in
                contentId.withCString { c in
                    m.profile = UnsafeMutablePointer(mutating: p)
                    m.content_id = UnsafeMutablePointer(mutating: c)
                    return ProtoC.append(&m, to: &out)
                }
            }

        case .clearBookmarks(let profile):
            var m = Snapback__V1__ClearBookmarksRequest()
            snapback__v1__clear_bookmarks_request__init(&m)
            return profile.withCString { p in
                m.profile = UnsafeMutablePointer(mutating: p)
                return ProtoC.append(&m, to: &out)
            }
        }
    }

    /// The request's body.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    private static func encode(sessionId: UInt64, event: TimelineEvent, into out: inout [UInt8]) -> Int {
        switch event {
        case .playheadReported(let streamTime, let rate, let playing):
            var m = Snapback__V1__ReportPlayheadRequest()
            snapback__v1__report_playhead_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            m.rate = rate
            m.playing = ProtoC.cBool(playing)
            return ProtoC.append(&m, to: &out)

        case .seekStarted(let from):
            var m = Snapback__V1__SeekStartedRequest()
            snapback__v1__seek_started_request__init(&m)
            m.session_id = sessionId
            m.from_stream_time = from
            return ProtoC.append(&m, to: &out)

        case .seekEnded(let from, let to):
            var m = Snapback__V1__SeekEndedRequest()
            snapback__v1__seek_ended_request__init(&m)
            m.session_id = sessionId
            m.from_stream_time = from
            m.to_stream_time = to
            return ProtoC.append(&m, to: &out)

        case .adBreakStarted(let breakId):
            var m = Snapback__V1__AdBreakStartedRequest()
            snapback__v1__ad_break_started_request__init(&m)
            m.session_id = sessionId
            return breakId.withCString { id in
                m.break_id = UnsafeMutablePointer(mutating: id)
                return ProtoC.append(&m, to: &out)
            }

        case .adBreakEnded(let breakId):
            var m = Snapback__V1__AdBreakEndedRequest()
            snapback__v1__ad_break_ended_request__init(&m)
            m.session_id = sessionId
            return breakId.withCString { id in
                m.break_id = UnsafeMutablePointer(mutating: id)
                return ProtoC.append(&m, to: &out)
            }

        case .adStarted(let breakId, let index):
            var m = Snapback__V1__AdStartedRequest()
            snapback__v1__ad_started_request__init(&m)
            m.session_id = sessionId
            m.index = UInt32(clamping: index)
            return breakId.withCString { id in
                m.break_id = UnsafeMutablePointer(mutating: id)
                return ProtoC.append(&m, to: &out)
            }

        case .adEnded(let breakId, let index):
            var m = Snapback__V1__AdEndedRequest()
            snapback__v1__ad_ended_request__init(&m)
            m.session_id = sessionId
            m.index = UInt32(clamping: index)
            return breakId.withCString { id in
                m.break_id = UnsafeMutablePointer(mutating: id)
                return ProtoC.append(&m, to: &out)
            }

        case .trickPlayStarted(let streamTime, let rate):
            var m = Snapback__V1__TrickPlayStartedRequest()
            snapback__v1__trick_play_started_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            m.rate = rate
            return ProtoC.append(&m, to: &out)

        case .trickPlayEnded(let streamTime):
            var m = Snapback__V1__TrickPlayEndedRequest()
            snapback__v1__trick_play_ended_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            return ProtoC.append(&m, to: &out)

        case .contentCompleted:
            var m = Snapback__V1__ContentCompleteRequest()
            snapback__v1__content_complete_request__init(&m)
            m.session_id = sessionId
            return ProtoC.append(&m, to: &out)

        case .breaksUpdated(let breaks):
            let arena = CArena()
            var m = Snapback__V1__UpdateBreaksRequest()
            snapback__v1__update_breaks_request__init(&m)
            m.session_id = sessionId
            m.n_breaks = breaks.count
            m.breaks = arena.adBreaks(breaks)
            return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }

        case .paused(let streamTime):
            var m = Snapback__V1__PauseRequest()
            snapback__v1__pause_request__init(&m)
            m.session_id = sessionId
            m.stream_time = streamTime
            return ProtoC.append(&m, to: &out)

        case .closed:
            return WireRequest.closeSession(sessionId: sessionId).encode(into: &out)

        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")
        }
    }
}
