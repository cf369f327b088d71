// SPDX-License-Identifier: Apache-2.0
extension TimelineSession {
    // MARK: Viewer seeks

    public mutating func seekStarted(from: Double, at now: Double) throws(TimelineError) {
        try checkAccepting("seek-started", at: now)
        try TimelineSettings.checkTime(from, "seek origin")
        switch state {
        case .content, .inBreak, .finished:
            state = .seeking(from: from, before: state)
        default:
            throw .unexpectedEvent(event: "seek-started", state: stateName)
        }
    }

    /// A viewer's seek settled. Applies the seek policy: refuse it inside an unwatched break, snap back to a
    /// skipped unwatched break (and plan the return to the target), go to the start of an unwatched break the
    /// seek landed in, skip a watched one — or just save the bookmark where the viewer landed.
    public mutating func seekEnded(from: Double, to: Double, at now: Double, into actions: inout [TimelineAction])
        throws(TimelineError)
    {
        try checkAccepting("seek-ended", at: now)
        try TimelineSettings.checkTime(from, "seek origin")
        try TimelineSettings.checkTime(to, "seek target")
        var before = state
        if case .seeking(_, let interrupted) = state { before = interrupted }
        switch before {
        case .closed: throw .sessionClosed
        case .trickPlay: throw .unexpectedEvent(event: "seek-ended", state: "in trick play")
        default: break
        }
        progress.playerReportedPosition = true
        // The echo of a seek we commanded is not a viewer's seek.
        if isEcho(to, .seekLanded) {
            player.commandedSeek = nil
            state = before
            player.playhead = to
            player.reportedAt = now
            return
        }
        player.commandedSeek = nil
        // Every seek while a break that began unwatched plays is refused, one within the break too: it goes
        // back to where the viewer was, not to the break's start (a scrub must not restart the break).
        if case .inBreak(let visit) = before, visit.unwatchedAtEntry, mayRefuseSeeks,
            let i = layout.index(ofBreak: visit.id), refusesSeeks(during: i)
        {
            let b = layout.breaks[i]
            state = before
            // Back to the seek's origin when it lies in the break; otherwise to the session's own position
            // there. An origin outside the break (our own seek's echo reported off target, a stale origin)
            // clamped into the break would be its end: the viewer would skip the break it is held to.
            let inBreak = b.contains(from) ? from : (b.contains(player.playhead) ? player.playhead : b.start)
            commandSeek(
                to: settings.adRulesMode ? from : inBreak, reason: .seekRefusedDuringAd,
                why: .seekRefused(from: from, to: to, breakId: b.id), into: &actions)
            return
        }
        let hadBreakTimer = timers.breakEnd
        timers.breakEnd = false
        if progress.contentEnded && !settings.adRulesMode {
            // After the content's end a stitched stream stays finished wherever the viewer seeks; an
            // ad-rules viewer seeks back into the content, which plays again.
            state = .finished
            player.playhead = to
        } else {
            state = .content
            decideSeek(from: from, to: to, at: now, implicit: false, into: &actions)
        }
        // A break-end timer the decision armed again replaces the old deadline; otherwise disarm it.
        if hadBreakTimer && !timers.breakEnd {
            actions.append(TimelineAction(.cancelTimer(.breakEnd), reason: .timerCancelled(.seekLeftBreak)))
        }
    }

