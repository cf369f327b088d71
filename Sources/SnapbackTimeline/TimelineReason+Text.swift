// SPDX-License-Identifier: Apache-2.0
/// The words of a reason, for logs, pushes and the CLI: built only when an edge shows the reason.
extension TimelineReason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .snapback(let jump, let from, let to, let id, let start):
            var words = StringReasonText()
            Self.writeSnapback(jump: jump, from: from, to: to, breakId: id, start: start, into: &words)
            return words.text
        case .returnToTarget(let id, let target): return "break \(id) done, on to the seek target \(Seconds(target))"
        case .resumptionPoint(let id, let at):
            return "interstitial \(id) done, the content resumes at its resumption point \(Seconds(at))"
        case .resume(let c, let s): return "resume at content \(Seconds(c)) = stream \(Seconds(s)) in this layout"
        case .breakBeforeResume(let c, let id, let policy):
            return "resume at content \(Seconds(c)): break \(id) plays first (\(policy.rawValue))"
        case .nextBreakBeforeResume: return "the next break before the resume point"
        case .breakSkipped(let cause, let id, let start, let end):
            return "\(cause): break \(id) \(Seconds(start))–\(Seconds(end)) skipped"
        case .prerollDisabled(let id): return "pre-roll \(id) disabled (failover)"
        case .seekRefused(let from, let to, let id):
            return "seek \(Seconds(from))→\(Seconds(to)) refused: unwatched break \(id) is playing"
        case .trickPlayRefused(let id): return "trick play refused: unwatched break \(id) is playing"
        case .landedDuringCooldown(let move, let id, let until):
            return "\(move.rawValue) landed in break \(id) during the cooldown until \(Seconds(until))"
        case .heldToBreakStart(let move, let from, let to, let id, let start, let adStart):
            return
                "\(move.rawValue) \(Seconds(from))→\(Seconds(to)) landed in unwatched break \(id), to its \(adStart ? "ad's start" : "start") \(Seconds(start))"
        case .landedInUnwatchedBreak(let move, let from, let to, let id, let start):
            return "\(move.rawValue) \(Seconds(from))→\(Seconds(to)) landed in unwatched break \(id), to \(Seconds(start))"
        case .landedInWatchedBreak(let move, let id, let end):
            return "\(move.rawValue) landed in watched break \(id), to its end \(Seconds(end))"
        case .landedInDisabledBreak(let move, let id, let end):
            return "\(move.rawValue) landed in disabled break \(id), to its end \(Seconds(end))"
        case .breakPlays(let entry, let id): return "\(entry): break \(id) plays"
        case .watchedOnBegin(let id): return "break \(id) began (watched on begin)"
        case .watchedOnEnd(let id, let how): return "break \(id) completed: \(how)"
        case .breakCompleted(let how): return how.description
        case .loopGuard(let max, let id): return "snapback loop guard: \(max) snapbacks to \(id) already"
        case .postrollCompleted(let id): return "post-roll \(id) completed"
        case .noPostroll: return "content complete, no post-roll to play"
        case .notPlayed(let why, let id): return "break \(id) not played: \(why.words)"
        case .confirms(let event, let id):
            return "\(event.rawValue) \(id) confirms what the session already concluded: accepted, nothing to do"
        case .bookmark(let cause, let c): return "\(cause): content \(Seconds(c))"
        case .finished(let cause): return "finished: \(cause)"
        case .periodicBookmark: return "periodic bookmark"
        case .expectedBreakEnd: return "expected end of the break"
        case .timerCancelled(let cause): return cause.rawValue
        }
    }
}

extension TimelineReason.SkipCause: CustomStringConvertible {
    public var description: String {
        switch self {
        case .prerollDisabled: return "pre-roll disabled"
        case .midrollsDisabled: return "mid-rolls disabled"
        case .alreadyWatched: return "already watched"
        case .cooldown(let until): return "cooldown until \(Seconds(until))"
        }
    }
}

extension TimelineReason.Entry: CustomStringConvertible {
    public var description: String {
        switch self {
        case .contentReached(let t): return "content reached \(Seconds(t))"
        case .playheadEntered(let t): return "playhead entered at \(Seconds(t))"
        case .adBreakStartedEvent: return "ad-break-started event"
        case .contentComplete: return "content complete"
        case .sessionOpened: return "session opened"
        case .returnedInto: return "returned into it"
        case .commanded(let reason): return reason.description
        }
    }
}

extension TimelineReason.Completion: CustomStringConvertible {
    public var description: String {
        switch self {
        case .playheadReachedEnd(let t): return "playhead reached its end at \(Seconds(t))"
        case .adBreakEndedEvent: return "ad-break-ended event"
        case .lastAdEnded: return "its last ad ended"
        case .noAdBreakEnded: return "no ad-break-ended within its expected duration"
        case .expectedEndPassed: return "its expected end passed without a report"
        }
    }
}

extension TimelineReason.BookmarkCause: CustomStringConvertible {
    public var description: String {
        switch self {
        case .paused(let t): return "paused at \(Seconds(t))"
        case .closed(let disconnected, let t): return "\(disconnected ? "player disconnected" : "closed") at \(Seconds(t))"
        case .closedWhileSeeking(let disconnected, let from):
            return "\(disconnected ? "player disconnected" : "closed") while seeking from \(Seconds(from))"
        case .periodic(let interval): return "every \(Seconds(interval)) s of playback"
        case .settled(let move, let t): return "\(move.rawValue) settled at \(Seconds(t))"
        case .afterBreak(let id, let t): return "after break \(id), at \(Seconds(t))"
        }
    }
}

extension TimelineReason.FinishCause: CustomStringConvertible {
    public var description: String {
        switch self {
        case .contentComplete: return "content complete"
        case .postrollStarted(let id): return "post-roll \(id) started"
        case .nearEnd(let c, let margin, let end):
            return "content \(Seconds(c)) is within \(Seconds(margin)) s of the end \(Seconds(end))"
        }
    }
}

extension BreakSkipReason {
    /// Why, in a few words, for a reason's description.
    var words: String {
        switch self {
        case .trickPlay: return "trick play went over it"
        case .resumePlan: return "the resume went past it"
        case .cooldown: return "the cooldown after a break is running"
        case .exempt: return "exempt from snapbacks (skipped by a resume, or given up by the loop guard)"
        case .watched: return "already watched, and watched breaks are skipped"
        case .disabled: return "disabled for this session (failover)"
        }
    }
}
