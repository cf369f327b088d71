/// One player session's ad timeline: a value-type state machine. Events in, actions out, the wall time
/// passed in. No I/O, no clock, no Foundation.
///
/// ```
///   opened ──▶ content ◀──────────── break completed (watched; then the pending plan: a return seek,
///               │   │  ▲                                 or the next break before a resume point)
///   seek started│   │  │ left the break (not covered: not watched)
///               ▼   │  │
///            seeking│  inBreak(b) ◀── playhead enters b │ snapback │ seek landed in b │ resume plan
///               │   │    │
///   seek ended ─┘   │    └─ seek ended while b unwatched ─▶ refused: back to where the player was
///                   ├──▶ trickPlay ── trick ended = one seek from its start to its end
///                   └──▶ finished (content complete: bookmark cleared; ad rules: post-roll, all ads done)
///   closed / player disconnected ──▶ closed (final bookmark); every later event → .sessionClosed
/// ```
///
/// Stitched streams (server-side ads) hold breaks on stream time and command seeks. Ad-rules sessions
/// (client-side ads) hold breaks on content time; the content pauses while a break plays, and breaks are
/// started with `playBreak` actions instead of seeks.
public struct TimelineSession: Sendable {
    public let kind: SessionKind
    public let policy: AdPolicy
    public let contentDuration: Double?
    public internal(set) var layout: TimelineLayout
    /// The post-roll of an ad-rules session: played on content complete, never by the playhead.
    let postrollId: String?
    let adRulesMode: Bool
    /// Ad rules: the expected duration of a break (the layout holds breaks as zero-length markers).
    let adRulesBreakDuration: Double

    /// What comes after the current break, in order.
    enum PlanStep: Sendable, Equatable {
        case seek(to: Double, reason: SeekReason, why: TimelineReason)
        case playBreak(id: String, why: TimelineReason)
        case allAdsCompleted
    }

    /// How the session is in a break.
    struct BreakVisit: Sendable, Equatable {
        var id: String
        /// Whether the viewer was at (or was put at) the break's start, so reaching its end means the
        /// whole break was seen.
        var fromStart: Bool
        /// Whether an ad-break-started / ad-started event was received for this visit.
        var startedByEvent: Bool
        /// Whether the break was unwatched when this visit began. Seeks are refused for the whole visit
        /// then, even once a watched-on-begin policy has marked it watched.
        var unwatchedAtEntry: Bool = true
    }

    enum Phase: Sendable, Equatable {
        case content
        case inBreak(BreakVisit)
        /// Between seek started and seek ended; `before` is what was interrupted.
        indirect case seeking(from: Double, before: Phase)
        case trickPlay(from: Double, rate: Double)
        case finished
        case closed
    }

    var phase: Phase = .content
    var plan: [PlanStep] = []

    /// Drops what the plan still held (a new seek or the end of the content decides afresh). Element by
    /// element from the end: the plan holds one step or none, and `removeAll` went through the generic
    /// range replacement on every snapback.
    mutating func clearPlan() {
        while !plan.isEmpty { plan.removeLast() }
    }
    var playhead: Double = 0
    var playheadWallTime: Double = 0
    var rate: Double = 1
    var playing: Bool = false
    /// Breaks that later seeks are never held to (skipped by a resume, or given up by the loop guard).
    var exempt: Set<String> = []
    var cooldownUntil: Double?
    /// The target of the last seek the session commanded, until the player is seen there: a seek-ended or
    /// a playhead jump to it is the echo of our command, not a viewer's seek.
    var commandedSeek: Double?
    var lastBookmark: Double?
    var bookmarkCleared = false
    var bookmarkTimerArmed = false
    var breakTimerArmed = false
    var contentCompleted = false
    var sawPlayhead = false
    /// Whether the player ever reported a position (playhead, pause, seek, trick play). A session closed
    /// before that has nothing to bookmark: saving its start would overwrite the viewer's bookmark.
    var playerReportedPosition = false
    var didOpen = false

