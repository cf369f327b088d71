extension TimelineSession {
    // MARK: Bookmarks

    /// Saves the bookmark at the content time of `streamTime` (a position inside a break saves the break's
    /// content position), unless bookmarks are off for this session, it was cleared as finished, the
    /// position is past the finished margin (then it is cleared), or it is within 0.5 s of the last one saved.
    mutating func saveBookmark(streamTime t: Double, trigger: BookmarkTrigger, why: String) -> [TimelineAction] {
        var actions: [TimelineAction] = []
        saveBookmark(streamTime: t, trigger: trigger, why: why, into: &actions)
        return actions
    }

    mutating func saveBookmark(streamTime t: Double, trigger: BookmarkTrigger, why: String, into actions: inout [TimelineAction]) {
        guard bookmarksEnabled, !bookmarkCleared else { return }
        let finished = finishedCheck(streamTime: t)
        if !finished.isEmpty {
            actions.append(contentsOf: finished)
            return
        }
        let c = contentTime(forStreamTime: t)
        // Within half a second of the last one saved: nothing a viewer would notice, and one flash write less.
        if let last = lastBookmark, abs(last - c) < 0.5 { return }
        lastBookmark = c
        actions.append(TimelineAction(.saveBookmark(contentTime: c, streamTime: t, trigger: trigger),
                                      reason: "\(why): content \(Seconds(c))"))
    }

    /// Clears the bookmark once the viewer is within the finished margin of the content's end.
    mutating func finishedCheck(streamTime t: Double) -> [TimelineAction] {
        guard bookmarksEnabled, !bookmarkCleared, let d = contentDuration, !isLive else { return [] }
        let c = contentTime(forStreamTime: t)
        guard c >= d - policy.finishedMargin else { return [] }
        return clearBookmark("content \(Seconds(c)) is within \(Seconds(policy.finishedMargin)) s of the end \(Seconds(d))")
    }

    mutating func clearBookmark(_ why: String) -> [TimelineAction] {
        guard bookmarksEnabled, !bookmarkCleared else { return [] }
        bookmarkCleared = true
        var actions = [TimelineAction(.clearBookmark, reason: "finished: \(why)")]
        if bookmarkTimerArmed {
            bookmarkTimerArmed = false
            actions.append(TimelineAction(.cancelTimer(.bookmark), reason: "bookmark cleared"))
        }
        return actions
    }

    // MARK: Opening

    /// The session starts: where to begin in *this* stream's layout, and which breaks play first.
    ///
    /// With a resume content time (a bookmark), the stream time is `layout.streamTime(forContentTime:)`,
    /// so a bookmark taken with ads of other lengths resumes at the same point of the program. The resume
    /// policy picks the breaks before it that play first (none, the pre-roll, the last one before it, or
    /// both); every other break before it is exempt from later snapbacks in this session. Without a resume
    /// point, an ad-rules session plays its pre-roll; a disabled stitched pre-roll is skipped.
    /// Only the first call does anything: opening twice must not run the resume plan twice.
    public mutating func opened(at now: Double) -> [TimelineAction] {
        guard !didOpen, phase != .closed else { return [] }
        didOpen = true
        playheadWallTime = now
        if let c = resumeContentTime, c > 0, bookmarksEnabled {
            return resume(at: c, now: now)
        }
        if let first = layout.breaks.first, first.start == 0 {
            if adRulesMode {
                if first.id != postrollId { return enterBreak(index: 0, fromStart: true, at: now, how: "session opened") }
            } else if policy.prerollDisabled {
                return [commandSeek(to: first.end, reason: .skipDisabledBreak, why: "pre-roll \(first.id) disabled (failover)")]
            }
        }
        return []
    }

    mutating func resume(at c: Double, now: Double) -> [TimelineAction] {
        let target = clamp(layout.streamTime(forContentTime: c))
        // Breaks wholly before the resume point, in order (the post-roll never).
        var before: [Int] = []
        let k = adRulesMode ? layout.countStarting(atOrBefore: c) : layout.countStarting(atOrBefore: target)
        for i in 0..<k where layout.breaks[i].id != postrollId {
            let b = layout.breaks[i]
            if adRulesMode ? b.start < c || (b.start == 0) : b.end <= target { before.append(i) }
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
        plays = plays.filter { !isDisabled($0) && !layout.breaks[$0].watched }
        for i in before where !plays.contains(i) { exempt.insert(layout.breaks[i].id) }
        lastBookmark = c
        let why: TimelineReason = "resume at content \(Seconds(c)) = stream \(Seconds(target)) in this layout"
        guard let first = plays.first else {
            playhead = target
            return [commandSeek(to: target, reason: .resumeFromBookmark, why: why)]
        }
        plan = plays.dropFirst().map { .playBreak(id: layout.breaks[$0].id, why: "the next break before the resume point") }
        plan.append(.seek(to: target, reason: .resumeFromBookmark, why: why))
        let b = layout.breaks[first]
        return goToBreak(index: first, reason: .breakBeforeResume,
                         why: "resume at content \(Seconds(c)): break \(b.id) plays first (\(policy.resumeBreaks.rawValue))",
                         at: now)
    }

    // MARK: Ad rules

    /// Expands client-side ad rules into breaks on content time: `preroll` at 0, `midroll-<t>` at each
    /// given time and every `midrollEvery` seconds of content, `postroll` at the content's end (played on
    /// content complete only).
    static func expand(_ rules: AdRules, contentDuration: Double?) throws(TimelineError)
        -> (breaks: [AdBreak], postrollId: String?)
    {
        try checkDuration(rules.breakDuration, "ad rules break duration")
        try checkDuration(rules.midrollEvery, "ad rules mid-roll interval")
        if rules.midrollTimes.count > Limits.adRulesMidrolls { throw .tooManyBreaks(limit: Limits.adRulesMidrolls) }
        var times = Set<Double>()
        for t in rules.midrollTimes {
            try checkTime(t, "ad rules mid-roll time")
            if let d = contentDuration, t >= d { throw .breakOutOfRange(id: "midroll-\(Seconds(t))", start: t) }
            if t > 0 { times.insert(t) }
        }
        if rules.midrollEvery > 0 {
            guard let d = contentDuration else { throw .notSupported("mid-rolls every N seconds without a content duration") }
            // Counted before any is made: a tiny interval over a long program (found by the daemon fuzzer)
            // took 100,000 set insertions — milliseconds of the loop per request — before it was refused.
            if (d / rules.midrollEvery).rounded(.up) > Double(Limits.adRulesMidrolls) {
                throw .tooManyBreaks(limit: Limits.adRulesMidrolls)
            }
            var t = rules.midrollEvery
            while t < d {
                times.insert(t)
                if times.count > Limits.adRulesMidrolls { throw .tooManyBreaks(limit: Limits.adRulesMidrolls) }
                t += rules.midrollEvery
            }
        }
        var breaks: [AdBreak] = []
        if rules.preroll { breaks.append(AdBreak(id: "preroll", start: 0, duration: rules.breakDuration)) }
        for t in times.sorted() {
            breaks.append(AdBreak(id: "midroll-\(Seconds(t))", start: t, duration: rules.breakDuration))
        }
        var postrollId: String?
        if rules.postroll {
            // Kept beyond every mid-roll; its position only orders it (it plays on content complete).
            let at = contentDuration ?? ((times.max() ?? 0) + 1)
            breaks.append(AdBreak(id: "postroll", start: at, duration: rules.breakDuration))
            postrollId = "postroll"
        }
        // Content pauses while a break plays: breaks take no content time, so the layout holds them as
        // zero-length markers (the expected duration arms the break-end timer).
        return (breaks.map { AdBreak(id: $0.id, start: $0.start, duration: 0) }, postrollId)
    }
}
