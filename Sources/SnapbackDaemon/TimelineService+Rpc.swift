// SPDX-License-Identifier: Apache-2.0
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

extension TimelineService {
    // MARK: Frames

    func oversized(_ header: FrameHeader, on connection: any PeerPort) {
        logger.warning(
            "connection \(connection.id): frame of \(header.length) bytes over the limit of \(connection.maxFrameSize)")
        fail(
            connection, header, .resourceExhausted,
            "frame body of \(header.length) bytes exceeds the maximum frame size of \(connection.maxFrameSize) bytes")
    }

    func handle(_ header: FrameHeader, body: UnsafeRawBufferPointer, on connection: any PeerPort) {
        requestCount &+= 1
        guard let state = connection.serviceState else { return }
        // Until Hello, every other call is refused alike, whatever its method or body.
        guard state.helloDone || header.method == WireMethod.hello.rawValue else {
            fail(connection, header, .failedPrecondition, "call before Hello: the first call must be snapback.v1.Control/Hello")
            return
        }
        guard let method = WireMethod(rawValue: header.method) else {
            fail(connection, header, .unimplemented, "unknown method 0x\(String(header.method, radix: 16))")
            return
        }
        if body.count >= offThreadDecodeBytes, let decoder = requestDecoder {
            let job = RequestDecodeJob(
                method: method, body: Array(body), defaultPreset: defaultPreset, maxBreaks: configuration.maxBreaksPerSession)
            let taken = decoder.decode(job) { result in
                // The connection may have gone meanwhile: its sessions are closed, nothing is answered.
                if connection.canSend, connection.serviceState === state {
                    switch result {
                    case .success(let request): self.dispatch(request, header, state, connection)
                    case .failure(let error): self.fail(connection, header, error.statusCode, "\(method.name): \(error)")
                    }
                }
                connection.resumeRequests()
            }
            if taken {
                connection.holdRequests()
                return
            }
        }
        let request: WireRequest
        do {
            request = try WireRequest.decode(
                method: method, body: body, defaultPreset: defaultPreset, maxBreaks: configuration.maxBreaksPerSession)
        } catch {
            fail(connection, header, error.statusCode, "\(method.name): \(error)")
            return
        }
        dispatch(consume request, header, state, connection)
    }

    /// Answers a decoded request.
    private func dispatch(
        _ request: consuming WireRequest, _ header: FrameHeader, _ state: ConnectionState, _ connection: any PeerPort
    ) {
        // The timeline's time: monotonic (see ServiceClock).
        let now = clock.monotonic()
        switch consume request {
        case .hello(let hello):
            handshake(hello, header, state, connection)
        case .getStatus:
            reply(connection, header, status(now))
        case .listSessions(let m):
            listSessions(m.pageSize, m.pageToken, header, connection, now)
        case .getSession(let m):
            getSession(m.sessionId, header, connection, now)
        case .watchDecisions(let m):
            watchDecisions(sessionId: m.sessionId, contentId: m.contentId, header, state, connection)
        case .getMetrics:
            getMetrics(header, connection)
        case .openSession(let open):
            openSession(open, header, state, connection, now)
        case .event(let id, let event):
            guard let entry = session(id, header, state, connection) else { return }
            apply(event, to: entry, header, connection, now)
        case .closeSession(let m):
            guard let entry = session(m.sessionId, header, state, connection) else { return }
            let seqBefore = entry.pushSeq
            close(entry, .player, at: now)
            // The reply is the session's last frame: it waits for the final bookmark's commit.
            entry.whenWritesDone {
                entry.connection = nil
                let last = entry.pushSeq == seqBefore ? 0 : entry.pushSeq
                self.replyToEvent(connection, header, lastPushSeq: last)
            }
        case .contentTimeForStreamTime(let m):
            guard let entry = session(m.sessionId, header, state, connection) else { return }
            let t = entry.timeline.layout.contentTime(forStreamTime: m.streamTime)
            reply(connection, header, SnapbackV1.ContentTimeReply(contentTime: t))
        case .streamTimeForContentTime(let m):
            guard let entry = session(m.sessionId, header, state, connection) else { return }
            let t = entry.timeline.layout.streamTime(forContentTime: m.contentTime)
            reply(connection, header, SnapbackV1.StreamTimeReply(streamTime: t))
        case .breakAt(let m):
            guard let entry = session(m.sessionId, header, state, connection) else { return }
            let (timeline, t) = (entry.timeline, m.streamTime)
            reply(
                connection, header,
                SnapbackV1.BreakAtReply(previous: timeline.previousBreak(atOrBefore: t), next: timeline.nextBreak(after: t)))
        case .getSessionState(let m):
            guard let entry = session(m.sessionId, header, state, connection) else { return }
            let page = snapshot(entry, at: now, breaks: SessionStateReply.page(from: m.firstBreak, count: m.maxBreaks))
            reply(connection, header, SessionStateReply(page, totalBreaks: entry.timeline.layout.count))
        case .getBookmark(let m):
            getBookmark(m.profile, m.contentId, header, connection)
        case .listBookmarks(let m):
            listBookmarks(m.profile, m.pageSize, m.pageToken, header, connection)
        case .deleteBookmark(let m):
            store.deleteBookmark(profile: m.profile, contentId: m.contentId) { result in
                switch result {
                case .success(let deleted):
                    self.reply(connection, header, SnapbackV1.DeleteBookmarkReply(deleted: deleted))
                case .failure(let error): self.fail(connection, header, error.statusCode, error.description)
                }
            }
        case .watchChanges(let m):
            watchChanges(after: m.after, header, state, connection)
        case .merge(let merge):
            self.merge(merge, header, connection)
        case .clearBookmarks(let m):
            store.clearBookmarks(profile: m.profile) { result in
                switch result {
                case .success(let n):
                    self.reply(connection, header, SnapbackV1.ClearBookmarksReply(deleted: UInt32(clamping: n)))
                case .failure(let error): self.fail(connection, header, error.statusCode, error.description)
                }
            }
        }
    }

