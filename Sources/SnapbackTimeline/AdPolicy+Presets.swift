// SPDX-License-Identifier: Apache-2.0
extension AdPolicy {
    /// The named presets, by the name used on the wire, in configuration files and on the command line.
    public enum Preset: String, Sendable, CaseIterable {
        case snapback, ima, tvsdk, media3, hlsjs
    }

    /// The policy of a named preset.
    public init(preset: Preset) {
        switch preset {
        case .snapback: self = .snapback
        case .ima: self = .ima
        case .tvsdk: self = .tvsdk
        case .media3: self = .media3
        case .hlsjs: self = .hlsjs
        }
    }

    /// snapback's own default: the last unwatched break skipped plays (looking back past watched ones),
    /// then the viewer returns to the target; forward seeks only; seeks refused inside unwatched breaks;
    /// a break is watched once it played to its end (event or playhead); resume plays the last break before
    /// the bookmark and exempts the ones it skipped; loop guard after 3 snapbacks.
    public static var snapback: AdPolicy { AdPolicy() }

    /// Google IMA DAI sample apps (seeds 000–002): `previousCuepointForStreamTime(seekEnd)` plays if it is
    /// unplayed and starts after the seek origin — so only the nearest break before the target, forward
    /// seeks only; landing at `cue.start` (HTML5, Android, tvOS); back to the target after the break only
    /// if it is still ahead (HTML5, iOS Swift); seek controls disabled during ads; resume from a bookmark
    /// with `streamTimeForContentTime` and no break before it (HTML5/Android). A break counts as watched
    /// as soon as it starts: IMA DAI marks a cue point `played` when its break begins (Shaka's IMA DAI
    /// integration: "the cue point gets marked as 'played' as soon as the playhead hits it").
    public static var ima: AdPolicy {
        var p = AdPolicy()
        p.skippedBreakChoice = .nearestOnly
        p.watchedWhen = .onBegin
        p.returnToTarget = .ifBeyondBreak
        p.resumeBreaks = .none
        return p
    }

    /// Adobe TVSDK default ad policy (seed 003 table): the last break skipped plays, and nothing if it is
    /// watched; backward seeks go to the target; a seek into an unwatched break plays from the start of
    /// the ad it landed in; into a watched break, just after it; a break is watched on begin; trick play
    /// skips ads then plays the last break skipped and goes to the trick-play position; resume plays the
    /// pre-roll (sample). Seeks during a break are not refused: "TVSDK does not provide a way to disable
    /// seeking during ads" (the application may), which is what makes on-begin vs on-end observable.
    /// AD_BREAK_SKIPPED is dispatched for every break trick play passed, the one that then plays too.
    public static var tvsdk: AdPolicy {
        var p = AdPolicy()
        p.refuseSeeksDuringUnwatchedBreak = false
        p.skippedBreakChoice = .nearestOnly
        p.landingInUnwatchedBreak = .adStart
        p.watchedWhen = .onBegin
        p.returnToTarget = .always
        p.trickPlayAsSeek = true
        p.trickPlaySkippedBreaks = .everyPassed
        p.resumeBreaks = .preroll
        return p
    }

    /// AndroidX Media3 / ExoPlayer: each ad group gates the content after it in either direction — any
    /// seek plays the nearest group at or before the target if it is unplayed, then the content at the
    /// target; a played nearest group means no ad; normal playback skips played groups;
    /// `playAdBeforeStartPosition` plays the group before the start position.
    public static var media3: AdPolicy {
        var p = AdPolicy()
        p.skippedBreakChoice = .nearestOnly
        p.seekGate = .allBreaksBeforeTarget
        p.enforceBackwardSeeks = true
        p.returnToTarget = .always
        p.watchedBreakOnPlayback = .skip
        p.resumeBreaks = .lastBefore
        return p
    }

    /// Apple HLS interstitials as hls.js enforces them: the *first* restricted interstitial a forward seek
    /// crosses plays, never on backward seeks, seeking inside it is refused (`X-RESTRICT=SKIP`), and
    /// afterwards playback resumes at the interstitial's resume point, not the user's target
    /// (hls.js #7029): on an ad-rules (primary timeline) session, a seek to the interstitial's position
    /// once it played (`returnToTarget == .never`).
    public static var hlsjs: AdPolicy {
        var p = AdPolicy()
        p.skippedBreakChoice = .first
        p.returnToTarget = .never
        p.resumeBreaks = .none
        return p
    }
}
