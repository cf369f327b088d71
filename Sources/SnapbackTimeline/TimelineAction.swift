// SPDX-License-Identifier: Apache-2.0
/// Why the timeline commands a seek.
public enum SeekReason: String, Sendable, Equatable, CaseIterable {
    /// A seek skipped an unwatched break: back to the break.
    case snapback = "snapback"
    /// The snapback break ended: on to where the viewer wanted to go.
    case resumeAfterSnapback = "resume-after-snapback"
    /// A session opened from a bookmark: to the bookmark's position in this stream.
    case resumeFromBookmark = "resume-from-bookmark"
    /// A session opened from a bookmark: first to a break that plays before it (resume policy).
    case breakBeforeResume = "break-before-resume"
    /// Playback or a seek reached a watched break that the policy skips: to its end.
    case skipWatchedBreak = "skip-watched-break"
    /// A break reached during the cooldown after a watched break: to its end.
    case skipDuringCooldown = "skip-during-cooldown"
    /// A break disabled for this session (failover): to its end.
    case skipDisabledBreak = "skip-disabled-break"
    /// A seek landed inside an unwatched break: to the start of that break (or of the ad).
    case startOfBreak = "start-of-break"
    /// A seek made while an unwatched break plays: back to where the player was.
    case seekRefusedDuringAd = "seek-refused-during-ad"
}

/// Why a break was not played where the viewer met it (TVSDK's AD_BREAK_SKIPPED, with its cause).
public enum BreakSkipReason: String, Sendable, Equatable, CaseIterable {
    /// Trick play went over it, and another break (or none) plays instead.
    case trickPlay = "trick-play"
    /// A resume from a bookmark went past it without playing it.
    case resumePlan = "resume-plan"
    /// Reached during the cooldown after a break.
    case cooldown
    /// A seek went over it, unwatched, and it is exempt (a resume skipped it, or the loop guard gave it up).
    case exempt
    /// Reached, or landed in, while watched, under a policy that skips watched breaks.
    case watched
    /// Disabled for this session (failover).
    case disabled
}

/// Why a bookmark was saved.
public enum BookmarkTrigger: String, Sendable, Equatable, CaseIterable {
    case paused, closed, disconnected, seek, periodic, snapbackReturn = "snapback-return"
}

/// What the timeline asks its shell to do, with its reason (as data; a log or a CLI shows its words).
public struct TimelineAction: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Command the player to seek to a stream time.
        case seek(to: Double, reason: SeekReason)
        /// A break now counts as watched.
        case breakWatched(breakId: String)
        /// A break played to its end (whatever the watched policy): the start of a cooldown, and the
        /// device-wide "last break completed" time the shell keeps so a cooldown holds across players.
        /// Not pushed.
        case breakCompleted(breakId: String)
        /// A break was not played where the viewer met it. Pushed (BreakSkipped) before the seek that
        /// skips it, if any.
        case breakSkipped(breakId: String, why: BreakSkipReason)
        /// The event was accepted and changed nothing: it confirms what the session already concluded (an
        /// ad-break-ended after the playhead left the break, a repeated ad-break-started). Not pushed; the
        /// shell logs it at debug.
        case noEffect
        /// Ad-rules mode: pause the content and play this break.
        case playBreak(breakId: String)
        /// Ad-rules mode: every break that will play has played (after the post-roll).
        case allAdsCompleted
        /// Save the bookmark: content time (ads excluded) and the stream time it came from.
        case saveBookmark(contentTime: Double, streamTime: Double, trigger: BookmarkTrigger)
        /// Clear the bookmark: the viewer finished the content.
        case clearBookmark
        /// Arm a timer; the shell feeds `timerFired` back at the deadline (same clock as `now`).
        case scheduleTimer(TimelineTimer, deadline: Double)
        /// Disarm a timer.
        case cancelTimer(TimelineTimer)
    }

    public var kind: Kind
    /// Why: the rule and what it applied to; `reason.description` words it ("seek 300→900 skipped
    /// unwatched break b1 at 600").
    public var reason: TimelineReason

    public init(_ kind: Kind, reason: TimelineReason) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String {
        switch kind {
        case .seek(let to, let why): return "seek to \(Seconds(to)) (\(why.rawValue)): \(reason)"
        case .breakWatched(let id): return "break \(id) watched: \(reason)"
        case .breakCompleted(let id): return "break \(id) completed: \(reason)"
        case .playBreak(let id): return "play break \(id): \(reason)"
        case .breakSkipped(let id, let why): return "break \(id) skipped (\(why.rawValue)): \(reason)"
        case .noEffect: return "no effect: \(reason)"
        case .allAdsCompleted: return "all ads completed: \(reason)"
        case .saveBookmark(let c, let s, let t):
            return "save bookmark at content \(Seconds(c)) (stream \(Seconds(s)), \(t.rawValue)): \(reason)"
        case .clearBookmark: return "clear bookmark: \(reason)"
        case .scheduleTimer(let t, let d): return "timer \(t.rawValue) at \(Seconds(d)): \(reason)"
        case .cancelTimer(let t): return "cancel timer \(t.rawValue): \(reason)"
        }
    }
}

extension TimelineAction {
    /// Whether this is a seek command.
    public var isSeek: Bool {
        if case .seek = kind { return true }
        return false
    }
}