    private func handshake(
        _ hello: SnapbackV1.HelloRequest, _ header: FrameHeader, _ state: ConnectionState, _ connection: any PeerPort
    ) {
        if state.helloDone {
            fail(connection, header, .failedPrecondition, "Hello was already done on this connection")
            return
        }
        guard hello.protocolVersion == WireProtocol.version else {
            fail(
                connection, header, .failedPrecondition,
                "protocol version \(hello.protocolVersion) is not supported: snapbackd speaks version \(WireProtocol.version)")
            connection.closeAfterFlush(reason: "incompatible protocol version \(hello.protocolVersion) from \(hello.clientName)")
            return
        }
        state.helloDone = true
        connection.completeHandshake()
        state.clientName = hello.clientName
        logger.info("connection \(connection.id): hello from \"\(hello.clientName)\" (\(connection.peer))")
        let helloReply = SnapbackV1.HelloReply(
            protocolVersion: WireProtocol.version, serverName: "snapbackd", serverVersion: Daemon.version,
            maxFrameSize: UInt32(clamping: connection.maxFrameSize),
            maxOutboundQueueBytes: UInt64(connection.maxOutboundBytes),
            policyPresets: AdPolicy.Preset.allCases.map(\.rawValue), defaultPolicyPreset: defaultPreset.rawValue,
            maxBreaksPerSession: UInt32(clamping: configuration.maxBreaksPerSession))
        reply(connection, header, helloReply)
    }

    /// The session `id` if this connection opened it; otherwise answers NOT_FOUND.
    private func session(_ id: UInt64, _ header: FrameHeader, _ state: ConnectionState, _ connection: any PeerPort)
        -> SessionEntry?
    {
        if let entry = state.session(id) { return entry }
        fail(connection, header, .notFound, "no session \(id) on this connection")
        return nil
    }

    // MARK: Sessions

