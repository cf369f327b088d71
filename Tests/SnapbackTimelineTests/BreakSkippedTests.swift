// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Breaks not played where the viewer met them (`breakSkipped`, pushed as BreakSkipped) and the per-break
/// state of the session state (issue #11).
@Suite struct BreakSkippedTests {
    static func skips(_ actions: [TimelineAction]) -> [String] {
        actions.compactMap { if case .breakSkipped(let id, let why) = $0.kind { "\(id) \(why.rawValue)" } else { nil } }
    }

    /// snapback's default: trick play over m1, m2 and m3 plays m3 (the last unwatched); the two it skips are
    /// told, before the seek to the one that plays, which was not skipped.
    @Test func trickPlaySkipsEveryBreakButTheOneThatPlays() throws {
        var s = try Factory.playing(at: 300, breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        let ended = try s.handle(.trickPlayEnded(streamTime: 2000), at: 1100)
        #expect(Self.skips(ended) == ["m1 trick-play", "m2 trick-play"])
        // Before the seek to the break that plays.
        let firstSkip = ended.firstIndex { if case .breakSkipped = $0.kind { true } else { false } }
        #expect(firstSkip.map { $0 < (ended.firstIndex { $0.isSeek } ?? 0) } == true)
        #expect(ended.seeks.first == Seek(1800, .snapback))
        let states = s.snapshot(at: 1100).breakStates
        #expect(states.map(\.skipped) == [.trickPlay, .trickPlay, nil])
    }

    /// TVSDK dispatches AD_BREAK_SKIPPED before each break fast-forward passes and, on leaving trick play,
    /// plays the last of them (Adobe TVSDK, "Customize playback with ads": trick play skips ads, then plays
    /// the last break skipped): m1, m2 and m3 are told, in that order, before the seek to m3, which plays.
    /// Once m3 has played it is no longer skipped.
    @Test func tvsdkTrickPlayTellsEveryBreakItPassedTheOneThatPlaysToo() throws {
        var s = try Factory.playing(
            at: 300, breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent, policy: .tvsdk)
        _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
        let ended = try s.handle(.trickPlayEnded(streamTime: 2000), at: 1100)
        #expect(Self.skips(ended) == ["m1 trick-play", "m2 trick-play", "m3 trick-play"])
        let lastSkip = ended.lastIndex { if case .breakSkipped = $0.kind { true } else { false } }
        #expect(lastSkip.map { $0 < (ended.firstIndex { $0.isSeek } ?? 0) } == true)
        #expect(ended.seeks.first == Seek(1800, .snapback))
        #expect(s.snapshot(at: 1100).currentBreakId == "m3")
        #expect(s.snapshot(at: 1100).breakStates.map(\.skipped) == [.trickPlay, .trickPlay, .trickPlay])
        #expect(try s.playBreak("m3", at: 1101).seeks == [Seek(2000, .resumeAfterSnapback)])
        #expect(s.snapshot(at: 1101).breakStates.map(\.skipped) == [.trickPlay, .trickPlay, nil])
    }

    /// Rewinding, TVSDK meets the breaks backwards and plays none (backward seeks are not held): m3, m2, m1.
    /// snapback's default tells them in stream order.
    @Test func rewindTellsTheBreaksInTheOrderTrickPlayMetThemUnderTVSDK() throws {
        for (policy, order) in [(AdPolicy.tvsdk, ["m3", "m2", "m1"]), (AdPolicy(), ["m1", "m2", "m3"])] {
            var s = try Factory.playing(
                at: 2000, breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent, policy: policy)
            _ = try s.handle(.trickPlayStarted(streamTime: 2000, rate: -8), at: 1001)
            let ended = try s.handle(.trickPlayEnded(streamTime: 300), at: 1100)
            #expect(Self.skips(ended) == order.map { "\($0) trick-play" })
            #expect(ended.seeks == [])
        }
    }

    /// The field overrides the preset either way.
    @Test func theFieldOverridesThePreset() throws {
        let told = Factory.policy { $0.trickPlaySkippedBreaks = .everyPassed }
        let tvsdkLikeTheDefault = Factory.preset(.tvsdk) { $0.trickPlaySkippedBreaks = .notPlayed }
        for (policy, count) in [(told, 3), (tvsdkLikeTheDefault, 2)] {
            var s = try Factory.playing(
                at: 300, breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent, policy: policy)
            _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1001)
            #expect(Self.skips(try s.handle(.trickPlayEnded(streamTime: 2000), at: 1100)).count == count)
        }
    }

    /// A resume that plays no break before the bookmark skips them; they are exempt from then on, and a
    /// seek over one of them says so.
    @Test func aResumeSkipsTheBreaksBeforeItAndASeekOverAnExemptOneSaysSo() throws {
        var (s, opened) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            policy: .ima, resume: 1300)
        #expect(Self.skips(opened) == ["m1 resume-plan", "m2 resume-plan"])
        #expect(s.snapshot(at: 1000).breakStates.map(\.exempt) == [true, true, false])
        try s.report(1420, at: 1001)
        _ = try s.seek(from: 1420, to: 100, at: 1002)
        #expect(Self.skips(try s.seek(from: 100, to: 1100, at: 1003)) == ["m1 exempt"])
    }

    /// During the cooldown a break reached is skipped, with its reason before the seek over it.
    @Test func theCooldownSkipsABreakReached() throws {
        let policy = Factory.policy { $0.cooldown = 600 }
        var s = try Factory.playing(
            at: 590, breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            policy: policy)
        try s.playBreak("m1", at: 1010)
        try s.report(1190, at: 1100)
        let reached = try s.report(1200.5, at: 1110)
        #expect(Self.skips(reached) == ["m2 cooldown"])
        #expect(reached.seeks == [Seek(1260, .skipDuringCooldown)])
    }

    /// Media3 skips a watched break reached by playback.
    @Test func aWatchedBreakSkippedOnPlayback() throws {
        var s = try Factory.playing(at: 590, policy: .media3, watched: ["b1"])
        #expect(Self.skips(try s.report(600.5, at: 1011)) == ["b1 watched"])
        #expect(s.snapshot(at: 1011).breakStates.first?.skipped == .watched)
    }

    /// Each break's position: pre-roll at 0, post-roll at the content's end, mid-rolls between.
    @Test func breakStatesGiveEachBreaksPosition() throws {
        let breaks = [
            AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "mid", start: 630, duration: 60),
            AdBreak(id: "post", start: 1890, duration: 30)
        ]
        let (s, _) = try Factory.session(breaks: breaks, contentDuration: 1800)
        let states = s.snapshot(at: 1000).breakStates
        #expect(states.map(\.breakId) == ["pre", "mid", "post"])
        #expect(states.map(\.position) == [.preroll, .midroll, .postroll])
        #expect(states.allSatisfy { !$0.watched && !$0.exempt && $0.skipped == nil })
    }
}
