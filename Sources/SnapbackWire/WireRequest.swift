// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// A request body as Swift values: one case per method (session events share `.event`).
///
/// The daemon decodes with `decode(method:body:defaultPreset:)`; the client library encodes with
/// `encode(into:)` and sends `method` in the frame header.
public enum WireRequest: Sendable, Equatable {
    // The two large, once-per-connection or once-per-session requests are boxed, so that a request moves
    // as a few words: events, the hot path, were copied with memcpy at every step as big as an OpenSession.
    indirect case hello(SnapbackV1.HelloRequest)
    case getStatus
    /// Control/ListSessions, GetSession, WatchDecisions: the operator's view of every connection's
    /// sessions (who may call them is the daemon's business, not the wire's).
    /// `pageSize` 0 = the server's default; `pageToken` "" = the first page.
    case listSessions(pageSize: UInt32 = 0, pageToken: String = "")
    case getSession(sessionId: UInt64)
    /// `sessionId` 0 = every session; `contentId` "" = every content.
    case watchDecisions(sessionId: UInt64, contentId: String)
    indirect case openSession(OpenSessionRequest)
    /// ReportPlayhead … Pause: the event as the timeline takes it. (`playerDisconnected` and
    /// `timerFired` are the daemon's own events and never travel; `.closed` travels as CloseSession.)
    case event(sessionId: UInt64, TimelineEvent)
    case closeSession(sessionId: UInt64)
    case contentTimeForStreamTime(sessionId: UInt64, streamTime: Double)
    case streamTimeForContentTime(sessionId: UInt64, contentTime: Double)
    case breakAt(sessionId: UInt64, streamTime: Double)
    /// A page of the session's breaks from index `firstBreak`: `maxBreaks` 0 (or over
    /// `SessionStateReply.maxPageBreaks`) = a whole page.
    case getSessionState(sessionId: UInt64, firstBreak: UInt32 = 0, maxBreaks: UInt32 = 0)
    case getBookmark(profile: String, contentId: String)
    /// `pageSize` 0 = the server's default; `pageToken` "" = the first page.
    case listBookmarks(profile: String, pageSize: UInt32, pageToken: String)
    case deleteBookmark(profile: String, contentId: String)
    case clearBookmarks(profile: String)
    /// Sync/WatchChanges: the changes numbered after `after` (0: from the start), then each new one.
    case watchChanges(after: UInt64)
    /// Sync/Merge: records and watched breaks from other boxes, each already checked against its range.
    indirect case merge(SyncMerge)

    /// The session the request is about, for the Timeline methods of the connection's own sessions
    /// (not GetSession, which looks at any connection's).
    public var sessionId: UInt64? {
        switch self {
        case .event(let id, _), .closeSession(let id), .contentTimeForStreamTime(let id, _),
            .streamTimeForContentTime(let id, _), .breakAt(let id, _), .getSessionState(let id, _, _):
            return id
        default:
            return nil
        }
    }

    /// The method the request is sent as. Traps for `.event` with `playerDisconnected` or `timerFired`,
    /// which are not wire events (a programming error).
    public var method: WireMethod {
        switch self {
        case .hello: return .hello
        case .getStatus: return .getStatus
        case .listSessions: return .listSessions
        case .getSession: return .getSession
        case .watchDecisions: return .watchDecisions
        case .openSession: return .openSession
        case .event(_, let event): return WireRequest.method(for: event)
        case .closeSession: return .closeSession
        case .contentTimeForStreamTime: return .contentTimeForStreamTime
        case .streamTimeForContentTime: return .streamTimeForContentTime
        case .breakAt: return .breakAt
        case .getSessionState: return .getSessionState
        case .getBookmark: return .getBookmark
        case .listBookmarks: return .listBookmarks
        case .deleteBookmark: return .deleteBookmark
        case .clearBookmarks: return .clearBookmarks
        case .watchChanges: return .watchChanges
        case .merge: return .merge
        }
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
        case .breaksUpdated: return .updateBreaks
        case .paused: return .pause
        case .closed: return .closeSession
        case .playerDisconnected, .timerFired:
            preconditionFailure("\(event.name) is the daemon's own event and has no wire method")
        }
    }
}
