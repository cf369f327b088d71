// SPDX-License-Identifier: Apache-2.0
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

extension TimelineService {
    /// Carries out the timeline's actions for one session: pushes to its player, timers on the loop,
    /// bookmark and watched-state writes to the store. A bookmark is pushed as saved only once the store
    /// has committed it (acknowledged = durable). `now` is monotonic (the timeline's time); the wall
    /// time, for what is dated, is read only by the actions that date something.
    func execute(_ actions: [TimelineAction], for entry: SessionEntry, at now: Double) {
        // By index, switching on the stored kind: `for action in actions` copied every action out
        // (its reason and ids retained and released) on every event.
        // Read once per event: with nobody watching, one load and a branch are all watching costs here.
        let watched = watching
        var wall = Double.nan
        for index in actions.indices {
            if watched { publish(actions[index], for: entry, at: wallNow(once: &wall)) }
            switch actions[index].kind {
            case .seek, .playBreak, .allAdsCompleted, .breakSkipped:
                countAction(actions, at: index, for: entry)
                logger.info("session \(entry.id): \(actions[index])")
                push(actions[index], to: entry)
            case .breakWatched(let breakId):
                countAction(actions, at: index, for: entry)
                logger.info("session \(entry.id): \(actions[index])")
                if !entry.contentId.isEmpty, entry.timeline.kind == .onDemand {
                    markWatched(actions[index], breakId: breakId, entry: entry, at: wallNow(once: &wall), monotonic: now)
                } else {
                    push(actions[index], to: entry)
                }
            case .breakCompleted:
                // Device-wide, so the cooldown after a break holds for every player on the box.
                logger.debug("session \(entry.id): \(actions[index])")
                countAction(actions, at: index, for: entry)
                lastBreakCompleted = now
                store.setLastBreakCompleted(at: wallNow(once: &wall))
            case .saveBookmark(let contentTime, let streamTime, _):
                saveBookmark(
                    actions[index], entry: entry,
                    bookmark: Bookmark(
                        profile: entry.profile, contentId: entry.contentId, contentTime: contentTime,
                        streamTime: streamTime, streamId: entry.streamId, updatedAt: wallNow(once: &wall)))
            case .clearBookmark:
                let position = entry.timeline.snapshot(at: now, breaks: 0..<0)
                saveBookmark(
                    actions[index], entry: entry,
                    bookmark: Bookmark(
                        profile: entry.profile, contentId: entry.contentId, contentTime: position.contentTime,
                        streamTime: position.streamTime, streamId: entry.streamId, updatedAt: wallNow(once: &wall), finished: true
                    ))
            case .scheduleTimer(let timer, let deadline):
                logger.debug("session \(entry.id): \(actions[index])")
                arm(timer, at: deadline, for: entry, now: now)
            case .cancelTimer(let timer):
                logger.debug("session \(entry.id): \(actions[index])")
                entry.timer(timer)?.stop()
            case .noEffect:
                // An ad event that confirms what the session concluded (a late or repeated one): OK, no effect.
                logger.debug("session \(entry.id): \(actions[index])")
            }
        }
    }

    /// The wall time, read at the first call of an event's actions (`cache` starts as NaN).
    private func wallNow(once cache: inout Double) -> Double {
        if cache.isNaN { cache = wallNow() }
        return cache
    }

    /// A watched break is kept for the content's later sessions; like a bookmark, it is pushed only once
    /// committed, so a player (or libsnapback reopening its sessions after a restart) is never told a break
    /// is watched that the daemon could forget. If the write fails, the break still counts as watched in
    /// this session: the push follows a session error saying it was not kept.
    private func markWatched(
        _ action: TimelineAction, breakId: String, entry: SessionEntry, at wall: Double, monotonic now: Double
    ) {
        pruneWatchedIfDue(at: now)
        entry.pendingWrites += 1
        store.markWatched(contentId: entry.contentId, breakId: breakId, at: wall) { result in
            if case .failure(let error) = result {
                self.logger.warning("session \(entry.id): watched break \(breakId) not kept: \(error)")
                self.pushError(error.statusCode, "watched break \(breakId) not kept: \(error)", to: entry)
            }
            self.push(action, to: entry)
            entry.writeCompleted()
        }
    }

