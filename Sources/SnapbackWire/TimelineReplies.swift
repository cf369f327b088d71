// SPDX-License-Identifier: Apache-2.0
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

extension OpenSessionReply: ProtoMapped {
    init(proto p: SnapbackV1.OpenSessionReply) {
        self.init(
            sessionId: p.sessionId, startStreamTime: p.startStreamTime, breaksBeforeResume: p.breaksBeforeResume,
            policyPreset: p.policyPreset, resumeContentTime: p.resumeContentTime, resumedFromBookmark: p.resumedFromBookmark,
            lastPushSeq: p.lastPushSeq)
    }

    var proto: SnapbackV1.OpenSessionReply {
        SnapbackV1.OpenSessionReply(
            sessionId: sessionId, startStreamTime: startStreamTime, breaksBeforeResume: breaksBeforeResume,
            policyPreset: policyPreset, resumeContentTime: resumeContentTime, resumedFromBookmark: resumedFromBookmark,
            lastPushSeq: lastPushSeq)
    }
}

/// `snapback.v1.EventReply`: the reply to every session event.
public struct EventReply: Sendable, Equatable {
    /// The seq of the last push the event caused (written before the reply), 0 if none.
    public var lastPushSeq: UInt64

    public init(lastPushSeq: UInt64) { self.lastPushSeq = lastPushSeq }
}

extension EventReply: ProtoMapped {
    init(proto p: SnapbackV1.EventReply) { lastPushSeq = p.lastPushSeq }
    var proto: SnapbackV1.EventReply { SnapbackV1.EventReply(lastPushSeq: lastPushSeq) }
}

/// `snapback.v1.ContentTimeReply`.
public struct ContentTimeReply: Sendable, Equatable {
    public var contentTime: Double
    public init(contentTime: Double) { self.contentTime = contentTime }
}

extension ContentTimeReply: ProtoMapped {
    init(proto p: SnapbackV1.ContentTimeReply) { contentTime = p.contentTime }
    var proto: SnapbackV1.ContentTimeReply { SnapbackV1.ContentTimeReply(contentTime: contentTime) }
}

/// `snapback.v1.StreamTimeReply`.
public struct StreamTimeReply: Sendable, Equatable {
    public var streamTime: Double
    public init(streamTime: Double) { self.streamTime = streamTime }
}

extension StreamTimeReply: ProtoMapped {
    init(proto p: SnapbackV1.StreamTimeReply) { streamTime = p.streamTime }
    var proto: SnapbackV1.StreamTimeReply { SnapbackV1.StreamTimeReply(streamTime: streamTime) }
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

extension BreakAtReply: ProtoMapped {
    init(proto p: SnapbackV1.BreakAtReply) {
        self.init(previous: p.previous, next: p.next)
    }

    var proto: SnapbackV1.BreakAtReply { SnapbackV1.BreakAtReply(previous: previous, next: next) }
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

extension SessionStateReply: ProtoMapped {
    init(proto p: SnapbackV1.SessionStateReply) {
        self.init(
            phase: TimelineSnapshot.Phase(proto: p.phase), currentBreakId: p.currentBreakId.isEmpty ? nil : p.currentBreakId,
            streamTime: p.streamTime, contentTime: p.contentTime, playing: p.playing, rate: p.rate,
            pendingReturn: p.pendingReturn, breaks: p.breaks, cooldownUntil: p.cooldownUntil,
            lastBookmarkContentTime: p.lastBookmarkContentTime, breakStates: p.breakStates.map(BreakState.init(proto:)),
            totalBreaks: Int(p.totalBreaks))
    }

    var proto: SnapbackV1.SessionStateReply {
        SnapbackV1.SessionStateReply(
            phase: phase.proto, currentBreakId: snapshot.currentBreakId ?? "", streamTime: snapshot.streamTime,
            contentTime: snapshot.contentTime, playing: snapshot.playing, rate: snapshot.rate,
            pendingReturn: snapshot.pendingReturn, breaks: snapshot.breaks, cooldownUntil: snapshot.cooldownUntil,
            lastBookmarkContentTime: snapshot.lastBookmarkContentTime, breakStates: breakStates.map(\.proto),
            totalBreaks: UInt32(clamping: totalBreaks))
    }
}

extension SessionStateReply.BreakState {
    init(proto p: SnapbackV1.BreakState) {
        self.init(
            breakId: p.breakId, position: TimelineSnapshot.BreakPosition(proto: p.position), watched: p.watched,
            exempt: p.exempt, skipped: BreakSkipReason(proto: p.skipReason))
    }

    var proto: SnapbackV1.BreakState {
        SnapbackV1.BreakState(
            breakId: breakId, position: position.proto, watched: watched, exempt: exempt, skipReason: skipped.proto)
    }
}
