// SPDX-License-Identifier: Apache-2.0
/// One player session's ad timeline: a value-type state machine. Events in, actions out, the time
/// passed in — a monotonic clock's seconds (the daemon's never steps; see `ServiceClock`), from which
/// it measures every duration: cooldowns, playback between reports, timer deadlines. No I/O, no
/// clock, no Foundation.
///
/// ```
///  not opened ─ opened ─▶ content ◀──────────── break completed (watched; then the pending plan: a return
///               │   │  ▲                                 seek, or the next break before a resume point)
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
///
/// The session is its settings (immutable, shared), its layout (immutable geometry), the viewer's
/// progress, where the player is, which timers are armed, the plan after the current break, and its
/// `State`, whose cases carry what holds only in them. Helpers append their actions to the caller's
/// buffer and return what the caller needs to decide next (an `Outcome`), never re-reading the actions.
public struct TimelineSession: Sendable {
    let settings: TimelineSettings
    /// The session's breaks as geometry: their `watched` flags are always false here; the session's own
    /// (`snapshot(at:)`, `previousBreak(atOrBefore:)`, `nextBreak(after:)`) carry the viewer's. Set with
    /// `breakProgress` only, in this file: built with it in `init`, grown with it in `adopt(_:markingWatched:)`.
    public private(set) var layout: TimelineLayout
    /// The viewer's progress on each break, by the layout's index (read and changed through
    /// `self[progressOf:]`): built from the layout and grown with it, never apart from it, so that the two
    /// cannot fall out of step.
    private var breakProgress: [BreakProgress]
    var progress: Progress
    var player = PlayerPosition()
    var timers = ArmedTimers()
    var state: State = .notOpened
    /// What comes after the break that completes next, in order: a snapback's return, the breaks and the
    /// seek of a resume, the ad-rules post-roll's "all ads completed". It outlives a break left mid-way
    /// (the viewer may come back to complete it) and is dropped by every new seek decision.
    var plan: [PlanStep] = []

    public var kind: SessionKind { settings.kind }
    /// Where the session stands now (a snapshot's phase, without the snapshot).
    public var phase: TimelineSnapshot.Phase { state.phase }
    public var policy: AdPolicy { settings.policy }
    public var contentDuration: Double? { settings.contentDuration }

    /// Where the session stands. Each case holds what is true only there.
    enum State: Sendable, Equatable {
        /// Built; `opened(at:)` not called yet.
        case notOpened
        case content
        case inBreak(BreakVisit)
        /// Between seek started and seek ended; `before` is what was interrupted.
        indirect case seeking(from: Double, before: State)
        case trickPlay(from: Double, rate: Double)
        /// Playback is over: the content completed and no break plays.
        case finished
        case closed
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
        var unwatchedAtEntry: Bool
    }

    enum PlanStep: Sendable, Equatable {
        /// `why` nil: worded when it runs (most snapbacks never get there).
        case seek(to: Double, reason: SeekReason, why: TimelineReason?)
        case playBreak(id: String, why: TimelineReason)
        case allAdsCompleted
    }

    /// What the viewer did that outlives any one state (on each break: `self[progressOf:]`).
    struct Progress: Sendable {
        var cooldownUntil: Double?
        var lastBookmark: Double?
        var bookmarkCleared = false
        /// The resume point was saved as the bookmark while the resume's breaks played (once is enough).
        var resumeTargetSaved = false
        /// The player reported the content's end. A fact, not a state: where playback stands after it is
        /// `State` (`.finished` once nothing plays; a post-roll may still play, and an ad-rules viewer may
        /// seek back into the content).
        var contentEnded = false
        /// Whether the player ever reported a position (playhead, pause, seek, trick play). A session
        /// closed before that has nothing to bookmark: saving its start would overwrite the viewer's.
        var playerReportedPosition = false
    }

    struct BreakProgress: Sendable, Equatable {
        var watched: Bool
        /// Later seeks are never held to it (skipped by a resume, or given up by the loop guard).
        var exempt = false
        /// Snapbacks to it since it last completed (the loop guard).
        var snapbacks = 0
        /// The viewer was in it (is, or left it since), but for a snapback's visit, which `snapbacks`
        /// records: a late or repeated ad event for it, once the viewer is out, confirms what the session
        /// concluded instead of contradicting it.
        var visited = false
        /// Why it was last skipped (the last `breakSkipped` action for it).
        var skipped: BreakSkipReason?
    }

    /// Where the player is, as last reported (or as the session sent it).
    struct PlayerPosition: Sendable {
        var playhead = 0.0
        /// The time of the report (monotonic, as every time the session is given).
        var reportedAt = 0.0
        var rate = 1.0
        var playing = false
        /// Whether a first position is known: the first report is where the player starts, not a jump.
        var placed = false
        /// The target of the last seek the session commanded, until the player is seen there: a
        /// seek-ended or a playhead jump to it is the echo of our command, not a viewer's seek.
        var commandedSeek: Double?
    }

    /// What told the session where the player is.
    enum PositionReport {
        /// A seek's end: where the seek landed.
        case seekLanded
        /// A playhead report: where playback got to, up to a report interval after a seek landed.
        case playhead
    }

