// SPDX-License-Identifier: Apache-2.0
extension TimelineSession {
    // MARK: Events

    /// Applies one event and returns its actions: ``handle(_:at:into:)`` with a buffer of its own.
    public mutating func handle(_ event: TimelineEvent, at now: Double) throws(TimelineError) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        try handle(event, at: now, into: &actions)
        return actions
    }

    /// Applies one event, appending its actions to `actions` — a buffer the caller may keep from event to
    /// event, so that the snapback path allocates nothing. Dispatches to the method of the same name. An
    /// event that is refused leaves the session exactly as it was, and `actions` unchanged.
    public mutating func handle(_ event: TimelineEvent, at now: Double, into actions: inout [TimelineAction])
        throws(TimelineError)
    {
        switch event {
        case .playheadReported(let t, let rate, let playing):
            try playheadReported(streamTime: t, rate: rate, playing: playing, at: now, into: &actions)
        case .seekStarted(let from): try seekStarted(from: from, at: now)
        case .seekEnded(let from, let to): try seekEnded(from: from, to: to, at: now, into: &actions)
        case .adBreakStarted(let id, let t):
            try withPosition(t, at: now, into: &actions) { (s, a) throws(TimelineError) in
                try s.adBreakStarted(id: id, at: now, into: &a)
            }
        case .adBreakEnded(let id, let t):
            try withPosition(t, at: now, into: &actions) { (s, a) throws(TimelineError) in
                try s.adBreakEnded(id: id, at: now, into: &a)
            }
        case .adStarted(let id, let index, let t):
            try withPosition(t, at: now, into: &actions) { (s, a) throws(TimelineError) in
                try s.adStarted(breakId: id, index: index, at: now, into: &a)
            }
        case .adEnded(let id, let index, let t):
            try withPosition(t, at: now, into: &actions) { (s, a) throws(TimelineError) in
                try s.adEnded(breakId: id, index: index, at: now, into: &a)
            }
        case .trickPlayStarted(let t, let rate): try trickPlayStarted(streamTime: t, rate: rate, at: now, into: &actions)
        case .trickPlayEnded(let t): try trickPlayEnded(streamTime: t, at: now, into: &actions)
        case .contentCompleted: try contentCompleted(at: now, into: &actions)
        case .breaksChanged(.breaks(let breaks)): try breaksUpdated(breaks, at: now)
        case .breaksChanged(.midrollTimes(let times)): try midrollsScheduled(times, at: now)
        case .paused(let t): try paused(streamTime: t, at: now, into: &actions)
        case .closed, .playerDisconnected:
            // A session may be closed before it was opened (nothing to save then).
            if state == .closed { throw .sessionClosed }
            guard now.isFinite else { throw .invalidTime(field: "wall time", value: now) }
            closed(at: now, trigger: event == .closed ? .closed : .disconnected, into: &actions)
        case .timerFired(let timer):
            try checkAccepting("timer-fired", at: now)
            timerFired(timer, at: now, into: &actions)
        }
    }

    // MARK: Ad events

    public mutating func adBreakStarted(id: String, at now: Double, into actions: inout [TimelineAction]) throws(TimelineError) {
        try checkAccepting("ad-break-started", at: now)
        let i = try breakIndex(id)
        switch state {
        case .inBreak(var visit) where visit.id == id:
            // A repeated start (or one after the playhead entered the break) confirms the visit.
            if visit.startedByEvent { return confirmed(.adBreakStarted, breakId: id, into: &actions) }
            visit.startedByEvent = true
            state = .inBreak(visit)
        case .content where startConfirms(i, at: now):
            // The start of a break that already played out and that the viewer just left: late, not new.
            confirmed(.adBreakStarted, breakId: id, into: &actions)
        case .content:
            if !settings.adRulesMode {
                player.playhead = layout.breaks[i].start
                player.reportedAt = now
            }
            // For ad rules, the ad player started a break we did not ask for (e.g. the SDK's own
            // schedule): follow it.
            enterBreak(index: i, fromStart: true, at: now, how: .adBreakStartedEvent, byEvent: true, into: &actions)
        default:
            throw .unexpectedEvent(event: "ad-break-started \(id)", state: stateName)
        }
    }

    public mutating func adBreakEnded(id: String, at now: Double, into actions: inout [TimelineAction]) throws(TimelineError) {
        try checkAccepting("ad-break-ended", at: now)
        let i = try breakIndex(id)
        guard case .inBreak(let visit) = state, visit.id == id else {
            // After the playhead left the break (androidx/media #1538: the end event races the playhead),
            // or a second end: what the session concluded already. Refused only for a break never met.
            if endConfirms(i, at: now) { return confirmed(.adBreakEnded, breakId: id, into: &actions) }
            throw .unexpectedEvent(event: "ad-break-ended \(id)", state: stateName)
        }
        // The player says the break played out. Trust it only if the break was seen from its start.
        if visit.fromStart || visit.startedByEvent {
            completeBreak(index: i, at: now, how: .adBreakEndedEvent, into: &actions)
            return
        }
        leaveBreak()
        cancelTimer(.breakEnd, .breakEndedMidway, into: &actions)
    }

    public mutating func adStarted(breakId id: String, index: Int, at now: Double, into actions: inout [TimelineAction])
        throws(TimelineError)
    {
        try checkAccepting("ad-started", at: now)
        let i = try breakIndex(id)
        try checkAdIndex(index, in: layout.breaks[i])
        switch state {
        case .inBreak(let visit) where visit.id == id:
            return
        case .content where index == 0:
            try adBreakStarted(id: id, at: now, into: &actions)
        case .content where startConfirms(i, at: now):
            confirmed(.adStarted, breakId: id, into: &actions)
        default:
            throw .unexpectedEvent(event: "ad-started \(id)#\(index)", state: stateName)
        }
    }

    public mutating func adEnded(breakId id: String, index: Int, at now: Double, into actions: inout [TimelineAction])
        throws(TimelineError)
    {
        try checkAccepting("ad-ended", at: now)
        let i = try breakIndex(id)
        try checkAdIndex(index, in: layout.breaks[i])
        guard case .inBreak(let visit) = state, visit.id == id else {
            if endConfirms(i, at: now) { return confirmed(.adEnded, breakId: id, into: &actions) }
            throw .unexpectedEvent(event: "ad-ended \(id)#\(index)", state: stateName)
        }
        let ads = layout.breaks[i].adDurations.count
        if ads > 0 && index == ads - 1 && (visit.fromStart || visit.startedByEvent) {
            completeBreak(index: i, at: now, how: .lastAdEnded, into: &actions)
        }
    }

    func checkAdIndex(_ index: Int, in b: AdBreak) throws(TimelineError) {
        if index < 0 || (!b.adDurations.isEmpty && index >= b.adDurations.count) {
            throw .notSupported("ad index \(index) in break \(b.id) of \(b.adDurations.count) ads")
        }
    }

    // MARK: Pause, completion, updates, close

    public mutating func paused(streamTime t: Double, at now: Double, into actions: inout [TimelineAction]) throws(TimelineError)
    {
        try checkAccepting("paused", at: now)
        try TimelineSettings.checkTime(t, "pause position")
        progress.playerReportedPosition = true
        player.playing = false
        player.playhead = t
        player.reportedAt = now
        cancelTimer(.bookmark, .paused, into: &actions)
        // Inside a break this saves the break's content position, never a position inside the ads.
        saveBookmark(streamTime: t, trigger: .paused, cause: .paused(at: t), into: &actions)
    }

    public mutating func contentCompleted(at now: Double, into actions: inout [TimelineAction]) throws(TimelineError) {
        try checkAccepting("content-complete", at: now)
        if progress.contentEnded { throw .unexpectedEvent(event: "content-complete", state: "after content complete") }
        if settings.isLive { throw .notSupported("content complete on a live stream") }
        progress.contentEnded = true
        cancelTimer(.bookmark, .contentComplete, into: &actions)
        clearBookmark(.contentComplete, into: &actions)
        if settings.adRulesMode {
            if let id = settings.postrollId, let i = layout.index(ofBreak: id), skipReason(for: i, at: now) == nil,
                !isWatched(i) || policy.watchedBreakOnPlayback == .replay
            {
                clearPlan()
                plan.append(.allAdsCompleted)
                enterBreak(index: i, fromStart: true, at: now, how: .contentComplete, into: &actions)
                return
            }
            state = .finished
            actions.append(TimelineAction(.allAdsCompleted, reason: .noPostroll))
            return
        }
        if case .inBreak = state { return }  // a stitched post-roll may still be playing
        state = .finished
    }

    /// New breaks of a live stream. The viewer's progress follows each known break to its new index.
    public mutating func breaksUpdated(_ breaks: [AdBreak], at now: Double) throws(TimelineError) {
        try checkAccepting("breaks-updated", at: now)
        guard settings.isLive else { throw .notSupported("breaks updated on an on-demand stream") }
        guard !settings.adRulesMode else {
            throw .notSupported("a break list on an ad-rules session (its schedule changes by mid-roll times)")
        }
        guard let grown = try layout.adding(AdBreak.geometry(of: breaks, live: true), maxBreaks: settings.maxBreaks)
        else {
            return
        }
        let honoured = policy.watchedWhen != .never
        adopt(grown, markingWatched: breaks.lazy.filter { honoured && $0.watched }.map(\.id))
    }

    /// A live ad-rules session's schedule now (an interstitial schedule that grew): each mid-roll time not
    /// yet known becomes `midroll-<t>`, as the ad rules the session opened with name theirs; the known ones
    /// keep their state. A time the schedule no longer has stays, as a live stitched session's break does.
    public mutating func midrollsScheduled(_ times: [Double], at now: Double) throws(TimelineError) {
        try checkAccepting("midrolls-scheduled", at: now)
        guard settings.adRulesMode else { throw .notSupported("mid-roll times on a session without ad rules") }
        guard settings.isLive else { throw .notSupported("mid-roll times updated on an on-demand stream") }
        // A time whose break is known (to the millisecond, as its id) is that break, wherever within the
        // millisecond it falls: a player's clock of a live playlist moves a little from refresh to refresh.
        let markers = try TimelineSettings.midrolls(at: times, contentDuration: settings.contentDuration)
            .filter { layout.index(ofBreak: $0.id) == nil }
        guard !markers.isEmpty,
            let grown = try layout.adding(AdBreak.geometry(of: markers, live: true), maxBreaks: settings.maxBreaks)
        else {
            return
        }
        adopt(grown, markingWatched: [])
    }

    /// Closed by the player or by its disconnection: the final bookmark.
    mutating func closed(at now: Double, trigger: BookmarkTrigger, into actions: inout [TimelineAction]) {
        cancelTimer(.bookmark, .sessionClosed, into: &actions)
        cancelTimer(.breakEnd, .sessionClosed, into: &actions)
        let t = estimatedPlayhead(at: now)
        let disconnected = trigger == .disconnected
        if !progress.playerReportedPosition {
            // Opened and closed without playing: the stored bookmark stays as it was.
        } else if case .seeking(let from, _) = state {
            saveBookmark(
                streamTime: from, trigger: trigger, cause: .closedWhileSeeking(disconnected: disconnected, from: from),
                into: &actions)
        } else if state != .finished {
            saveBookmark(streamTime: t, trigger: trigger, cause: .closed(disconnected: disconnected, at: t), into: &actions)
        }
        state = .closed
        clearPlan()
    }

    /// Drops what the plan still held (a new seek or the end of the content decides afresh). Element by
    /// element from the end, which keeps the plan's buffer (it holds one step or none): `removeAll()`
    /// gives it back, and the next snapback would allocate it again, where the round trip allocates
    /// nothing (`make check-budget`).
    mutating func clearPlan() {
        while !plan.isEmpty { plan.removeLast() }
    }

    // MARK: Timers

    mutating func timerFired(_ timer: TimelineTimer, at now: Double, into actions: inout [TimelineAction]) {
        switch timer {
        case .bookmark:
            timers.bookmark = false
            guard player.playing, case .content = state else { return }
            let t = estimatedPlayhead(at: now)
            saveBookmark(streamTime: t, trigger: .periodic, cause: .periodic(interval: policy.bookmarkInterval), into: &actions)
            armBookmarkTimer(at: now, into: &actions)
        case .breakEnd:
            timers.breakEnd = false
            guard case .inBreak(let visit) = state, let i = layout.index(ofBreak: visit.id) else { return }
            if settings.adRulesMode {
                completeBreak(index: i, at: now, how: .noAdBreakEnded, into: &actions)
                return
            }
            // No playhead report or event since: if the break must have played out by now, it did.
            let b = layout.breaks[i]
            let t = player.playing ? player.playhead + (now - player.reportedAt) * max(player.rate, 0) : player.playhead
            guard t >= b.end - 0.001 else {
                armBreakTimer(ending: b.end, from: t, at: now, into: &actions)
                return
            }
            player.playhead = t
            if visit.fromStart {
                completeBreak(index: i, at: now, how: .expectedEndPassed, into: &actions)
            } else {
                leaveBreak()
            }
        }
    }
}
