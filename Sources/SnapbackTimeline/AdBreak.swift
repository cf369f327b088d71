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

    public init(
        id: String, start: Double, duration: Double, adDurations: [Double] = [], watched: Bool = false,
        contentResumeOffset: Double? = nil
    ) {
        self.id = id
        self.start = start
        self.duration = duration
        self.adDurations = adDurations
        self.watched = watched
        self.contentResumeOffset = contentResumeOffset
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
