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

    public init(
        streamId: String, contentId: String, profile: String = "", kind: SessionKind = .onDemand,
        breaks: [AdBreak] = [], contentDuration: Double? = nil, preset: AdPolicy.Preset? = nil,
        overrides: PolicyOverrides = PolicyOverrides(), resume: ResumeOptions = ResumeOptions(),
        adRules: AdRules? = nil, defaultPreset: AdPolicy.Preset = .snapback
    ) {
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
    public func configuration(
        resumeContentTime: Double?, previouslyWatchedBreakIds: Set<String> = [],
        lastBreakCompletedAt: Double? = nil
    ) -> SessionConfiguration {
        SessionConfiguration(
            kind: kind, contentDuration: contentDuration, breaks: breaks, policy: policy,
            resumeContentTime: resumeContentTime, adRules: adRules,
            previouslyWatchedBreakIds: previouslyWatchedBreakIds,
            lastBreakCompletedAt: lastBreakCompletedAt)
    }
}

extension OpenSessionRequest: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let m = ProtoBuilder(WireMethod.openSession.requestDescriptor, arena: CArena())
        m.set("stream_id", streamId)
        m.set("content_id", contentId)
        m.set("profile", profile)
        m.set("kind", kind)
        m.set("breaks", breaks)
        m.set("content_duration", contentDuration)
        m.set("policy_preset", requestedPreset?.rawValue ?? "")
        if !overrides.isEmpty { m.set("policy_overrides", overrides.write(to: m.sub("policy_overrides"))) }
        if resume != ResumeOptions() {
            let r = m.sub("resume")
            r.set("use_bookmark", resume.useBookmark)
            r.set("resume_content_time", resume.contentTime)
            m.set("resume", r)
        }
        if let rules = adRules {
            let r = m.sub("ad_rules")
            r.set("preroll", rules.preroll)
            r.set("midroll_times", rules.midrollTimes)
            r.set("midroll_every", rules.midrollEvery)
            r.set("postroll", rules.postroll)
            r.set("break_duration", rules.breakDuration)
            m.set("ad_rules", r)
        }
        return m.append(to: &out)
    }

    /// Decodes with the `.snapback` default preset; the daemon uses `decode(_:defaultPreset:)`.
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> OpenSessionRequest {
        try decode(body, defaultPreset: .snapback)
    }

    /// Decodes and resolves the policy: an empty preset name means `defaultPreset`; an unknown one, or an
    /// unknown enum value, throws `.invalidArgument`.
    public static func decode(
        _ body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset
    ) throws(WireError) -> OpenSessionRequest {
        try ProtoC.read(body, WireMethod.openSession.requestDescriptor) { m throws(WireError) in
            let presetName = try m.string("policy_preset")
            var preset: AdPolicy.Preset?
            if !presetName.isEmpty {
                guard let named = AdPolicy.Preset(rawValue: presetName) else {
                    let known = AdPolicy.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .invalidArgument("unknown policy preset \"\(presetName)\" (known: \(known))")
                }
                preset = named
            }
            let overrides = try m.nested("policy_overrides").map { (o) throws(WireError) in try PolicyOverrides(o) }
            var resume = ResumeOptions()
            if let r = m.nested("resume") {
                resume.useBookmark = r.bool("use_bookmark")
                resume.contentTime = r.optionalDouble("resume_content_time")
            }
            var adRules: AdRules?
            if let r = m.nested("ad_rules") {
                var rules = AdRules(
                    preroll: r.bool("preroll"), midrollTimes: r.doubles("midroll_times"),
                    midrollEvery: r.double("midroll_every"), postroll: r.bool("postroll"))
                if let duration = r.optionalDouble("break_duration") { rules.breakDuration = duration }
                adRules = rules
            }
            return OpenSessionRequest(
                streamId: try m.string("stream_id"), contentId: try m.string("content_id"),
                profile: try m.string("profile"), kind: try m.enumValue("kind", as: SessionKind.self) ?? .onDemand,
                breaks: try AdBreak.list(m, "breaks"), contentDuration: m.optionalDouble("content_duration"),
                preset: preset, overrides: overrides ?? PolicyOverrides(), resume: resume, adRules: adRules,
                defaultPreset: defaultPreset)
        }
    }
}
