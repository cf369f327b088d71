// SPDX-License-Identifier: Apache-2.0
extension TimelineSession {
    // MARK: Playhead

    /// The player's regular position report. Entering a break, covering it to its end, a jump the player
    /// did not report as a seek, the periodic bookmark and the "finished" rule all start here.
    public mutating func playheadReported(
        streamTime t: Double, rate: Double, playing: Bool, at now: Double,
        into actions: inout [TimelineAction]
    ) throws(TimelineError) {
        try checkAccepting("playhead", at: now)
        try TimelineSettings.checkTime(t, "playhead")
        try TimelineSettings.checkRate(rate)
        // We sent the player into the break it is in and have not seen it arrive: a report from outside the
        // break, far from where we sent it, was sent before the player obeyed (reports and commands cross on
        // the wire). Taken as the playhead, one past the break's end would complete the break unseen (watched,
        // and the viewer returned to the seek target), one before its start would leave it. It is ignored; the
        // break-end timer bounds the wait if the player never comes (armed again if it fired meanwhile, e.g.
        // during the seek that was refused).
        if player.commandedSeek != nil, case .inBreak(let visit) = state, !settings.adRulesMode,
            let i = layout.index(ofBreak: visit.id)
        {
            let b = layout.breaks[i]
            if b.contains(t) {
                player.commandedSeek = nil
            } else if !isEcho(t, .playhead) {
                if !timers.breakEnd { armBreakTimer(ending: b.end, from: player.playhead, at: now, into: &actions) }
                return
            }
        }
        let previous = player.playhead
        let previousReportAt = player.reportedAt
        // The first report is where the player starts, not a jump from 0.
        let first = !player.placed
        player.placed = true
        progress.playerReportedPosition = true
        player.playhead = t
        player.reportedAt = now
        player.rate = rate
        player.playing = playing

        // The echo of a seek we commanded: the player is where we sent it.
        if isEcho(t, .playhead) { player.commandedSeek = nil }

        var outcome = Outcome.stayed
        switch state {
        case .notOpened, .seeking, .trickPlay, .finished, .closed:
            return
        case .inBreak(let visit):
            if settings.adRulesMode { return }  // content is paused while the break plays
            guard let i = layout.index(ofBreak: visit.id) else { leaveBreak(); return }
            let b = layout.breaks[i]
            if t >= b.end - 0.001 {
                // Left the break through its end: covered from its start, it was watched.
                if visit.fromStart {
                    if completeBreak(index: i, at: now, how: .playheadReachedEnd(t), into: &actions) == .seekCommanded {
                        return
                    }
                    player.playhead = t
                } else {
                    leaveBreak()
                    cancelTimer(.breakEnd, .leftBreakUnseen, into: &actions)
                }
                outcome = contentProgress(from: b.end, to: t, previousReportAt: now, at: now, into: &actions)
            } else if t < b.start {
                leaveBreak()
                cancelTimer(.breakEnd, .wentBeforeBreak, into: &actions)
                outcome = contentProgress(from: t, to: t, previousReportAt: now, at: now, into: &actions)
            } else if playing && !timers.breakEnd {
                armBreakTimer(ending: b.end, from: t, at: now, into: &actions)
            }
        case .content:
            outcome = contentProgress(
                from: first ? t : previous, to: t, previousReportAt: previousReportAt, at: now,
                into: &actions)
        }
        if playing && !timers.bookmark && outcome == .stayed { armBookmarkTimer(at: now, into: &actions) }
    }