    /// Whether the player at `t` is where the session's last commanded seek sent it: the echo of our
    /// command, not the viewer's doing. A seek lands on its target (an exact one) or on a frame near it;
    /// a playhead report may come a report interval later, and a snapback may land a little late, which
    /// the policy's coverage tolerance allows for.
    func isEcho(_ t: Double, _ report: PositionReport) -> Bool {
        guard let target = player.commandedSeek else { return false }
        let tolerance = report == .seekLanded ? TimelineSettings.seekLandingTolerance : policy.coverageTolerance
        return abs(t - target) <= tolerance
    }

    struct ArmedTimers: Sendable {
        var bookmark = false
        var breakEnd = false
    }

    /// Whether a step sent the player elsewhere (commanded a seek): what the event would do next then
    /// waits for the player to arrive.
    enum Outcome { case stayed, seekCommanded }

    /// Validates the configuration and builds the session. Call `opened(at:)` next.
    public init(_ configuration: SessionConfiguration) throws(TimelineError) {
        var breaks = configuration.breaks
        settings = try TimelineSettings(configuration, breaks: &breaks)
        let live = settings.isLive
        // The stream ends where the content does, but a live stream's (ad rules' content time has one end).
        let ending = settings.adRulesMode || !live ? settings.contentDuration : nil
        let built = try TimelineLayout(
            breaks: AdBreak.geometry(of: breaks, live: live), identity: settings.adRulesMode, contentDuration: ending)
        // The breaks ad rules build count against the session's limit as those a request carries.
        if built.count > settings.maxBreaks { throw .sessionFull(holding: built.count, limit: settings.maxBreaks) }
        if !settings.adRulesMode, let d = settings.contentDuration, !settings.isLive, let last = built.breaks.last,
            built.contentPosition(ofBreakAt: built.count - 1) > d + TimelineSettings.positionTolerance
        {
            // A post-roll sits exactly at the content's end; the player's content duration and the breaks'
            // positions are sums of different terms, so "exactly" allows their rounding (a millisecond).
            throw .breakOutOfRange(id: last.id, start: last.start)
        }
        try settings.checkResume()
        // "Never": every break plays every time, those the player or the store call watched too (an
        // "enforce watched breaks" rule, RDK Firebolt's `skipRestriction: adsAll`).
        let watched =
            settings.policy.watchedWhen == .never
            ? []
            : Set(breaks.lazy.filter(\.watched).map(\.id)).union(configuration.previouslyWatchedBreakIds)
        layout = built
        breakProgress = built.breaks.map { BreakProgress(watched: watched.contains($0.id)) }
        progress = Progress()
        if let at = configuration.lastBreakCompletedAt, settings.policy.cooldown > 0, at.isFinite {
            progress.cooldownUntil = at + settings.policy.cooldown
        }
    }

    // MARK: The breaks and their progress

    /// The viewer's progress on break `i` of the layout.
    subscript(progressOf i: Int) -> BreakProgress {
        get { breakProgress[i] }
        _modify { yield &breakProgress[i] }
    }

    /// The layout grown to `grown` (a live stream's new breaks), with the progress: a known break keeps
    /// its own at its new index; a new one starts afresh, watched if `ids` names it.
    mutating func adopt(_ grown: TimelineLayout, markingWatched ids: some Sequence<String>) {
        var merged = grown.breaks.map { _ in BreakProgress(watched: false) }
        for id in ids { if let j = grown.index(ofBreak: id) { merged[j].watched = true } }
        for (i, b) in layout.breaks.enumerated() {
            if let j = grown.index(ofBreak: b.id) { merged[j] = breakProgress[i] }
        }
        layout = grown
        breakProgress = merged
    }

    // MARK: Derived

    public var isClosed: Bool { state == .closed }

    /// The content time the session resumes at when opened, if any: the configuration's content time, or
    /// its stream time's content time in this layout (the rule of `layout.contentTime(forStreamTime:)`,
    /// so a client that names its player's position needs no copy of it).
    public var resumeContentTime: Double? {
        settings.resumeStreamTime.map(layout.contentTime(forStreamTime:)) ?? settings.resumeContentTime
    }

    /// The stream's end when known: content plus every break (the layout's). Seeks the session commands
    /// stay in [0, streamEnd].
    public var streamEnd: Double? { layout.streamEnd }

    func clamp(_ t: Double) -> Double {
        var t = max(0, t)
        if let end = streamEnd { t = min(t, end) }
        return t
    }

    /// Where the playhead is now, extrapolated from the last report when content is playing.
    func estimatedPlayhead(at now: Double) -> Double {
        guard player.playing, case .content = state, now > player.reportedAt else { return player.playhead }
        return clamp(player.playhead + (now - player.reportedAt) * player.rate)
    }

    func contentTime(forStreamTime s: Double) -> Double { layout.contentTime(forStreamTime: s) }

