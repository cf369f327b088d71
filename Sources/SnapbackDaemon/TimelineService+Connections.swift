// SPDX-License-Identifier: Apache-2.0
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// Connections coming and going: admission (access list, limits), configuration, a peer that left, shutdown.
extension TimelineService {
    /// Access control and connection limits, before a byte is read: a peer not on the allow-list gets
    /// PERMISSION_DENIED, one over a limit RESOURCE_EXHAUSTED — an unsolicited RESPONSE with call id 0
    /// (method 0) — and is disconnected with one log line. Admitted peers get their ConnectionState.
    func admit(_ connection: any PeerPort) {
        let peer = connection.peer
        guard configuration.access.allows(peer, socketGroup: configuration.socketGroup) else {
            return refuse(
                connection, .permissionDenied,
                "uid \(peer.uid) (gid \(peer.gid)) is not allowed to use snapbackd")
        }
        guard connectionCount < configuration.maxConnections else {
            return refuse(
                connection, .resourceExhausted,
                "too many connections: the limit is \(configuration.maxConnections)")
        }
        let fromUid = connectionsByUid[peer.uid, default: 0]
        guard fromUid < configuration.maxConnectionsPerUid else {
            return refuse(
                connection, .resourceExhausted,
                "too many connections from uid \(peer.uid): the limit is \(configuration.maxConnectionsPerUid)")
        }
        connection.serviceState = ConnectionState(uid: peer.uid)
        connectionCount += 1
        connectionsByUid[peer.uid] = fromUid + 1
    }

    private func refuse(_ connection: any PeerPort, _ code: StatusCode, _ message: String) {
        sendStatus(connection, callId: 0, method: WireMethod.hello.rawValue, code, message)
        connection.closeAfterFlush(reason: "refused, \(code): \(message)", level: .warning)
    }

    /// SIGHUP with a valid configuration, and once at start: new sessions get the new policy, new
    /// connections the new allow-list and limits.
    func use(_ configuration: DaemonConfiguration) {
        self.configuration = configuration
    }

    /// The player went away, cleanly or not: its sessions close as if it had sent CloseSession (the
    /// final bookmark is taken; nothing can be pushed any more).
    func connectionGone(_ connection: any PeerPort) {
        // A refused connection was never admitted, so it has no state and is not counted.
        guard let state = connection.serviceState else { return }
        connectionCount -= 1
        if let watcher = state.watcher { unsubscribe(watcher) }
        if let watcher = state.changeWatcher { unsubscribe(watcher) }
        if let count = connectionsByUid[state.uid], count > 1 {
            connectionsByUid[state.uid] = count - 1
        } else {
            connectionsByUid[state.uid] = nil
        }
        let now = clock.monotonic()
        for id in state.takeSessionIds() {
            if let entry = sessions[id] { close(entry, .disconnected, at: now) }
        }
    }

    /// SIGTERM: every session closes with its final bookmark, and its player is told why.
    func closeAllForShutdown() {
        // The requests being decoded are answered first, as if they had been decoded here; their sessions
        // close with the others below.
        requestDecoder?.close()
        let now = clock.monotonic()
        var closed: [SessionEntry] = []
        for id in sessions.ids {
            guard let entry = sessions[id] else { continue }
            close(entry, .shutdown, at: now)
            closed.append(entry)
        }
        memory.close()
        for watcher in changeWatchers { unsubscribe(watcher) }
        // The counters' last write, queued with the final bookmarks: store.close() commits it.
        stopCounting()
        // The final bookmarks are committed and their BookmarkSaved pushed (store.close() drains the
        // writer, blocking briefly) before the players are told and the connections drain.
        store.close()
        // The last writes committed (or given up on, logged): the stop was clean.
        store.clearRunning()
        for entry in closed {
            pushError(.unavailable, "snapbackd is stopping: session closed", to: entry)
        }
        logger.notice("sessions closed for shutdown")
    }
}
