import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.OpenSessionReply`.
public struct OpenSessionReply: Sendable, Equatable {
    public var sessionId: UInt64
    /// Stream time at which the player should start; nil = at the stream's start.
    public var startStreamTime: Double?
    /// Ids of the breaks that play before the resume point, in play order.
    public var breaksBeforeResume: [String]
    /// The preset the session runs with.
    public var policyPreset: String
    /// Content time the session resumes at, if any.
    public var resumeContentTime: Double?
    public var resumedFromBookmark: Bool
    /// The seq of the last push the opening caused, 0 if none.
    public var lastPushSeq: UInt64

    public init(sessionId: UInt64, startStreamTime: Double? = nil, breaksBeforeResume: [String] = [],
                policyPreset: String, resumeContentTime: Double? = nil, resumedFromBookmark: Bool = false,
                lastPushSeq: UInt64 = 0) {
        self.sessionId = sessionId
        self.startStreamTime = startStreamTime
        self.breaksBeforeResume = breaksBeforeResume
        self.policyPreset = policyPreset
        self.resumeContentTime = resumeContentTime
        self.resumedFromBookmark = resumedFromBookmark
        self.lastPushSeq = lastPushSeq
    }
}

extension OpenSessionReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__OpenSessionReply()
        snapback__v1__open_session_reply__init(&m)
        m.session_id = sessionId
        if let t = startStreamTime {
            m._start_stream_time_case = SNAPBACK__V1__OPEN_SESSION_REPLY___START_STREAM_TIME_START_STREAM_TIME
            m.start_stream_time = t
        }
        m.n_breaks_before_resume = breaksBeforeResume.count
        m.breaks_before_resume = arena.strings(breaksBeforeResume)
        m.policy_preset = arena.string(policyPreset)
        if let t = resumeContentTime {
            m._resume_content_time_case = SNAPBACK__V1__OPEN_SESSION_REPLY___RESUME_CONTENT_TIME_RESUME_CONTENT_TIME
            m.resume_content_time = t
        }
        m.resumed_from_bookmark = ProtoC.cBool(resumedFromBookmark)
        m.last_push_seq = lastPushSeq
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> OpenSessionReply {
        try ProtoC.unpack(body, "snapback.v1.OpenSessionReply", snapback__v1__open_session_reply__unpack,
                          snapback__v1__open_session_reply__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            return OpenSessionReply(
                sessionId: m.session_id,
                startStreamTime: m._start_stream_time_case.rawValue != 0 ? m.start_stream_time : nil,
                breaksBeforeResume: try ProtoC.strings(m.breaks_before_resume, m.n_breaks_before_resume, "breaks_before_resume"),
                policyPreset: try ProtoC.string(m.policy_preset, "policy_preset"),
                resumeContentTime: m._resume_content_time_case.rawValue != 0 ? m.resume_content_time : nil,
                resumedFromBookmark: ProtoC.bool(m.resumed_from_bookmark), lastPushSeq: m.last_push_seq)
        }
    }
}

/// `snapback.v1.EventReply`: the reply to every session event.
public struct EventReply: Sendable, Equatable {
    /// The seq of the last push the event caused (written before the reply), 0 if none.
    public var lastPushSeq: UInt64

    public init(lastPushSeq: UInt64) { self.lastPushSeq = lastPushSeq }
}

extension EventReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        WireReply.encodeEventReply(lastPushSeq: lastPushSeq, into: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> EventReply {
        try ProtoC.unpack(body, "snapback.v1.EventReply", snapback__v1__event_reply__unpack,
                          snapback__v1__event_reply__free_unpacked) { m throws(WireError) in
            EventReply(lastPushSeq: m.pointee.last_push_seq)
        }
    }
}

/// `snapback.v1.ContentTimeReply`.
public struct ContentTimeReply: Sendable, Equatable {
    public var contentTime: Double
    public init(contentTime: Double) { self.contentTime = contentTime }
}

extension ContentTimeReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        var m = Snapback__V1__ContentTimeReply()
        snapback__v1__content_time_reply__init(&m)
        m.content_time = contentTime
        return ProtoC.append(&m, to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ContentTimeReply {
        try ProtoC.unpack(body, "snapback.v1.ContentTimeReply", snapback__v1__content_time_reply__unpack,
                          snapback__v1__content_time_reply__free_unpacked) { m throws(WireError) in
            ContentTimeReply(contentTime: m.pointee.content_time)
        }
    }
}

/// `snapback.v1.StreamTimeReply`.
public struct StreamTimeReply: Sendable, Equatable {
    public var streamTime: Double
    public init(streamTime: Double) { self.streamTime = streamTime }
}

extension StreamTimeReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        var m = Snapback__V1__StreamTimeReply()
        snapback__v1__stream_time_reply__init(&m)
        m.stream_time = streamTime
        return ProtoC.append(&m, to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> StreamTimeReply {
        try ProtoC.unpack(body, "snapback.v1.StreamTimeReply", snapback__v1__stream_time_reply__unpack,
                          snapback__v1__stream_time_reply__free_unpacked) { m throws(WireError) in
            StreamTimeReply(streamTime: m.pointee.stream_time)
        }
    }
}

/// `snapback.v1.BreakAtReply`: the breaks around a stream time.
public struct BreakAtReply: Sendable, Equatable {
    /// The break with the greatest start <= the stream time (it may contain it).
    public var previous: AdBreak?
    /// The break with the smallest start > the stream time.
    public var next: AdBreak?

    public init(previous: AdBreak?, next: AdBreak?) {
        self.previous = previous
        self.next = next
    }
}

extension BreakAtReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__BreakAtReply()
        snapback__v1__break_at_reply__init(&m)
        if let b = previous { m.previous = arena.box(arena.adBreak(b)) }
        if let b = next { m.next = arena.box(arena.adBreak(b)) }
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> BreakAtReply {
        try ProtoC.unpack(body, "snapback.v1.BreakAtReply", snapback__v1__break_at_reply__unpack,
                          snapback__v1__break_at_reply__free_unpacked) { p throws(WireError) in
            BreakAtReply(previous: try p.pointee.previous.map { (b) throws(WireError) in try AdBreak(proto: b.pointee, field: "previous") },
                         next: try p.pointee.next.map { (b) throws(WireError) in try AdBreak(proto: b.pointee, field: "next") })
        }
    }
}

/// `snapback.v1.SessionStateReply`: a session's `TimelineSnapshot` as a client sees it.
public struct SessionStateReply: Sendable, Equatable {
    /// nil when the server sent UNSPECIFIED or a phase this version does not know.
    public var phase: TimelineSnapshot.Phase?
    public var currentBreakId: String?
    public var streamTime: Double
    public var contentTime: Double
    public var playing: Bool
    public var rate: Double
    public var pendingReturn: Double?
    public var breaks: [AdBreak]
    public var cooldownUntil: Double?
    public var lastBookmarkContentTime: Double?

    public init(phase: TimelineSnapshot.Phase?, currentBreakId: String? = nil, streamTime: Double,
                contentTime: Double, playing: Bool, rate: Double, pendingReturn: Double? = nil,
                breaks: [AdBreak] = [], cooldownUntil: Double? = nil, lastBookmarkContentTime: Double? = nil) {
        self.phase = phase
        self.currentBreakId = currentBreakId
        self.streamTime = streamTime
        self.contentTime = contentTime
        self.playing = playing
        self.rate = rate
        self.pendingReturn = pendingReturn
        self.breaks = breaks
        self.cooldownUntil = cooldownUntil
        self.lastBookmarkContentTime = lastBookmarkContentTime
    }

    public init(_ s: TimelineSnapshot) {
        self.init(phase: s.phase, currentBreakId: s.currentBreakId, streamTime: s.streamTime,
                  contentTime: s.contentTime, playing: s.playing, rate: s.rate, pendingReturn: s.pendingReturn,
                  breaks: s.breaks, cooldownUntil: s.cooldownUntil, lastBookmarkContentTime: s.lastBookmarkContentTime)
    }
}

extension SessionStateReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = proto(arena)
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    /// The message as protobuf-c's struct; its strings and breaks live in `arena` (also when embedded in
    /// a `SessionInfo`).
    func proto(_ arena: CArena) -> Snapback__V1__SessionStateReply {
        var m = Snapback__V1__SessionStateReply()
        snapback__v1__session_state_reply__init(&m)
        if let phase { m.phase = phase.proto }
        if let id = currentBreakId { m.current_break_id = arena.string(id) }
        m.stream_time = streamTime
        m.content_time = contentTime
        m.playing = ProtoC.cBool(playing)
        m.rate = rate
        if let t = pendingReturn {
            m._pending_return_case = SNAPBACK__V1__SESSION_STATE_REPLY___PENDING_RETURN_PENDING_RETURN
            m.pending_return = t
        }
        m.n_breaks = breaks.count
        m.breaks = arena.adBreaks(breaks)
        if let t = cooldownUntil {
            m._cooldown_until_case = SNAPBACK__V1__SESSION_STATE_REPLY___COOLDOWN_UNTIL_COOLDOWN_UNTIL
            m.cooldown_until = t
        }
        if let t = lastBookmarkContentTime {
            m._last_bookmark_content_time_case =
                SNAPBACK__V1__SESSION_STATE_REPLY___LAST_BOOKMARK_CONTENT_TIME_LAST_BOOKMARK_CONTENT_TIME
            m.last_bookmark_content_time = t
        }
        return m
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> SessionStateReply {
        try ProtoC.unpack(body, "snapback.v1.SessionStateReply", snapback__v1__session_state_reply__unpack,
                          snapback__v1__session_state_reply__free_unpacked) { p throws(WireError) in
            try SessionStateReply(proto: p.pointee)
        }
    }

    init(proto m: Snapback__V1__SessionStateReply) throws(WireError) {
        let breakId = try ProtoC.string(m.current_break_id, "current_break_id")
        self.init(
            phase: TimelineSnapshot.Phase(proto: m.phase), currentBreakId: breakId.isEmpty ? nil : breakId,
            streamTime: m.stream_time, contentTime: m.content_time, playing: ProtoC.bool(m.playing), rate: m.rate,
            pendingReturn: m._pending_return_case.rawValue != 0 ? m.pending_return : nil,
            breaks: try AdBreak.list(m.breaks, m.n_breaks),
            cooldownUntil: m._cooldown_until_case.rawValue != 0 ? m.cooldown_until : nil,
            lastBookmarkContentTime: m._last_bookmark_content_time_case.rawValue != 0
                ? m.last_bookmark_content_time : nil)
    }
}