    /// The seek policy proper. `implicit` marks a playhead jump the player did not report as a seek.
    @discardableResult
    mutating func decideSeek(
        from: Double, to rawTo: Double, at now: Double, implicit: Bool,
        into actions: inout [TimelineAction]
    ) -> Outcome {
        let to = clamp(rawTo)
        player.playhead = to
        player.reportedAt = now
        let move: TimelineReason.Move = implicit ? .jump : .seek
        let landedIndex = settings.adRulesMode ? nil : layout.indexOfPlayableBreak(containing: to)

        if settings.snapbackEnabled, let cooldown = cooldownEnd(at: now) {
            // The cooldown skips every break (TVSDK recipe: no break plays until it is over), a watched one
            // too: replaying a watched break the seek landed in would show more ads than without a cooldown.
            if let i = landedIndex {
                let b = layout.breaks[i]
                noteSkipped(i, .cooldown, into: &actions)
                commandSeek(
                    to: b.end, reason: .skipDuringCooldown,
                    why: .landedDuringCooldown(move, breakId: b.id, until: cooldown), into: &actions)
                return .seekCommanded
            }
            settled(at: to, move: move, at: now, into: &actions)
            return .stayed
        }

        if let s = selectBreak(from: from, to: to, landed: landedIndex) {
            // The break's fields, not a copy of it: this is the snapback round trip, and a copy retains
            // and releases its id and ad durations (`make check-budget`).
            let id = layout.breaks[s].id, breakStart = layout.breaks[s].start,
                breakEnd = layout.breaks[s].end
            let count = self[progressOf: s].snapbacks + 1
            if count > policy.maxSnapbacksPerBreak {
                // Loop guard: the break never reads as watched (events missing or early). Let the viewer go.
                self[progressOf: s].exempt = true
                self[progressOf: s].snapbacks = 0
                noteSkipped(s, .exempt, into: &actions)
                if !isWatched(s) && policy.watchedWhen != .never {
                    self[progressOf: s].watched = true
                    actions.append(
                        TimelineAction(
                            .breakWatched(breakId: id),
                            reason: .loopGuard(max: policy.maxSnapbacksPerBreak, breakId: id)))
                }
                settled(at: to, move: move, at: now, into: &actions)
                return .stayed
            }
            self[progressOf: s].snapbacks = count
            if s == landedIndex {
                // Landed inside the unwatched break: play it from its start (or from the ad's start).
                let start =
                    policy.landingInUnwatchedBreak == .adStart ? layout.breaks[s].adStart(containing: to) : breakStart
                clearPlan()
                planReturn(to: to, insideOpenBreak: s)
                return goToBreak(
                    index: s, reason: .startOfBreak,
                    why: .heldToBreakStart(
                        move, from: from, to: to, breakId: id, start: start,
                        adStart: start != breakStart),
                    at: now, landing: start, into: &actions)
            }
            var target = to
            if let l = landedIndex {
                target =
                    isWatched(l) && policy.skipWatchedBreakOnLanding
                    ? layout.breaks[l].end : layout.breaks[l].start
            }
            clearPlan()
            if policy.returnToTarget != .never {
                plan.append(.seek(to: target, reason: .resumeAfterSnapback, why: nil))
            } else if settings.adRulesMode {
                // hls.js #7029: after the interstitial, the primary content resumes at its resumption point,
                // not at the seek target (the player is at the target while the interstitial plays).
                plan.append(
                    .seek(
                        to: breakStart, reason: .resumeAfterSnapback,
                        why: .resumptionPoint(breakId: id, at: breakStart)))
            }
            let landing = min(breakStart + policy.snapbackLandingOffset, max(breakStart, breakEnd - 0.001))
            return goToBreak(
                index: s, reason: .snapback,
                why: .snapback(jump: implicit, from: from, to: to, breakId: id, start: breakStart),
                at: now, landing: settings.adRulesMode ? nil : landing, into: &actions)
        }

        // The break this seek would be held to is exempt (a resume skipped it, the loop guard gave it up).
        if settings.snapbackEnabled, let e = exemptBreakHeld(from: from, to: to, landed: landedIndex),
            self[progressOf: e].exempt
        {
            noteSkipped(e, .exempt, into: &actions)
        }
        if let l = landedIndex {
            let b = layout.breaks[l]
            if isWatched(l) && policy.skipWatchedBreakOnLanding {
                noteSkipped(l, .watched, into: &actions)
                commandSeek(
                    to: b.end, reason: .skipWatchedBreak, why: .landedInWatchedBreak(move, breakId: b.id, end: b.end),
                    into: &actions)
                player.playhead = b.end
                saveBookmark(streamTime: b.end, trigger: .seek, cause: .settled(.seek, at: b.end), into: &actions)
                return .seekCommanded
            }
            if isDisabled(l) {
                noteSkipped(l, .disabled, into: &actions)
                commandSeek(
                    to: b.end, reason: .skipDisabledBreak, why: .landedInDisabledBreak(move, breakId: b.id, end: b.end),
                    into: &actions)
                return .seekCommanded
            }
            if !isWatched(l) && settings.snapbackEnabled {
                let start = policy.landingInUnwatchedBreak == .adStart ? b.adStart(containing: to) : b.start
                clearPlan()
                planReturn(to: to, insideOpenBreak: l)
                return goToBreak(
                    index: l, reason: .startOfBreak,
                    why: .landedInUnwatchedBreak(move, from: from, to: to, breakId: b.id, start: start),
                    at: now, landing: start, into: &actions)
            }
            // A watched break replayed from where the viewer landed.
            visit(l, fromStart: to <= b.start + policy.coverageTolerance)
            self[progressOf: l].visited = true
            armBreakTimer(ending: b.end, from: to, at: now, into: &actions)
            return .stayed
        }
        settled(at: to, move: move, at: now, into: &actions)
        return .stayed
    }

