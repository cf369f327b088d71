extension TimelineSession {
    // MARK: Viewer seeks

    public mutating func seekStarted(from: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        try Self.checkTime(from, "seek origin")
        switch phase {
        case .content, .inBreak, .finished:
            phase = .seeking(from: from, before: phase)
            return []
        default:
            throw .unexpectedEvent(event: "seek-started", state: phaseName)
        }
    }

    /// A viewer's seek settled. Applies the seek policy: refuse it inside an unwatched break, snap back to a
    /// skipped unwatched break (and plan the return to the target), go to the start of an unwatched break the
    /// seek landed in, skip a watched one — or just save the bookmark where the viewer landed.
    public mutating func seekEnded(from: Double, to: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        try seekEnded(from: from, to: to, at: now, into: &actions)
        return actions
    }

    /// ``seekEnded(from:to:at:)`` appending to `actions` (the daemon's buffer, reused from event to event):
    /// nothing is appended when it throws.
    mutating func seekEnded(from: Double, to: Double, at now: Double, into actions: inout [TimelineAction]) throws(TimelineError) {
        try checkAccepting(at: now)
        try Self.checkTime(from, "seek origin")
        try Self.checkTime(to, "seek target")
        var before = phase
        if case .seeking(_, let interrupted) = phase { before = interrupted }
        switch before {
        case .closed: throw .sessionClosed
        case .trickPlay: throw .unexpectedEvent(event: "seek-ended", state: "in trick play")
        default: break
        }
        playerReportedPosition = true
        // The echo of a seek we commanded is not a viewer's seek.
        if let target = commandedSeek, abs(to - target) <= 0.5 {
            commandedSeek = nil
            phase = before
            playhead = to
            playheadWallTime = now
            return
        }
        commandedSeek = nil
        // Every seek while a break that began unwatched plays is refused, one within the break too: it goes
        // back to where the viewer was, not to the break's start (a scrub must not restart the break).
        if case .inBreak(let visit) = before, visit.unwatchedAtEntry, policy.refuseSeeksDuringUnwatchedBreak,
           snapbackEnabled, let i = layout.index(ofBreak: visit.id) {
            let b = layout.breaks[i]
            phase = before
            // Back to the seek's origin when it lies in the break; otherwise to the session's own position
            // there. An origin outside the break (our own seek's echo reported off target, a stale origin)
            // clamped into the break would be its end: the viewer would skip the break it is held to.
            let inBreak = b.contains(from) ? from : (b.contains(playhead) ? playhead : b.start)
            let back = adRulesMode ? from : inBreak
            actions.append(commandSeek(to: back, reason: .seekRefusedDuringAd,
                                       why: "seek \(Seconds(from))→\(Seconds(to)) refused: unwatched break \(b.id) is playing"))
            return
        }
        phase = contentCompleted && !adRulesMode ? .finished : .content
        let hadBreakTimer = breakTimerArmed
        breakTimerArmed = false
        if phase == .finished {
            playhead = to
            if hadBreakTimer { actions.append(TimelineAction(.cancelTimer(.breakEnd), reason: "seek left the break")) }
            return
        }
        decideSeek(from: from, to: to, at: now, implicit: false, into: &actions)
        // A break-end timer the decision armed again replaces the old deadline; otherwise disarm it.
        if hadBreakTimer && !breakTimerArmed {
            actions.append(TimelineAction(.cancelTimer(.breakEnd), reason: "seek left the break"))
        }
    }

    /// The seek policy proper. `implicit` marks a playhead jump the player did not report as a seek.
    mutating func decideSeek(from: Double, to rawTo: Double, at now: Double, implicit: Bool) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        decideSeek(from: from, to: rawTo, at: now, implicit: implicit, into: &actions)
        return actions
    }

    mutating func decideSeek(from: Double, to rawTo: Double, at now: Double, implicit: Bool,
                             into actions: inout [TimelineAction]) {
        let to = clamp(rawTo)
        playhead = to
        playheadWallTime = now
        let what = implicit ? "jump" : "seek"
        let landedIndex = adRulesMode ? nil : layout.indexOfBreak(containing: to)

        if snapbackEnabled, let cooldown = cooldownUntil, now < cooldown {
            // The cooldown skips every break (TVSDK recipe: no break plays until it is over), a watched one
            // too: replaying a watched break the seek landed in would show more ads than without a cooldown.
            if let i = landedIndex {
                let b = layout.breaks[i]
                actions.append(commandSeek(to: b.end, reason: .skipDuringCooldown,
                                           why: "\(what) landed in break \(b.id) during the cooldown until \(Seconds(cooldown))"))
                return
            }
            return settled(at: to, from: from, what: what, at: now, into: &actions)
        }

        if snapbackEnabled, let s = selectBreak(from: from, to: to, landed: landedIndex) {
            let b = layout.breaks[s]
            let count = layout.snapbackCounts[s] + 1
            if count > policy.maxSnapbacksPerBreak {
                // Loop guard: the break never reads as watched (events missing or early). Let the viewer go.
                exempt.insert(b.id)
                layout.setSnapbackCount(0, at: s)
                if !b.watched && policy.watchedWhen != .never {
                    layout.setWatched(true, at: s)
                    actions.append(TimelineAction(.breakWatched(breakId: b.id),
                                                  reason: "snapback loop guard: \(policy.maxSnapbacksPerBreak) snapbacks to \(b.id) already"))
                }
                return settled(at: to, from: from, what: what, at: now, into: &actions)
            }
            layout.setSnapbackCount(count, at: s)
            if s == landedIndex {
                // Landed inside the unwatched break: play it from its start (or from the ad's start).
                let start = policy.landingInUnwatchedBreak == .adStart ? b.adStart(containing: to) : b.start
                clearPlan()
                return goToBreak(index: s, reason: .startOfBreak,
                                 why: "\(what) \(Seconds(from))→\(Seconds(to)) landed in unwatched break \(b.id), to its \(start == b.start ? "start" : "ad's start") \(Seconds(start))",
                                 at: now, landing: start, into: &actions)
            }
            var target = to
            if let l = landedIndex {
                let lb = layout.breaks[l]
                target = lb.watched && policy.skipWatchedBreakOnLanding ? lb.end : lb.start
            }
            clearPlan()
            if policy.returnToTarget != .never {
                plan.append(.seek(to: target, reason: .resumeAfterSnapback,
                                  why: ""))  // worded when it runs: most snapbacks never get there
            }
            let landing = min(b.start + policy.snapbackLandingOffset, max(b.start, b.end - 0.001))
            return goToBreak(index: s, reason: .snapback,
                             why: .snapback(jump: implicit, from: from, to: to, breakId: b.id, start: b.start),
                             at: now, landing: adRulesMode ? nil : landing, into: &actions)
        }

        if let l = landedIndex {
            let b = layout.breaks[l]
            if b.watched && policy.skipWatchedBreakOnLanding {
                actions.append(commandSeek(to: b.end, reason: .skipWatchedBreak,
                                           why: "\(what) landed in watched break \(b.id), to its end \(Seconds(b.end))"))
                playhead = b.end
                return saveBookmark(streamTime: b.end, trigger: .seek, why: "seek settled at \(Seconds(b.end))", into: &actions)
            }
            if isDisabled(l) {
                actions.append(commandSeek(to: b.end, reason: .skipDisabledBreak,
                                           why: "\(what) landed in disabled break \(b.id), to its end \(Seconds(b.end))"))
                return
            }
            if !b.watched && snapbackEnabled {
                let start = policy.landingInUnwatchedBreak == .adStart ? b.adStart(containing: to) : b.start
                clearPlan()
                return goToBreak(index: l, reason: .startOfBreak,
                                 why: "\(what) \(Seconds(from))→\(Seconds(to)) landed in unwatched break \(b.id), to \(Seconds(start))",
                                 at: now, landing: start, into: &actions)
            }
            // A watched break replayed from where the viewer landed.
            phase = .inBreak(BreakVisit(id: b.id, fromStart: to <= b.start + policy.coverageTolerance, startedByEvent: false,
                                        unwatchedAtEntry: !b.watched))
            return armBreakTimer(b, from: to, at: now, into: &actions)
        }
        settled(at: to, from: from, what: what, at: now, into: &actions)
    }

    /// The seek needs no break: the viewer is in content at `to`.
    mutating func settled(at to: Double, from: Double, what: String, at now: Double) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        settled(at: to, from: from, what: what, at: now, into: &actions)
        return actions
    }

    mutating func settled(at to: Double, from: Double, what: String, at now: Double, into actions: inout [TimelineAction]) {
        saveBookmark(streamTime: to, trigger: .seek, why: "\(what) settled at \(Seconds(to))", into: &actions)
        if adRulesMode { return }
        if let i = layout.indexOfBreak(containing: to) {
            let b = layout.breaks[i]
            phase = .inBreak(BreakVisit(id: b.id, fromStart: to <= b.start + policy.coverageTolerance, startedByEvent: false,
                                        unwatchedAtEntry: !b.watched))
            armBreakTimer(b, from: to, at: now, into: &actions)
        }
    }

    /// Which break, if any, the seek from → to is held to.
    func selectBreak(from: Double, to: Double, landed: Int?) -> Int? {
        let forward = to > from
        if !forward && !(policy.enforceBackwardSeeks && to < from) { return nil }
        // Candidate range [lo, hi) of break indices, by start.
        let hi: Int
        if adRulesMode {
            hi = layout.countStarting(atOrBefore: to)
        } else {
            hi = landed.map { $0 + 1 } ?? layout.countStarting(atOrBefore: to)
        }
        var lo = 0
        if forward && policy.seekGate == .crossedBreaks {
            // Breaks starting at or after the origin (for ad rules, strictly after: a break at the origin
            // has just played or is the one the content paused for).
            lo = layout.countStarting(atOrBefore: from)
            if !adRulesMode, lo > 0, layout.breaks[lo - 1].start == from { lo -= 1 }
        }
        guard lo < hi else { return nil }
        func eligible(_ i: Int) -> Bool {
            let b = layout.breaks[i]
            return !b.watched && (exempt.isEmpty || !exempt.contains(b.id)) && !isDisabled(i) && b.id != postrollId
                && !(b.duration == 0 && !adRulesMode)
        }
        switch policy.skippedBreakChoice {
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

    public mutating func trickPlayStarted(streamTime t: Double, rate: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        try Self.checkTime(t, "trick play start")
        // Trick play is fast-forward or rewind; slow motion (0 < rate < 1) is ordinary playback.
        try Self.checkRate(rate)
        guard rate < 0 || rate > 1 else { throw .invalidRate(rate) }
        switch phase {
        case .content, .inBreak:
            if case .inBreak(let visit) = phase, let i = layout.index(ofBreak: visit.id), visit.unwatchedAtEntry,
               policy.refuseSeeksDuringUnwatchedBreak, snapbackEnabled {
                // Fast-forward through an unwatched break is a seek out of it: refused, back into the break
                // (as for a refused seek, a position reported outside it is not where the viewer was).
                let b = layout.breaks[i]
                let back = b.contains(t) ? t : (b.contains(playhead) ? playhead : b.start)
                return [commandSeek(to: back, reason: .seekRefusedDuringAd, why: "trick play refused: unwatched break \(visit.id) is playing")]
            }
            var actions = cancelTimer(.bookmark, "trick play")
            cancelTimer(.breakEnd, "trick play", into: &actions)
            phase = .trickPlay(from: t, rate: rate)
            self.rate = rate
            playhead = t
            return actions
        default:
            throw .unexpectedEvent(event: "trick-play-started", state: phaseName)
        }
    }

    /// Trick play ended at `t`. With `trickPlayAsSeek` it is one seek from its start to `t`; otherwise the
    /// viewer simply is at `t`.
    public mutating func trickPlayEnded(streamTime t: Double, at now: Double) throws(TimelineError) -> [TimelineAction] {
        try checkAccepting(at: now)
        try Self.checkTime(t, "trick play end")
        guard case .trickPlay(let from, _) = phase else {
            throw .unexpectedEvent(event: "trick-play-ended", state: phaseName)
        }
        playerReportedPosition = true
        rate = 1
        phase = .content
        commandedSeek = nil
        if policy.trickPlayAsSeek {
            return decideSeek(from: from, to: t, at: now, implicit: false)
        }
        playhead = t
        playheadWallTime = now
        return settled(at: t, from: from, what: "trick play", at: now)
    }
}
