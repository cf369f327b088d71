// SPDX-License-Identifier: Apache-2.0
/// A session's breaks sorted by start, with prefix sums for O(log n) conversions between stream time
/// (ads included) and content time (ads excluded), and the validation of a set of breaks. Geometry only,
/// and immutable: what the viewer did to the breaks (watched, snapbacks) is the session's progress, and
/// a live stream's new breaks make a new layout (`adding(_:)`).
///
/// Conversions (IMA `contentTimeForStreamTime` / `streamTimeForContentTime`, TVSDK local time):
/// - stream → content: a stream time inside a break maps to the break's content position (the content time
///   at which the content stopped for it), so a bookmark is never a position inside an ad.
/// - content → stream: a content time exactly at a break's content position resolves to the stream time
///   *after* the break (as Media3 does), so resuming at a break position does not replay the break.
/// - a break that replaces content (`AdBreak.contentResumeOffset` > 0) resumes the content that much later
///   than where it stopped, by less than it lasts, as much, or more (it cuts more content than it lasts:
///   Media3's `contentResumeOffsetUs` and HLS's `X-RESUME-OFFSET` take any offset). The content times it
///   cut have no stream time of their own and resolve to the break's end, where the content comes back —
///   never a position inside the break (Media3 puts them inside the ad group, which then plays). Back-to-back
///   breaks share their first one's content position and their offsets add up, in play order (HLS
///   interstitials at one date).
/// - ad-rules sessions (whose player time is content time): the identity.
public struct TimelineLayout: Sendable, Equatable {
    /// The breaks, sorted by start.
    public let breaks: [AdBreak]
    /// `spans[i]` is break i's place on both clocks, compact for the searches (an `AdBreak` is several
    /// cache lines apart from the next).
    private let spans: [Span]
    /// The total duration of the breaks.
    public let totalAdTime: Double
    private let indexById: [String: Int]
    /// Ad-rules sessions (whose player time is content time): conversions are the identity.
    public let isIdentity: Bool
    /// Whether a break is JUMP-restricted (`AdBreak.restrictJump`): only then does a seek the policy lets
    /// pass look for one.
    public let hasJumpRestrictions: Bool
    /// Whether a break is SKIP-restricted (`AdBreak.restrictSkip`): only then can a seek the policy lets out
    /// of a break be refused.
    public let hasSkipRestrictions: Bool
    /// The content's duration, when the stream has an end (nil: unknown, or a live stream).
    public let contentDuration: Double?
    /// The stream's end when it has one: `streamDuration(forContentDuration:)` of the content's duration.
    /// Every seek a session commands clamps to it, so it is worked out once, with the layout.
    public let streamEnd: Double?

    /// A break on the stream's clock and on the content's.
    private struct Span: Sendable, Equatable {
        let start: Double
        let end: Double
        /// The content time at which the content stopped for the break.
        let contentPosition: Double
        /// The content time at which the content resumes after it.
        let resumePosition: Double
        /// The stream time of this break and those before it that is not content: each break's duration
        /// less the content it replaced (its resume offset). Negative once breaks cut more content than
        /// they last.
        let shiftAfter: Double
    }

    /// The largest number of breaks a session may hold.
    public static let maxBreaks = 100_000

    /// Builds a layout from breaks in any order, rejecting bad times, empty or duplicate ids, overlaps and
    /// cuts that take the content past the last content time. `contentDuration`: the content's, when the
    /// stream ends (it gives `streamEnd`).
    public init(breaks: [AdBreak], identity: Bool = false, contentDuration: Double? = nil) throws(TimelineError) {
        try Self.validate(breaks)
        try self.init(sorted: Self.sortedByStart(breaks), identity: identity, contentDuration: contentDuration)
        try Self.checkOverlaps(self.breaks)
        try checkResumePositions()
    }

    /// The spans of breaks already validated and sorted. A duplicate id is found as the id index is built
    /// (hashing each id once, not once more into a set of its own); it is refused before any overlap,
    /// since two breaks of one id usually overlap too and the id is what the player got wrong.
    private init(sorted breaks: [AdBreak], identity: Bool, contentDuration: Double?) throws(TimelineError) {
        self.breaks = breaks
        isIdentity = identity
        self.contentDuration = contentDuration
        var spans: [Span] = []
        spans.reserveCapacity(breaks.count)
        var indexById: [String: Int] = [:]
        indexById.reserveCapacity(breaks.count)
        var shift = 0.0, adTime = 0.0
        // Each break's fields read in place: a copy of the break (`for b in breaks`) would retain and
        // release its id and ad durations, per break of what may be the largest request.
        for i in breaks.indices {
            let start = breaks[i].start, end = breaks[i].end, duration = breaks[i].duration
            let offset = breaks[i].contentResumeOffset ?? 0
            var position = start - shift
            var resume: Double
            if let previous = spans.last, start <= previous.end {
                // Back-to-back: the viewer left the content once, at the first break's position, so a content
                // time there resolves after all of them (not into the second one by an ulp), and the content
                // comes back after every offset of the run.
                position = previous.contentPosition
                resume = previous.resumePosition + offset
            } else {
                // Rounding must not break what the binary searches rely on: positions never decrease, nor go
                // below where the content resumed after the previous break.
                if let previous = spans.last { position = max(position, previous.resumePosition) }
                resume = position + offset
            }
            shift += duration - offset
            adTime += duration
            spans.append(
                Span(
                    start: start, end: end, contentPosition: position, resumePosition: max(resume, position),
                    shiftAfter: shift))
            if indexById.updateValue(i, forKey: breaks[i].id) != nil { throw .duplicateBreakId(breaks[i].id) }
        }
        self.spans = spans
        totalAdTime = adTime
        hasJumpRestrictions = breaks.contains { $0.restrictJump && !$0.unfilled }
        hasSkipRestrictions = breaks.contains { $0.restrictSkip }
        self.indexById = indexById
        streamEnd = contentDuration.map { Self.streamDuration(forContentDuration: $0, spans: spans, identity: identity) }
    }