    /// A seek that landed inside open break `i` is held to its start, and its target is kept: the break may
    /// end before it (its duration was an estimate), and then the viewer goes on to the target.
    mutating func planReturn(to target: Double, insideOpenBreak i: Int) {
        guard layout.breaks[i].open, policy.returnToTarget != .never, target > layout.breaks[i].start else { return }
        plan.append(.seek(to: target, reason: .resumeAfterSnapback, why: nil))
    }

    /// Whether seeks (and trick play) out of break `i`, while it plays unwatched, are refused: the policy's
    /// rule where snapback runs, and the manifest's `X-RESTRICT=SKIP` whatever the policy and on live streams.
    /// Whether any break's seeks can be refused: asked before a break is looked up by its id (a hash of it),
    /// which the snapback round trip does not need.
    var mayRefuseSeeks: Bool {
        settings.refusesSeeksDuringUnwatchedBreak || layout.hasSkipRestrictions
    }

    func refusesSeeks(during i: Int) -> Bool {
        settings.refusesSeeksDuringUnwatchedBreak || layout.breaks[i].restrictSkip
    }

    /// The move needs no break: the viewer is in content at `to` (or in a break they may watch).
    mutating func settled(at to: Double, move: TimelineReason.Move, at now: Double, into actions: inout [TimelineAction]) {
        saveBookmark(streamTime: to, trigger: .seek, cause: .settled(move, at: to), into: &actions)
        if settings.adRulesMode { return }
        if let i = layout.indexOfPlayableBreak(containing: to) {
            let b = layout.breaks[i]
            visit(i, fromStart: to <= b.start + policy.coverageTolerance)
            self[progressOf: i].visited = true
            armBreakTimer(ending: b.end, from: to, at: now, into: &actions)
        }
    }

    /// Which break, if any, the seek from → to is held to: the policy's choice where snapback runs; where it
    /// does not, or the policy lets the seek pass, a JUMP-restricted break the seek crossed.
    func selectBreak(from: Double, to: Double, landed: Int?) -> Int? {
        if settings.snapbackEnabled, let s = select(from: from, to: to, landed: landed, ignoringExempt: false) {
            return s
        }
        return layout.hasJumpRestrictions ? jumpRestrictedBreakHeld(from: from, to: to, landed: landed) : nil
    }

    /// The manifest's `X-RESTRICT=JUMP` on the seek gate: the unwatched JUMP-restricted breaks a forward
    /// seek crossed (or landed in) hold it, by the policy's choice among them — the first for `first`
    /// (hls.js enforces the first restricted interstitial a seek crosses), else the last.
    @inline(never)
    func jumpRestrictedBreakHeld(from: Double, to: Double, landed: Int?) -> Int? {
        select(from: from, to: to, landed: landed, ignoringExempt: false, jumpOnly: true)
    }

    /// The break the seek would be held to if exempt breaks were not (off the snapback path: its own copy).
    @inline(never)
    func exemptBreakHeld(from: Double, to: Double, landed: Int?) -> Int? {
        select(from: from, to: to, landed: landed, ignoringExempt: true)
    }