    private func openSession(
        _ open: OpenSessionRequest, _ header: FrameHeader, _ state: ConnectionState,
        _ connection: any PeerPort, _ now: Double
    ) {
        guard state.sessionCount < configuration.maxSessionsPerConnection else {
            fail(
                connection, header, .resourceExhausted,
                "too many sessions on this connection: the limit is \(configuration.maxSessionsPerConnection)")
            return
        }
        // Where to start: an explicit stream or content time wins over the stored bookmark (a stream time
        // becomes content time in the session's layout, below).
        var resume = open.resume.resumeContentTime
        var fromBookmark = false
        var watched: Set<String> = []
        do {
            if resume == nil, open.resume.resumeStreamTime == nil, open.resume.useBookmark, !open.contentId.isEmpty,
                open.kind == .onDemand,
                let bookmark = try store.bookmark(profile: open.profile, contentId: open.contentId), !bookmark.finished
            {
                resume = bookmark.contentTime
                fromBookmark = true
            }
            if !open.contentId.isEmpty, open.kind == .onDemand, configuration.watchedRetention > 0 {
                watched = try store.watchedBreaks(
                    contentId: open.contentId, within: watchedRanges(retention: configuration.watchedRetention, at: now))
            }
        } catch {
            // The store being unreadable does not stop playback: the session opens without its history.
            logger.warning("session for \(open.contentId): viewer state unavailable: \(error)")
        }
        guard hasRoom(forBreaks: open.breaks.count, header, connection) else { return }
        let timeline: TimelineSession
        do {
            var sessionConfiguration = open.configuration(
                resumeContentTime: resume, previouslyWatchedBreakIds: watched,
                lastBreakCompletedAt: lastBreakCompleted)
            // The configured default policy and bookmark timing, under the session's own overrides.
            sessionConfiguration.policy = configuration.policy(requestedPreset: open.requestedPreset, overrides: open.overrides)
            // The session's limit is the timeline's: it counts the breaks ad rules build, and a live
            // session's growth by the breaks that are new.
            sessionConfiguration.maxBreaks = configuration.maxBreaksPerSession
            timeline = try TimelineSession(sessionConfiguration)
        } catch {
            fail(connection, header, error.statusCode, error.description)
            return
        }
        resume = timeline.resumeContentTime
        // Ad rules generate theirs: counted once built.
        guard hasRoom(forBreaks: timeline.layout.count, header, connection) else { return }
        let id = sessions.makeId()
        let entry = SessionEntry(
            id: id, timeline: timeline, connection: connection, callId: header.callId, request: open,
            openedAt: wallNow(), clientName: state.clientName)
        sessions.insert(entry)
        metrics.count(.sessionsOpened, open.kind.metricIndex &* Self.presets &+ entry.presetIndex)
        if fromBookmark { metrics.count(.bookmarksResumed) }
        breakCount += timeline.layout.count
        state.add(entry)
        memory.sessionCountChanged(sessions.count)
        logger.info(
            "session \(id) opened: content \"\(open.contentId)\" stream \"\(open.streamId)\", \(open.kind == .live ? "live" : "on demand"), \(timeline.layout.count) breaks, preset \(open.preset.rawValue)\(resume.map { ", resume at content \(Seconds($0))" } ?? "")"
        )
        var actions: [TimelineAction] = []
        entry.timeline.opened(at: now, into: &actions)
        var start: Double?
        for action in actions { if case .seek(let to, _) = action.kind { start = to; break } }
        execute(actions, for: entry, at: now)
        let openReply = SnapbackV1.OpenSessionReply(
            sessionId: id, startStreamTime: start, breaksBeforeResume: entry.timeline.plannedBreakIds,
            policyPreset: open.preset.rawValue, resumeContentTime: resume, resumedFromBookmark: fromBookmark,
            lastPushSeq: entry.pushSeq)
        reply(connection, header, openReply)
    }

    /// One event: the timeline decides, its actions are executed (pushes written first), then the reply.
    private func apply(
        _ event: TimelineEvent, to entry: SessionEntry, _ header: FrameHeader, _ connection: any PeerPort, _ now: Double
    ) {
        // The actions go into the service's buffer, taken for the call (a nested call, should one ever
        // happen, starts its own) and put back with its capacity: no allocation per event.
        var actions = actionBuffer
        actionBuffer = []
        actions.removeAll(keepingCapacity: true)
        defer { actionBuffer = actions }
        let breaksBefore = entry.timeline.layout.count
        // The session's own limit is the timeline's (`SessionConfiguration.maxBreaks`); the daemon's total
        // is checked against the update's size, an upper bound of what it adds.
        if case .breaksChanged(let fresh) = event, !hasRoom(forBreaks: fresh.count, header, connection) { return }
        do {
            try entry.timeline.handle(event, at: now, into: &actions)
        } catch {
            logger.debug("session \(entry.id): \(event.name) refused: \(error)")
            fail(connection, header, error.statusCode, error.description)
            return
        }
        breakCount += entry.timeline.layout.count - breaksBefore
        let seqBefore = entry.pushSeq
        execute(actions, for: entry, at: now)
        let last = entry.pushSeq == seqBefore ? 0 : entry.pushSeq
        replyToEvent(connection, header, lastPushSeq: last)
    }

