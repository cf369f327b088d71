// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire
import Testing

@Suite("Preset and overrides resolution")
struct MessagePolicyTests {
    func decodedOpen(_ request: OpenSessionRequest, defaultPreset: AdPolicy.Preset = .snapback) throws
        -> OpenSessionRequest
    {
        guard
            case .openSession(let open) = try WireRequest.decode(
                method: .openSession, body: WireRequest.openSession(request).encoded(), defaultPreset: defaultPreset)
        else {
            Issue.record("not an openSession")
            return request
        }
        return open
    }

    @Test(arguments: AdPolicy.Preset.allCases)
    func namedPresetWithoutOverrides(_ preset: AdPolicy.Preset) throws {
        let open = try decodedOpen(
            OpenSessionRequest(streamId: "s", contentId: "c", preset: preset),
            defaultPreset: .hlsjs)
        #expect(open.requestedPreset == preset)
        #expect(open.preset == preset)
        #expect(open.policy == AdPolicy(preset: preset))
        #expect(open.overrides.isEmpty)
    }

    @Test(arguments: AdPolicy.Preset.allCases)
    func noPresetMeansTheDaemonsDefault(_ preset: AdPolicy.Preset) throws {
        let open = try decodedOpen(OpenSessionRequest(streamId: "s", contentId: "c"), defaultPreset: preset)
        #expect(open.requestedPreset == nil)
        #expect(open.preset == preset)
        #expect(open.policy == AdPolicy(preset: preset))
    }

    @Test func overridesApplyOnTopOfThePreset() throws {
        var overrides = PolicyOverrides()
        overrides.cooldown = 90
        overrides.enforceBackwardSeeks = false
        overrides.resumeBreaks = AdPolicy.ResumeBreaks.none
        let open = try decodedOpen(
            OpenSessionRequest(
                streamId: "s", contentId: "c", preset: .media3,
                overrides: overrides))
        var expected = AdPolicy.media3
        expected.cooldown = 90
        expected.enforceBackwardSeeks = false  // media3 sets true: the override wins
        expected.resumeBreaks = .none
        #expect(open.policy == expected)
        #expect(open.overrides == overrides)
    }

    @Test func everyFieldCanBeOverridden() throws {
        let open = try decodedOpen(fullOpenSession)
        #expect(open.overrides == everyOverride)
        let p = open.policy
        #expect(p.skippedBreakChoice == .first)
        #expect(p.seekGate == .allBreaksBeforeTarget)
        #expect(p.enforceBackwardSeeks == true)
        #expect(p.returnToTarget == .never)
        #expect(p.landingInUnwatchedBreak == .adStart)
        #expect(p.skipWatchedBreakOnLanding == false)
        #expect(p.watchedWhen == .never)
        #expect(p.refuseSeeksDuringUnwatchedBreak == false)
        #expect(p.watchedBreakOnPlayback == .skip)
        #expect(p.snapbackLandingOffset == 0.1)
        #expect(p.cooldown == 0)
        #expect(p.trickPlayAsSeek == false)
        #expect(p.resumeBreaks == .prerollAndLastBefore)
        #expect(p.prerollDisabled == true)
        #expect(p.midrollsDisabled == true)
        #expect(p.liveSnapback == true)
        #expect(p.liveBookmarks == true)
        #expect(p.maxSnapbacksPerBreak == 7)
        #expect(p.coverageTolerance == 0.5)
        #expect(p.bookmarkInterval == 0)
        #expect(p.finishedMargin == 12.5)
    }

    @Test func aZeroOverrideIsPresentNotAbsent() throws {
        // tvsdk's bookmark interval is the default 30; an explicit 0 must turn periodic bookmarks off.
        var overrides = PolicyOverrides()
        overrides.bookmarkInterval = 0
        overrides.liveSnapback = false
        let open = try decodedOpen(
            OpenSessionRequest(
                streamId: "s", contentId: "c", preset: .tvsdk,
                overrides: overrides))
        #expect(open.overrides.bookmarkInterval == 0)
        #expect(open.overrides.liveSnapback == false)
        #expect(open.policy.bookmarkInterval == 0)
    }

    @Test(arguments: AdPolicy.Preset.allCases, AdPolicy.Preset.allCases)
    func overridesBetweenAnyTwoPresets(_ from: AdPolicy.Preset, _ to: AdPolicy.Preset) throws {
        let overrides = PolicyOverrides(from: AdPolicy(preset: from), to: AdPolicy(preset: to))
        let open = try decodedOpen(
            OpenSessionRequest(
                streamId: "s", contentId: "c", preset: from,
                overrides: overrides))
        #expect(open.policy == AdPolicy(preset: to))
        #expect(overrides.isEmpty == (AdPolicy(preset: from) == AdPolicy(preset: to)))
    }

    @Test func configurationCarriesTheRequest() throws {
        let open = try decodedOpen(adRulesOpenSession)
        let config = open.configuration(
            resumeContentTime: 870, previouslyWatchedBreakIds: ["pre"],
            lastBreakCompletedAt: 5)
        #expect(config.kind == .live)
        #expect(config.contentDuration == nil)
        #expect(config.policy == AdPolicy.snapback)
        #expect(config.resumeContentTime == 870)
        #expect(config.adRules == adRulesOpenSession.adRules)
        #expect(config.previouslyWatchedBreakIds == ["pre"])
        #expect(config.lastBreakCompletedAt == 5)
        #expect(open.resume == SnapbackV1.ResumeOptions(useBookmark: true, resumeContentTime: nil))
    }

    @Test func adRulesWithoutBreakDurationUseTheDefault() throws {
        // OpenSessionRequest{ad_rules: {preroll: true}}
        guard case .openSession(let open) = try WireRequest.decode(method: .openSession, body: [0x52, 0x02, 0x08, 0x01])
        else {
            Issue.record("not an openSession")
            return
        }
        #expect(open.adRules == AdRules(preroll: true, midrollTimes: [], midrollEvery: 0, postroll: false))
        #expect(open.adRules?.breakDuration == 30)
    }
}