    /// Validates the configuration and builds the session. Call `opened(at:)` next.
    public init(_ configuration: SessionConfiguration) throws(TimelineError) {
        kind = configuration.kind
        policy = configuration.policy
        if let d = configuration.contentDuration {
            try Self.checkDuration(d, "content duration")
        }
        contentDuration = configuration.contentDuration
        try Self.validate(policy)
        if let rules = configuration.adRules {
            guard configuration.kind == .onDemand else { throw .notSupported("ad rules on a live stream") }
            let expanded = try Self.expand(rules, contentDuration: configuration.contentDuration)
            layout = try TimelineLayout(breaks: expanded.breaks, identity: true)
            postrollId = expanded.postrollId
            adRulesMode = true
            adRulesBreakDuration = rules.breakDuration
        } else {
            layout = try TimelineLayout(breaks: configuration.breaks, identity: configuration.kind == .live)
            postrollId = nil
            adRulesMode = false
            adRulesBreakDuration = 0
            // A post-roll sits exactly at the content's end; the player's content duration and the breaks'
            // positions are sums of different terms, so "exactly" allows their rounding (a millisecond).
            if let d = contentDuration, configuration.kind == .onDemand, let last = layout.breaks.last,
               layout.contentPosition(ofBreakAt: layout.count - 1) > d + Self.positionTolerance {
                throw .breakOutOfRange(id: last.id, start: last.start)
            }
        }
        for id in configuration.previouslyWatchedBreakIds {
            if let i = layout.index(ofBreak: id) { layout.setWatched(true, at: i) }
        }
        if let resume = configuration.resumeContentTime {
            try Self.checkTime(resume, "resume content time")
        }
        resumeContentTime = configuration.resumeContentTime
        if let at = configuration.lastBreakCompletedAt, policy.cooldown > 0, at.isFinite {
            cooldownUntil = at + policy.cooldown
        }
    }

    let resumeContentTime: Double?

    /// How far apart two content times may be and still be the same position (rounding of sums).
    static let positionTolerance = 0.001

    private static func validate(_ p: AdPolicy) throws(TimelineError) {
        let times: [(String, Double)] = [
            ("snapback landing offset", p.snapbackLandingOffset), ("cooldown", p.cooldown),
            ("coverage tolerance", p.coverageTolerance), ("bookmark interval", p.bookmarkInterval),
            ("finished margin", p.finishedMargin),
        ]
        for (field, value) in times { try checkDuration(value, field) }
        if p.maxSnapbacksPerBreak < 1 { throw .notSupported("max snapbacks per break below 1") }
        if p.maxSnapbacksPerBreak > Limits.snapbacksPerBreak.upperBound {
            throw .notSupported("max snapbacks per break above \(Limits.snapbacksPerBreak.upperBound)")
        }
    }

    // MARK: Derived

    public var isClosed: Bool { phase == .closed }
    var isLive: Bool { kind == .live }
    var snapbackEnabled: Bool { !isLive || policy.liveSnapback }
    var bookmarksEnabled: Bool { !isLive || policy.liveBookmarks }

    /// The stream's end when known: content plus every break. Seeks the session commands stay in
    /// [0, streamEnd].
    public var streamEnd: Double? {
        if adRulesMode { return contentDuration }
        guard let d = contentDuration, !isLive else { return nil }
        return layout.streamDuration(forContentDuration: d)
    }

    func clamp(_ t: Double) -> Double {
        var t = max(0, t)
        if let end = streamEnd { t = min(t, end) }
        return t
    }

    /// Where the playhead is now, extrapolated from the last report when content is playing.
    func estimatedPlayhead(at now: Double) -> Double {
        guard playing, case .content = phase, now > playheadWallTime else { return playhead }
        return clamp(playhead + (now - playheadWallTime) * rate)
    }

    func contentTime(forStreamTime s: Double) -> Double { layout.contentTime(forStreamTime: s) }

    // MARK: Events

    /// Applies one event; dispatches to the method of the same name. An event that is refused leaves the
    /// session exactly as it was.
    public mutating func handle(_ event: TimelineEvent, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        switch event {
        case .playheadReported(let t, let rate, let playing):
            return try playheadReported(streamTime: t, rate: rate, playing: playing, at: now)
        case .seekStarted(let from): return try seekStarted(from: from, at: now)
        case .seekEnded(let from, let to): return try seekEnded(from: from, to: to, at: now)
        case .adBreakStarted(let id): return try adBreakStarted(id: id, at: now)
        case .adBreakEnded(let id): return try adBreakEnded(id: id, at: now)
        case .adStarted(let id, let index): return try adStarted(breakId: id, index: index, at: now)
        case .adEnded(let id, let index): return try adEnded(breakId: id, index: index, at: now)
        case .trickPlayStarted(let t, let rate): return try trickPlayStarted(streamTime: t, rate: rate, at: now)
        case .trickPlayEnded(let t): return try trickPlayEnded(streamTime: t, at: now)
        case .contentCompleted: return try contentCompleted(at: now)
        case .breaksUpdated(let breaks): return try breaksUpdated(breaks, at: now)
        case .paused(let t): return try paused(streamTime: t, at: now)
        case .closed: return closed(at: now, trigger: .closed)
        case .playerDisconnected: return closed(at: now, trigger: .disconnected)
        case .timerFired(let timer): return timerFired(timer, at: now)
        }
    }