    public var count: Int { breaks.count }

    public func index(ofBreak id: String) -> Int? { indexById[id] }
    public func breakWith(id: String) -> AdBreak? { indexById[id].map { breaks[$0] } }

    /// This layout with `new` breaks added (live streams). A closed break whose id is already known must be
    /// identical (repeated updates are idempotent); a known open break (`AdBreak.open`) may come with another
    /// duration, content resume offset, flags, and open still or closed — at its start, which identifies it.
    /// A changed closed break, a moved open one, an overlapping one, or a layout of more than `maxBreaks`
    /// breaks is rejected. Returns nil when nothing is new and nothing changed.
    public func adding(_ new: [AdBreak], maxBreaks: Int = maxBreaks) throws(TimelineError) -> TimelineLayout? {
        try Self.validate(new)
        var fresh: [AdBreak] = []
        var merged: [AdBreak]?
        // A known break named twice in `new` is a duplicate as well; one named twice among the fresh ones
        // is found when the merged layout indexes them.
        var named = [Bool](repeating: false, count: breaks.count)
        for b in new {
            if let i = indexById[b.id] {
                let old = breaks[i]
                if named[i] { throw .duplicateBreakId(b.id) }
                named[i] = true
                if old.sameGeometry(as: b) { continue }
                guard old.open, old.start == b.start else { throw .closedBreakChanged(b.id) }
                if merged == nil { merged = breaks }
                merged?[i] = b
            } else {
                fresh.append(b)
            }
        }
        if fresh.isEmpty && merged == nil { return nil }
        let limit = min(maxBreaks, Self.maxBreaks)
        if breaks.count + fresh.count > limit { throw .sessionFull(holding: breaks.count + fresh.count, limit: limit) }
        let layout = try TimelineLayout(
            sorted: Self.sortedByStart((merged ?? breaks) + fresh), identity: isIdentity, contentDuration: contentDuration)
        try Self.checkOverlaps(layout.breaks)
        try layout.checkResumePositions()
        return layout
    }

    /// Every break resumes the content at a content time (`Limits.position`): offsets of up to 1e8 s each,
    /// on up to 100,000 breaks, could otherwise carry it to 1e13, a content time no request may name — a
    /// bookmark saved there could never be resumed. Resume positions never decrease: the last is the largest.
    private func checkResumePositions() throws(TimelineError) {
        guard let last = spans.last?.resumePosition, !Limits.position.contains(last) else { return }
        let b = breaks[breaks.count - 1]
        throw .outOfRange(field: "break \(b.id) content resume point", value: last, limit: Limits.position)
    }

    /// `breaks` sorted by start: as they are when they already are (players send them in order), without
    /// the copy `sorted` makes of them.
    private static func sortedByStart(_ breaks: [AdBreak]) -> [AdBreak] {
        for i in breaks.indices.dropFirst() where breaks[i].start < breaks[i - 1].start {
            return breaks.sorted { $0.start < $1.start }
        }
        return breaks
    }

    /// Each break's own fields: a non-empty id and times in range (duplicate ids are found by the index).
    private static func validate(_ breaks: [AdBreak]) throws(TimelineError) {
        if breaks.count > maxBreaks { throw .tooManyBreaks(limit: maxBreaks) }
        for b in breaks {
            if b.id.isEmpty { throw .emptyBreakId }
            try TimelineSettings.checkTime(b.start, "break \(b.id) start")
            try TimelineSettings.checkDuration(b.duration, "break \(b.id) duration")
            for d in b.adDurations { try TimelineSettings.checkDuration(d, "break \(b.id) ad duration") }
            // Any offset, the break's duration or not: the content never goes back (below 0); above the
            // duration the break cuts content no ad covers (a blackout, ads shorter than the live content).
            if let o = b.contentResumeOffset {
                try TimelineSettings.check(o, Limits.contentResumeOffset, "break \(b.id) content resume offset")
            }
        }
    }

