// SPDX-License-Identifier: Apache-2.0
/// Every decision the timeline takes around ad breaks, as one value with documented defaults.
///
/// The defaults are snapback's own choices (see `docs/policy.md` for the reasoning and the anchors). The
/// named presets in `AdPolicy+Presets.swift` reproduce the reference players. A session may override any
/// field of its preset.
public struct AdPolicy: Sendable, Equatable {
    /// Which break plays when a seek skips several unwatched ones.
    public enum SkippedBreakChoice: String, Sendable, Equatable, CaseIterable {
        /// The last unwatched break skipped, looking back past watched ones, so that watching a later break
        /// does not let a viewer bypass an earlier unwatched one. (snapback default)
        case lastUnwatched = "last-unwatched"
        /// Only the break nearest before the target; if it is watched, no break plays (IMA, TVSDK, Media3).
        case nearestOnly = "nearest-only"
        /// The first unwatched break skipped (hls.js interstitials).
        case first = "first"
    }

    /// Which breaks a seek can be held to.
    public enum SeekGate: String, Sendable, Equatable, CaseIterable {
        /// Only breaks the seek passed over (between its origin and its target). (default)
        case crossedBreaks = "crossed"
        /// Every break before the target, whether or not the seek passed it: each break gates the content
        /// after it (Media3).
        case allBreaksBeforeTarget = "all-before-target"
    }

    /// Where the viewer goes once a snapback break has played.
    public enum ReturnToTarget: String, Sendable, Equatable, CaseIterable {
        /// Back to the seek target if it lies beyond the break's end. (default; IMA HTML5, Shaka)
        case ifBeyondBreak = "if-beyond"
        /// Always back to the seek target (Cast).
        case always = "always"
        /// Never: playback continues after the break (hls.js); on an ad-rules session, at the break's
        /// position, its resumption point (hls.js #7029).
        case never = "never"
    }

    /// Where a seek that lands inside an unwatched break goes.
    public enum LandingInBreak: String, Sendable, Equatable, CaseIterable {
        /// To the start of the break. (default)
        case breakStart = "break-start"
        /// To the start of the ad the seek landed in (TVSDK PlayFromAdBegin); the break start when the ad
        /// durations are unknown.
        case adStart = "ad-start"
    }

    /// When a break counts as watched.
    public enum WatchedWhen: String, Sendable, Equatable, CaseIterable {
        /// As soon as it begins to play (TVSDK, IMA DAI, Cast, Shaka).
        case onBegin = "on-begin"
        /// When it has played to its end, by ad event or by the playhead covering it. (default)
        case onEnd = "on-end"
        /// Never: every break plays every time, those opened as watched too (RDK Firebolt's
        /// `skipRestriction: adsAll`).
        case never = "never"
    }

    /// What normal playback does on reaching a break that is already watched.
    public enum WatchedBreakOnPlayback: String, Sendable, Equatable, CaseIterable {
        /// Plays it again (TVSDK, hls.js). (default)
        case replay = "replay"
        /// Skips to its end (Shaka MediaTailor, Bitmovin, Media3 CSAI).
        case skip = "skip"
    }

    /// Which breaks before a resume point play when a session opens from a bookmark. In every case the
    /// breaks the resume skipped are exempt from later snapbacks in that session (videojs-ima #1220).
    public enum ResumeBreaks: String, Sendable, Equatable, CaseIterable {
        /// None: start at the bookmark (IMA HTML5 and Android samples).
        case none = "none"
        /// The pre-roll, then the bookmark (IMA iOS Swift, TVSDK sample).
        case preroll = "preroll"
        /// The last break before the bookmark, then the bookmark (Media3 playAdBeforeStartPosition).
        /// (default)
        case lastBefore = "last-before"
        /// The pre-roll and the last break before the bookmark.
        case prerollAndLastBefore = "preroll-and-last"
    }

    /// Which breaks trick play reports as skipped (`breakSkipped`, trick play) when it ends.
    public enum TrickPlaySkippedBreaks: String, Sendable, Equatable, CaseIterable {
        /// Every break it went over but the one that then plays, in stream order: a break that plays was
        /// not skipped. (default)
        case notPlayed = "not-played"
        /// Every break it went over, the one that then plays too, in the order trick play met them
        /// (TVSDK dispatches AD_BREAK_SKIPPED before each break fast-forward or rewind passes, and on
        /// leaving trick play plays the last of them).
        case everyPassed = "every-passed"
    }

    public var skippedBreakChoice: SkippedBreakChoice = .lastUnwatched
    public var seekGate: SeekGate = .crossedBreaks
    /// Whether backward seeks are held to breaks too (Media3, IMA HTML5/Android samples). Default false.
    public var enforceBackwardSeeks: Bool = false
    public var returnToTarget: ReturnToTarget = .ifBeyondBreak
    public var landingInUnwatchedBreak: LandingInBreak = .breakStart
    /// Whether a seek landing inside a watched break goes to its end. Default true.
    public var skipWatchedBreakOnLanding: Bool = true
    public var watchedWhen: WatchedWhen = .onEnd
    /// Whether seeks made while an unwatched break plays are refused (the player is sent back to where it
    /// was). Default true.
    public var refuseSeeksDuringUnwatchedBreak: Bool = true
    public var watchedBreakOnPlayback: WatchedBreakOnPlayback = .replay
    /// Seconds added to a snapback seek so the player lands on a keyframe inside the break (IMA samples use
    /// 1 or 0.1). Default 0.
    public var snapbackLandingOffset: Double = 0
    /// Seconds after a break completed (measured on the monotonic clock) during which breaks are skipped (TVSDK recipe).
    /// 0 = off (default).
    public var cooldown: Double = 0
    /// Whether trick play (rate < 0 or > 1) skips ads while it lasts and is then handled as one seek from
    /// where it started to where it ended (TVSDK). Default true. When false, trick play is not held to
    /// breaks at all.
    public var trickPlayAsSeek: Bool = true
    public var resumeBreaks: ResumeBreaks = .lastBefore
    /// Failover sessions: the pre-roll is skipped. Default false.
    public var prerollDisabled: Bool = false
    /// Failover sessions: mid-rolls are skipped (and never snapped back to). Default false.
    public var midrollsDisabled: Bool = false
    /// Live sessions: whether snapback applies. Default false (IMA samples skip it for live).
    public var liveSnapback: Bool = false
    /// Live sessions: whether bookmarks are taken. Default false.
    public var liveBookmarks: Bool = false
    /// After this many snapbacks to the same break without it becoming watched, the break is counted as
    /// watched: a guard against snapback loops when ad events never arrive. Default 3.
    public var maxSnapbacksPerBreak: Int = 3
    /// Seconds of tolerance when deciding that the playhead covered a break from its start to its end
    /// (players report the playhead every 0.25–1 s, and a snapback may land a little late). Default 2.
    public var coverageTolerance: Double = 2
    /// Seconds between periodic bookmarks while content plays. Default 30 (set-top boxes write to flash).
    /// 0 = no periodic bookmarks.
    public var bookmarkInterval: Double = 30
    /// Within this many seconds of the content's end, the bookmark is cleared as finished. Default 30.
    public var finishedMargin: Double = 30
    /// Which breaks trick play reports as skipped. Default: every one but the one that then plays.
    /// Declared last, as its `PolicyOverrides` field was added last (field 22).
    public var trickPlaySkippedBreaks: TrickPlaySkippedBreaks = .notPlayed

    public init() {}
}