    /// When the cooldown running at `now` ends; nil when none runs. A cooldown never runs for longer
    /// than the policy's `cooldown` from any `now`: times are a monotonic clock's, but if a caller's
    /// clock went back, the cooldown ends instead of lasting for as long as the step.
    func cooldownEnd(at now: Double) -> Double? {
        guard let until = progress.cooldownUntil, now < until, until - now <= policy.cooldown else { return nil }
        return until
    }

    func isWatched(_ i: Int) -> Bool { self[progressOf: i].watched }

    /// Break `i` with the viewer's watched flag.
    func breakAt(_ i: Int) -> AdBreak {
        var b = layout.breaks[i]
        b.watched = self[progressOf: i].watched
        return b
    }

    /// Every break, sorted by start, with the viewer's watched flags.
    public var breaks: [AdBreak] { layout.breaks.indices.map(breakAt) }

    /// The last break starting at or before `t` (it may contain `t`), with its watched flag.
    public func previousBreak(atOrBefore t: Double) -> AdBreak? {
        let k = layout.countStarting(atOrBefore: t)
        return k > 0 ? breakAt(k - 1) : nil
    }

    /// The first break starting strictly after `t`, with its watched flag.
    public func nextBreak(after t: Double) -> AdBreak? {
        let k = layout.countStarting(atOrBefore: t)
        return k < layout.count ? breakAt(k) : nil
    }

    /// The breaks that play before the viewer reaches the pending return point: the current one, then
    /// those planned (e.g. the breaks a resume plays before the bookmark), in play order.
    public var plannedBreakIds: [String] {
        var ids: [String] = []
        if case .inBreak(let v) = state { ids.append(v.id) }
        for step in plan { if case .playBreak(let id, _) = step { ids.append(id) } }
        return ids
    }

    /// A read-only view for queries.
    public func snapshot(at now: Double) -> TimelineSnapshot {
        snapshot(at: now, breaks: 0..<layout.count)
    }

    /// The snapshot with only the breaks (and their states) in `window`, clamped to the session's: what a
    /// page of GetSessionState costs is the page's, whatever the session holds.
    public func snapshot(at now: Double, breaks window: Range<Int>) -> TimelineSnapshot {
        let window = window.clamped(to: 0..<layout.count)
        let t = estimatedPlayhead(at: now)
        var current: String?
        if case .inBreak(let v) = state { current = v.id }
        var pending: Double?
        for step in plan { if case .seek(let to, _, _) = step { pending = to } }
        return TimelineSnapshot(
            phase: state.phase, currentBreakId: current, streamTime: t, contentTime: contentTime(forStreamTime: t),
            playing: player.playing, rate: player.rate, pendingReturn: pending, breaks: window.map(breakAt),
            cooldownUntil: cooldownEnd(at: now),
            lastBookmarkContentTime: progress.lastBookmark, breakStates: window.map(breakState))
    }

    // MARK: Validation helpers

    /// Every event method starts here, so that calling it directly refuses what `handle(_:at:)` refuses:
    /// a closed session takes nothing (a late pause or content-complete must not bring it back as paused
    /// or finished), one not opened takes nothing but its closing, and the wall time must be a time.
    func checkAccepting(_ event: StaticString, at now: Double) throws(TimelineError) {
        switch state {
        case .closed: throw .sessionClosed
        case .notOpened: throw .unexpectedEvent(event: "\(event)", state: stateName)
        default: break
        }
        guard now.isFinite else { throw .invalidTime(field: "wall time", value: now) }
    }

    func breakIndex(_ id: String) throws(TimelineError) -> Int {
        guard let i = layout.index(ofBreak: id) else { throw .unknownBreak(id) }
        return i
    }

    var stateName: String {
        switch state {
        case .notOpened: return "not opened"
        case .content: return "playing content"
        case .inBreak(let v): return "in ad break \(v.id)"
        case .seeking: return "seeking"
        case .trickPlay: return "in trick play"
        case .finished: return "finished"
        case .closed: return "closed"
        }
    }
}

extension TimelineSession.State {
    var phase: TimelineSnapshot.Phase {
        switch self {
        case .notOpened, .content: return .content
        case .inBreak: return .inBreak
        case .seeking: return .seeking
        case .trickPlay: return .trickPlay
        case .finished: return .finished
        case .closed: return .closed
        }
    }
}

extension AdBreak {
    /// The break as geometry: without the viewer's watched flag, and with the session kind's content resume
    /// offset when the player gave none (live: the break replaces the content it lasts, as a live stream
    /// goes on while the ad plays — the identity conversions live sessions had before offsets existed).
    func geometry(live: Bool) -> AdBreak {
        var b = self
        b.watched = false
        if live && b.contentResumeOffset == nil { b.contentResumeOffset = b.duration }
        return b
    }

    private func isGeometry(live: Bool) -> Bool { !watched && !(live && contentResumeOffset == nil) }

    /// `breaks` as geometry: the array itself when every break already is (an on-demand stream's breaks,
    /// none marked watched, as players send them), rather than a copy of a thousand breaks made to change
    /// nothing.
    static func geometry(of breaks: [AdBreak], live: Bool) -> [AdBreak] {
        breaks.allSatisfy { $0.isGeometry(live: live) } ? breaks : breaks.map { $0.geometry(live: live) }
    }
}
