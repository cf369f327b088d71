// SPDX-License-Identifier: Apache-2.0
/// Client-side ad rules (IMA ad rules, seed 004): breaks scheduled on *content* time — a pre-roll,
/// mid-rolls at given times or every N seconds of content, a post-roll. The content player pauses while a
/// break plays on a separate ad player, so breaks occupy no content time.
public struct AdRules: Sendable, Equatable {
    public var preroll: Bool
    /// Content times of mid-rolls.
    public var midrollTimes: [Double]
    /// A mid-roll every this many seconds of content (0 = none), e.g. 1800 for "every 30 minutes".
    public var midrollEvery: Double
    public var postroll: Bool
    /// Expected duration of each break, used for the "no events" fallback and the timeline view.
    public var breakDuration: Double

    public init(
        preroll: Bool = true, midrollTimes: [Double] = [], midrollEvery: Double = 0,
        postroll: Bool = true, breakDuration: Double = 30
    ) {
        self.preroll = preroll
        self.midrollTimes = midrollTimes
        self.midrollEvery = midrollEvery
        self.postroll = postroll
        self.breakDuration = breakDuration
    }
}
