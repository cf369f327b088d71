import CSnapbackProto
import SnapbackTimeline

// Conversions between the Swift enums of SnapbackTimeline and the proto enums. Reading a proto enum
// returns nil for UNSPECIFIED (0) and throws for a value this version does not know; the callers decide
// what UNSPECIFIED means (a default, or "not overridden").

private func unknownValue(_ field: String, _ raw: UInt32) -> WireError {
    .invalidArgument("\(field): unknown enum value \(Int32(bitPattern: raw))")
}

extension SessionKind {
    var proto: Snapback__V1__SessionKind {
        switch self {
        case .onDemand: return SNAPBACK__V1__SESSION_KIND__SESSION_KIND_ON_DEMAND
        case .live: return SNAPBACK__V1__SESSION_KIND__SESSION_KIND_LIVE
        }
    }

    /// UNSPECIFIED reads as on-demand.
    static func from(_ v: Snapback__V1__SessionKind, field: String) throws(WireError) -> SessionKind {
        switch v {
        case SNAPBACK__V1__SESSION_KIND__SESSION_KIND_UNSPECIFIED, SNAPBACK__V1__SESSION_KIND__SESSION_KIND_ON_DEMAND:
            return .onDemand
        case SNAPBACK__V1__SESSION_KIND__SESSION_KIND_LIVE: return .live
        default: throw unknownValue(field, v.rawValue)
        }
    }
}

extension SeekReason {
    var proto: Snapback__V1__SeekReason {
        switch self {
        case .snapback: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SNAPBACK
        case .resumeAfterSnapback: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_RESUME_AFTER_SNAPBACK
        case .resumeFromBookmark: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_RESUME_FROM_BOOKMARK
        case .breakBeforeResume: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_BREAK_BEFORE_RESUME
        case .skipWatchedBreak: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_WATCHED_BREAK
        case .skipDuringCooldown: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_DURING_COOLDOWN
        case .skipDisabledBreak: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_DISABLED_BREAK
        case .startOfBreak: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_START_OF_BREAK
        case .seekRefusedDuringAd: return SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SEEK_REFUSED_DURING_AD
        }
    }

    /// nil for UNSPECIFIED or a reason a newer server added: the client still seeks.
    init?(proto v: Snapback__V1__SeekReason) {
        switch v {
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SNAPBACK: self = .snapback
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_RESUME_AFTER_SNAPBACK: self = .resumeAfterSnapback
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_RESUME_FROM_BOOKMARK: self = .resumeFromBookmark
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_BREAK_BEFORE_RESUME: self = .breakBeforeResume
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_WATCHED_BREAK: self = .skipWatchedBreak
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_DURING_COOLDOWN: self = .skipDuringCooldown
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SKIP_DISABLED_BREAK: self = .skipDisabledBreak
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_START_OF_BREAK: self = .startOfBreak
        case SNAPBACK__V1__SEEK_REASON__SEEK_REASON_SEEK_REFUSED_DURING_AD: self = .seekRefusedDuringAd
        default: return nil
        }
    }
}

extension BookmarkTrigger {
    var proto: Snapback__V1__BookmarkTrigger {
        switch self {
        case .paused: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_PAUSED
        case .closed: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_CLOSED
        case .disconnected: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_DISCONNECTED
        case .seek: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_SEEK
        case .periodic: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_PERIODIC
        case .snapbackReturn: return SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_SNAPBACK_RETURN
        }
    }

    /// nil for UNSPECIFIED or a trigger a newer server added.
    init?(proto v: Snapback__V1__BookmarkTrigger) {
        switch v {
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_PAUSED: self = .paused
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_CLOSED: self = .closed
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_DISCONNECTED: self = .disconnected
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_SEEK: self = .seek
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_PERIODIC: self = .periodic
        case SNAPBACK__V1__BOOKMARK_TRIGGER__BOOKMARK_TRIGGER_SNAPBACK_RETURN: self = .snapbackReturn
        default: return nil
        }
    }
}

extension TimelineSnapshot.Phase {
    var proto: Snapback__V1__SessionPhase {
        switch self {
        case .content: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_CONTENT
        case .inBreak: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_IN_BREAK
        case .seeking: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_SEEKING
        case .trickPlay: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_TRICK_PLAY
        case .finished: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_FINISHED
        case .closed: return SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_CLOSED
        }
    }

    /// nil for UNSPECIFIED or a phase a newer server added.
    init?(proto v: Snapback__V1__SessionPhase) {
        switch v {
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_CONTENT: self = .content
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_IN_BREAK: self = .inBreak
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_SEEKING: self = .seeking
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_TRICK_PLAY: self = .trickPlay
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_FINISHED: self = .finished
        case SNAPBACK__V1__SESSION_PHASE__SESSION_PHASE_CLOSED: self = .closed
        default: return nil
        }
    }
}

// MARK: - Policy enums: UNSPECIFIED = not overridden (nil), unknown = INVALID_ARGUMENT.

extension AdPolicy.SkippedBreakChoice {
    var proto: Snapback__V1__SkippedBreakChoice {
        switch self {
        case .lastUnwatched: return SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_LAST_UNWATCHED
        case .nearestOnly: return SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_NEAREST_ONLY
        case .first: return SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_FIRST
        }
    }

    static func from(_ v: Snapback__V1__SkippedBreakChoice) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_UNSPECIFIED: return nil
        case SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_LAST_UNWATCHED: return .lastUnwatched
        case SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_NEAREST_ONLY: return .nearestOnly
        case SNAPBACK__V1__SKIPPED_BREAK_CHOICE__SKIPPED_BREAK_CHOICE_FIRST: return .first
        default: throw unknownValue("policy_overrides.skipped_break_choice", v.rawValue)
        }
    }
}

