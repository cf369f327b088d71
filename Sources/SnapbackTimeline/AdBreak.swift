// SPDX-License-Identifier: Apache-2.0
/// One ad break of a session's timeline.
///
/// Times are seconds. In a stitched (server-side) stream `start` is the stream time at which the break
/// begins, ads included, and `duration` the time it occupies in the stream. In ad-rules mode
/// (client-side ads, content paused while a break plays) `start` is the content time at which the break is
/// scheduled and the break occupies no stream time (see `SessionConfiguration.adRules`).
public struct AdBreak: Sendable, Equatable, Hashable {
    public var id: String
    public var start: Double
    public var duration: Double
    /// Per-ad durations, in play order, when the player knows them. Empty when unknown. Used to find the
    /// start of the ad a seek landed in (`AdPolicy.landingInUnwatchedBreak == .adStart`).
    public var adDurations: [Double]
    public var watched: Bool
    /// How much content the break replaces: the content resumes this many seconds of content time after
    /// the point where it stopped for the break (HLS interstitials' `X-RESUME-OFFSET`, Media3's
    /// `contentResumeOffsetUs`). Any offset in `Limits.contentResumeOffset`: above `duration` the break
    /// cuts more content than it lasts. nil: the session kind's default — inserted (0) on demand,
    /// replacing (`duration`) live, where the stream goes on while the ad plays.
    public var contentResumeOffset: Double?
    /// The end is not known yet (a live cue-out without its cue-in): `duration` is an estimate, the break's
    /// end until a live update changes it (`TimelineLayout.adding(_:)`); closed (false), it is final.
    public var open: Bool
    /// The break plays nothing (an ad server left it empty): never held to, never played, but kept on the
    /// stream's clock as given.
    public var unfilled: Bool
    /// The manifest forbids skipping through it while it plays unwatched (HLS `X-RESTRICT=SKIP`): seeks
    /// and trick play out of it are refused, whatever the policy.
    public var restrictSkip: Bool
    /// The manifest forbids seeking past it (HLS `X-RESTRICT=JUMP`): a forward seek over its start is
    /// held to it while it is unwatched, whatever the policy.
    public var restrictJump: Bool

    public init(
        id: String, start: Double, duration: Double, adDurations: [Double] = [], watched: Bool = false,
        contentResumeOffset: Double? = nil, open: Bool = false, unfilled: Bool = false, restrictSkip: Bool = false,
        restrictJump: Bool = false
    ) {
        self.id = id
        self.start = start
        self.duration = duration
        self.adDurations = adDurations
        self.watched = watched
        self.contentResumeOffset = contentResumeOffset
        self.open = open
        self.unfilled = unfilled
        self.restrictSkip = restrictSkip
        self.restrictJump = restrictJump
    }

    /// Whether `other` is this break on the stream's clock, as a live update names it again: the same
    /// times, offset and flags (the viewer's watched flag and the ads' durations aside).
    func sameGeometry(as other: AdBreak) -> Bool {
        start == other.start && duration == other.duration && contentResumeOffset == other.contentResumeOffset
            && open == other.open && unfilled == other.unfilled && restrictSkip == other.restrictSkip
            && restrictJump == other.restrictJump
    }

    /// The first stream time after the break.
    public var end: Double { start + duration }

    /// Whether stream time `t` lies inside the break: `start <= t < end`.
    @inlinable
    public func contains(_ t: Double) -> Bool { t >= start && t < start + duration }

    /// The stream time at which the ad containing `t` starts, or the break start when the ad durations
    /// are unknown or do not cover `t`.
    public func adStart(containing t: Double) -> Double {
        var at = start
        for d in adDurations {
            if t < at + d { return at }
            at += d
        }
        return start
    }

    /// The 0-based index of the ad containing `t`, when the ad durations are known.
    public func adIndex(containing t: Double) -> Int? {
        var at = start
        for (i, d) in adDurations.enumerated() {
            if t >= at && t < at + d { return i }
            at += d
        }
        return nil
    }
}

/// On-demand streams have a fixed timeline; live streams grow and receive new breaks as they go.
public enum SessionKind: Sendable, Equatable, CaseIterable {
    case onDemand
    case live
}
