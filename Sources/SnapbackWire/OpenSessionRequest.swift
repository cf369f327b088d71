import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.ResumeOptions`: where an opening session starts.
public struct ResumeOptions: Sendable, Equatable {
    /// Resume from the bookmark the daemon holds for (profile, content id), if any.
    public var useBookmark: Bool
    /// An explicit content time to resume at; wins over `useBookmark`.
    public var contentTime: Double?
    /// A stream time to resume at, turned into content time by the session's own layout; wins over
    /// `contentTime` and `useBookmark`.
    public var streamTime: Double?

    public init(useBookmark: Bool = false, contentTime: Double? = nil, streamTime: Double? = nil) {
        self.useBookmark = useBookmark
        self.contentTime = contentTime
        self.streamTime = streamTime
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
    /// (explicit, or the stored bookmark when `resume.useBookmark`) and what the store knows; a resume
    /// stream time goes to the timeline as it is, which converts it with the session's layout.
    public func configuration(
        resumeContentTime: Double?, previouslyWatchedBreakIds: Set<String> = [],
        lastBreakCompletedAt: Double? = nil
    ) -> SessionConfiguration {
        SessionConfiguration(
            kind: kind, contentDuration: contentDuration, breaks: breaks, policy: policy,
            resumeContentTime: resume.streamTime == nil ? resumeContentTime : nil,
            resumeStreamTime: resume.streamTime, adRules: adRules,
            previouslyWatchedBreakIds: previouslyWatchedBreakIds,
            lastBreakCompletedAt: lastBreakCompletedAt)
    }
}

extension OpenSessionRequest: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.openSession.requestDescriptor }

    func write(to m: ProtoBuilder) {
        m.set("stream_id", streamId)
        m.set("content_id", contentId)
        m.set("profile", profile)
        m.set("kind", kind)
        m.set("breaks", breaks)
        m.set("content_duration", contentDuration)
        m.set("policy_preset", requestedPreset?.rawValue ?? "")
        // Left absent, not sent empty, when they change nothing.
        if !overrides.isEmpty { m.set("policy_overrides", overrides) }
        if resume != ResumeOptions() { m.set("resume", resume) }
        m.set("ad_rules", adRules)
    }

    /// Decodes and resolves the policy: an empty preset name means `defaultPreset`; an unknown one, or an
    /// unknown enum value, throws `.invalidArgument`; more than `maxBreaks` breaks throw `.tooLarge`
    /// before they are read. (`decode(_:)` uses the `.snapback` preset.)
    public static func decode(
        _ body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset, maxBreaks: Int = TimelineLayout.maxBreaks
    ) throws(WireError) -> OpenSessionRequest {
        try ProtoC.read(body, descriptor) { m throws(WireError) in
            try OpenSessionRequest(m, defaultPreset: defaultPreset, maxBreaks: maxBreaks)
        }
    }

    init(_ m: ProtoReader) throws(WireError) { try self.init(m, defaultPreset: .snapback, maxBreaks: TimelineLayout.maxBreaks) }

    init(_ m: ProtoReader, defaultPreset: AdPolicy.Preset, maxBreaks: Int) throws(WireError) {
        let presetName = try m.string("policy_preset")
        var preset: AdPolicy.Preset?
        if !presetName.isEmpty {
            guard let named = AdPolicy.Preset(rawValue: presetName) else {
                let known = AdPolicy.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidArgument("unknown policy preset \"\(presetName)\" (known: \(known))")
            }
            preset = named
        }
        // Read first: a request with more than one bad field is refused naming the overrides' first.
        let overrides = try m.message("policy_overrides") ?? PolicyOverrides()
        self.init(
            streamId: try m.string("stream_id"), contentId: try m.string("content_id"),
            profile: try m.string("profile"), kind: try m.enumValue("kind", as: SessionKind.self) ?? .onDemand,
            breaks: try m.messages("breaks", atMost: maxBreaks), contentDuration: m.optionalDouble("content_duration"),
            preset: preset, overrides: overrides, resume: try m.message("resume") ?? ResumeOptions(),
            adRules: try m.message("ad_rules"), defaultPreset: defaultPreset)
    }
}

extension ResumeOptions: ProtoFields {
    init(_ m: ProtoReader) {
        self.init(
            useBookmark: m.bool("use_bookmark"), contentTime: m.optionalDouble("resume_content_time"),
            streamTime: m.optionalDouble("resume_stream_time"))
    }

    func write(to m: ProtoBuilder) {
        m.set("use_bookmark", useBookmark)
        m.set("resume_content_time", contentTime)
        m.set("resume_stream_time", streamTime)
    }
}

/// `snapback.v1.AdRules`.
extension AdRules: ProtoFields {
    init(_ m: ProtoReader) {
        self.init(
            preroll: m.bool("preroll"), midrollTimes: m.doubles("midroll_times"), midrollEvery: m.double("midroll_every"),
            postroll: m.bool("postroll"))
        if let duration = m.optionalDouble("break_duration") { breakDuration = duration }
    }

    func write(to m: ProtoBuilder) {
        m.set("preroll", preroll)
        m.set("midroll_times", midrollTimes)
        m.set("midroll_every", midrollEvery)
        m.set("postroll", postroll)
        m.set("break_duration", breakDuration)
    }
}
