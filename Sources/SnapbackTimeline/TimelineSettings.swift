// SPDX-License-Identifier: Apache-2.0
/// What a session was opened with, validated, and never changes: its kind, policy, durations and how its
/// breaks are played. A final class: a session holds it by reference, so handling an event copies one
/// pointer of configuration instead of the whole policy and the durations.
final class TimelineSettings: Sendable {
    let kind: SessionKind
    let policy: AdPolicy
    let contentDuration: Double?
    /// The bookmark the session opened from, if any (content time).
    let resumeContentTime: Double?
    /// The stream time the session opened at, if any: resumed at its content time in the layout
    /// (`TimelineSession.resumeContentTime`).
    let resumeStreamTime: Double?
    /// Client-side ad rules: breaks on content time, content paused while one plays, started with
    /// `playBreak` actions instead of seeks.
    let adRulesMode: Bool
    /// Ad rules: the expected duration of a break (the layout holds breaks as zero-length markers).
    let adRulesBreakDuration: Double
    /// The post-roll of an ad-rules session: played on content complete, never by the playhead.
    let postrollId: String?
    let isLive: Bool
    /// The most breaks the session may hold (`SessionConfiguration.maxBreaks`).
    let maxBreaks: Int
    let snapbackEnabled: Bool
    let bookmarksEnabled: Bool
    /// The policy's rule that seeks out of an unwatched break are refused, where snapback runs: asked on
    /// every seek in a break, worked out once here.
    let refusesSeeksDuringUnwatchedBreak: Bool

    /// How far apart two content times may be and still be the same position (rounding of sums).
    static let positionTolerance = 0.001
    /// How far from its target a seek may land and still be the one the session commanded: exact seeks
    /// land on it, others on a frame near it; a viewer's seek that overrode ours lands elsewhere.
    static let seekLandingTolerance = 0.5

    /// Validates the durations, the policy and the ad rules, and sets `breaks` to the session's breaks
    /// (the ad rules' when it has some). The layout validates the breaks; the session then checks the
    /// resume time (``checkResume()``), in that order.
    init(_ configuration: SessionConfiguration, breaks: inout [AdBreak]) throws(TimelineError) {
        kind = configuration.kind
        policy = configuration.policy
        if let d = configuration.contentDuration { try Self.checkDuration(d, "content duration") }
        contentDuration = configuration.contentDuration
        try Self.validate(policy)
        var postroll: String?
        if let rules = configuration.adRules {
            // A live stream has no end to play a post-roll at; its mid-rolls come as its schedule grows
            // (``TimelineSession/midrollsScheduled(_:at:)``).
            if configuration.kind == .live, rules.postroll { throw .notSupported("a post-roll on a live stream") }
            let expanded = try Self.expand(rules, contentDuration: configuration.contentDuration)
            breaks = expanded.breaks
            postroll = expanded.postrollId
        }
        postrollId = postroll
        resumeStreamTime = configuration.resumeStreamTime
        resumeContentTime = resumeStreamTime == nil ? configuration.resumeContentTime : nil
        adRulesMode = configuration.adRules != nil
        adRulesBreakDuration = configuration.adRules?.breakDuration ?? 0
        isLive = kind == .live
        maxBreaks = min(max(configuration.maxBreaks, 0), TimelineLayout.maxBreaks)
        snapbackEnabled = !isLive || policy.liveSnapback
        bookmarksEnabled = !isLive || policy.liveBookmarks
        refusesSeeksDuringUnwatchedBreak = policy.refuseSeeksDuringUnwatchedBreak && snapbackEnabled
    }

    func checkResume() throws(TimelineError) {
        if let resume = resumeContentTime { try Self.checkTime(resume, "resume content time") }
        if let resume = resumeStreamTime { try Self.checkTime(resume, "resume stream time") }
    }

    private static func validate(_ p: AdPolicy) throws(TimelineError) {
        let times: [(String, Double)] = [
            ("snapback landing offset", p.snapbackLandingOffset), ("cooldown", p.cooldown),
            ("coverage tolerance", p.coverageTolerance), ("bookmark interval", p.bookmarkInterval),
            ("finished margin", p.finishedMargin)
        ]
        for (field, value) in times { try checkDuration(value, field) }
        if p.maxSnapbacksPerBreak < 1 { throw .notSupported("max snapbacks per break below 1") }
        if p.maxSnapbacksPerBreak > Limits.snapbacksPerBreak.upperBound {
            throw .notSupported("max snapbacks per break above \(Limits.snapbacksPerBreak.upperBound)")
        }
    }

    // MARK: Range checks

    // The field's name is built only when its value is refused: a layout checks every time of every break.
    static func checkTime(_ t: Double, _ field: @autoclosure () -> String) throws(TimelineError) {
        try check(t, Limits.position, field())
    }

    static func checkDuration(_ d: Double, _ field: @autoclosure () -> String) throws(TimelineError) {
        try check(d, Limits.duration, field())
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

    // MARK: Ad rules

    /// Expands client-side ad rules into breaks on content time: `preroll` at 0, `midroll-<t>` at each
    /// given time and every `midrollEvery` seconds of content, `postroll` at the content's end (played on
    /// content complete only).
    static func expand(_ rules: AdRules, contentDuration: Double?) throws(TimelineError)
        -> (breaks: [AdBreak], postrollId: String?)
    {
        try checkDuration(rules.breakDuration, "ad rules break duration")
        try checkDuration(rules.midrollEvery, "ad rules mid-roll interval")
        var times = try midrollTimes(rules.midrollTimes, contentDuration: contentDuration)
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
        if rules.preroll { breaks.append(AdBreak(id: "preroll", start: 0, duration: 0)) }
        // Content pauses while a break plays: breaks take no content time, so the layout holds them as
        // zero-length markers (the expected duration arms the break-end timer).
        for t in times.sorted() { breaks.append(midroll(at: t)) }
        var postrollId: String?
        if rules.postroll {
            // Kept beyond every mid-roll; its position only orders it (it plays on content complete).
            let at = contentDuration ?? ((times.max() ?? 0) + 1)
            breaks.append(AdBreak(id: "postroll", start: at, duration: 0))
            postrollId = "postroll"
        }
        return (breaks, postrollId)
    }

    /// The mid-roll times given, checked, without 0 (the pre-roll's place) and repeats.
    private static func midrollTimes(_ given: [Double], contentDuration: Double?) throws(TimelineError) -> Set<Double> {
        if given.count > Limits.adRulesMidrolls { throw .tooManyBreaks(limit: Limits.adRulesMidrolls) }
        var times = Set<Double>()
        for t in given {
            try checkTime(t, "ad rules mid-roll time")
            if let d = contentDuration, t >= d { throw .breakOutOfRange(id: midroll(at: t).id, start: t) }
            if t > 0 { times.insert(t) }
        }
        return times
    }

    /// The markers of mid-rolls at `given` content times, in order: a schedule that changed after the open.
    static func midrolls(at given: [Double], contentDuration: Double?) throws(TimelineError) -> [AdBreak] {
        try midrollTimes(given, contentDuration: contentDuration).sorted().map(midroll(at:))
    }

    /// Content pauses while a break plays: breaks take no content time, so the layout holds them as
    /// zero-length markers (the expected duration arms the break-end timer).
    private static func midroll(at t: Double) -> AdBreak { AdBreak(id: "midroll-\(Seconds(t))", start: t, duration: 0) }
}