    /// ``handle(_:at:)`` appending the actions to `actions` — a buffer the caller keeps from event to
    /// event, so the snapback path allocates nothing. When the event is refused, `actions` is unchanged.
    public mutating func handle(_ event: TimelineEvent, at now: Double, into actions: inout [TimelineAction]) throws(TimelineError) {
        switch event {
        case .seekEnded(let from, let to):
            try seekEnded(from: from, to: to, at: now, into: &actions)
        default:
            actions.append(contentsOf: try handle(event, at: now))
        }
    }

    /// The breaks that play before the viewer reaches the pending return point: the current one, then
    /// those planned (e.g. the breaks a resume plays before the bookmark), in play order.
    public var plannedBreakIds: [String] {
        var ids: [String] = []
        if case .inBreak(let v) = phase { ids.append(v.id) }
        for step in plan { if case .playBreak(let id, _) = step { ids.append(id) } }
        return ids
    }

    /// A read-only view for queries.
    public func snapshot(at now: Double) -> TimelineSnapshot {
        let t = estimatedPlayhead(at: now)
        let phaseName: TimelineSnapshot.Phase
        var current: String?
        switch phase {
        case .content: phaseName = .content
        case .inBreak(let v): phaseName = .inBreak; current = v.id
        case .seeking: phaseName = .seeking
        case .trickPlay: phaseName = .trickPlay
        case .finished: phaseName = .finished
        case .closed: phaseName = .closed
        }
        var pending: Double?
        for step in plan { if case .seek(let to, _, _) = step { pending = to } }
        return TimelineSnapshot(
            phase: phaseName, currentBreakId: current, streamTime: t, contentTime: contentTime(forStreamTime: t),
            playing: playing, rate: rate, pendingReturn: pending, breaks: layout.breaks,
            cooldownUntil: cooldownUntil.flatMap { $0 > now ? $0 : nil }, lastBookmarkContentTime: lastBookmark)
    }

    // MARK: Validation helpers

    /// Every event method starts here, so that calling it directly refuses what `handle(_:at:)` refuses:
    /// a closed session takes nothing (a late pause or content-complete must not bring it back as paused
    /// or finished), and the wall time must be a time.
    @inline(__always)  // a call copied the whole session (337 bytes) to pass it, on every event
    func checkAccepting(at now: Double) throws(TimelineError) {
        if phase == .closed { throw .sessionClosed }
        guard now.isFinite else { throw .invalidTime(field: "wall time", value: now) }
    }

    static func checkTime(_ t: Double, _ field: String) throws(TimelineError) {
        try check(t, Limits.position, field)
    }

    static func checkDuration(_ d: Double, _ field: String) throws(TimelineError) {
        try check(d, Limits.duration, field)
    }

    /// NaN, infinities and negative values are not times at all; a finite value past the limit is one
    /// too large to compute with.
    @inline(__always)
    static func check(_ value: Double, _ limit: Limit, _ field: @autoclosure () -> String) throws(TimelineError) {
        guard limit.contains(value) else {
            if value.isFinite && value >= limit.range.lowerBound {
                throw .outOfRange(field: field(), value: value, limit: limit)
            }
            throw .invalidTime(field: field(), value: value)
        }
    }

    static func checkRate(_ rate: Double) throws(TimelineError) {
        guard Limits.rate.contains(rate) else {
            if rate.isFinite { throw .outOfRange(field: "rate", value: rate, limit: Limits.rate) }
            throw .invalidRate(rate)
        }
    }

    func breakIndex(_ id: String) throws(TimelineError) -> Int {
        guard let i = layout.index(ofBreak: id) else { throw .unknownBreak(id) }
        return i
    }

    var phaseName: String {
        switch phase {
        case .content: return "playing content"
        case .inBreak(let v): return "in ad break \(v.id)"
        case .seeking: return "seeking"
        case .trickPlay: return "in trick play"
        case .finished: return "finished"
        case .closed: return "closed"
        }
    }
}
