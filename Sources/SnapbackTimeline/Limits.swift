// SPDX-License-Identifier: Apache-2.0
/// The range of every number a session takes from a player, in one place.
///
/// Finite is not enough: a finite but huge duration (1e300) once passed validation and overflowed a
/// conversion to integer milliseconds when the shell armed a timer, taking the daemon down for every
/// player. The wire layer refuses a request with a number outside its range before it reaches a session,
/// naming the field (`proto/PROTOCOL.md`, "Ranges"); the timeline checks the same ranges again, so no
/// caller can hand it a number whose arithmetic later overflows. Within these ranges every sum the
/// timeline forms (a position plus all its breaks) stays far below 2^53, where doubles still hold whole
/// milliseconds exactly.
public struct Limit: Sendable, Equatable {
    public let range: ClosedRange<Double>
    /// What the range allows, in words, for error messages: "a time from 0 to 1e10 seconds".
    public let text: String

    public init(_ range: ClosedRange<Double>, _ text: String) {
        self.range = range
        self.text = text
    }

    /// Whether `value` is in range (NaN never is).
    @inline(__always)
    public func contains(_ value: Double) -> Bool { range.contains(value) }
}

public enum Limits {
    /// Stream and content times: 0 to 1e10 s (about 317 years), so a live stream that counts its time
    /// from the Unix epoch fits.
    public static let position = Limit(0...1e10, "a time from 0 to 1e10 seconds")
    /// Durations (breaks, ads, content, ad rules) and the policy's spans (cooldown, tolerances, margins,
    /// landing offset, intervals): 0 to 1e8 s (about 3 years; the configuration file takes at most one).
    public static let duration = Limit(0...1e8, "a duration from 0 to 1e8 seconds")
    /// Playback rates: -1000 to 1000. A negative rate is playback backwards (rewind); the projected
    /// playhead runs backwards, and trick play is what a player reports for it to be held to breaks.
    public static let rate = Limit(-1000...1000, "a rate from -1000 to 1000")
    /// Snapbacks to one break before it counts as watched (the top of the range means "no loop guard",
    /// as the benchmark's session uses it).
    public static let snapbacksPerBreak: ClosedRange<Int> = 1...1_000_000_000
    /// Mid-rolls an ad-rules session may schedule (one every ten minutes for almost a week; ad rules
    /// serve on-demand programs): a request of a few bytes must not build thousands of breaks, which
    /// costs the loop milliseconds and the daemon megabytes per session.
    public static let adRulesMidrolls = 1000
    /// A break's content resume offset: how far the content resumes after the point where it stopped, from
    /// 0 (inserted) to a duration's top, whatever the break lasts. Above the break's duration the break cuts
    /// more content than it lasts — ads shorter than the live content they cover, a blackout, a replaced
    /// segment: Media3's `contentResumeOffsetUs` takes any offset and HLS lets `X-RESUME-OFFSET` exceed the
    /// interstitial's `DURATION`. Below 0 the content would go back, which neither gives a meaning to.
    public static let contentResumeOffset = Limit(0...1e8, "a content resume offset from 0 to 1e8 seconds")
    /// An ad's index within its break.
    public static let adIndex: ClosedRange<Int> = 0...99_999
}