    /// Content played from `from` to `to`: enter a break the playhead reached, treat an unreported jump
    /// over breaks as a seek, clear the bookmark near the end.
    mutating func contentProgress(
        from: Double, to t: Double, previousReportAt: Double, at now: Double,
        into actions: inout [TimelineAction]
    ) -> Outcome {
        if settings.adRulesMode {
            // A scheduled break position reached by playback: play it (content pauses). Reached means
            // crossed, (from, t]: the content sitting at a position does not reach it again, so the pre-roll
            // (played by `opened`) does not replay on every report of content time 0 — with breaks replayed
            // on playback, that was an endless pre-roll loop. Ad-rules breaks are never seeked to.
            if let i = firstScheduledBreak(after: from, upTo: t) {
                enterBreak(
                    index: i, fromStart: true, at: now, how: .contentReached(layout.breaks[i].start), into: &actions)
            }
            finishedCheck(streamTime: t, into: &actions)
            return .stayed
        }
        // A forward jump larger than playback explains, that the player did not report as a seek: handle it
        // as one, so a player cannot bypass a break by seeking without telling.
        let explained = max(0, now - previousReportAt) * max(player.rate, 1) + policy.coverageTolerance + 1
        if t - from > explained, player.commandedSeek == nil, settings.snapbackEnabled,
            layout.nextBreak(after: from).map({ $0.start <= t }) == true
        {
            return decideSeek(from: from, to: t, at: now, implicit: true, into: &actions)
        }
        if let i = layout.indexOfBreak(containing: t) {
            return enterBreak(
                index: i, fromStart: t <= layout.breaks[i].start + policy.coverageTolerance, at: now,
                how: .playheadEntered(t), into: &actions)
        }
        finishedCheck(streamTime: t, into: &actions)
        return .stayed
    }

    /// The first ad-rules break positioned in (from, to], never the post-roll.
    func firstScheduledBreak(after from: Double, upTo to: Double) -> Int? {
        guard to >= from else { return nil }
        var k = layout.countStarting(atOrBefore: from)
        while k < layout.count, layout.breaks[k].start <= to {
            if layout.breaks[k].id != settings.postrollId, !isWatched(k) || policy.watchedBreakOnPlayback == .replay {
                return k
            }
            k += 1
        }
        return nil
    }

    // MARK: Entering and completing a break

    /// The viewer is in break `i` (by playback, ad event or a command of ours): the visit begins.
    mutating func visit(_ i: Int, fromStart: Bool, byEvent: Bool = false) {
        state = .inBreak(
            BreakVisit(
                id: layout.breaks[i].id, fromStart: fromStart, startedByEvent: byEvent,
                unwatchedAtEntry: !isWatched(i)))
    }

    /// The viewer is out of the break: back in the content, or finished if the content already ended.
    mutating func leaveBreak() {
        state = progress.contentEnded ? .finished : .content
    }

    /// The viewer is at break `index` (by playback, ad event or a command of ours). Applies skip rules
    /// (disabled, cooldown, watched + skip); otherwise the session is in the break.
    @discardableResult
    mutating func enterBreak(
        index i: Int, fromStart: Bool, at now: Double, how: TimelineReason.Entry, byEvent: Bool = false,
        into actions: inout [TimelineAction]
    ) -> Outcome {
        let b = layout.breaks[i]
        if let skip = skipReason(for: i, at: now) {
            noteSkipped(i, Self.skipReason(skip), into: &actions)
            // Ad rules have nothing to seek over: the break is simply not played.
            if settings.adRulesMode { return .stayed }
            commandSeek(
                to: b.end, reason: skip.seek, why: .breakSkipped(skip.cause, breakId: b.id, start: b.start, end: b.end),
                into: &actions)
            return .seekCommanded
        }
        visit(i, fromStart: fromStart, byEvent: byEvent)
        self[progressOf: i].visited = true
        if settings.adRulesMode {
            actions.append(TimelineAction(.playBreak(breakId: b.id), reason: .breakPlays(how, breakId: b.id)))
            armBreakTimer(ending: b.end, from: b.start, at: now, into: &actions)
        } else {
            armBreakTimer(ending: b.end, from: max(player.playhead, b.start), at: now, into: &actions)
        }
        markWatchedOnBegin(i, into: &actions)
        if isPostroll(i) { clearBookmark(.postrollStarted(breakId: b.id), into: &actions) }
        if timers.bookmark { cancelTimer(.bookmark, .adBreakPlays, into: &actions) }
        return .stayed
    }

