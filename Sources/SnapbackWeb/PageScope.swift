// SPDX-License-Identifier: Apache-2.0
import SnapbackJSON
import SnapbackWire

/// What one page may do through its snapbackd connection. snapbackd scopes by uid, and every page has the
/// bridge's: so the bridge keeps each page to its own sessions and its app's profiles, and lets it call
/// the operator's and the sync agent's methods only when the app's entry grants them
/// (snapback-web.conf(5)). The timeline methods need nothing here: snapbackd takes them only for the
/// sessions of the connection they come on, and each page has a connection of its own.
///
/// Pure: the bridge tells it what was opened and closed, and asks it before and after each call.
public struct PageScope: Sendable {
    public let app: WebApp
    /// The sessions this page opened and has not closed.
    public private(set) var sessions: Set<UInt64> = []

    public init(app: WebApp) { self.app = app }

    /// Why the app may not call `method` at all; nil when it may.
    public func refusal(of method: WireMethod) -> WireStatus? {
        func denied(_ grant: WebGrant) -> WireStatus? {
            app.grants.contains(grant)
                ? nil
                : WireStatus(
                    code: .permissionDenied,
                    message: "\(method.name) needs the grant \(grant.rawValue) in app \(app.name)'s entry (snapback-web.conf(5))")
        }
        // Every method named, no default: a method added to the protocol does not build until it is placed
        // here, so none reaches a page unweighed.
        switch method {
        case .hello:
            return WireStatus(code: .failedPrecondition, message: "the bridge says Hello for the page")
        case .getStatus, .getMetrics, .deleteBookmark, .clearBookmarks: return denied(.admin)
        case .watchDecisions: return denied(.watchDecisions)
        case .watchChanges, .merge: return denied(.sync)
        case .listSessions, .getSession, .getSessionState, .getBookmark, .listBookmarks: return nil
        case .openSession, .reportPlayhead, .seekStarted, .seekEnded, .adBreakStarted, .adBreakEnded, .adStarted,
            .adEnded, .trickPlayStarted, .trickPlayEnded, .contentComplete, .updateBreaks, .pause, .closeSession,
            .contentTimeForStreamTime, .streamTimeForContentTime, .breakAt:
            return nil
        }
    }

    /// Whether the app's pages may name `profile`: one of its profiles, or the default profile "" for an
    /// app that lists none.
    public func allows(profile: String) -> Bool {
        app.profiles.isEmpty ? profile.isEmpty : app.profiles.contains(profile)
    }

    /// Why this request may not go to snapbackd; nil when it may.
    public func refusal(of request: any ProtoJSONMessage) -> WireStatus? {
        if let profile = (request as? any ProfileNaming)?.profile, !allows(profile: profile) {
            let allowed =
                app.profiles.isEmpty ? "only the default profile \"\"" : "profiles \(app.profiles.joined(separator: ", "))"
            return WireStatus(
                code: .permissionDenied, message: "profile \"\(profile)\" is not app \(app.name)'s (it may use \(allowed))")
        }
        if !app.grants.contains(.admin), let id = (request as? any SessionNaming)?.sessionId, !sessions.contains(id) {
            // Told as snapbackd tells a session that does not exist: a page learns nothing of others'.
            return WireStatus(code: .notFound, message: "no session \(id)")
        }
        return nil
    }

    /// Takes in snapbackd's answer to `request`: remembers an opened session, forgets a closed one, and
    /// leaves out of a session list those that are not the page's. Returns the answer to give the page.
    public mutating func answered(
        _ request: any ProtoJSONMessage, reply: (any ProtoJSONMessage)?
    ) -> (any ProtoJSONMessage)? {
        switch (request, reply) {
        case (_, let opened as SnapbackV1.OpenSessionReply):
            sessions.insert(opened.sessionId)
        case (let closed as SnapbackV1.CloseSessionRequest, _):
            sessions.remove(closed.sessionId)
        case (_, var list as SnapbackV1.ListSessionsReply) where !app.grants.contains(.admin):
            list.sessions.removeAll { !sessions.contains($0.sessionId) }
            return list
        default: break
        }
        return reply
    }
}

/// A request that names a viewer profile.
protocol ProfileNaming { var profile: String { get } }
extension SnapbackV1.OpenSessionRequest: ProfileNaming {}
extension SnapbackV1.GetBookmarkRequest: ProfileNaming {}
extension SnapbackV1.ListBookmarksRequest: ProfileNaming {}
extension SnapbackV1.DeleteBookmarkRequest: ProfileNaming {}
extension SnapbackV1.ClearBookmarksRequest: ProfileNaming {}

/// A Control request about one session of any connection (the timeline's are the connection's own).
protocol SessionNaming { var sessionId: UInt64 { get } }
extension SnapbackV1.GetSessionRequest: SessionNaming {}
extension SnapbackV1.GetSessionStateRequest: SessionNaming {}
