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

    public init(
        sessionId: UInt64, startStreamTime: Double? = nil, breaksBeforeResume: [String] = [],
        policyPreset: String, resumeContentTime: Double? = nil, resumedFromBookmark: Bool = false,
        lastPushSeq: UInt64 = 0
    ) {
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
        let m = ProtoBuilder(WireMethod.openSession.replyDescriptor, arena: CArena())
        m.set("session_id", sessionId)
        m.set("start_stream_time", startStreamTime)
        m.set("breaks_before_resume", breaksBeforeResume)
        m.set("policy_preset", policyPreset)
        m.set("resume_content_time", resumeContentTime)
        m.set("resumed_from_bookmark", resumedFromBookmark)
        m.set("last_push_seq", lastPushSeq)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> OpenSessionReply {
        try ProtoC.read(body, WireMethod.openSession.replyDescriptor) { m throws(WireError) in
            OpenSessionReply(
                sessionId: m.uint64("session_id"), startStreamTime: m.optionalDouble("start_stream_time"),
                breaksBeforeResume: try m.strings("breaks_before_resume"), policyPreset: try m.string("policy_preset"),
                resumeContentTime: m.optionalDouble("resume_content_time"),
                resumedFromBookmark: m.bool("resumed_from_bookmark"), lastPushSeq: m.uint64("last_push_seq"))
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
        try ProtoC.unpack(
            body, "snapback.v1.EventReply", snapback__v1__event_reply__unpack,
            snapback__v1__event_reply__free_unpacked
        ) { m throws(WireError) in
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
        let m = ProtoBuilder(WireMethod.contentTimeForStreamTime.replyDescriptor, arena: CArena())
        m.set("content_time", contentTime)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ContentTimeReply {
        try ProtoC.read(body, WireMethod.contentTimeForStreamTime.replyDescriptor) { m in
            ContentTimeReply(contentTime: m.double("content_time"))
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
        let m = ProtoBuilder(WireMethod.streamTimeForContentTime.replyDescriptor, arena: CArena())
        m.set("stream_time", streamTime)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> StreamTimeReply {
        try ProtoC.read(body, WireMethod.streamTimeForContentTime.replyDescriptor) { m in
            StreamTimeReply(streamTime: m.double("stream_time"))
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
        let m = ProtoBuilder(WireMethod.breakAt.replyDescriptor, arena: CArena())
        m.set("previous", previous?.write(to: m.sub("previous")))
        m.set("next", next?.write(to: m.sub("next")))
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> BreakAtReply {
        try ProtoC.read(body, WireMethod.breakAt.replyDescriptor) { m throws(WireError) in
            BreakAtReply(
                previous: try m.nested("previous").map { (b) throws(WireError) in try AdBreak(b) },
                next: try m.nested("next").map { (b) throws(WireError) in try AdBreak(b) })
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
    /// Per break, in the order of `breaks`. A position or skip reason unknown to this version reads as nil.
    public var breakStates: [BreakState]

    /// `snapback.v1.BreakState`: the timeline's, but for a position or skip reason this version does not
    /// know, which reads as nil.
    public struct BreakState: Sendable, Equatable {
        public var breakId: String
        public var position: TimelineSnapshot.BreakPosition?
        public var watched: Bool
        public var exempt: Bool
        public var skipped: BreakSkipReason?

        init(_ s: TimelineSnapshot.BreakState) {
            self.init(breakId: s.breakId, position: s.position, watched: s.watched, exempt: s.exempt, skipped: s.skipped)
        }

        public init(
            breakId: String, position: TimelineSnapshot.BreakPosition?, watched: Bool = false, exempt: Bool = false,
            skipped: BreakSkipReason? = nil
        ) {
            (self.breakId, self.position, self.watched, self.exempt) = (breakId, position, watched, exempt)
            self.skipped = skipped
        }
    }

    public init(
        phase: TimelineSnapshot.Phase?, currentBreakId: String? = nil, streamTime: Double,
        contentTime: Double, playing: Bool, rate: Double, pendingReturn: Double? = nil,
        breaks: [AdBreak] = [], cooldownUntil: Double? = nil, lastBookmarkContentTime: Double? = nil,
        breakStates: [BreakState] = []
    ) {
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
        self.breakStates = breakStates
    }

    public init(_ s: TimelineSnapshot) {
        self.init(
            phase: s.phase, currentBreakId: s.currentBreakId, streamTime: s.streamTime,
            contentTime: s.contentTime, playing: s.playing, rate: s.rate, pendingReturn: s.pendingReturn,
            breaks: s.breaks, cooldownUntil: s.cooldownUntil, lastBookmarkContentTime: s.lastBookmarkContentTime,
            breakStates: s.breakStates.map(BreakState.init))
    }
}

extension SessionStateReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        write(to: ProtoBuilder(WireMethod.getSessionState.replyDescriptor, arena: CArena())).append(to: &out)
    }

    /// The message in `m` (also when embedded in a `SessionInfo`).
    func write(to m: ProtoBuilder) -> ProtoBuilder {
        m.set("phase", phase)
        if let id = currentBreakId { m.set("current_break_id", id) }
        m.set("stream_time", streamTime)
        m.set("content_time", contentTime)
        m.set("playing", playing)
        m.set("rate", rate)
        m.set("pending_return", pendingReturn)
        m.set("breaks", breaks)
        m.set("cooldown_until", cooldownUntil)
        m.set("last_bookmark_content_time", lastBookmarkContentTime)
        m.set(
            "break_states",
            breakStates.map { b in
                let e = m.sub("break_states")
                e.set("break_id", b.breakId)
                e.set("position", b.position)
                e.set("watched", b.watched)
                e.set("exempt", b.exempt)
                e.set("skip_reason", b.skipped)
                return e
            })
        return m
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> SessionStateReply {
        try ProtoC.read(body, WireMethod.getSessionState.replyDescriptor) { m throws(WireError) in
            try SessionStateReply(m)
        }
    }

    init(_ m: ProtoReader) throws(WireError) {
        let breakId = try m.string("current_break_id")
        self.init(
            phase: m.knownEnumValue("phase", as: TimelineSnapshot.Phase.self),
            currentBreakId: breakId.isEmpty ? nil : breakId, streamTime: m.double("stream_time"),
            contentTime: m.double("content_time"), playing: m.bool("playing"), rate: m.double("rate"),
            pendingReturn: m.optionalDouble("pending_return"), breaks: try AdBreak.list(m, "breaks"),
            cooldownUntil: m.optionalDouble("cooldown_until"),
            lastBookmarkContentTime: m.optionalDouble("last_bookmark_content_time"),
            breakStates: try m.nestedList("break_states").map { (b) throws(WireError) in
                BreakState(
                    breakId: try b.string("break_id"),
                    position: b.knownEnumValue("position", as: TimelineSnapshot.BreakPosition.self),
                    watched: b.bool("watched"), exempt: b.bool("exempt"),
                    skipped: b.knownEnumValue("skip_reason", as: BreakSkipReason.self))
            })
    }
}
