// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// One scenario per test, one row per preset with the actions it must take — each preset against the
/// anchor behaviour its doc comment cites (`AdPolicy+Presets.swift`, `ad-policy-anchors.md`). Stream unless
/// told: three unwatched one-minute mid-rolls m1 600–660, m2 1200–1260, m3 1800–1860.
@Suite struct PresetTests {
    struct Row<Expected: Sendable>: Sendable, CustomTestStringConvertible {
        var preset: AdPolicy.Preset
        var expected: Expected
        init(_ preset: AdPolicy.Preset, _ expected: Expected) { self.preset = preset; self.expected = expected }
        var testDescription: String { "\(preset.rawValue) → \(expected)" }
    }

    func playing(_ preset: AdPolicy.Preset, at t: Double, watched: Set<String> = []) throws -> TimelineSession {
        var s = try Factory.threeBreakSession(policy: AdPolicy(preset: preset), watched: watched)
        try s.report(t, at: 1000)
        return s
    }

    /// Several unwatched breaks skipped: the last one (TVSDK, IMA, Media3 and snapback) vs the first
    /// (hls.js).
    @Test(arguments: [
        Row(.snapback, [Seek(1800, .snapback)]), Row(.ima, [Seek(1800, .snapback)]),
        Row(.tvsdk, [Seek(1800, .snapback)]), Row(.media3, [Seek(1800, .snapback)]), Row(.hlsjs, [Seek(600, .snapback)])
    ])
    func forwardSeekOverSeveralUnwatchedBreaks(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 300)
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == row.expected)
    }

    /// The nearest skipped break is watched: nobody but snapback looks further back (TVSDK: "seek over
    /// breaks whose last one is watched goes straight to the target"; IMA `previousCuepoint` played;
    /// Media3 nearest group played → no ad); hls.js takes the first.
    @Test(arguments: [
        Row(.snapback, [Seek(1200, .snapback)]), Row(.ima, []), Row(.tvsdk, []), Row(.media3, []),
        Row(.hlsjs, [Seek(600, .snapback)])
    ])
    func forwardSeekOverSeveralBreaksWhoseLastIsWatched(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 300, watched: ["m3"])
        #expect(try s.seek(from: 300, to: 2000, at: 1001).seeks == row.expected)
    }

    /// Backward seeks: gated by Media3 (nearest group at or before the target), not by TVSDK, the IMA
    /// iOS samples, hls.js or snapback.
    @Test(arguments: [
        Row(.snapback, []), Row(.ima, []), Row(.tvsdk, []), Row(.media3, [Seek(600, .snapback)]), Row(.hlsjs, [])
    ])
    func backwardSeekOverAnUnwatchedBreak(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 2000)
        #expect(try s.seek(from: 2000, to: 900, at: 1001).seeks == row.expected)
    }

    /// Media3: each group gates the content after it, even for a seek that starts after it.
    @Test(arguments: [
        Row(.snapback, []), Row(.ima, []), Row(.tvsdk, []), Row(.media3, [Seek(600, .snapback)]), Row(.hlsjs, [])
    ])
    func forwardSeekAfterAnUnwatchedBreakBehindTheOrigin(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 700)
        #expect(try s.seek(from: 700, to: 900, at: 1001).seeks == row.expected)
    }

    /// TVSDK: "seek into the middle of an unwatched break plays from the beginning of the ad in which the
    /// seek ended"; the others go to the break start.
    @Test(arguments: [
        Row(.snapback, [Seek(600, .startOfBreak)]), Row(.ima, [Seek(600, .startOfBreak)]),
        Row(.tvsdk, [Seek(640, .startOfBreak)]), Row(.media3, [Seek(600, .startOfBreak)]),
        Row(.hlsjs, [Seek(600, .startOfBreak)])
    ])
    func seekIntoTheMiddleOfAnUnwatchedBreak(_ row: Row<[Seek]>) throws {
        var s = try Factory.playing(
            at: 300, breaks: [AdBreak(id: "b1", start: 600, duration: 60, adDurations: [20, 20, 20])],
            policy: AdPolicy(preset: row.preset))
        #expect(try s.seek(from: 300, to: 645, at: 1001).seeks == row.expected)
    }

    /// TVSDK: "seek into a watched break skips to the position just after the break" — every preset.
    @Test(arguments: AdPolicy.Preset.allCases.map { Row($0, [Seek(660, .skipWatchedBreak)]) })
    func seekIntoAWatchedBreak(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 300, watched: ["m1"])
        #expect(try s.seek(from: 300, to: 630, at: 1001).seeks == row.expected)
    }

    /// Back to the seek target after the break: IMA (if still ahead), TVSDK and Media3 (always), snapback
    /// (if beyond the break); hls.js resumes at the interstitial's resume point (hls.js #7029).
    @Test(arguments: [
        Row(.snapback, [Seek(900, .resumeAfterSnapback)]), Row(.ima, [Seek(900, .resumeAfterSnapback)]),
        Row(.tvsdk, [Seek(900, .resumeAfterSnapback)]), Row(.media3, [Seek(900, .resumeAfterSnapback)]),
        Row(.hlsjs, [])
    ])
    func afterTheSnapbackBreak(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 300)
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        #expect(try s.playBreak("m1", at: 1002).seeks == row.expected)
    }

    /// The watched moment: on begin for TVSDK and IMA (a cue point is `played` once its break starts), on
    /// end (played out) for the others.
    @Test(arguments: [
        Row(.snapback, false), Row(.ima, true), Row(.tvsdk, true), Row(.media3, false), Row(.hlsjs, false)
    ])
    func aSnappedBackBreakIsWatchedAtTheSnapback(_ row: Row<Bool>) throws {
        var s = try playing(row.preset, at: 300)
        #expect(try s.seek(from: 300, to: 900, at: 1001).watched == (row.expected ? ["m1"] : []))
    }

    /// Normal playback reaching a watched break: replayed (TVSDK, hls.js, IMA, snapback), skipped (Media3).
    @Test(arguments: [
        Row(.snapback, []), Row(.ima, []), Row(.tvsdk, []), Row(.media3, [Seek(660, .skipWatchedBreak)]), Row(.hlsjs, [])
    ])
    func playbackReachingAWatchedBreak(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 590, watched: ["m1"])
        #expect(try s.report(600.5, at: 1011).seeks == row.expected)
    }

    /// Seek controls are held during an unwatched ad (IMA samples disable them, hls.js X-RESTRICT=SKIP);
    /// IMA counts the break watched as it begins, but the visit began unwatched, so the seek out of it is
    /// refused all the same. TVSDK does not disable seeking during ads: the seek is carried out.
    @Test(arguments: [
        Row(.snapback, [Seek(610, .seekRefusedDuringAd)]), Row(.ima, [Seek(610, .seekRefusedDuringAd)]),
        Row(.tvsdk, []), Row(.media3, [Seek(610, .seekRefusedDuringAd)]),
        Row(.hlsjs, [Seek(610, .seekRefusedDuringAd)])
    ])
    func seekDuringAnUnwatchedBreak(_ row: Row<[Seek]>) throws {
        var s = try playing(row.preset, at: 590)
        try s.report(601, at: 1011)
        #expect(try s.seek(from: 610, to: 900, at: 1020).seeks == row.expected)
    }

    /// Resume from a bookmark at content 1000 in the seeds' layout (stream 1090): none before it (IMA
    /// HTML5/Android, hls.js), the pre-roll (TVSDK sample), the last break before it (Media3
    /// playAdBeforeStartPosition, snapback).
    @Test(arguments: [
        Row(.snapback, [Seek(630, .breakBeforeResume)]), Row(.ima, [Seek(1090, .resumeFromBookmark)]),
        Row(.tvsdk, [Seek(0, .breakBeforeResume)]), Row(.media3, [Seek(630, .breakBeforeResume)]),
        Row(.hlsjs, [Seek(1090, .resumeFromBookmark)])
    ])
    func resumeFromABookmark(_ row: Row<[Seek]>) throws {
        let (_, opened) = try Factory.session(policy: AdPolicy(preset: row.preset), resume: 1000)
        #expect(opened.seeks == row.expected)
    }

    // MARK: The presets themselves

    @Test(arguments: AdPolicy.Preset.allCases)
    func aPresetByNameIsThePresetValue(_ preset: AdPolicy.Preset) {
        let byValue: AdPolicy
        switch preset {
        case .snapback: byValue = .snapback
        case .ima: byValue = .ima
        case .tvsdk: byValue = .tvsdk
        case .media3: byValue = .media3
        case .hlsjs: byValue = .hlsjs
        }
        #expect(AdPolicy(preset: preset) == byValue)
        #expect(AdPolicy.Preset(rawValue: preset.rawValue) == preset)
    }

    @Test func snapbacksPresetIsTheDefaultPolicy() {
        #expect(AdPolicy.snapback == AdPolicy())
    }

    @Test func presetNames() {
        #expect(AdPolicy.Preset.allCases.map(\.rawValue) == ["snapback", "ima", "tvsdk", "media3", "hlsjs"])
    }

    @Test func theDefaultsAreDocumented() {
        let p = AdPolicy()
        #expect(p.skippedBreakChoice == .lastUnwatched)
        #expect(p.seekGate == .crossedBreaks)
        #expect(!p.enforceBackwardSeeks)
        #expect(p.returnToTarget == .ifBeyondBreak)
        #expect(p.landingInUnwatchedBreak == .breakStart)
        #expect(p.skipWatchedBreakOnLanding)
        #expect(p.watchedWhen == .onEnd)
        #expect(p.refuseSeeksDuringUnwatchedBreak)
        #expect(p.watchedBreakOnPlayback == .replay)
        #expect(p.snapbackLandingOffset == 0)
        #expect(p.cooldown == 0)
        #expect(p.trickPlayAsSeek)
        #expect(p.resumeBreaks == .lastBefore)
        #expect(!p.prerollDisabled && !p.midrollsDisabled)
        #expect(!p.liveSnapback && !p.liveBookmarks)
        #expect(p.maxSnapbacksPerBreak == 3)
        #expect(p.coverageTolerance == 2)
        #expect(p.bookmarkInterval == 30)
        #expect(p.finishedMargin == 30)
        #expect(p.trickPlaySkippedBreaks == .notPlayed)
        // Only TVSDK tells the break that plays after trick play as skipped too.
        for preset in AdPolicy.Preset.allCases {
            #expect((AdPolicy(preset: preset).trickPlaySkippedBreaks == .everyPassed) == (preset == .tvsdk))
        }
    }
}
