// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

// The daemon's replies as the CLI's `--json` prints them: the `.proto` field names (snake_case), times
// in seconds as the protocol has them.

extension SnapbackV1.HelloReply {
    public var json: JSON {
        .object([
            "protocol_version": .uint(UInt64(protocolVersion)), "server_name": .string(serverName),
            "server_version": .string(serverVersion), "max_frame_size": .uint(UInt64(maxFrameSize)),
            "max_outbound_queue_bytes": .uint(maxOutboundQueueBytes),
            "policy_presets": .array(policyPresets.map { .string($0) }),
            "default_policy_preset": .string(defaultPolicyPreset),
            "max_breaks_per_session": .uint(UInt64(maxBreaksPerSession))
        ])
    }
}

extension SnapbackV1.StatusReply {
    public var json: JSON {
        let store = self.store ?? SnapbackV1.StoreStatus()
        return .object([
            "uptime": .number(uptime), "server_version": .string(serverVersion),
            "protocol_version": .uint(UInt64(protocolVersion)), "connections": .uint(UInt64(connections)),
            "sessions": .uint(UInt64(sessions)), "requests": .uint(requests), "pushes": .uint(pushes),
            "store": .object([
                "kind": .string(store.kind), "path": .string(store.path), "bookmarks": .uint(store.bookmarks),
                "error": .string(store.error)
            ])
        ])
    }
}

extension Bookmark {
    public var json: JSON {
        .object([
            "content_id": .string(contentId), "profile": .string(profile), "content_time": .number(contentTime),
            "stream_time": .number(streamTime), "stream_id": .string(streamId), "updated_at": .number(updatedAt),
            "finished": .bool(finished)
        ])
    }
}

extension AdBreak {
    public var json: JSON {
        .object([
            "id": .string(id), "start": .number(start), "duration": .number(duration),
            "ad_durations": .array(adDurations.map { .number($0) }), "watched": .bool(watched),
            "content_resume_offset": .number(contentResumeOffset)
        ])
    }
}

extension SessionStateReply {
    // `self.`: the snapshot's fields are dynamic members, which an unqualified name does not reach.
    public var json: JSON {
        .object([
            "phase": phase.map { .string($0.rawValue) } ?? .null,
            "current_break_id": self.currentBreakId.map { .string($0) } ?? .null,
            "stream_time": .number(self.streamTime), "content_time": .number(self.contentTime),
            "playing": .bool(self.playing), "rate": .number(self.rate), "pending_return": .number(self.pendingReturn),
            "breaks": .array(self.breaks.map(\.json)), "cooldown_until": .number(self.cooldownUntil),
            "last_bookmark_content_time": .number(self.lastBookmarkContentTime),
            "break_states": .array(breakStates.map(\.json)), "total_breaks": .uint(UInt64(totalBreaks))
        ])
    }
}

extension SessionStateReply.BreakState {
    /// `position` and `skip_reason` are null when unknown to this version; `skip_reason` null also when
    /// the break was never skipped.
    public var json: JSON {
        .object([
            "break_id": .string(breakId), "position": position.map { .string($0.rawValue) } ?? .null,
            "watched": .bool(watched), "exempt": .bool(exempt),
            "skip_reason": skipped.map { .string($0.rawValue) } ?? .null
        ])
    }
}

extension SessionInfo {
    /// `withBreaks` false for the ListSessions view (the reply carries none).
    public func json(withBreaks: Bool = true) -> JSON {
        var state = self.state.json
        if !withBreaks, case .object(var members) = state {
            members.pairs.removeAll { $0.0 == "breaks" || $0.0 == "break_states" }
            state = .object(members)
        }
        return .object([
            "session_id": .uint(sessionId), "content_id": .string(contentId), "stream_id": .string(streamId),
            "profile": .string(profile), "kind": .string(kind == .live ? "live" : "on-demand"),
            "policy_preset": .string(policyPreset), "client_name": .string(clientName),
            "peer_uid": .uint(UInt64(peerUid)), "peer_pid": .number(Double(peerPid)), "opened_at": .number(openedAt),
            "pushes": .uint(pushes), "break_count": .uint(UInt64(breakCount)),
            "content_duration": .number(contentDuration), "state": state
        ])
    }
}

extension WireDecision {
    public var json: JSON {
        var members: JSON.Members = [
            "seq": .uint(seq), "session_id": .uint(sessionId), "content_id": .string(contentId),
            "stream_id": .string(streamId), "profile": .string(profile), "at": .number(at),
            "kind": kind.map { .string($0.rawValue) } ?? .null, "reason": .string(reason)
        ]
        switch kind {
        case .seek?:
            members.pairs += [
                ("stream_time", .number(streamTime)), ("seek_reason", seekReason.map { .string($0.rawValue) } ?? .null)
            ]
        case .breakWatched?, .breakCompleted?, .playBreak?:
            members.pairs.append(("break_id", .string(breakId)))
        case .saveBookmark?:
            members.pairs += [
                ("content_time", .number(contentTime)), ("stream_time", .number(streamTime)),
                ("bookmark_trigger", bookmarkTrigger.map { .string($0.rawValue) } ?? .null)
            ]
        case .breakSkipped?:
            members.pairs += [("break_id", .string(breakId)), ("skip_reason", skipReason.map { .string($0.rawValue) } ?? .null)]
        case .allAdsCompleted?, .clearBookmark?, nil:
            break
        }
        return .object(members)
    }
}

extension WirePushMessage {
    public var json: JSON {
        var members: JSON.Members = ["session_id": .uint(sessionId), "seq": .uint(seq), "reason": .string(reason)]
        switch kind {
        case .seek(let to, let seekReason):
            members.pairs += [
                ("kind", .string("seek")), ("stream_time", .number(to)),
                ("seek_reason", seekReason.map { .string($0.rawValue) } ?? .null)
            ]
        case .breakWatched(let id):
            members.pairs += [("kind", .string("break_watched")), ("break_id", .string(id))]
        case .bookmarkSaved(let contentTime, let streamTime, let trigger):
            members.pairs += [
                ("kind", .string("bookmark_saved")), ("content_time", .number(contentTime)),
                ("stream_time", .number(streamTime)),
                ("bookmark_trigger", trigger.map { .string($0.rawValue) } ?? .null)
            ]
        case .bookmarkCleared:
            members.pairs.append(("kind", .string("bookmark_cleared")))
        case .playBreak(let id):
            members.pairs += [("kind", .string("play_break")), ("break_id", .string(id))]
        case .breakSkipped(let id, let why):
            members.pairs += [
                ("kind", .string("break_skipped")), ("break_id", .string(id)),
                ("skip_reason", why.map { .string($0.rawValue) } ?? .null)
            ]
        case .allAdsCompleted:
            members.pairs.append(("kind", .string("all_ads_completed")))
        case .sessionError(let code, let message):
            members.pairs += [
                ("kind", .string("session_error")), ("code", .uint(UInt64(code.rawValue))),
                ("message", .string(message))
            ]
        case .unknown:
            members.pairs.append(("kind", .string("unknown")))
        }
        return .object(members)
    }
}
