// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

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
    public var resume: SnapbackV1.ResumeOptions
    public var adRules: AdRules?

    public init(
        streamId: String, contentId: String, profile: String = "", kind: SessionKind = .onDemand,
        breaks: [AdBreak] = [], contentDuration: Double? = nil, preset: AdPolicy.Preset? = nil,
        overrides: PolicyOverrides = PolicyOverrides(), resume: SnapbackV1.ResumeOptions = SnapbackV1.ResumeOptions(),
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
            resumeContentTime: resume.resumeStreamTime == nil ? resumeContentTime : nil,
            resumeStreamTime: resume.resumeStreamTime, adRules: adRules,
            previouslyWatchedBreakIds: previouslyWatchedBreakIds,
            lastBreakCompletedAt: lastBreakCompletedAt)
    }
}

extension OpenSessionRequest: ProtoMapped {
    var proto: SnapbackV1.OpenSessionRequest {
        // The overrides and the resume options are left absent, not sent empty, when they change nothing.
        SnapbackV1.OpenSessionRequest(
            streamId: streamId, contentId: contentId, profile: profile, kind: kind.proto, breaks: breaks,
            contentDuration: contentDuration, policyPreset: requestedPreset?.rawValue ?? "",
            policyOverrides: overrides.isEmpty ? nil : overrides.proto,
            resume: resume == SnapbackV1.ResumeOptions() ? nil : resume, adRules: adRules?.proto)
    }

    /// Decodes with the `.snapback` preset as the default and `TimelineLayout.maxBreaks`.
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> OpenSessionRequest {
        try decode(body, defaultPreset: .snapback)
    }

    /// Decodes and resolves the policy: an empty preset name means `defaultPreset`; an unknown one, or an
    /// unknown enum value, throws `.invalidArgument`; more than `maxBreaks` breaks throw `.tooLarge`
    /// before they are read.
    public static func decode(
        _ body: UnsafeRawBufferPointer,
        defaultPreset: AdPolicy.Preset, maxBreaks: Int = TimelineLayout.maxBreaks
    ) throws(WireError) -> OpenSessionRequest {
        try OpenSessionRequest(proto: .decode(body, maxElements: maxBreaks), defaultPreset: defaultPreset)
    }

    init(proto p: SnapbackV1.OpenSessionRequest) throws(WireError) { try self.init(proto: p, defaultPreset: .snapback) }

    init(proto p: SnapbackV1.OpenSessionRequest, defaultPreset: AdPolicy.Preset) throws(WireError) {
        var preset: AdPolicy.Preset?
        if !p.policyPreset.isEmpty {
            guard let named = AdPolicy.Preset(rawValue: p.policyPreset) else {
                let known = AdPolicy.Preset.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidArgument("unknown policy preset \"\(p.policyPreset)\" (known: \(known))")
            }
            preset = named
        }
        // Read first: a request with more than one bad field is refused naming the overrides' first.
        var overrides = PolicyOverrides()
        if let o = p.policyOverrides { overrides = try PolicyOverrides(proto: o, path: "policy_overrides.") }
        self.init(
            streamId: p.streamId, contentId: p.contentId, profile: p.profile,
            kind: try SessionKind.from(p.kind, field: "kind") ?? .onDemand, breaks: p.breaks,
            contentDuration: p.contentDuration, preset: preset, overrides: overrides,
            resume: p.resume ?? SnapbackV1.ResumeOptions(), adRules: p.adRules.map(AdRules.init(proto:)),
            defaultPreset: defaultPreset)
    }
}

/// `snapback.v1.AdRules`.
extension AdRules {
    init(proto p: SnapbackV1.AdRules) {
        self.init(preroll: p.preroll, midrollTimes: p.midrollTimes, midrollEvery: p.midrollEvery, postroll: p.postroll)
        if let duration = p.breakDuration { breakDuration = duration }
    }

    var proto: SnapbackV1.AdRules {
        SnapbackV1.AdRules(
            preroll: preroll, midrollTimes: midrollTimes, midrollEvery: midrollEvery, postroll: postroll,
            breakDuration: breakDuration)
    }
}
