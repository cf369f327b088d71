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
    /// A break's content resume offset: from 0 (inserted: the content resumes where it stopped) to the
    /// break's duration (it replaces as much content as it lasts). HLS interstitials default to the
    /// duration and Media3 to 0; neither gives a meaning to content going backwards, and an offset past the
    /// duration would skip content no ad covers.
    public static func contentResumeOffset(breakDuration d: Double) -> Limit {
        // A bad duration (NaN would make the range trap) leaves only 0; the duration is refused on its own.
        Limit(0...(d.isFinite && d > 0 ? d : 0), "a content resume offset from 0 to the break's duration, \(Seconds(d)) seconds")
    }
    /// An ad's index within its break.
    public static let adIndex: ClosedRange<Int> = 0...99_999
}