    @inline(__always)
    private func select(from: Double, to: Double, landed: Int?, ignoringExempt: Bool, jumpOnly: Bool = false) -> Int? {
        let forward = to > from
        if jumpOnly && !forward { return nil }
        if !forward && !(policy.enforceBackwardSeeks && to < from) { return nil }
        let adRules = settings.adRulesMode
        // Candidate range [lo, hi) of break indices, by start.
        var hi =
            adRules
            ? layout.countStarting(atOrBefore: to) : landed.map { $0 + 1 } ?? layout.countStarting(atOrBefore: to)
        var lo = 0
        if forward && (policy.seekGate == .crossedBreaks || jumpOnly) {
            // Breaks starting at or after the origin (for ad rules, strictly after: a break at the origin
            // has just played or is the one the content paused for).
            lo = layout.countStarting(atOrBefore: from)
            if !adRules, lo > 0, layout.breaks[lo - 1].start == from { lo -= 1 }
        } else if policy.seekGate == .allBreaksBeforeTarget, let l = landed, l == hi - 1, !adRules,
            to <= layout.breaks[l].start + TimelineSettings.positionTolerance, isPostroll(l)
        {
            // Media3: a seek to the content's end, where the post-roll starts, plays the last mid-roll it
            // skipped, then ends the content and plays the post-roll (the return to the target lands in it).
            hi = l
        }
        guard lo < hi else { return nil }
        let postrollId = settings.postrollId
        func eligible(_ i: Int) -> Bool {
            let p = self[progressOf: i]
            guard !p.watched, !p.exempt || ignoringExempt, !isDisabled(i) else { return false }
            let b = layout.breaks[i]
            return b.id != postrollId && !(b.duration == 0 && !adRules) && !b.unfilled && (b.restrictJump || !jumpOnly)
        }
        let choice = jumpOnly && policy.skippedBreakChoice == .nearestOnly ? .lastUnwatched : policy.skippedBreakChoice
        switch choice {
        case .lastUnwatched:
            var i = hi - 1
            while i >= lo {
                if eligible(i) { return i }
                i -= 1
            }
            return nil
        case .nearestOnly:
            var i = hi - 1
            while i >= lo, layout.breaks[i].id == postrollId { i -= 1 }
            return i >= lo && eligible(i) ? i : nil
        case .first:
            for i in lo..<hi where eligible(i) { return i }
            return nil
        }
    }

    // MARK: Trick play

    public mutating func trickPlayStarted(
        streamTime t: Double, rate: Double, at now: Double,
        into actions: inout [TimelineAction]
    ) throws(TimelineError) {
        try checkAccepting("trick-play-started", at: now)
        try TimelineSettings.checkTime(t, "trick play start")
        // Trick play is fast-forward or rewind; slow motion (0 < rate < 1) is ordinary playback.
        try TimelineSettings.checkRate(rate)
        guard rate < 0 || rate > 1 else { throw .invalidRate(rate) }
        switch state {
        case .content, .inBreak:
            if case .inBreak(let visit) = state, visit.unwatchedAtEntry, mayRefuseSeeks,
                let i = layout.index(ofBreak: visit.id), refusesSeeks(during: i)
            {
                // Fast-forward through an unwatched break is a seek out of it: refused, back into the break
                // (as for a refused seek, a position reported outside it is not where the viewer was).
                let b = layout.breaks[i]
                let back = b.contains(t) ? t : (b.contains(player.playhead) ? player.playhead : b.start)
                commandSeek(to: back, reason: .seekRefusedDuringAd, why: .trickPlayRefused(breakId: visit.id), into: &actions)
                return
            }
            cancelTimer(.bookmark, .trickPlay, into: &actions)
            cancelTimer(.breakEnd, .trickPlay, into: &actions)
            state = .trickPlay(from: t, rate: rate)
            player.rate = rate
            player.playhead = t
        default:
            throw .unexpectedEvent(event: "trick-play-started", state: stateName)
        }
    }

    /// Trick play ended at `t`. With `trickPlayAsSeek` it is one seek from its start to `t`; otherwise the
    /// viewer simply is at `t`.
    public mutating func trickPlayEnded(streamTime t: Double, at now: Double, into actions: inout [TimelineAction])
        throws(TimelineError)
    {
        try checkAccepting("trick-play-ended", at: now)
        try TimelineSettings.checkTime(t, "trick play end")
        guard case .trickPlay(let from, _) = state else {
            throw .unexpectedEvent(event: "trick-play-ended", state: stateName)
        }
        progress.playerReportedPosition = true
        player.rate = 1
        state = .content
        player.commandedSeek = nil
        let mark = actions.count
        if policy.trickPlayAsSeek {
            decideSeek(from: from, to: t, at: now, implicit: false, into: &actions)
        } else {
            player.playhead = t
            player.reportedAt = now
            settled(at: t, move: .trickPlay, at: now, into: &actions)
        }
        noteTrickPlaySkips(from: from, to: t, mark: mark, into: &actions)
    }
}
