// SPDX-License-Identifier: Apache-2.0
/// Breaks that are not played where the viewer meets them (`breakSkipped` actions), what the viewer did
/// with each break (`breakStates`), and the ad events that only confirm what the session concluded.
extension TimelineSession {
    // MARK: Skipped breaks

    /// Break `i` is not played here, for `why`: the action, and its state for GetSessionState.
    mutating func noteSkipped(_ i: Int, _ why: BreakSkipReason, into actions: inout [TimelineAction]) {
        self[progressOf: i].skipped = why
        let id = layout.breaks[i].id
        actions.append(TimelineAction(.breakSkipped(breakId: id, why: why), reason: .notPlayed(why, breakId: id)))
    }

    /// The skip reason a `Skip` (disabled, cooldown, watched) is reported with.
    static func skipReason(_ skip: Skip) -> BreakSkipReason {
        switch skip.seek {
        case .skipDuringCooldown: return .cooldown
        case .skipWatchedBreak: return .watched
        default: return .disabled
        }
    }

    /// Trick play went from `from` to `to`: every break it went over is skipped, but, unless the policy says
    /// every one (TVSDK, which dispatches AD_BREAK_SKIPPED before each break it passes and then plays the
    /// last), the one that plays now. The actions go in at `mark`, before those the seek decision appended:
    /// in stream order, or in the order trick play met them (backwards for a rewind) when every one is told.
    mutating func noteTrickPlaySkips(from: Double, to: Double, mark: Int, into actions: inout [TimelineAction]) {
        let every = policy.trickPlaySkippedBreaks == .everyPassed
        var playing: String?
        if !every, case .inBreak(let v) = state { playing = v.id }
        let lo = min(from, to), hi = max(from, to)
        var k = layout.countStarting(atOrBefore: lo)
        if k > 0, layout.breaks[k - 1].start == lo { k -= 1 }
        var skips: [TimelineAction] = []
        while k < layout.count, layout.breaks[k].start < hi {
            if layout.breaks[k].id != playing && layout.breaks[k].id != settings.postrollId && !layout.breaks[k].unfilled {
                noteSkipped(k, .trickPlay, into: &skips)
            }
            k += 1
        }
        if every && to < from { skips.reverse() }
        actions.insert(contentsOf: skips, at: min(mark, actions.count))
    }

    // MARK: Per-break state

    /// Each break as the viewer left it, in layout order.
    var breakStates: [TimelineSnapshot.BreakState] { layout.breaks.indices.map(breakState) }

    func breakState(_ i: Int) -> TimelineSnapshot.BreakState {
        let p = self[progressOf: i]
        return TimelineSnapshot.BreakState(
            breakId: layout.breaks[i].id, position: position(ofBreakAt: i), watched: p.watched, exempt: p.exempt,
            skipped: p.skipped)
    }

    func position(ofBreakAt i: Int) -> TimelineSnapshot.BreakPosition {
        isPostroll(i) ? .postroll : layout.breaks[i].start == 0 ? .preroll : .midroll
    }

    /// Where break `id` sits in the content; nil when the session has no such break.
    public func position(ofBreak id: String) -> TimelineSnapshot.BreakPosition? {
        layout.index(ofBreak: id).map(position(ofBreakAt:))
    }

    // MARK: Ad events that confirm

    /// Whether an end event for break `i`, which the session is not in, confirms what the session
    /// concluded: it was in the break and left it, counts it as watched, or the playhead is past its end.
    func endConfirms(_ i: Int, at now: Double) -> Bool {
        let p = self[progressOf: i]
        if p.visited || p.snapbacks > 0 || p.watched { return true }
        return !settings.adRulesMode && estimatedPlayhead(at: now) >= layout.breaks[i].end - 0.001
    }

    /// Whether a start event for break `i`, while the session plays content, repeats one that already
    /// played out: the viewer left the break and is still at its end (stitched: the playhead past its end
    /// within the tolerance; ad rules: the content still at the break's position).
    func startConfirms(_ i: Int, at now: Double) -> Bool {
        guard self[progressOf: i].visited || self[progressOf: i].snapbacks > 0 else { return false }
        let b = layout.breaks[i]
        let t = estimatedPlayhead(at: now)
        if settings.adRulesMode { return t == b.start }
        return t >= b.end - 0.001 && t <= b.end + policy.coverageTolerance
    }

    mutating func confirmed(_ event: TimelineReason.AdEventName, breakId: String, into actions: inout [TimelineAction]) {
        actions.append(TimelineAction(.noEffect, reason: .confirms(event, breakId: breakId)))
    }

    /// An ad event carrying the player's position: a playhead report at that position (playing, rate 1)
    /// made just before it, and the event, as one: if the event is refused, neither applies.
    mutating func withPosition(
        _ t: Double?, at now: Double, into actions: inout [TimelineAction],
        _ event: (inout TimelineSession, inout [TimelineAction]) throws(TimelineError) -> Void
    )
        throws(TimelineError)
    {
        guard let t else {
            try event(&self, &actions)
            return
        }
        var copy = self
        let mark = actions.count
        do {
            try copy.playheadReported(streamTime: t, rate: 1, playing: true, at: now, into: &actions)
            try event(&copy, &actions)
        } catch {
            actions.removeSubrange(mark...)
            throw error
        }
        self = copy
    }
}
