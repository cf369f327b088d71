// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

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
    /// The reply as this version reads it (a GetSessionState's, or a SessionInfo's `state`).
    public init(proto p: SnapbackV1.SessionStateReply) {
        self.init(
            phase: TimelineSnapshot.Phase(proto: p.phase), currentBreakId: p.currentBreakId.isEmpty ? nil : p.currentBreakId,
            streamTime: p.streamTime, contentTime: p.contentTime, playing: p.playing, rate: p.rate,
            pendingReturn: p.pendingReturn, breaks: p.breaks, cooldownUntil: p.cooldownUntil,
            lastBookmarkContentTime: p.lastBookmarkContentTime, breakStates: p.breakStates.map(BreakState.init(proto:)),
            totalBreaks: Int(p.totalBreaks))
    }

    public var proto: SnapbackV1.SessionStateReply {
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

    public var proto: SnapbackV1.BreakState {
        SnapbackV1.BreakState(
            breakId: breakId, position: position.proto, watched: watched, exempt: exempt, skipReason: skipped.proto)
    }
}
