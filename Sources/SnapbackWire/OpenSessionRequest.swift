import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.ResumeOptions`: where an opening session starts.
public struct ResumeOptions: Sendable, Equatable {
    /// Resume from the bookmark the daemon holds for (profile, content id), if any.
    public var useBookmark: Bool
    /// An explicit content time to resume at; wins over `useBookmark`.
    public var contentTime: Double?

    public init(useBookmark: Bool = false, contentTime: Double? = nil) {
        self.useBookmark = useBookmark
        self.contentTime = contentTime
    }
}

/// `snapback.v1.OpenSessionRequest` with the policy resolved: what the daemon needs to open a session.
public struct OpenSessionRequest: Sendable, Equatable {
    public var streamId: String
    public var contentId: String
    /// The viewer profile bookmarks belong to; "" is the default profile.
    public var profile: String
    public var kind: SessionKind
    /// The stitched stream's breaks (ignored by the timeline when `adRules` is set).
    public var breaks: [AdBreak]
    public var contentDuration: Double?
    /// The preset the request named; nil when it named none (`policy_preset` empty).
    public var requestedPreset: AdPolicy.Preset?
    /// The preset used when the request names none: the daemon's configured default when decoded.
    public var defaultPreset: AdPolicy.Preset
    public var overrides: PolicyOverrides
    public var resume: ResumeOptions
    public var adRules: AdRules?

    public init(streamId: String, contentId: String, profile: String = "", kind: SessionKind = .onDemand,
                breaks: [AdBreak] = [], contentDuration: Double? = nil, preset: AdPolicy.Preset? = nil,
                overrides: PolicyOverrides = PolicyOverrides(), resume: ResumeOptions = ResumeOptions(),
                adRules: AdRules? = nil, defaultPreset: AdPolicy.Preset = .snapback) {
        self.streamId = streamId
        self.contentId = contentId
        self.profile = profile
        self.kind = kind
        self.breaks = breaks
        self.contentDuration = contentDuration
        self.requestedPreset = preset
        self.defaultPreset = defaultPreset
        self.overrides = overrides
        self.resume = resume
        self.adRules = adRules
    }

    /// The preset the session runs with.
    public var preset: AdPolicy.Preset { requestedPreset ?? defaultPreset }

    /// The session's policy: the preset with the overrides applied.
    public var policy: AdPolicy { overrides.applied(to: AdPolicy(preset: preset)) }

    /// The timeline's configuration for this request. The daemon passes the resume point it settled on
    /// (explicit, or the stored bookmark when `resume.useBookmark`) and what the store knows.
    public func configuration(resumeContentTime: Double?, previouslyWatchedBreakIds: Set<String> = [],
                              lastBreakCompletedAt: Double? = nil) -> SessionConfiguration {
        SessionConfiguration(kind: kind, contentDuration: contentDuration, breaks: breaks, policy: policy,
                             resumeContentTime: resumeContentTime, adRules: adRules,
                             previouslyWatchedBreakIds: previouslyWatchedBreakIds,
                             lastBreakCompletedAt: lastBreakCompletedAt)
    }
}

extension OpenSessionRequest: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = Snapback__V1__OpenSessionRequest()
        snapback__v1__open_session_request__init(&m)
        m.stream_id = arena.string(streamId)
        m.content_id = arena.string(contentId)
        m.profile = arena.string(profile)
        m.kind = kind.proto
        m.n_breaks = breaks.count
        m.breaks = arena.adBreaks(breaks)
        if let d = contentDuration {
            m._content_duration_case = SNAPBACK__V1__OPEN_SESSION_REQUEST___CONTENT_DURATION_CONTENT_DURATION
            m.content_duration = d
        }
        m.policy_preset = arena.string(requestedPreset?.rawValue ?? "")
        if !overrides.isEmpty { m.policy_overrides = arena.box(overrides.proto) }
        if resume != ResumeOptions() {
            var r = Snapback__V1__ResumeOptions()
            snapback__v1__resume_options__init(&r)
            r.use_bookmark = ProtoC.cBool(resume.useBookmark)
            if let t = resume.contentTime {
                r._resume_content_time_case = SNAPBACK__V1__RESUME_OPTIONS___RESUME_CONTENT_TIME_RESUME_CONTENT_TIME
                r.resume_content_time = t
            }
            m.resume = arena.box(r)
        }
        if let rules = adRules {
            var r = Snapback__V1__AdRules()
            snapback__v1__ad_rules__init(&r)
            r.preroll = ProtoC.cBool(rules.preroll)
            r.n_midroll_times = rules.midrollTimes.count
            r.midroll_times = arena.doubles(rules.midrollTimes)
            r.midroll_every = rules.midrollEvery
            r.postroll = ProtoC.cBool(rules.postroll)
            r._break_duration_case = SNAPBACK__V1__AD_RULES___BREAK_DURATION_BREAK_DURATION
            r.break_duration = rules.breakDuration
            m.ad_rules = arena.box(r)
        }
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    /// Decodes with the `.snapback` default preset; the daemon uses `decode(_:defaultPreset:)`.
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> OpenSessionRequest {
        try decode(body, defaultPreset: .snapback)
    }

    /// Decodes and resolves the policy: an empty preset name means `defaultPreset`; an unknown one, or an
    /// unknown enum value, throws `.invalidArgument`.
    public static func decode(_ body: UnsafeRawBufferPointer,
                              defaultPreset: AdPolicy.Preset) throws(WireError) -> OpenSessionRequest {
        try ProtoC.unpack(body, "snapback.v1.OpenSessionRequest", snapback__v1__open_session_request__unpack,
                          snapback__v1__open_session_request__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            let presetName = try ProtoC.string(m.policy_preset, "policy_preset")
            var preset: AdPolicy.Preset?
            if !presetName.isEmpty {
                guard let named = AdPolicy.Preset(rawValue: presetName) else {
                    let known = AdPolicy.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .invalidArgument("unknown policy preset \"\(presetName)\" (known: \(known))")
                }
                preset = named
            }
            let overrides = try m.policy_overrides.map { (o) throws(WireError) in try PolicyOverrides(proto: o.pointee) }
            var resume = ResumeOptions()
            if let r = m.resume?.pointee {
                resume.useBookmark = ProtoC.bool(r.use_bookmark)
                if r._resume_content_time_case.rawValue != 0 { resume.contentTime = r.resume_content_time }
            }
            var adRules: AdRules?
            if let r = m.ad_rules?.pointee {
                var rules = AdRules(preroll: ProtoC.bool(r.preroll),
                                    midrollTimes: ProtoC.doubles(r.midroll_times, r.n_midroll_times),
                                    midrollEvery: r.midroll_every, postroll: ProtoC.bool(r.postroll))
                if r._break_duration_case.rawValue != 0 { rules.breakDuration = r.break_duration }
                adRules = rules
            }
            return OpenSessionRequest(
                streamId: try ProtoC.string(m.stream_id, "stream_id"), contentId: try ProtoC.string(m.content_id, "content_id"),
                profile: try ProtoC.string(m.profile, "profile"), kind: try SessionKind.from(m.kind, field: "kind") ?? .onDemand,
                breaks: try AdBreak.list(m.breaks, m.n_breaks),
                contentDuration: m._content_duration_case.rawValue != 0 ? m.content_duration : nil,
                preset: preset, overrides: overrides ?? PolicyOverrides(), resume: resume, adRules: adRules,
                defaultPreset: defaultPreset)
        }
    }
}