extension AdPolicy.SeekGate {
    var proto: Snapback__V1__SeekGate {
        switch self {
        case .crossedBreaks: return SNAPBACK__V1__SEEK_GATE__SEEK_GATE_CROSSED_BREAKS
        case .allBreaksBeforeTarget: return SNAPBACK__V1__SEEK_GATE__SEEK_GATE_ALL_BREAKS_BEFORE_TARGET
        }
    }

    static func from(_ v: Snapback__V1__SeekGate) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__SEEK_GATE__SEEK_GATE_UNSPECIFIED: return nil
        case SNAPBACK__V1__SEEK_GATE__SEEK_GATE_CROSSED_BREAKS: return .crossedBreaks
        case SNAPBACK__V1__SEEK_GATE__SEEK_GATE_ALL_BREAKS_BEFORE_TARGET: return .allBreaksBeforeTarget
        default: throw unknownValue("policy_overrides.seek_gate", v.rawValue)
        }
    }
}

extension AdPolicy.ReturnToTarget {
    var proto: Snapback__V1__ReturnToTarget {
        switch self {
        case .ifBeyondBreak: return SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_IF_BEYOND_BREAK
        case .always: return SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_ALWAYS
        case .never: return SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_NEVER
        }
    }

    static func from(_ v: Snapback__V1__ReturnToTarget) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_UNSPECIFIED: return nil
        case SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_IF_BEYOND_BREAK: return .ifBeyondBreak
        case SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_ALWAYS: return .always
        case SNAPBACK__V1__RETURN_TO_TARGET__RETURN_TO_TARGET_NEVER: return .never
        default: throw unknownValue("policy_overrides.return_to_target", v.rawValue)
        }
    }
}

extension AdPolicy.LandingInBreak {
    var proto: Snapback__V1__LandingInBreak {
        switch self {
        case .breakStart: return SNAPBACK__V1__LANDING_IN_BREAK__LANDING_IN_BREAK_BREAK_START
        case .adStart: return SNAPBACK__V1__LANDING_IN_BREAK__LANDING_IN_BREAK_AD_START
        }
    }

    static func from(_ v: Snapback__V1__LandingInBreak) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__LANDING_IN_BREAK__LANDING_IN_BREAK_UNSPECIFIED: return nil
        case SNAPBACK__V1__LANDING_IN_BREAK__LANDING_IN_BREAK_BREAK_START: return .breakStart
        case SNAPBACK__V1__LANDING_IN_BREAK__LANDING_IN_BREAK_AD_START: return .adStart
        default: throw unknownValue("policy_overrides.landing_in_unwatched_break", v.rawValue)
        }
    }
}

extension AdPolicy.WatchedWhen {
    var proto: Snapback__V1__WatchedWhen {
        switch self {
        case .onBegin: return SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_ON_BEGIN
        case .onEnd: return SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_ON_END
        case .never: return SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_NEVER
        }
    }

    static func from(_ v: Snapback__V1__WatchedWhen) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_UNSPECIFIED: return nil
        case SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_ON_BEGIN: return .onBegin
        case SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_ON_END: return .onEnd
        case SNAPBACK__V1__WATCHED_WHEN__WATCHED_WHEN_NEVER: return .never
        default: throw unknownValue("policy_overrides.watched_when", v.rawValue)
        }
    }
}

extension AdPolicy.WatchedBreakOnPlayback {
    var proto: Snapback__V1__WatchedBreakOnPlayback {
        switch self {
        case .replay: return SNAPBACK__V1__WATCHED_BREAK_ON_PLAYBACK__WATCHED_BREAK_ON_PLAYBACK_REPLAY
        case .skip: return SNAPBACK__V1__WATCHED_BREAK_ON_PLAYBACK__WATCHED_BREAK_ON_PLAYBACK_SKIP
        }
    }

    static func from(_ v: Snapback__V1__WatchedBreakOnPlayback) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__WATCHED_BREAK_ON_PLAYBACK__WATCHED_BREAK_ON_PLAYBACK_UNSPECIFIED: return nil
        case SNAPBACK__V1__WATCHED_BREAK_ON_PLAYBACK__WATCHED_BREAK_ON_PLAYBACK_REPLAY: return .replay
        case SNAPBACK__V1__WATCHED_BREAK_ON_PLAYBACK__WATCHED_BREAK_ON_PLAYBACK_SKIP: return .skip
        default: throw unknownValue("policy_overrides.watched_break_on_playback", v.rawValue)
        }
    }
}

extension AdPolicy.ResumeBreaks {
    var proto: Snapback__V1__ResumeBreaks {
        switch self {
        case .none: return SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_NONE
        case .preroll: return SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_PREROLL
        case .lastBefore: return SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_LAST_BEFORE
        case .prerollAndLastBefore: return SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_PREROLL_AND_LAST_BEFORE
        }
    }

    static func from(_ v: Snapback__V1__ResumeBreaks) throws(WireError) -> Self? {
        switch v {
        case SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_UNSPECIFIED: return nil
        case SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_NONE: return AdPolicy.ResumeBreaks.none
        case SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_PREROLL: return .preroll
        case SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_LAST_BEFORE: return .lastBefore
        case SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_PREROLL_AND_LAST_BEFORE: return .prerollAndLastBefore
        default: throw unknownValue("policy_overrides.resume_breaks", v.rawValue)
        }
    }
}