    mutating func markWatchedOnBegin(_ i: Int, into actions: inout [TimelineAction]) {
        guard policy.watchedWhen == .onBegin, !isWatched(i) else { return }
        self[progressOf: i].watched = true
        let id = layout.breaks[i].id
        actions.append(TimelineAction(.breakWatched(breakId: id), reason: .watchedOnBegin(breakId: id)))
    }

    struct Skip: Equatable {
        let seek: SeekReason
        let cause: TimelineReason.SkipCause
    }

    /// Why break `i` is skipped instead of played, if it is.
    func skipReason(for i: Int, at now: Double) -> Skip? {
        if isDisabled(i) {
            return Skip(
                seek: .skipDisabledBreak, cause: layout.breaks[i].start == 0 ? .prerollDisabled : .midrollsDisabled)
        }
        // Every break during the cooldown, watched ones too (TVSDK recipe: no break plays until it is over).
        if let until = cooldownEnd(at: now) {
            return Skip(seek: .skipDuringCooldown, cause: .cooldown(until: until))
        }
        if isWatched(i), policy.watchedBreakOnPlayback == .skip, !settings.isLive {
            return Skip(seek: .skipWatchedBreak, cause: .alreadyWatched)
        }
        return nil
    }

    func isDisabled(_ i: Int) -> Bool {
        if layout.breaks[i].start == 0 { return policy.prerollDisabled }
        return policy.midrollsDisabled && !isPostroll(i)
    }

    func isPostroll(_ i: Int) -> Bool {
        if settings.adRulesMode { return layout.breaks[i].id == settings.postrollId }
        guard let d = settings.contentDuration, !settings.isLive, layout.breaks[i].start > 0 else { return false }
        return layout.contentPosition(ofBreakAt: i) >= d - TimelineSettings.positionTolerance
    }

    /// The break played to its end: watched (per policy), cooldown starts, and the plan goes on.
    @discardableResult
    mutating func completeBreak(
        index i: Int, at now: Double, how: TimelineReason.Completion,
        into actions: inout [TimelineAction]
    ) -> Outcome {
        let b = layout.breaks[i]
        // A break that completes after content complete (the post-roll) ends the session's playback.
        leaveBreak()
        self[progressOf: i].visited = true
        cancelTimer(.breakEnd, .breakCompleted, into: &actions)
        if policy.watchedWhen == .onEnd && !isWatched(i) {
            self[progressOf: i].watched = true
            actions.append(TimelineAction(.breakWatched(breakId: b.id), reason: .watchedOnEnd(breakId: b.id, how)))
        }
        actions.append(TimelineAction(.breakCompleted(breakId: b.id), reason: .breakCompleted(how)))
        if policy.cooldown > 0 { progress.cooldownUntil = now + policy.cooldown }
        self[progressOf: i].skipped = nil
        self[progressOf: i].snapbacks = 0
        if !settings.adRulesMode { player.playhead = b.end }
        player.reportedAt = now
        let outcome = runPlan(after: i, at: now, into: &actions)
        if outcome == .stayed { finishedCheck(streamTime: player.playhead, into: &actions) }
        return outcome
    }

