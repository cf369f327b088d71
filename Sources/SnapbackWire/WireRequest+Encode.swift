// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

// The client side: Swift values to request bodies, through the rpc's generated request message.

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
        case .getStatus: return SnapbackV1.StatusRequest().encode(into: &out)
        case .listSessions(let size, let token):
            return SnapbackV1.ListSessionsRequest(pageSize: size, pageToken: token).encode(into: &out)
        case .getSession(let id): return SnapbackV1.GetSessionRequest(sessionId: id).encode(into: &out)
        case .getSessionState(let id, let first, let count):
            return SnapbackV1.GetSessionStateRequest(sessionId: id, firstBreak: first, maxBreaks: count).encode(into: &out)
        case .watchDecisions(let id, let contentId):
            return SnapbackV1.WatchDecisionsRequest(sessionId: id, contentId: contentId).encode(into: &out)
        case .contentTimeForStreamTime(let id, let t):
            return SnapbackV1.ContentTimeForStreamTimeRequest(sessionId: id, streamTime: t).encode(into: &out)
        case .breakAt(let id, let t): return SnapbackV1.BreakAtRequest(sessionId: id, streamTime: t).encode(into: &out)
        case .streamTimeForContentTime(let id, let t):
            return SnapbackV1.StreamTimeForContentTimeRequest(sessionId: id, contentTime: t).encode(into: &out)
        case .getBookmark(let profile, let contentId):
            return SnapbackV1.GetBookmarkRequest(profile: profile, contentId: contentId).encode(into: &out)
        case .deleteBookmark(let profile, let contentId):
            return SnapbackV1.DeleteBookmarkRequest(profile: profile, contentId: contentId).encode(into: &out)
        case .listBookmarks(let profile, let pageSize, let pageToken):
            return SnapbackV1.ListBookmarksRequest(profile: profile, pageSize: pageSize, pageToken: pageToken)
                .encode(into: &out)
        case .clearBookmarks(let profile): return SnapbackV1.ClearBookmarksRequest(profile: profile).encode(into: &out)
        case .watchChanges(let after): return SnapbackV1.WatchChangesRequest(after: after).encode(into: &out)
        case .merge(let merge): return merge.encode(into: &out)
        }
    }

    /// The request's body.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    private static func encode(sessionId id: UInt64, event: TimelineEvent, into out: inout [UInt8]) -> Int {
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
        case .breaksUpdated(let breaks):
            return SnapbackV1.UpdateBreaksRequest(sessionId: id, breaks: breaks).encode(into: &out)
        case .paused(let streamTime): return SnapbackV1.PauseRequest(sessionId: id, streamTime: streamTime).encode(into: &out)
        case .closed: return SnapbackV1.CloseSessionRequest(sessionId: id).encode(into: &out)
        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")
        }
    }
}
