import SnapbackWire

// The daemon's replies as the CLI's `--json` prints them: the `.proto` field names (snake_case), times
// in seconds as the protocol has them.

extension HelloReply {
    public var json: JSON {
        .object([
            "protocol_version": .uint(UInt64(protocolVersion)), "server_name": .string(serverName),
            "server_version": .string(serverVersion), "max_frame_size": .uint(UInt64(maxFrameSize)),
            "max_outbound_queue_bytes": .uint(maxOutboundQueueBytes),
            "policy_presets": .array(policyPresets.map { .string($0) }),
            "default_policy_preset": .string(defaultPolicyPreset),
            "max_breaks_per_session": .uint(UInt64(maxBreaksPerSession)),
        ])
    }
}

extension StatusReply {
    public var json: JSON {
        .object([
            "uptime": .number(uptime), "server_version": .string(serverVersion),
            "protocol_version": .uint(UInt64(protocolVersion)), "connections": .uint(UInt64(connections)),
            "sessions": .uint(UInt64(sessions)), "requests": .uint(requests), "pushes": .uint(pushes),
            "store": .object([
                "kind": .string(store.kind), "path": .string(store.path), "bookmarks": .uint(store.bookmarks),
                "error": .string(store.error),
            ]),
        ])
    }
}

extension WireBookmark {
    public var json: JSON {
        .object([
            "content_id": .string(contentId), "profile": .string(profile), "content_time": .number(contentTime),
            "stream_time": .number(streamTime), "stream_id": .string(streamId), "updated_at": .number(updatedAt),
            "finished": .bool(finished),
        ])
    }
}