    /// After break `i`: the next step of the plan (a return seek, or the next break before a resume point).
    mutating func runPlan(after i: Int, at now: Double, into actions: inout [TimelineAction]) -> Outcome {
        let done = layout.breaks[i]
        while !plan.isEmpty {
            switch plan.removeFirst() {
            case .seek(let to, let reason, let why):
                let target = clamp(to)
                if reason == .resumeAfterSnapback, policy.returnToTarget == .ifBeyondBreak, !settings.adRulesMode,
                    target <= done.end
                {
                    continue
                }
                commandSeek(
                    to: target, reason: reason, why: why ?? .returnToTarget(breakId: done.id, target: target),
                    into: &actions)
                player.playhead = target
                if let j = layout.indexOfBreak(containing: target), !settings.adRulesMode {
                    // The return lands in another break: it plays from where we put the viewer.
                    enterBreak(
                        index: j, fromStart: target <= layout.breaks[j].start + policy.coverageTolerance,
                        at: now, how: .returnedInto, into: &actions)
                } else {
                    saveBookmark(
                        streamTime: target, trigger: .snapbackReturn,
                        cause: .afterBreak(breakId: done.id, at: target), into: &actions)
                }
                return .seekCommanded
            case .playBreak(let id, let why):
                guard let j = layout.index(ofBreak: id) else { continue }
                return goToBreak(index: j, reason: .breakBeforeResume, why: why, at: now, into: &actions)
            case .allAdsCompleted:
                actions.append(TimelineAction(.allAdsCompleted, reason: .postrollCompleted(breakId: done.id)))
                return .stayed
            }
        }
        return .stayed
    }

    /// Puts the viewer at the start of break `i` (or at `landing` in it): a seek for stitched streams, a
    /// play-break for ad rules.
    @discardableResult
    mutating func goToBreak(
        index i: Int, reason: SeekReason, why: TimelineReason, at now: Double, landing: Double? = nil,
        into actions: inout [TimelineAction]
    ) -> Outcome {
        if settings.adRulesMode {
            return enterBreak(index: i, fromStart: true, at: now, how: .commanded(why), into: &actions)
        }
        // The break's times, not a copy of it (its id and ad durations would be retained and released).
        let target = clamp(landing ?? layout.breaks[i].start)
        commandSeek(to: target, reason: reason, why: why, into: &actions)
        player.playhead = target
        player.reportedAt = now
        visit(i, fromStart: true)
        // A snapback's break is marked by its snapback count (`endConfirms`): no second write on that path.
        if reason != .snapback { self[progressOf: i].visited = true }
        markWatchedOnBegin(i, into: &actions)
        armBreakTimer(ending: layout.breaks[i].end, from: target, at: now, into: &actions)
        if timers.bookmark { cancelTimer(.bookmark, .adBreakPlays, into: &actions) }
        return .seekCommanded
    }

    mutating func commandSeek(to t: Double, reason: SeekReason, why: TimelineReason, into actions: inout [TimelineAction]) {
        let target = clamp(t)
        player.commandedSeek = target
        player.placed = true
        actions.append(TimelineAction(.seek(to: target, reason: reason), reason: why))
    }

    // MARK: Timers

    mutating func armBookmarkTimer(at now: Double, into actions: inout [TimelineAction]) {
        guard settings.bookmarksEnabled, policy.bookmarkInterval > 0, case .content = state, !progress.bookmarkCleared else {
            return
        }
        timers.bookmark = true
        actions.append(
            TimelineAction(
                .scheduleTimer(.bookmark, deadline: now + policy.bookmarkInterval),
                reason: .periodicBookmark))
    }

    /// Arms the break-end timer at the break's expected end (plus the tolerance) from `t`.
    mutating func armBreakTimer(ending end: Double, from t: Double, at now: Double, into actions: inout [TimelineAction]) {
        let remaining = settings.adRulesMode ? settings.adRulesBreakDuration : max(0, end - t) / max(player.rate, 1)
        timers.breakEnd = true
        actions.append(
            TimelineAction(
                .scheduleTimer(.breakEnd, deadline: now + remaining + 2 * policy.coverageTolerance),
                reason: .expectedBreakEnd))
    }

    mutating func cancelTimer(_ timer: TimelineTimer, _ why: TimelineReason.TimerCause, into actions: inout [TimelineAction]) {
        switch timer {
        case .bookmark:
            guard timers.bookmark else { return }
            timers.bookmark = false
        case .breakEnd:
            guard timers.breakEnd else { return }
            timers.breakEnd = false
        }
        actions.append(TimelineAction(.cancelTimer(timer), reason: .timerCancelled(why)))
    }
}
