import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.PolicyOverrides`: changes to a session's preset. Every field mirrors the `AdPolicy` field of
/// the same name; nil keeps the preset's value.
public struct PolicyOverrides: Sendable, Equatable {
    public var skippedBreakChoice: AdPolicy.SkippedBreakChoice?
    public var seekGate: AdPolicy.SeekGate?
    public var enforceBackwardSeeks: Bool?
    public var returnToTarget: AdPolicy.ReturnToTarget?
    public var landingInUnwatchedBreak: AdPolicy.LandingInBreak?
    public var skipWatchedBreakOnLanding: Bool?
    public var watchedWhen: AdPolicy.WatchedWhen?
    public var refuseSeeksDuringUnwatchedBreak: Bool?
    public var watchedBreakOnPlayback: AdPolicy.WatchedBreakOnPlayback?
    public var snapbackLandingOffset: Double?
    public var cooldown: Double?
    public var trickPlayAsSeek: Bool?
    public var resumeBreaks: AdPolicy.ResumeBreaks?
    public var prerollDisabled: Bool?
    public var midrollsDisabled: Bool?
    public var liveSnapback: Bool?
    public var liveBookmarks: Bool?
    /// Sent as uint32: a negative value is sent as 0, a value above UInt32.max as UInt32.max.
    public var maxSnapbacksPerBreak: Int?
    public var coverageTolerance: Double?
    public var bookmarkInterval: Double?
    public var finishedMargin: Double?

    public init() {}

    /// Whether no field is overridden.
    public var isEmpty: Bool { self == PolicyOverrides() }

    /// `policy` with every overridden field replaced.
    public func applied(to policy: AdPolicy) -> AdPolicy {
        var p = policy
        if let v = skippedBreakChoice { p.skippedBreakChoice = v }
        if let v = seekGate { p.seekGate = v }
        if let v = enforceBackwardSeeks { p.enforceBackwardSeeks = v }
        if let v = returnToTarget { p.returnToTarget = v }
        if let v = landingInUnwatchedBreak { p.landingInUnwatchedBreak = v }
        if let v = skipWatchedBreakOnLanding { p.skipWatchedBreakOnLanding = v }
        if let v = watchedWhen { p.watchedWhen = v }
        if let v = refuseSeeksDuringUnwatchedBreak { p.refuseSeeksDuringUnwatchedBreak = v }
        if let v = watchedBreakOnPlayback { p.watchedBreakOnPlayback = v }
        if let v = snapbackLandingOffset { p.snapbackLandingOffset = v }
        if let v = cooldown { p.cooldown = v }
        if let v = trickPlayAsSeek { p.trickPlayAsSeek = v }
        if let v = resumeBreaks { p.resumeBreaks = v }
        if let v = prerollDisabled { p.prerollDisabled = v }
        if let v = midrollsDisabled { p.midrollsDisabled = v }
        if let v = liveSnapback { p.liveSnapback = v }
        if let v = liveBookmarks { p.liveBookmarks = v }
        if let v = maxSnapbacksPerBreak { p.maxSnapbacksPerBreak = v }
        if let v = coverageTolerance { p.coverageTolerance = v }
        if let v = bookmarkInterval { p.bookmarkInterval = v }
        if let v = finishedMargin { p.finishedMargin = v }
        return p
    }

    /// The overrides that turn `base` into `policy`: every field where they differ.
    public init(from base: AdPolicy, to policy: AdPolicy) {
        func diff<T: Equatable>(_ a: T, _ b: T) -> T? { a == b ? nil : b }
        skippedBreakChoice = diff(base.skippedBreakChoice, policy.skippedBreakChoice)
        seekGate = diff(base.seekGate, policy.seekGate)
        enforceBackwardSeeks = diff(base.enforceBackwardSeeks, policy.enforceBackwardSeeks)
        returnToTarget = diff(base.returnToTarget, policy.returnToTarget)
        landingInUnwatchedBreak = diff(base.landingInUnwatchedBreak, policy.landingInUnwatchedBreak)
        skipWatchedBreakOnLanding = diff(base.skipWatchedBreakOnLanding, policy.skipWatchedBreakOnLanding)
        watchedWhen = diff(base.watchedWhen, policy.watchedWhen)
        refuseSeeksDuringUnwatchedBreak = diff(base.refuseSeeksDuringUnwatchedBreak, policy.refuseSeeksDuringUnwatchedBreak)
        watchedBreakOnPlayback = diff(base.watchedBreakOnPlayback, policy.watchedBreakOnPlayback)
        snapbackLandingOffset = diff(base.snapbackLandingOffset, policy.snapbackLandingOffset)
        cooldown = diff(base.cooldown, policy.cooldown)
        trickPlayAsSeek = diff(base.trickPlayAsSeek, policy.trickPlayAsSeek)
        resumeBreaks = diff(base.resumeBreaks, policy.resumeBreaks)
        prerollDisabled = diff(base.prerollDisabled, policy.prerollDisabled)
        midrollsDisabled = diff(base.midrollsDisabled, policy.midrollsDisabled)
        liveSnapback = diff(base.liveSnapback, policy.liveSnapback)
        liveBookmarks = diff(base.liveBookmarks, policy.liveBookmarks)
        maxSnapbacksPerBreak = diff(base.maxSnapbacksPerBreak, policy.maxSnapbacksPerBreak)
        coverageTolerance = diff(base.coverageTolerance, policy.coverageTolerance)
        bookmarkInterval = diff(base.bookmarkInterval, policy.bookmarkInterval)
        finishedMargin = diff(base.finishedMargin, policy.finishedMargin)
    }
}

extension PolicyOverrides {
    var proto: Snapback__V1__PolicyOverrides {
        var m = Snapback__V1__PolicyOverrides()
        snapback__v1__policy_overrides__init(&m)
        if let v = skippedBreakChoice { m.skipped_break_choice = v.proto }
        if let v = seekGate { m.seek_gate = v.proto }
        if let v = enforceBackwardSeeks {
            m._enforce_backward_seeks_case = SNAPBACK__V1__POLICY_OVERRIDES___ENFORCE_BACKWARD_SEEKS_ENFORCE_BACKWARD_SEEKS
            m.enforce_backward_seeks = ProtoC.cBool(v)
        }
        if let v = returnToTarget { m.return_to_target = v.proto }
        if let v = landingInUnwatchedBreak { m.landing_in_unwatched_break = v.proto }
        if let v = skipWatchedBreakOnLanding {
            m._skip_watched_break_on_landing_case =
                SNAPBACK__V1__POLICY_OVERRIDES___SKIP_WATCHED_BREAK_ON_LANDING_SKIP_WATCHED_BREAK_ON_LANDING
            m.skip_watched_break_on_landing = ProtoC.cBool(v)
        }
        if let v = watchedWhen { m.watched_when = v.proto }
        if let v = refuseSeeksDuringUnwatchedBreak {
            m._refuse_seeks_during_unwatched_break_case =
                SNAPBACK__V1__POLICY_OVERRIDES___REFUSE_SEEKS_DURING_UNWATCHED_BREAK_REFUSE_SEEKS_DURING_UNWATCHED_BREAK
            m.refuse_seeks_during_unwatched_break = ProtoC.cBool(v)
        }
        if let v = watchedBreakOnPlayback { m.watched_break_on_playback = v.proto }
        if let v = snapbackLandingOffset {
            m._snapback_landing_offset_case = SNAPBACK__V1__POLICY_OVERRIDES___SNAPBACK_LANDING_OFFSET_SNAPBACK_LANDING_OFFSET
            m.snapback_landing_offset = v
        }
        if let v = cooldown {
            m._cooldown_case = SNAPBACK__V1__POLICY_OVERRIDES___COOLDOWN_COOLDOWN
            m.cooldown = v
        }
        if let v = trickPlayAsSeek {
            m._trick_play_as_seek_case = SNAPBACK__V1__POLICY_OVERRIDES___TRICK_PLAY_AS_SEEK_TRICK_PLAY_AS_SEEK
            m.trick_play_as_seek = ProtoC.cBool(v)
        }
        if let v = resumeBreaks { m.resume_breaks = v.proto }
        if let v = prerollDisabled {
            m._preroll_disabled_case = SNAPBACK__V1__POLICY_OVERRIDES___PREROLL_DISABLED_PREROLL_DISABLED
            m.preroll_disabled = ProtoC.cBool(v)
        }
        if let v = midrollsDisabled {
            m._midrolls_disabled_case = SNAPBACK__V1__POLICY_OVERRIDES___MIDROLLS_DISABLED_MIDROLLS_DISABLED
            m.midrolls_disabled = ProtoC.cBool(v)
        }
        if let v = liveSnapback {
            m._live_snapback_case = SNAPBACK__V1__POLICY_OVERRIDES___LIVE_SNAPBACK_LIVE_SNAPBACK
            m.live_snapback = ProtoC.cBool(v)
        }
        if let v = liveBookmarks {
            m._live_bookmarks_case = SNAPBACK__V1__POLICY_OVERRIDES___LIVE_BOOKMARKS_LIVE_BOOKMARKS
            m.live_bookmarks = ProtoC.cBool(v)
        }
        if let v = maxSnapbacksPerBreak {
            m._max_snapbacks_per_break_case = SNAPBACK__V1__POLICY_OVERRIDES___MAX_SNAPBACKS_PER_BREAK_MAX_SNAPBACKS_PER_BREAK
            m.max_snapbacks_per_break = UInt32(clamping: v)
        }
        if let v = coverageTolerance {
            m._coverage_tolerance_case = SNAPBACK__V1__POLICY_OVERRIDES___COVERAGE_TOLERANCE_COVERAGE_TOLERANCE
            m.coverage_tolerance = v
        }
        if let v = bookmarkInterval {
            m._bookmark_interval_case = SNAPBACK__V1__POLICY_OVERRIDES___BOOKMARK_INTERVAL_BOOKMARK_INTERVAL
            m.bookmark_interval = v
        }
        if let v = finishedMargin {
            m._finished_margin_case = SNAPBACK__V1__POLICY_OVERRIDES___FINISHED_MARGIN_FINISHED_MARGIN
            m.finished_margin = v
        }
        return m
    }

    init(proto m: Snapback__V1__PolicyOverrides) throws(WireError) {
        self.init()
        skippedBreakChoice = try .from(m.skipped_break_choice)
        seekGate = try .from(m.seek_gate)
        if m._enforce_backward_seeks_case.rawValue != 0 { enforceBackwardSeeks = ProtoC.bool(m.enforce_backward_seeks) }
        returnToTarget = try .from(m.return_to_target)
        landingInUnwatchedBreak = try .from(m.landing_in_unwatched_break)
        if m._skip_watched_break_on_landing_case.rawValue != 0 {
            skipWatchedBreakOnLanding = ProtoC.bool(m.skip_watched_break_on_landing)
        }
        watchedWhen = try .from(m.watched_when)
        if m._refuse_seeks_during_unwatched_break_case.rawValue != 0 {
            refuseSeeksDuringUnwatchedBreak = ProtoC.bool(m.refuse_seeks_during_unwatched_break)
        }
        watchedBreakOnPlayback = try .from(m.watched_break_on_playback)
        if m._snapback_landing_offset_case.rawValue != 0 { snapbackLandingOffset = m.snapback_landing_offset }
        if m._cooldown_case.rawValue != 0 { cooldown = m.cooldown }
        if m._trick_play_as_seek_case.rawValue != 0 { trickPlayAsSeek = ProtoC.bool(m.trick_play_as_seek) }
        resumeBreaks = try .from(m.resume_breaks)
        if m._preroll_disabled_case.rawValue != 0 { prerollDisabled = ProtoC.bool(m.preroll_disabled) }
        if m._midrolls_disabled_case.rawValue != 0 { midrollsDisabled = ProtoC.bool(m.midrolls_disabled) }
        if m._live_snapback_case.rawValue != 0 { liveSnapback = ProtoC.bool(m.live_snapback) }
        if m._live_bookmarks_case.rawValue != 0 { liveBookmarks = ProtoC.bool(m.live_bookmarks) }
        if m._max_snapbacks_per_break_case.rawValue != 0 { maxSnapbacksPerBreak = Int(m.max_snapbacks_per_break) }
        if m._coverage_tolerance_case.rawValue != 0 { coverageTolerance = m.coverage_tolerance }
        if m._bookmark_interval_case.rawValue != 0 { bookmarkInterval = m.bookmark_interval }
        if m._finished_margin_case.rawValue != 0 { finishedMargin = m.finished_margin }
    }
}