    private static func checkOverlaps(_ sorted: [AdBreak]) throws(TimelineError) {
        guard sorted.count > 1 else { return }
        for i in 1..<sorted.count {
            let a = sorted[i - 1], b = sorted[i]
            // Back-to-back breaks (a.end == b.start) are fine; two breaks at one start are not, unless both
            // are empty (ad rules may schedule zero-length markers).
            if b.start < a.end || (b.start == a.start && (a.duration > 0 || b.duration > 0)) {
                throw .overlappingBreaks(a.id, b.id)
            }
        }
    }

    // MARK: Searches

    /// The number of breaks whose start is `<= t`.
    func countStarting(atOrBefore t: Double) -> Int { countSpans { $0.start <= t } }

    /// The number of breaks whose content position is `<= c`.
    func countPositioned(atOrBefore c: Double) -> Int { countSpans { $0.contentPosition <= c } }

    /// The length of the prefix of `spans` that satisfies `isBefore` (true for a prefix, false after it).
    @inline(__always)
    private func countSpans(_ isBefore: (Span) -> Bool) -> Int {
        var low = 0, high = spans.count
        while low < high {
            let mid = (low &+ high) >> 1
            if isBefore(spans[mid]) { low = mid &+ 1 } else { high = mid }
        }
        return low
    }

    /// The index of the break containing stream time `t` (`start <= t < end`), if any.
    public func indexOfBreak(containing t: Double) -> Int? {
        let k = countStarting(atOrBefore: t)
        guard k > 0, breaks[k - 1].contains(t) else { return nil }
        return k - 1
    }

    /// The index of the break containing stream time `t` that plays: nil in an unfilled one, which plays
    /// nothing and is content to the viewer.
    public func indexOfPlayableBreak(containing t: Double) -> Int? {
        guard let i = indexOfBreak(containing: t), !breaks[i].unfilled else { return nil }
        return i
    }

    /// The break containing stream time `t`, if any.
    public func breakContaining(_ t: Double) -> AdBreak? { indexOfBreak(containing: t).map { breaks[$0] } }

    /// The last break starting at or before `t` (IMA `previousCuepointForStreamTime`, which also finds the
    /// break `t` is inside).
    public func previousBreak(atOrBefore t: Double) -> AdBreak? {
        let k = countStarting(atOrBefore: t)
        return k > 0 ? breaks[k - 1] : nil
    }

    /// The first break starting strictly after `t`.
    public func nextBreak(after t: Double) -> AdBreak? {
        let k = countStarting(atOrBefore: t)
        return k < breaks.count ? breaks[k] : nil
    }

    // MARK: Conversions

    /// Content time for a stream time; inside a break, the break's content position. Ad rules: identity.
    public func contentTime(forStreamTime s: Double) -> Double {
        if isIdentity { return s }
        let k = countStarting(atOrBefore: s)
        guard k > 0 else { return s }
        let previous = spans[k - 1]
        if s < previous.end { return previous.contentPosition }
        // Rounding of `s − shift` must keep the content time between the breaks around it: never below where
        // the previous one resumed the content (it would go backwards at that break's end), never at the next
        // one's position (a stream time just before a break would convert back to the stream time after it).
        let c = max(s - previous.shiftAfter, previous.resumePosition)
        if k < spans.count, c >= spans[k].contentPosition { return spans[k].contentPosition.nextDown }
        // Past the last break, breaks that cut more than they last put the content ahead of the stream: a
        // stream time near the top of its range stays a content time a request may name (a bookmark).
        return min(c, Limits.position.range.upperBound)
    }

    /// Stream time for a content time. A content time exactly at a break's content position resolves to
    /// the stream time after that break (Media3's rule), so a resume there does not replay it; so does a
    /// content time a break replaced (up to where the content resumes). Ad rules: identity.
    public func streamTime(forContentTime c: Double) -> Double {
        if isIdentity { return c }
        let k = countPositioned(atOrBefore: c)
        guard k > 0 else { return c }
        return max(c + spans[k - 1].shiftAfter, spans[k - 1].end)
    }

    /// The content position of break `index` (where the content stopped for it).
    public func contentPosition(ofBreakAt index: Int) -> Double { spans[index].contentPosition }

    /// The content time at which the content resumes after break `index`.
    public func contentResumePosition(ofBreakAt index: Int) -> Double { spans[index].resumePosition }

    /// The stream duration for a content duration: the content plus the stream time every break adds, and
    /// never before the last break's end (a post-roll replacing content ends the stream, not the content).
    /// O(1), without a search.
    public func streamDuration(forContentDuration d: Double) -> Double {
        Self.streamDuration(forContentDuration: d, spans: spans, identity: isIdentity)
    }

    private static func streamDuration(forContentDuration d: Double, spans: [Span], identity: Bool) -> Double {
        if identity { return d }
        guard let last = spans.last else { return d }
        return max(d + last.shiftAfter, last.end)
    }
}
