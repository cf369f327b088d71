// SPDX-License-Identifier: Apache-2.0
/// Why the timeline took a decision, as data: which rule, with the times and break it applied to. The
/// timeline never words a reason; the edges do when they show one (`description`, e.g. "seek 300→900
/// skipped unwatched break b1 at 600", in the daemon's log, a push's reason, the CLI), so a decision costs
/// no string.
public enum TimelineReason: Sendable, Equatable {
    // MARK: Seeks the session commands

    /// A seek (or a playhead jump) skipped an unwatched break: back to it.
    case snapback(jump: Bool, from: Double, to: Double, breakId: String, start: Double)
    /// The snapback's break played: on to where the viewer wanted to go.
    case returnToTarget(breakId: String, target: Double)
    /// The interstitial played: the primary content resumes at its resumption point (hls.js).
    case resumptionPoint(breakId: String, at: Double)
    /// Opened from a bookmark: to its position in this stream's layout.
    case resume(contentTime: Double, streamTime: Double)
    /// Opened from a bookmark: a break before it plays first (the resume policy).
    case breakBeforeResume(contentTime: Double, breakId: String, policy: AdPolicy.ResumeBreaks)
    /// Opened from a bookmark: the next of the breaks that play before it.
    case nextBreakBeforeResume
    /// A break reached by playback is not played, for `cause`.
    case breakSkipped(SkipCause, breakId: String, start: Double, end: Double)
    /// The pre-roll is disabled (failover): the session starts after it.
    case prerollDisabled(breakId: String)
    /// A seek while an unwatched break plays: back to where the viewer was in it.
    case seekRefused(from: Double, to: Double, breakId: String)
    /// Trick play while an unwatched break plays: back into it.
    case trickPlayRefused(breakId: String)
    /// A move landed in a break during the cooldown: to its end.
    case landedDuringCooldown(Move, breakId: String, until: Double)
    /// A move landed in the unwatched break it is held to: to its start, or to the start of the ad it
    /// landed in (`adStart`).
    case heldToBreakStart(Move, from: Double, to: Double, breakId: String, start: Double, adStart: Bool)
    /// A move landed in an unwatched break (none skipped before it): to `start`.
    case landedInUnwatchedBreak(Move, from: Double, to: Double, breakId: String, start: Double)
    /// A move landed in a watched break the policy skips: to its end.
    case landedInWatchedBreak(Move, breakId: String, end: Double)
    /// A move landed in a disabled break: to its end.
    case landedInDisabledBreak(Move, breakId: String, end: Double)

    // MARK: Breaks

    /// An ad-rules break starts playing.
    case breakPlays(Entry, breakId: String)
    /// A break counts as watched as soon as it begins (`watchedWhen == .onBegin`).
    case watchedOnBegin(breakId: String)
    /// A break counts as watched because it played to its end.
    case watchedOnEnd(breakId: String, Completion)
    /// A break played to its end.
    case breakCompleted(Completion)
    /// The loop guard let the viewer go: `max` snapbacks to the break already.
    case loopGuard(max: Int, breakId: String)
    /// The ad-rules post-roll played: every ad has.
    case postrollCompleted(breakId: String)
    /// Content complete in an ad-rules session without a post-roll to play.
    case noPostroll
    /// Break `breakId` is not played here: the words of a `breakSkipped` action.
    case notPlayed(BreakSkipReason, breakId: String)
    /// An ad event that confirms what the session already concluded, for break `breakId`.
    case confirms(AdEventName, breakId: String)

    // MARK: Bookmarks and timers

    /// A bookmark is saved at content time `contentTime`.
    case bookmark(BookmarkCause, contentTime: Double)
    /// The bookmark is cleared: the viewer finished.
    case finished(FinishCause)
    /// The periodic bookmark's timer.
    case periodicBookmark
    /// The break-end timer, at the break's expected end.
    case expectedBreakEnd
    /// A timer is disarmed.
    case timerCancelled(TimerCause)

    /// The ad events, as the player names them.
    public enum AdEventName: String, Sendable, Equatable {
        case adBreakStarted = "ad-break-started", adBreakEnded = "ad-break-ended", adStarted = "ad-started"
        case adEnded = "ad-ended"
    }

    /// How the viewer moved.
    public enum Move: String, Sendable, Equatable {
        /// A seek the player reported.
        case seek
        /// A playhead jump the player did not report as a seek.
        case jump
        /// Trick play, taken as one seek from its start to its end.
        case trickPlay = "trick play"
    }

    /// Why a break is skipped.
    public enum SkipCause: Sendable, Equatable {
        case prerollDisabled, midrollsDisabled, alreadyWatched
        case cooldown(until: Double)
    }

    /// How the viewer came to be at a break.
    public enum Entry: Sendable, Equatable {
        case contentReached(Double)
        case playheadEntered(Double)
        case adBreakStartedEvent
        case contentComplete
        case sessionOpened
        /// The return after a break landed in this one.
        case returnedInto
        /// The session sent the viewer there, for this reason.
        indirect case commanded(TimelineReason)
    }

    /// How a break was seen to its end.
    public enum Completion: Sendable, Equatable {
        case playheadReachedEnd(Double)
        case adBreakEndedEvent
        case lastAdEnded
        /// Ad rules: no ad-break-ended within the break's expected duration.
        case noAdBreakEnded
        /// No report since, and the break must have played out by now.
        case expectedEndPassed
    }

    /// What saved a bookmark.
    public enum BookmarkCause: Sendable, Equatable {
        case paused(at: Double)
        case closed(disconnected: Bool, at: Double)
        case closedWhileSeeking(disconnected: Bool, from: Double)
        case periodic(interval: Double)
        case settled(Move, at: Double)
        case afterBreak(breakId: String, at: Double)
    }

    /// Why the viewer counts as finished.
    public enum FinishCause: Sendable, Equatable {
        case contentComplete
        case postrollStarted(breakId: String)
        case nearEnd(contentTime: Double, margin: Double, end: Double)
    }

    /// Why a timer is disarmed.
    public enum TimerCause: String, Sendable, Equatable {
        case leftBreakUnseen = "left the break without seeing its start"
        case wentBeforeBreak = "playhead went back before the break"
        case adBreakPlays = "an ad break plays"
        case breakCompleted = "break completed"
        case breakEndedMidway = "ad-break-ended for a break entered mid-way: not counted as watched"
        case paused
        case contentComplete = "content complete"
        case sessionClosed = "session closed"
        case seekLeftBreak = "seek left the break"
        case trickPlay = "trick play"
        case bookmarkCleared = "bookmark cleared"
    }
}
