// SPDX-License-Identifier: Apache-2.0
extension TimelineSession {
    // MARK: Bookmarks

    /// Saves the bookmark at the content time of `streamTime` (a position inside a break saves the break's
    /// content position), unless bookmarks are off for this session, it was cleared as finished, the
    /// position is past the finished margin (then it is cleared), or it is within 0.5 s of the last one saved.
    /// While a resume plays breaks before its resume point, a bookmark taken in them is the resume point.
    mutating func saveBookmark(
        streamTime rawT: Double, trigger: BookmarkTrigger, cause: TimelineReason.BookmarkCause,
        into actions: inout [TimelineAction]
    ) {
        guard settings.bookmarksEnabled, !progress.bookmarkCleared else { return }
        var t = rawT
        var c: Double
        if let target = resumeTargetPending(at: t) {
            // The viewer has not reached the resume point yet: the breaks the resume plays come first. A
            // viewer who quits during them must find the resume point again, not the break's position. Saved
            // once (the resume point may not be the stored bookmark: the player may have named it).
            if progress.resumeTargetSaved { return }
            progress.resumeTargetSaved = true
            (c, t) = (target.content, target.stream)
        } else {
            if finishedCheck(streamTime: t, into: &actions) { return }
            c = contentTime(forStreamTime: t)
            // Within half a second of the last one saved: nothing a viewer would notice, and one flash write less.
            if let last = progress.lastBookmark, abs(last - c) < 0.5 { return }
        }
        progress.lastBookmark = c
        actions.append(
            TimelineAction(
                .saveBookmark(contentTime: c, streamTime: t, trigger: trigger),
                reason: .bookmark(cause, contentTime: c)))
    }

    /// The resume point (content and stream time) while a resume's plan still plays breaks before it and
    /// the viewer, at `t`, is in one of them.
    func resumeTargetPending(at t: Double) -> (content: Double, stream: Double)? {
        if plan.isEmpty { return nil }
        if case .inBreak = state {} else if layout.indexOfBreak(containing: t) == nil { return nil }
        for step in plan {
            if case .seek(let to, .resumeFromBookmark, let why) = step, case .resume(let c, _)? = why { return (c, to) }
        }
        return nil
    }

    /// Clears the bookmark once the viewer is within the finished margin of the content's end. Returns
    /// whether it did.
    @discardableResult
    mutating func finishedCheck(streamTime t: Double, into actions: inout [TimelineAction]) -> Bool {
        guard settings.bookmarksEnabled, !progress.bookmarkCleared, let d = settings.contentDuration, !settings.isLive else {
            return false
        }
        let c = contentTime(forStreamTime: t)
        guard c >= d - policy.finishedMargin else { return false }
        clearBookmark(.nearEnd(contentTime: c, margin: policy.finishedMargin, end: d), into: &actions)
        return true
    }

    mutating func clearBookmark(_ why: TimelineReason.FinishCause, into actions: inout [TimelineAction]) {
        guard settings.bookmarksEnabled, !progress.bookmarkCleared else { return }
        progress.bookmarkCleared = true
        actions.append(TimelineAction(.clearBookmark, reason: .finished(why)))
        cancelTimer(.bookmark, .bookmarkCleared, into: &actions)
    }

    // MARK: Opening

    /// The session starts: where to begin in *this* stream's layout, and which breaks play first.
    ///
    /// With a resume content time (a bookmark, or a resume stream time converted: `resumeContentTime`),
    /// the stream time is `layout.streamTime(forContentTime:)`, so a bookmark taken with ads of other
    /// lengths resumes at the same point of the program. The resume
    /// policy picks the breaks before it that play first (none, the pre-roll, the last one before it, or
    /// both); every other break before it is exempt from later snapbacks in this session. Without a resume
    /// point, an ad-rules session plays its pre-roll; a disabled stitched pre-roll is skipped.
    /// Only the first call does anything: opening twice must not run the resume plan twice.
    public mutating func opened(at now: Double, into actions: inout [TimelineAction]) {
        guard case .notOpened = state else { return }
        state = .content
        player.reportedAt = now
        if let c = resumeContentTime, c > 0, settings.bookmarksEnabled {
            resume(at: c, now: now, into: &actions)
            return
        }
        guard let first = layout.breaks.first, first.start == 0 else { return }
        if settings.adRulesMode {
            if first.id != settings.postrollId {
                enterBreak(index: 0, fromStart: true, at: now, how: .sessionOpened, into: &actions)
            }
        } else if policy.prerollDisabled {
            commandSeek(to: first.end, reason: .skipDisabledBreak, why: .prerollDisabled(breakId: first.id), into: &actions)
        }
    }

    mutating func resume(at c: Double, now: Double, into actions: inout [TimelineAction]) {
        let adRules = settings.adRulesMode
        let target = clamp(layout.streamTime(forContentTime: c))
        // Breaks wholly before the resume point, in order (the post-roll never).
        var before: [Int] = []
        let k = adRules ? layout.countStarting(atOrBefore: c) : layout.countStarting(atOrBefore: target)
        for i in 0..<k where layout.breaks[i].id != settings.postrollId {
            let b = layout.breaks[i]
            if adRules ? b.start < c || (b.start == 0) : b.end <= target { before.append(i) }
        }
        var plays: [Int] = []
        let preroll = before.first.flatMap { layout.breaks[$0].start == 0 ? $0 : nil }
        let last = before.last.flatMap { layout.breaks[$0].start > 0 ? $0 : nil }
        switch policy.resumeBreaks {
        case .none: break
        case .preroll: if let p = preroll { plays = [p] }
        case .lastBefore: if let l = last { plays = [l] } else if let p = preroll { plays = [p] }
        case .prerollAndLastBefore: plays = [preroll, last].compactMap { $0 }
        }
        plays = plays.filter { !isDisabled($0) && !isWatched($0) }
        for i in before where !plays.contains(i) {
            self[progressOf: i].exempt = true
            // A watched break is not skipped, it is done (and a reopen's resume over it says nothing).
            if !isWatched(i) { noteSkipped(i, .resumePlan, into: &actions) }
        }
        progress.lastBookmark = c
        let why = TimelineReason.resume(contentTime: c, streamTime: target)
        guard let first = plays.first else {
            player.playhead = target
            commandSeek(to: target, reason: .resumeFromBookmark, why: why, into: &actions)
            return
        }
        plan = plays.dropFirst().map { .playBreak(id: layout.breaks[$0].id, why: .nextBreakBeforeResume) }
        plan.append(.seek(to: target, reason: .resumeFromBookmark, why: why))
        goToBreak(
            index: first, reason: .breakBeforeResume,
            why: .breakBeforeResume(contentTime: c, breakId: layout.breaks[first].id, policy: policy.resumeBreaks),
            at: now, into: &actions)
    }
}
