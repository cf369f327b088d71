// SPDX-License-Identifier: Apache-2.0
/// Everything a session is opened with.
public struct SessionConfiguration: Sendable, Equatable {
    public var kind: SessionKind
    /// The content's duration (ads excluded), when known. Needed for the "finished" bookmark rule and to
    /// bound seeks; an on-demand session without it bounds seeks at the last break's end.
    public var contentDuration: Double?
    /// The stitched stream's breaks (stream times), in any order. Ignored when `adRules` is set.
    public var breaks: [AdBreak]
    public var policy: AdPolicy
    /// The content time to resume at (a bookmark), if any.
    public var resumeContentTime: Double?
    /// The stream time to resume at, if any: its content time in this session's layout is where the
    /// session resumes (wins over `resumeContentTime`). A client reopening a session where its player is
    /// names that position and lets the layout convert it.
    public var resumeStreamTime: Double?
    /// Client-side ad rules: when set, the session runs in ad-rules mode (breaks on content time, content
    /// paused while a break plays, `playBreak` actions).
    public var adRules: AdRules?
    /// Ids of breaks already watched in an earlier session of the same content (the store keeps them).
    public var previouslyWatchedBreakIds: Set<String>
    /// Wall time (same clock as `now`) at which a break last completed on this device, for a cooldown that
    /// holds across players.
    public var lastBreakCompletedAt: Double?
    /// The most breaks the session may hold: a session whose breaks (carried or built by ad rules) pass
    /// it is refused, and so is an update that would take a live session past it, left unapplied
    /// (`sessionFull`). At most `TimelineLayout.maxBreaks`.
    public var maxBreaks: Int = TimelineLayout.maxBreaks

    public init(
        kind: SessionKind = .onDemand, contentDuration: Double? = nil, breaks: [AdBreak] = [],
        policy: AdPolicy = AdPolicy(), resumeContentTime: Double? = nil, resumeStreamTime: Double? = nil,
        adRules: AdRules? = nil, previouslyWatchedBreakIds: Set<String> = [], lastBreakCompletedAt: Double? = nil
    ) {
        self.kind = kind
        self.contentDuration = contentDuration
        self.breaks = breaks
        self.policy = policy
        self.resumeContentTime = resumeContentTime
        self.resumeStreamTime = resumeStreamTime
        self.adRules = adRules
        self.previouslyWatchedBreakIds = previouslyWatchedBreakIds
        self.lastBreakCompletedAt = lastBreakCompletedAt
    }
}

/// A read-only view of a session for queries and status.
public struct TimelineSnapshot: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable, CaseIterable {
        case content, inBreak = "in-break", seeking, trickPlay = "trick-play", finished, closed
    }
    public var phase: Phase
    /// The break playing, when `phase == .inBreak`.
    public var currentBreakId: String?
    /// The last stream time reported (or extrapolated) and its content time.
    public var streamTime: Double
    public var contentTime: Double
    public var playing: Bool
    public var rate: Double
    /// Where the viewer will be taken after the current break (snapback or resume), if anywhere.
    public var pendingReturn: Double?
    public var breaks: [AdBreak]
    /// Wall time until which breaks are skipped (cooldown), if one is running.
    public var cooldownUntil: Double?
    public var lastBookmarkContentTime: Double?
    /// What the viewer did with each break, in the order of `breaks`.
    public var breakStates: [BreakState]

    public init(
        phase: Phase, currentBreakId: String? = nil, streamTime: Double, contentTime: Double, playing: Bool,
        rate: Double, pendingReturn: Double? = nil, breaks: [AdBreak] = [], cooldownUntil: Double? = nil,
        lastBookmarkContentTime: Double? = nil, breakStates: [BreakState] = []
    ) {
        self.phase = phase
        self.currentBreakId = currentBreakId
        self.streamTime = streamTime
        self.contentTime = contentTime
        self.playing = playing
        self.rate = rate
        self.pendingReturn = pendingReturn
        self.breaks = breaks
        self.cooldownUntil = cooldownUntil
        self.lastBookmarkContentTime = lastBookmarkContentTime
        self.breakStates = breakStates
    }

    /// Where a break sits in the content.
    public enum BreakPosition: String, Sendable, Equatable, CaseIterable {
        case preroll, midroll, postroll
    }

    /// One break as the viewer left it.
    public struct BreakState: Sendable, Equatable {
        public var breakId: String
        public var position: BreakPosition
        public var watched: Bool
        /// Later seeks are never held to it (a resume skipped it, or the loop guard gave it up).
        public var exempt: Bool
        /// Why it was last skipped; nil = never.
        public var skipped: BreakSkipReason?

        public init(
            breakId: String, position: BreakPosition, watched: Bool, exempt: Bool = false,
            skipped: BreakSkipReason? = nil
        ) {
            self.breakId = breakId
            self.position = position
            self.watched = watched
            self.exempt = exempt
            self.skipped = skipped
        }
    }
}
