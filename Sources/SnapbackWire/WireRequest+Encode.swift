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
        case .openSession(let open):
            return open.encode(into: &out)
        case .event(let sessionId, let event):
            return WireRequest.encode(sessionId: sessionId, event: event, into: &out)
        case .closeSession(let sessionId):
            return WireRequest.encode(sessionId: sessionId, event: .closed, into: &out)
        default:
            return ProtoC.append(method.requestDescriptor, to: &out, writeQuery(to:))
        }
    }

    /// The requests off the event path, field by field by name into the rpc's request message.
    private func writeQuery(to m: ProtoBuilder) {
        switch self {
        case .getStatus: break
        case .listSessions(let size, let token):
            m.set("page_size", size)
            m.set("page_token", token)
        case .getSession(let id): m.set("session_id", id)
        case .getSessionState(let id, let first, let count):
            m.set("session_id", id)
            m.set("first_break", first)
            m.set("max_breaks", count)
        case .watchDecisions(let id, let contentId):
            m.set("session_id", id)
            m.set("content_id", contentId)
        case .contentTimeForStreamTime(let id, let t), .breakAt(let id, let t):
            m.set("session_id", id)
            m.set("stream_time", t)
        case .streamTimeForContentTime(let id, let t):
            m.set("session_id", id)
            m.set("content_time", t)
        case .getBookmark(let profile, let contentId), .deleteBookmark(let profile, let contentId):
            m.set("profile", profile)
            m.set("content_id", contentId)
        case .listBookmarks(let profile, let pageSize, let pageToken):
            m.set("profile", profile)
            m.set("page_size", pageSize)
            m.set("page_token", pageToken)
        case .clearBookmarks(let profile): m.set("profile", profile)
        case .hello, .openSession, .event, .closeSession: preconditionFailure("\(method) is encoded elsewhere")
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

        case .seekEnded(let from, let to):
            var m = Snapback__V1__SeekEndedRequest()
            snapback__v1__seek_ended_request__init(&m)
            m.session_id = sessionId
            m.from_stream_time = from
            m.to_stream_time = to
            return ProtoC.append(&m, to: &out)

        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")

        default:
            // The other events are rare: field by field by name, as the queries.
            return ProtoC.append(WireRequest.method(for: event).requestDescriptor, to: &out) { m in
                m.set("session_id", sessionId)
                write(event, to: m)
            }
        }
    }

    private static func write(_ event: TimelineEvent, to m: ProtoBuilder) {
        switch event {
        case .seekStarted(let from): m.set("from_stream_time", from)
        case .adBreakStarted(let breakId, let streamTime), .adBreakEnded(let breakId, let streamTime):
            m.set("break_id", breakId)
            m.set("stream_time", streamTime)
        case .adStarted(let breakId, let index, let streamTime), .adEnded(let breakId, let index, let streamTime):
            m.set("break_id", breakId)
            m.set("index", UInt32(clamping: index))
            m.set("stream_time", streamTime)
        case .trickPlayStarted(let streamTime, let rate):
            m.set("stream_time", streamTime)
            m.set("rate", rate)
        case .trickPlayEnded(let streamTime), .paused(let streamTime): m.set("stream_time", streamTime)
        case .breaksUpdated(let breaks): m.set("breaks", breaks)
        case .contentCompleted, .closed: break
        case .playheadReported, .seekEnded, .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is encoded elsewhere")
        }
    }
}
