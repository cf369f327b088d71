extension TimelineSession {
    // MARK: Playhead

    /// The player's regular position report. Entering a break, covering it to its end, a jump the player
    /// did not report as a seek, the periodic bookmark and the "finished" rule all start here.
    public mutating func playheadReported(streamTime t: Double, rate: Double, playing: Bool, at now: Double)
        throws(TimelineError) -> [TimelineAction]
    {
        try checkAccepting(at: now)
        try Self.checkTime(t, "playhead")
        try Self.checkRate(rate)
        // We sent the player into the break it is in and have not seen it arrive: a report from outside the
        // break, far from where we sent it, was sent before the player obeyed (reports and commands cross on
        // the wire). Taken as the playhead, one past the break's end would complete the break unseen (watched,
        // and the viewer returned to the seek target), one before its start would leave it. It is ignored; the
        // break-end timer bounds the wait if the player never comes (armed again if it fired meanwhile, e.g.
        // during the seek that was refused).
        if let target = commandedSeek, case .inBreak(let visit) = phase, !adRulesMode,
           let b = layout.breakWith(id: visit.id) {
            if b.contains(t) {
                commandedSeek = nil
            } else if abs(t - target) > policy.coverageTolerance {
                return breakTimerArmed ? [] : armBreakTimer(b, from: playhead, at: now)
            }
        }
        let previous = playhead
        let previousWallTime = playheadWallTime
        // The first report is where the player starts, not a jump from 0.
        let first = !sawPlayhead
        sawPlayhead = true
        playerReportedPosition = true
        self.playhead = t
        self.playheadWallTime = now
        self.rate = rate
        self.playing = playing
        var actions: [TimelineAction] = []

        // The echo of a seek we commanded: the player is where we sent it.
        if let target = commandedSeek, abs(t - target) <= policy.coverageTolerance { commandedSeek = nil }

        switch phase {
        case .seeking, .trickPlay, .finished, .closed:
            return actions
        case .inBreak(let visit):
            if adRulesMode { return actions }  // content is paused while the break plays
            guard let i = layout.index(ofBreak: visit.id) else { phase = .content; return actions }
            let b = layout.breaks[i]
            if t >= b.end - 0.001 {
                // Left the break through its end: covered from its start, it was watched.
                if visit.fromStart {
                    actions += completeBreak(index: i, at: now, how: "playhead reached its end at \(Seconds(t))")
                    if actions.contains(where: \.isSeek) { return actions }
                    playhead = t
                } else {
                    phase = .content
                    actions += cancelTimer(.breakEnd, "left the break without seeing its start")
                }
                actions += contentProgress(from: b.end, to: t, previousWallTime: now, at: now)
            } else if t < b.start {
                phase = .content
                cancelTimer(.breakEnd, "playhead went back before the break", into: &actions)
                actions += contentProgress(from: t, to: t, previousWallTime: now, at: now)
            } else if playing && !breakTimerArmed {
                armBreakTimer(b, from: t, at: now, into: &actions)
            }
        case .content:
            actions += contentProgress(from: first ? t : previous, to: t, previousWallTime: previousWallTime, at: now)
        }
        if playing && !bookmarkTimerArmed && !actions.contains(where: \.isSeek) { armBookmarkTimer(at: now, into: &actions) }
        return actions
    }

    /// Content played from `from` to `to`: enter a break the playhead reached, treat an unreported jump
    /// over breaks as a seek, clear the bookmark near the end.
    mutating func contentProgress(from: Double, to t: Double, previousWallTime: Double, at now: Double)
        -> [TimelineAction]
    {
        var actions: [TimelineAction] = []
        if adRulesMode {
            // A scheduled break position reached by playback: play it (content pauses). Reached means
            // crossed, (from, t]: the content sitting at a position does not reach it again, so the pre-roll
            // (played by `opened`) does not replay on every report of content time 0 — with breaks replayed
            // on playback, that was an endless pre-roll loop.
            if let i = firstScheduledBreak(after: from, upTo: t) {
                actions += enterBreak(index: i, fromStart: true, at: now, how: "content reached \(Seconds(layout.breaks[i].start))")
            }
            actions += finishedCheck(streamTime: t)
            return actions
        }
        // A forward jump larger than playback explains, that the player did not report as a seek: handle it
        // as one, so a player cannot bypass a break by seeking without telling.
        let explained = max(0, now - previousWallTime) * max(rate, 1) + policy.coverageTolerance + 1
        if t - from > explained, commandedSeek == nil, snapbackEnabled,
           layout.nextBreak(after: from).map({ $0.start <= t }) == true {
            return decideSeek(from: from, to: t, at: now, implicit: true)
        }
        if let i = layout.indexOfBreak(containing: t) {
            let b = layout.breaks[i]
            actions += enterBreak(index: i, fromStart: t <= b.start + policy.coverageTolerance, at: now,
                                  how: "playhead entered at \(Seconds(t))")
        } else {
            actions += finishedCheck(streamTime: t)
        }
        return actions
    }

    /// The first ad-rules break positioned in (from, to], never the post-roll.
    func firstScheduledBreak(after from: Double, upTo to: Double) -> Int? {
        guard to >= from else { return nil }
        var k = layout.countStarting(atOrBefore: from)
        while k < layout.count, layout.breaks[k].start <= to {
            let b = layout.breaks[k]
            if b.id != postrollId, !b.watched || policy.watchedBreakOnPlayback == .replay { return k }
            k += 1
        }
        return nil
    }

    // MARK: Entering and completing a break

    /// The viewer is at break `index` (by playback, ad event or a command of ours). Applies skip rules
    /// (disabled, cooldown, watched + skip); otherwise the session is in the break.
    mutating func enterBreak(index i: Int, fromStart: Bool, at now: Double, how: String, byEvent: Bool = false)
        -> [TimelineAction]
    {
        let b = layout.breaks[i]
        if let skip = skipReason(for: i, at: now) {
            if adRulesMode {
                // Nothing to seek over: the break is simply not played.
                return []
            }
            return [commandSeek(to: b.end, reason: skip.0, why: "\(skip.1): break \(b.id) \(Seconds(b.start))–\(Seconds(b.end)) skipped")]
        }
        phase = .inBreak(BreakVisit(id: b.id, fromStart: fromStart, startedByEvent: byEvent, unwatchedAtEntry: !b.watched))
        var actions: [TimelineAction] = []
        if adRulesMode {
            actions.append(TimelineAction(.playBreak(breakId: b.id), reason: "\(how): break \(b.id) plays"))
            armBreakTimer(b, from: b.start, at: now, into: &actions)
        } else {
            armBreakTimer(b, from: max(playhead, b.start), at: now, into: &actions)
        }
        if policy.watchedWhen == .onBegin && !b.watched {
            layout.setWatched(true, at: i)
            actions.append(TimelineAction(.breakWatched(breakId: b.id), reason: "break \(b.id) began (watched on begin)"))
        }
        if isPostroll(i) { actions += clearBookmark("post-roll \(b.id) started") }
        if bookmarkTimerArmed { cancelTimer(.bookmark, "an ad break plays", into: &actions) }
        return actions
    }

    /// Why break `i` is skipped instead of played, if it is.
    func skipReason(for i: Int, at now: Double) -> (SeekReason, String)? {
        let b = layout.breaks[i]
        if isDisabled(i) { return (.skipDisabledBreak, b.start == 0 ? "pre-roll disabled" : "mid-rolls disabled") }
        // Every break during the cooldown, watched ones too (TVSDK recipe: no break plays until it is over).
        if let until = cooldownUntil, now < until {
            return (.skipDuringCooldown, "cooldown until \(Seconds(until))")
        }
        if b.watched, policy.watchedBreakOnPlayback == .skip, !isLive {
            return (.skipWatchedBreak, "already watched")
        }
        return nil
    }

    func isDisabled(_ i: Int) -> Bool {
        let b = layout.breaks[i]
        if b.start == 0 { return policy.prerollDisabled }
        return policy.midrollsDisabled && !isPostroll(i)
    }

    func isPostroll(_ i: Int) -> Bool {
        let b = layout.breaks[i]
        if adRulesMode { return b.id == postrollId }
        guard let d = contentDuration, !isLive, b.start > 0 else { return false }
        return layout.contentPosition(ofBreakAt: i) >= d - Self.positionTolerance
    }

    /// The break played to its end: watched (per policy), cooldown starts, and the plan goes on.
    mutating func completeBreak(index i: Int, at now: Double, how: String) -> [TimelineAction] {
        let b = layout.breaks[i]
        phase = .content
        var actions: [TimelineAction] = []
        cancelTimer(.breakEnd, "break completed", into: &actions)
        if policy.watchedWhen == .onEnd && !b.watched {
            layout.setWatched(true, at: i)
            actions.append(TimelineAction(.breakWatched(breakId: b.id), reason: "break \(b.id) completed: \(how)"))
        }
        actions.append(TimelineAction(.breakCompleted(breakId: b.id), reason: "\(how)"))
        if policy.cooldown > 0 { cooldownUntil = now + policy.cooldown }
        layout.setSnapbackCount(0, at: i)
        playhead = adRulesMode ? playhead : b.end
        playheadWallTime = now
        actions += runPlan(after: b, at: now)
        if !actions.contains(where: \.isSeek) {
            actions += finishedCheck(streamTime: playhead)
        }
        // A break that completes after content complete (the post-roll) ends the session's playback: back to
        // `.finished`, as content complete left it, not to `.content`.
        if contentCompleted, phase == .content { phase = .finished }
        return actions
    }

    /// After a break: the next step of the plan (a return seek, or the next break before a resume point).
    mutating func runPlan(after b: AdBreak, at now: Double) -> [TimelineAction] {
        while !plan.isEmpty {
            let step = plan.removeFirst()
            switch step {
            case .seek(let to, let reason, let why):
                let target = clamp(to)
                if reason == .resumeAfterSnapback, policy.returnToTarget == .ifBeyondBreak, !adRulesMode,
                   target <= b.end {
                    continue
                }
                let text = why.isEmpty ? "break \(b.id) done, on to the seek target \(Seconds(target))" : why
                var actions = [commandSeek(to: target, reason: reason, why: text)]
                playhead = target
                if let i = layout.indexOfBreak(containing: target), !adRulesMode {
                    // The return lands in another break: it plays from where we put the viewer.
                    actions += enterBreak(index: i, fromStart: target <= layout.breaks[i].start + policy.coverageTolerance,
                                          at: now, how: "returned into it")
                } else {
                    actions += saveBookmark(streamTime: target, trigger: .snapbackReturn,
                                            why: "after break \(b.id), at \(Seconds(target))")
                }
                return actions
            case .playBreak(let id, let why):
                guard let i = layout.index(ofBreak: id) else { continue }
                return goToBreak(index: i, reason: .breakBeforeResume, why: why, at: now)
            case .allAdsCompleted:
                return [TimelineAction(.allAdsCompleted, reason: "post-roll \(b.id) completed")]
            }
        }
        return []
    }

    /// Puts the viewer at the start of break `i`: a seek for stitched streams, a play-break for ad rules.
    mutating func goToBreak(index i: Int, reason: SeekReason, why: TimelineReason, at now: Double, landing: Double? = nil)
        -> [TimelineAction]
    {
        var actions: [TimelineAction] = []
        goToBreak(index: i, reason: reason, why: why, at: now, landing: landing, into: &actions)
        return actions
    }

    mutating func goToBreak(index i: Int, reason: SeekReason, why: TimelineReason, at now: Double, landing: Double? = nil,
                            into actions: inout [TimelineAction]) {
        let b = layout.breaks[i]
        if adRulesMode {
            actions.append(contentsOf: enterBreak(index: i, fromStart: true, at: now, how: why.description))
            return
        }
        let target = clamp(landing ?? b.start)
        let seek = commandSeek(to: target, reason: reason, why: why)
        playhead = target
        playheadWallTime = now
        phase = .inBreak(BreakVisit(id: b.id, fromStart: true, startedByEvent: false, unwatchedAtEntry: !b.watched))
        actions.append(seek)
        if policy.watchedWhen == .onBegin && !b.watched {
            layout.setWatched(true, at: i)
            actions.append(TimelineAction(.breakWatched(breakId: b.id), reason: "break \(b.id) began (watched on begin)"))
        }
        armBreakTimer(b, from: target, at: now, into: &actions)
        if bookmarkTimerArmed { cancelTimer(.bookmark, "an ad break plays", into: &actions) }
    }

    mutating func commandSeek(to t: Double, reason: SeekReason, why: TimelineReason) -> TimelineAction {
        let target = clamp(t)
        commandedSeek = target
        sawPlayhead = true
        return TimelineAction(.seek(to: target, reason: reason), reason: why)
    }

    // MARK: Ad events

    public mutating func adBreakStarted(id: String, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        let i = try breakIndex(id)
        switch phase {
        case .inBreak(var visit) where visit.id == id:
            if visit.startedByEvent { throw .unexpectedEvent(event: "ad-break-started \(id)", state: phaseName) }
            visit.startedByEvent = true
            phase = .inBreak(visit)
            return []
        case .content:
            if adRulesMode {
                // The ad player started a break we did not ask for (e.g. the SDK's own schedule): follow it.
                return enterBreak(index: i, fromStart: true, at: now, how: "ad-break-started event", byEvent: true)
            }
            playhead = layout.breaks[i].start
            playheadWallTime = now
            return enterBreak(index: i, fromStart: true, at: now, how: "ad-break-started event", byEvent: true)
        default:
            throw .unexpectedEvent(event: "ad-break-started \(id)", state: phaseName)
        }
    }

    public mutating func adBreakEnded(id: String, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        let i = try breakIndex(id)
        guard case .inBreak(let visit) = phase, visit.id == id else {
            throw .unexpectedEvent(event: "ad-break-ended \(id)", state: phaseName)
        }
        // The player says the break played out. Trust it only if the break was seen from its start.
        if visit.fromStart || visit.startedByEvent {
            return completeBreak(index: i, at: now, how: "ad-break-ended event")
        }
        phase = .content
        return cancelTimer(.breakEnd, "ad-break-ended for a break entered mid-way: not counted as watched")
    }

    public mutating func adStarted(breakId id: String, index: Int, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        let i = try breakIndex(id)
        try checkAdIndex(index, in: layout.breaks[i])
        switch phase {
        case .inBreak(let visit) where visit.id == id:
            return []
        case .content:
            if index == 0 { return try adBreakStarted(id: id, at: now) }
            throw .unexpectedEvent(event: "ad-started \(id)#\(index)", state: phaseName)
        default:
            throw .unexpectedEvent(event: "ad-started \(id)#\(index)", state: phaseName)
        }
    }

    public mutating func adEnded(breakId id: String, index: Int, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        let i = try breakIndex(id)
        try checkAdIndex(index, in: layout.breaks[i])
        guard case .inBreak(let visit) = phase, visit.id == id else {
            throw .unexpectedEvent(event: "ad-ended \(id)#\(index)", state: phaseName)
        }
        let ads = layout.breaks[i].adDurations.count
        if ads > 0 && index == ads - 1 && (visit.fromStart || visit.startedByEvent) {
            return completeBreak(index: i, at: now, how: "its last ad ended")
        }
        return []
    }

    func checkAdIndex(_ index: Int, in b: AdBreak) throws(TimelineError) {
        if index < 0 || (!b.adDurations.isEmpty && index >= b.adDurations.count) {
            throw .notSupported("ad index \(index) in break \(b.id) of \(b.adDurations.count) ads")
        }
    }

    // MARK: Pause, completion, updates, close

    public mutating func paused(streamTime t: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        try Self.checkTime(t, "pause position")
        playerReportedPosition = true
        playing = false
        playhead = t
        playheadWallTime = now
        var actions = cancelTimer(.bookmark, "paused")
        // Inside a break this saves the break's content position, never a position inside the ads.
        actions += saveBookmark(streamTime: t, trigger: .paused, why: "paused at \(Seconds(t))")
        return actions
    }

    public mutating func contentCompleted(at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        if contentCompleted { throw .unexpectedEvent(event: "content-complete", state: "after content complete") }
        if isLive { throw .notSupported("content complete on a live stream") }
        contentCompleted = true
        var actions = cancelTimer(.bookmark, "content complete")
        actions += clearBookmark("content complete")
        if adRulesMode {
            if let id = postrollId, let i = layout.index(ofBreak: id), skipReason(for: i, at: now) == nil,
               !layout.breaks[i].watched || policy.watchedBreakOnPlayback == .replay {
                clearPlan()
                plan.append(.allAdsCompleted)
                actions += enterBreak(index: i, fromStart: true, at: now, how: "content complete")
                return actions
            }
            phase = .finished
            actions.append(TimelineAction(.allAdsCompleted, reason: "content complete, no post-roll to play"))
            return actions
        }
        if case .inBreak = phase { return actions }  // a stitched post-roll may still be playing
        phase = .finished
        return actions
    }

    public mutating func breaksUpdated(_ breaks: [AdBreak], at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        guard isLive else { throw .notSupported("breaks updated on an on-demand stream") }
        try layout.add(breaks)
        return []
    }

    /// Closed by the player or by its disconnection: the final bookmark.
    mutating func closed(at now: Double, trigger: BookmarkTrigger) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        if bookmarkTimerArmed { cancelTimer(.bookmark, "session closed", into: &actions) }
        if breakTimerArmed { cancelTimer(.breakEnd, "session closed", into: &actions) }
        let t = estimatedPlayhead(at: now)
        let how = trigger == .closed ? "closed" : "player disconnected"
        if !playerReportedPosition {
            // Opened and closed without playing: the stored bookmark stays as it was.
        } else if case .seeking(let from, _) = phase {
            actions += saveBookmark(streamTime: from, trigger: trigger, why: "\(how) while seeking from \(Seconds(from))")
        } else if phase != .finished {
            actions += saveBookmark(streamTime: t, trigger: trigger, why: "\(how) at \(Seconds(t))")
        }
        phase = .closed
        clearPlan()
        return actions
    }

    // MARK: Timers

    public mutating func timerFired(_ timer: TimelineTimer, at now: Double) -> [TimelineAction] {
        switch timer {
        case .bookmark:
            bookmarkTimerArmed = false
            guard playing, case .content = phase else { return [] }
            let t = estimatedPlayhead(at: now)
            var actions = saveBookmark(streamTime: t, trigger: .periodic, why: "every \(Seconds(policy.bookmarkInterval)) s of playback")
            armBookmarkTimer(at: now, into: &actions)
            return actions
        case .breakEnd:
            breakTimerArmed = false
            guard case .inBreak(let visit) = phase, let i = layout.index(ofBreak: visit.id) else { return [] }
            let b = layout.breaks[i]
            if adRulesMode {
                return completeBreak(index: i, at: now, how: "no ad-break-ended within its expected duration")
            }
            // No playhead report or event since: if the break must have played out by now, it did.
            let t = playing ? playhead + (now - playheadWallTime) * max(rate, 0) : playhead
            if t >= b.end - 0.001 {
                playhead = t
                if visit.fromStart {
                    return completeBreak(index: i, at: now, how: "its expected end passed without a report")
                }
                phase = .content
                return []
            }
            return armBreakTimer(b, from: t, at: now)
        }
    }

    mutating func armBookmarkTimer(at now: Double) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        armBookmarkTimer(at: now, into: &actions)
        return actions
    }

    mutating func armBookmarkTimer(at now: Double, into actions: inout [TimelineAction]) {
        guard bookmarksEnabled, policy.bookmarkInterval > 0, case .content = phase, !bookmarkCleared else { return }
        bookmarkTimerArmed = true
        actions.append(TimelineAction(.scheduleTimer(.bookmark, deadline: now + policy.bookmarkInterval),
                                      reason: "periodic bookmark"))
    }

    mutating func armBreakTimer(_ b: AdBreak, from t: Double, at now: Double) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        armBreakTimer(b, from: t, at: now, into: &actions)
        return actions
    }

    /// Arms the break-end timer at the break's expected end (plus the tolerance) from `t`.
    mutating func armBreakTimer(_ b: AdBreak, from t: Double, at now: Double, into actions: inout [TimelineAction]) {
        let remaining = adRulesMode ? adRulesBreakDuration : max(0, b.end - t) / max(rate, 1)
        breakTimerArmed = true
        actions.append(TimelineAction(.scheduleTimer(.breakEnd, deadline: now + remaining + 2 * policy.coverageTolerance),
                                      reason: "expected end of the break"))
    }

    mutating func cancelTimer(_ timer: TimelineTimer, _ why: TimelineReason) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        cancelTimer(timer, why, into: &actions)
        return actions
    }

    /// Timer reasons are only logged (at debug level): keep them literals, not interpolations, since
    /// they are built on every event that arms or disarms a timer.
    mutating func cancelTimer(_ timer: TimelineTimer, _ why: TimelineReason, into actions: inout [TimelineAction]) {
        switch timer {
        case .bookmark:
            guard bookmarkTimerArmed else { return }
            bookmarkTimerArmed = false
        case .breakEnd:
            guard breakTimerArmed else { return }
            breakTimerArmed = false
        }
        actions.append(TimelineAction(.cancelTimer(timer), reason: why))
    }
}
