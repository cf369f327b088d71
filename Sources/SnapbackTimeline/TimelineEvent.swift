// SPDX-License-Identifier: Apache-2.0
/// What a player reports, as one value. `TimelineSession.handle(_:at:)` dispatches each case to the
/// session's method of the same name; the daemon and the property tests use this form.
///
/// Seeks are the *viewer's* seeks. Seeks the daemon commanded are not reported as `seekEnded` (a report
/// that matches the last commanded seek is ignored as its echo).
public enum TimelineEvent: Sendable, Equatable {
    case playheadReported(streamTime: Double, rate: Double, playing: Bool)
    case seekStarted(from: Double)
    case seekEnded(from: Double, to: Double)
    /// The ad events may carry the player's stream time (`streamTime`, nil when not sent): it is taken as a
    /// playhead report made just before the event, so a player need not send one of its own.
    case adBreakStarted(breakId: String, streamTime: Double? = nil)
    case adBreakEnded(breakId: String, streamTime: Double? = nil)
    case adStarted(breakId: String, index: Int, streamTime: Double? = nil)
    case adEnded(breakId: String, index: Int, streamTime: Double? = nil)
    case trickPlayStarted(streamTime: Double, rate: Double)
    case trickPlayEnded(streamTime: Double)
    case contentCompleted
    /// A live session's breaks changed (UpdateBreaks): one case for both forms, so that an event of
    /// the round trip is told from it by one test of its case.
    case breaksChanged(BreakUpdate)
    case paused(streamTime: Double)
    case closed
    case playerDisconnected
    case timerFired(TimelineTimer)

    /// A short name for errors and logs.
    public var name: String {
        switch self {
        case .playheadReported: return "playhead"
        case .seekStarted: return "seek-started"
        case .seekEnded: return "seek-ended"
        case .adBreakStarted: return "ad-break-started"
        case .adBreakEnded: return "ad-break-ended"
        case .adStarted: return "ad-started"
        case .adEnded: return "ad-ended"
        case .trickPlayStarted: return "trick-play-started"
        case .trickPlayEnded: return "trick-play-ended"
        case .contentCompleted: return "content-complete"
        case .breaksChanged(.breaks): return "breaks-updated"
        case .breaksChanged(.midrollTimes): return "midrolls-scheduled"
        case .paused: return "paused"
        case .closed: return "closed"
        case .playerDisconnected: return "player-disconnected"
        case .timerFired: return "timer-fired"
        }
    }
}

/// The timers a session asks its shell to arm. Each session has at most one of each armed; a new
/// `scheduleTimer` for the same timer replaces the old deadline.
public enum TimelineTimer: String, Sendable, Equatable, Hashable, CaseIterable {
    /// The periodic bookmark while content plays.
    case bookmark
    /// The end of a break as expected from its duration: if no playhead or ad event reports it, the
    /// break is taken as played to its end (so a missing AD_BREAK_ENDED does not hold the viewer).
    case breakEnd
}

/// What an UpdateBreaks says.
public enum BreakUpdate: Sendable, Equatable {
    /// A stitched live session's break list now.
    case breaks([AdBreak])
    /// A live ad-rules session's schedule now: its mid-roll times (content time).
    case midrollTimes([Double])

    /// Breaks or times it carries: what it may add at most.
    public var count: Int {
        switch self {
        case .breaks(let b): return b.count
        case .midrollTimes(let t): return t.count
        }
    }
}

extension TimelineEvent {
    /// A stitched live session's break list now.
    public static func breaksUpdated(_ breaks: [AdBreak]) -> TimelineEvent { .breaksChanged(.breaks(breaks)) }
    /// A live ad-rules session's schedule now: its mid-roll times (content time).
    public static func midrollsScheduled(_ times: [Double]) -> TimelineEvent { .breaksChanged(.midrollTimes(times)) }
}