    /// Whether `count` more breaks fit the daemon-wide bound; if not, answers RESOURCE_EXHAUSTED.
    private func hasRoom(forBreaks count: Int, _ header: FrameHeader, _ connection: any PeerPort) -> Bool {
        guard breakCount + count > configuration.maxBreaks else { return true }
        logger.warning(
            "connection \(connection.id): \(count) more ad breaks refused: \(breakCount) held, the limit is \(configuration.maxBreaks)"
        )
        fail(
            connection, header, .resourceExhausted,
            "snapbackd holds \(breakCount) ad breaks across its sessions; \(count) more would pass its limit of \(configuration.maxBreaks)"
        )
        return false
    }

    // MARK: Bookmarks service

    private func getBookmark(_ profile: String, _ contentId: String, _ header: FrameHeader, _ connection: any PeerPort) {
        do {
            guard let bookmark = try store.bookmark(profile: profile, contentId: contentId) else {
                fail(connection, header, .notFound, "no bookmark for content \"\(contentId)\" in profile \"\(profile)\"")
                return
            }
            reply(connection, header, bookmark)
        } catch {
            fail(connection, header, error.statusCode, error.description)
        }
    }

    private func listBookmarks(
        _ profile: String, _ pageSize: UInt32, _ token: String, _ header: FrameHeader, _ connection: any PeerPort
    ) {
        let limit = pageSize == 0 ? 100 : Int(min(pageSize, 1000))
        do {
            let (page, next) = try store.bookmarks(profile: profile, after: token.isEmpty ? nil : token, limit: limit)
            reply(connection, header, SnapbackV1.ListBookmarksReply(bookmarks: page, nextPageToken: next ?? ""))
        } catch {
            fail(connection, header, error.statusCode, error.description)
        }
    }

    private func status(_ now: Double) -> SnapbackV1.StatusReply {
        SnapbackV1.StatusReply(
            uptime: now - startedAt, serverVersion: Daemon.version, protocolVersion: WireProtocol.version,
            connections: UInt32(clamping: connectionCount),
            sessions: UInt32(clamping: sessions.count), requests: requestCount, pushes: pushCount,
            store: SnapbackV1.StoreStatus(
                kind: store.kind, path: store.path, bookmarks: UInt64(store.bookmarkCount),
                error: store.lastError ?? ""),
            logLinesDropped: LogSink.standardError.droppedTotal)
    }

    // MARK: Replies

    func reply(_ connection: any PeerPort, _ header: FrameHeader, _ encode: (inout [UInt8]) -> Int) {
        metrics.count(.replies, StatusCode.ok.metricIndex)
        scratch.removeAll(keepingCapacity: true)
        _ = encode(&scratch)
        connection.send(.response(callId: header.callId, method: header.method), body: scratch)
    }

    func reply(_ connection: any PeerPort, _ header: FrameHeader, _ message: some WireMessage) {
        reply(connection, header) { message.encode(into: &$0) }
    }

    /// The EventReply (every session event's and CloseSession's), encoded straight into the outbound buffer.
    func replyToEvent(_ connection: any PeerPort, _ header: FrameHeader, lastPushSeq: UInt64) {
        metrics.count(.replies, StatusCode.ok.metricIndex)
        connection.send(
            .response(callId: header.callId, method: header.method),
            reservingBodyCapacity: WireReply.eventReplyBound
        ) {
            WireReply.encodeEventReply(lastPushSeq: lastPushSeq, into: $0)
        }
    }

    func fail(_ connection: any PeerPort, _ header: FrameHeader, _ code: StatusCode, _ message: String) {
        sendStatus(connection, callId: header.callId, method: header.method, code, message)
    }

    /// A RESPONSE with status `code` and a `Status` body.
    func sendStatus(_ connection: any PeerPort, callId: UInt32, method: UInt16, _ code: StatusCode, _ message: String) {
        metrics.count(.replies, code.metricIndex)
        scratch.removeAll(keepingCapacity: true)
        _ = WireReply.encodeStatus(code: code, message: message, into: &scratch)
        connection.send(.response(callId: callId, method: method, status: code.rawValue), body: scratch)
    }
}

extension StoreError {
    var statusCode: StatusCode {
        switch self {
        case .full: return .resourceExhausted
        case .unavailable: return .unavailable
        }
    }
}