    private func saveBookmark(_ action: TimelineAction, entry: SessionEntry, bookmark: Bookmark) {
        guard !entry.contentId.isEmpty else {
            logger.debug("session \(entry.id): no content id, bookmark not kept: \(action)")
            return
        }
        countBookmarkSaved(action)
        entry.pendingWrites += 1
        store.save(bookmark) { result in
            switch result {
            case .success:
                self.logger.info("session \(entry.id): \(action)")
                self.push(action, to: entry)
                if !entry.savedOnce { self.tellUnsynced(entry) }
            case .failure(let error):
                self.logger.warning("session \(entry.id): bookmark not saved: \(error)")
                self.pushError(error.statusCode, "bookmark not saved: \(error)", to: entry)
            }
            entry.writeCompleted()
        }
    }

    /// After a session's first kept bookmark: one whose ids are longer than the Sync calls carry stays on
    /// this box (PROTOCOL.md), which its player is told once, with a SessionError.
    private func tellUnsynced(_ entry: SessionEntry) {
        entry.savedOnce = true
        guard max(entry.profile.utf8.count, entry.contentId.utf8.count, entry.streamId.utf8.count) > SyncLimits.idBytes
        else { return }
        // One literal (SyncLimits.idBytes is 1024): no formatting code in the daemon for a rare message.
        pushError(
            .outOfRange,
            "bookmark kept on this box only: its profile, content_id or stream_id is over 1024 bytes, more than household sync carries",
            to: entry)
    }

    private func arm(_ timer: TimelineTimer, at deadline: Double, for entry: SessionEntry, now: Double) {
        let handle: any ServiceTimer
        if let existing = entry.timer(timer) {
            handle = existing
        } else {
            let id = entry.id
            // Unowned: the service outlives every session's timers (closed with the session), and a weak
            // reference would put the service's every retain on the runtime's slow path.
            let callback = { [unowned self] in self.timerFired(timer, session: id) }
            // Periodic bookmarks on the shared tick: the saves of one tick commit together.
            handle = timer == .bookmark && bookmarkTicks.tick > 0 ? bookmarkTicks.makeTimer(callback) : clock.makeTimer(callback)
            entry.setTimer(timer, handle)
        }
        handle.start(afterSeconds: deadline - now)
    }

    func timerFired(_ timer: TimelineTimer, session id: UInt64) {
        guard let entry = sessions[id] else { return }
        let now = clock.monotonic()
        let actions = (try? entry.timeline.handle(.timerFired(timer), at: now)) ?? []
        execute(actions, for: entry, at: now)
    }

    /// Sends a push on the session's stream, if its player is still connected.
    func push(_ action: TimelineAction, to entry: SessionEntry) {
        guard WirePush.isPushed(action.kind), let (connection, seq) = takePushSeq(entry) else { return }
        let header = FrameHeader.push(callId: entry.callId, method: WireMethod.openSession.rawValue)
        if let bound = WireSeekPush.bound(action) {
            // The snapback's push, encoded straight into the connection's outbound buffer.
            let id = entry.id
            connection.send(header, reservingBodyCapacity: bound) {
                WireSeekPush.encode(action, sessionId: id, seq: seq, into: $0)
            }
        } else {
            scratch.removeAll(keepingCapacity: true)
            WirePush.encodePush(sessionId: entry.id, seq: seq, action: action, into: &scratch)
            connection.send(header, body: scratch)
        }
    }

    func pushError(_ code: StatusCode, _ message: String, to entry: SessionEntry) {
        guard let (connection, seq) = takePushSeq(entry) else { return }
        scratch.removeAll(keepingCapacity: true)
        WirePush.encodePushSessionError(sessionId: entry.id, seq: seq, code: code, message: message, into: &scratch)
        connection.send(.push(callId: entry.callId, method: WireMethod.openSession.rawValue), body: scratch)
    }

    /// The session's connection and the seq of its next push, when the player can still be sent to.
    private func takePushSeq(_ entry: SessionEntry) -> (any PeerPort, UInt64)? {
        guard let connection = entry.connection, connection.canSend else { return nil }
        entry.pushSeq += 1
        pushCount &+= 1
        return (connection, entry.pushSeq)
    }
}
