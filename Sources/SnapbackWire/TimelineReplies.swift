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

extension OpenSessionReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.openSession.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            sessionId: m.uint64("session_id"), startStreamTime: m.optionalDouble("start_stream_time"),
            breaksBeforeResume: try m.strings("breaks_before_resume"), policyPreset: try m.string("policy_preset"),
            resumeContentTime: m.optionalDouble("resume_content_time"),
            resumedFromBookmark: m.bool("resumed_from_bookmark"), lastPushSeq: m.uint64("last_push_seq"))
    }

    func write(to m: ProtoBuilder) {
        m.set("session_id", sessionId)
        m.set("start_stream_time", startStreamTime)
        m.set("breaks_before_resume", breaksBeforeResume)
        m.set("policy_preset", policyPreset)
        m.set("resume_content_time", resumeContentTime)
        m.set("resumed_from_bookmark", resumedFromBookmark)
        m.set("last_push_seq", lastPushSeq)
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

extension ContentTimeReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.contentTimeForStreamTime.replyDescriptor }
    init(_ m: ProtoReader) { contentTime = m.double("content_time") }
    func write(to m: ProtoBuilder) { m.set("content_time", contentTime) }
}

/// `snapback.v1.StreamTimeReply`.
public struct StreamTimeReply: Sendable, Equatable {
    public var streamTime: Double
    public init(streamTime: Double) { self.streamTime = streamTime }
}

extension StreamTimeReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.streamTimeForContentTime.replyDescriptor }
    init(_ m: ProtoReader) { streamTime = m.double("stream_time") }
    func write(to m: ProtoBuilder) { m.set("stream_time", streamTime) }
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

extension BreakAtReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.breakAt.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(previous: try m.message("previous"), next: try m.message("next"))
    }

    func write(to m: ProtoBuilder) {
        m.set("previous", previous)
        m.set("next", next)
    }

}

/// `snapback.v1.SessionStateReply`: a session's `TimelineSnapshot` as a client sees it. It reads as the
/// snapshot (`reply.streamTime`, `reply.breaks`), but for the phase and the break states: a newer server
/// may send a phase, a position or a skip reason this version does not know, which reads as nil.
@dynamicMemberLookup
public struct SessionStateReply: Sendable, Equatable {
    /// nil when the server sent UNSPECIFIED or a phase this version does not know.
    public var phase: TimelineSnapshot.Phase?
    /// Per break, in the order of `breaks`. A position or skip reason unknown to this version reads as nil.
    public var breakStates: [BreakState]
    /// How many breaks the session holds; `breaks` is the page of them that was asked for.
    public var totalBreaks: Int
    /// The most breaks one reply lists.
    public static let maxPageBreaks = 1000
    /// The rest of the state. Its own phase and break states are not read (those above are): they stay
    /// `.content` and none, so that two equal replies hold equal snapshots.
    private var snapshot: TimelineSnapshot

    public subscript<T>(dynamicMember field: WritableKeyPath<TimelineSnapshot, T>) -> T {
        get { snapshot[keyPath: field] }
        set { snapshot[keyPath: field] = newValue }
    }

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
        breakStates: [BreakState] = [], totalBreaks: Int? = nil
    ) {
        self.phase = phase
        self.breakStates = breakStates
        self.totalBreaks = totalBreaks ?? breaks.count
        snapshot = TimelineSnapshot(
            phase: .content, currentBreakId: currentBreakId, streamTime: streamTime, contentTime: contentTime,
            playing: playing, rate: rate, pendingReturn: pendingReturn, breaks: breaks, cooldownUntil: cooldownUntil,
            lastBookmarkContentTime: lastBookmarkContentTime)
    }

    /// The indices GetSessionState's `first_break` and `max_breaks` ask for (0 or too many: a whole page).
    public static func page(from first: UInt32, count: UInt32) -> Range<Int> {
        let n = count == 0 ? maxPageBreaks : min(Int(count), maxPageBreaks)
        return Int(first)..<(Int(first) + n)
    }

    /// `s` with its breaks (a page of them, when `totalBreaks` says the session holds more).
    public init(_ s: TimelineSnapshot, totalBreaks: Int? = nil) {
        phase = s.phase
        breakStates = s.breakStates.map(BreakState.init)
        self.totalBreaks = totalBreaks ?? s.breaks.count
        snapshot = s
        snapshot.phase = .content
        snapshot.breakStates = []
    }
}

extension SessionStateReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.getSessionState.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        let breakId = try m.string("current_break_id")
        self.init(
            phase: m.knownEnumValue("phase", as: TimelineSnapshot.Phase.self),
            currentBreakId: breakId.isEmpty ? nil : breakId, streamTime: m.double("stream_time"),
            contentTime: m.double("content_time"), playing: m.bool("playing"), rate: m.double("rate"),
            pendingReturn: m.optionalDouble("pending_return"), breaks: try m.messages("breaks"),
            cooldownUntil: m.optionalDouble("cooldown_until"),
            lastBookmarkContentTime: m.optionalDouble("last_bookmark_content_time"),
            breakStates: try m.messages("break_states"), totalBreaks: Int(m.uint32("total_breaks")))
    }

    func write(to m: ProtoBuilder) {
        m.set("phase", phase)
        if let id = snapshot.currentBreakId { m.set("current_break_id", id) }
        m.set("stream_time", snapshot.streamTime)
        m.set("content_time", snapshot.contentTime)
        m.set("playing", snapshot.playing)
        m.set("rate", snapshot.rate)
        m.set("pending_return", snapshot.pendingReturn)
        m.set("breaks", snapshot.breaks)
        m.set("cooldown_until", snapshot.cooldownUntil)
        m.set("last_bookmark_content_time", snapshot.lastBookmarkContentTime)
        m.set("break_states", breakStates)
        m.set("total_breaks", UInt32(clamping: totalBreaks))
    }

}

extension SessionStateReply.BreakState: ProtoFields {
    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            breakId: try m.string("break_id"),
            position: m.knownEnumValue("position", as: TimelineSnapshot.BreakPosition.self),
            watched: m.bool("watched"), exempt: m.bool("exempt"),
            skipped: m.knownEnumValue("skip_reason", as: BreakSkipReason.self))
    }

    func write(to m: ProtoBuilder) {
        m.set("break_id", breakId)
        m.set("position", position)
        m.set("watched", watched)
        m.set("exempt", exempt)
        m.set("skip_reason", skipped)
    }
}
