// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// A WatchDecisions subscriber: where its decisions go and which it wants.
final class Watcher: PushStream {
    static let method = WireMethod.watchDecisions
    static let readerName = "watcher"
    let dropNote = ""
    let connection: any PeerPort
    let callId: UInt32
    /// 0 = every session.
    let sessionId: UInt64
    /// "" = every content.
    let contentId: String
    /// The seq of the last decision sent on this stream.
    var seq: UInt64 = 0

    init(connection: any PeerPort, callId: UInt32, sessionId: UInt64, contentId: String) {
        self.connection = connection
        self.callId = callId
        self.sessionId = sessionId
        self.contentId = contentId
    }

    func wants(_ entry: SessionEntry) -> Bool {
        (sessionId == 0 || sessionId == entry.id) && (contentId.isEmpty || contentId == entry.contentId)
    }

    func unsubscribe(from service: TimelineService) { service.unsubscribe(self) }
}

extension TimelineService {
    // MARK: Who may see what

    /// Root and the admin groups see every session; any other peer the sessions its own uid opened.
    func mayInspect(_ entry: SessionEntry, by peer: PeerCredentials) -> Bool {
        configuration.access.isAdmin(peer) || entry.owner.uid == peer.uid
    }

    /// With the first page of its breaks (GetSession), or none (ListSessions: the cost of listing is the
    /// sessions', not their breaks').
    func sessionInfo(_ entry: SessionEntry, at now: Double, withBreaks: Bool) -> SnapbackV1.SessionInfo {
        let breakCount = entry.timeline.layout.count
        let window = withBreaks ? SessionStateReply.page(from: 0, count: 0) : 0..<0
        var state = SessionStateReply(snapshot(entry, at: now, breaks: window), totalBreaks: breakCount)
        if !withBreaks { state.breakStates = [] }
        return SnapbackV1.SessionInfo(
            sessionId: entry.id, contentId: entry.contentId, streamId: entry.streamId, profile: entry.profile,
            kind: entry.timeline.kind.proto, policyPreset: entry.preset, clientName: entry.clientName,
            peerUid: entry.owner.uid, peerPid: entry.owner.pid, openedAt: entry.openedAt, pushes: entry.pushSeq,
            breakCount: UInt32(clamping: breakCount), state: state.proto, contentDuration: entry.timeline.contentDuration)
    }

    // MARK: Control/ListSessions, GetSession

    /// A page of the sessions the caller may see, in id order from after the token's id: the ids are
    /// scanned (cheap, however many), the page's sessions alone described and encoded.
    func listSessions(
        _ pageSize: UInt32, _ token: String, _ header: FrameHeader, _ connection: any PeerPort, _ now: Double
    ) {
        let limit = pageSize == 0 ? 100 : Int(min(pageSize, 1000))
        var after: UInt64 = 0
        if !token.isEmpty {
            guard let id = UInt64(token) else {
                fail(connection, header, .invalidArgument, "page_token \"\(token)\" is not one this daemon gave")
                return
            }
            after = id
        }
        let peer = connection.peer
        let (ids, more) = sessions.ids(after: after, limit: limit) { mayInspect($0, by: peer) }
        let page = ids.compactMap { sessions[$0].map { sessionInfo($0, at: now, withBreaks: false) } }
        reply(connection, header, SnapbackV1.ListSessionsReply(sessions: page, nextPageToken: more ? "\(ids.last!)" : ""))
    }

    func getSession(_ id: UInt64, _ header: FrameHeader, _ connection: any PeerPort, _ now: Double) {
        // A session the caller may not see reads as one that does not exist: its id tells nothing.
        guard let entry = sessions[id], mayInspect(entry, by: connection.peer) else {
            fail(connection, header, .notFound, "no session \(id)")
            return
        }
        let info = sessionInfo(entry, at: now, withBreaks: true)
        reply(connection, header, info)
    }

    /// The operator's calls (WatchDecisions, GetMetrics, the sync agent's): root and the admin groups;
    /// anyone else is answered PERMISSION_DENIED, saying it may not do `what`.
    func admitAdmin(_ header: FrameHeader, _ connection: any PeerPort, _ what: String) -> Bool {
        let peer = connection.peer
        guard configuration.access.isAdmin(peer) else {
            fail(
                connection, header, .permissionDenied,
                "uid \(peer.uid) (gid \(peer.gid)) may not \(what): root and the admin groups only")
            return false
        }
        return true
    }

    // MARK: Control/WatchDecisions

    func watchDecisions(
        sessionId: UInt64, contentId: String, _ header: FrameHeader, _ state: ConnectionState,
        _ connection: any PeerPort
    ) {
        guard admitAdmin(header, connection, "watch decisions") else { return }
        guard state.watcher == nil else {
            fail(connection, header, .failedPrecondition, "this connection already watches decisions")
            return
        }
        let watcher = Watcher(connection: connection, callId: header.callId, sessionId: sessionId, contentId: contentId)
        state.watcher = watcher
        watchers.append(watcher)
        logger.info(
            "connection \(connection.id): watching decisions of "
                + (sessionId == 0 ? "every session" : "session \(sessionId)")
                + (contentId.isEmpty ? "" : " of content \"\(contentId)\""))
        // The reply opens the stream: every decision after it is pushed.
        reply(connection, header) { _ in 0 }
    }

    func unsubscribe(_ watcher: Watcher) {
        watchers.removeAll { $0 === watcher }
        watcher.connection.serviceState?.watcher = nil
    }

    /// Sends the decision `action` stands for to every watcher that wants it; one whose queue would pass
    /// its bound is dropped (`pushOrDrop(_:on:)`).
    @inline(never)  // kept out of `execute`, the snapback round trip's path, which it would only enlarge
    func publish(_ action: TimelineAction, for entry: SessionEntry, at now: Double) {
        guard
            var decision = SnapbackV1.Decision(
                action, sessionId: entry.id, contentId: entry.contentId,
                streamId: entry.streamId, profile: entry.profile, at: now)
        else { return }
        var index = 0
        while index < watchers.count {
            let watcher = watchers[index]
            guard watcher.wants(entry) else {
                index += 1
                continue
            }
            decision.seq = watcher.seq + 1
            scratch.removeAll(keepingCapacity: true)
            decision.encode(into: &scratch)
            // A dropped watcher leaves `watchers`: the next one is at `index` now.
            guard pushOrDrop(scratch, on: watcher) else { continue }
            watcher.seq += 1
            index += 1
        }
    }
}
