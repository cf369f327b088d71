// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// The cooldown (TVSDK recipe): for N seconds after a break completed (of the time the session is given:
/// the daemon's monotonic clock), breaks are skipped. Stream: three one-minute mid-rolls m1 600–660, m2 1200–1260, m3 1800–1860; cooldown 300 s.
@Suite struct CooldownTests {
    let policy = Factory.policy { $0.cooldown = 300 }

    /// A session whose viewer just watched m1 (completed at wall time 1070) and plays at 700.
    func afterFirstBreak() throws -> TimelineSession {
        var s = try Factory.threeBreakSession(policy: policy)
        try s.report(590, at: 1000)
        #expect(try s.playBreak("m1", at: 1010).watched == ["m1"])
        try s.report(700, at: 1110)
        return s
    }

    /// A session opened during a cooldown started by another player: a break completed at wall time 900.
    func duringCooldownFromEarlierPlayer(at t: Double) throws -> TimelineSession {
        var (s, _) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            policy: policy, lastBreakCompletedAt: 900)
        try s.report(t, at: 1000)
        return s
    }

    @Test func aCompletedBreakStartsTheCooldown() throws {
        let s = try afterFirstBreak()
        #expect(s.snapshot(at: 1110).cooldownUntil == 1370)
        #expect(s.snapshot(at: 1371).cooldownUntil == nil)
    }

    /// Times go back (a caller whose clock was set back): the cooldown never runs for longer than its
    /// duration from the time given, so it ends instead of lasting as long as the step.
    @Test(arguments: [-600.0, -1.8e9])
    func aCooldownNeverOutlastsItsDurationWhenTimeGoesBack(step: Double) throws {
        var s = try afterFirstBreak()
        #expect(s.snapshot(at: 1110 + step).cooldownUntil == nil)
        try s.report(700, at: 1120 + step, playing: false)
        #expect(try s.seek(from: 700, to: 1500, at: 1120 + step).seeks == [Seek(1200, .snapback)])
        // Opened with the last break "in the future": no cooldown either.
        let (opened, _) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent, policy: policy,
            lastBreakCompletedAt: 900 - step)
        #expect(opened.snapshot(at: 1000).cooldownUntil == nil)
    }

    @Test func aSeekOverAnUnwatchedBreakDuringTheCooldownIsNotHeld() throws {
        var s = try afterFirstBreak()
        let actions = try s.seek(from: 700, to: 1500, at: 1120)
        #expect(actions.seeks == [])
        #expect(actions.bookmarks == [1380])
    }

    @Test func aSeekOverAnUnwatchedBreakAfterTheCooldownSnapsBack() throws {
        var s = try afterFirstBreak()
        try s.report(700, at: 1380, playing: false)
        #expect(try s.seek(from: 700, to: 1500, at: 1380).seeks == [Seek(1200, .snapback)])
    }

    @Test func playbackReachingAnUnwatchedBreakDuringTheCooldownSkipsIt() throws {
        var s = try duringCooldownFromEarlierPlayer(at: 590)
        let actions = try s.report(600.5, at: 1010)
        #expect(actions.seeks == [Seek(660, .skipDuringCooldown)])
        #expect(actions.first(where: \.isSeek)?.reason.description == "cooldown until 1200: break m1 600–660 skipped")
    }

    @Test func aSeekLandingInAnUnwatchedBreakDuringTheCooldownSkipsIt() throws {
        var s = try duringCooldownFromEarlierPlayer(at: 300)
        #expect(try s.seek(from: 300, to: 630, at: 1001).seeks == [Seek(660, .skipDuringCooldown)])
    }

    /// TVSDK recipe: no break plays during the cooldown, a watched one replayed by playback neither.
    @Test func playbackReachingAWatchedBreakDuringTheCooldownSkipsIt() throws {
        var (s, _) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            policy: policy, watched: ["m1"], lastBreakCompletedAt: 900)
        try s.report(590, at: 1000)
        #expect(try s.report(600.5, at: 1010).seeks == [Seek(660, .skipDuringCooldown)])
    }

    @Test func aSeekLandingInAWatchedBreakDuringTheCooldownSkipsIt() throws {
        var (s, _) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            policy: Factory.policy {
                $0.cooldown = 300
                $0.skipWatchedBreakOnLanding = false
            }, watched: ["m1"], lastBreakCompletedAt: 900)
        try s.report(300, at: 1000)
        #expect(try s.seek(from: 300, to: 630, at: 1001).seeks == [Seek(660, .skipDuringCooldown)])
    }

    @Test func theCooldownCanStartInAnotherPlayer() throws {
        let s = try duringCooldownFromEarlierPlayer(at: 300)
        #expect(s.snapshot(at: 1000).cooldownUntil == 1200)
    }

    @Test func aCooldownFromAnotherPlayerEnds() throws {
        var s = try duringCooldownFromEarlierPlayer(at: 300)
        try s.report(300, at: 1201, playing: false)
        #expect(try s.seek(from: 300, to: 900, at: 1201).seeks == [Seek(600, .snapback)])
    }

    @Test func zeroCooldownIsOff() throws {
        var (s, _) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            lastBreakCompletedAt: 900)
        #expect(s.snapshot(at: 1000).cooldownUntil == nil)
        try s.report(590, at: 1000)
        try s.playBreak("m1", at: 1010)
        #expect(s.snapshot(at: 1070).cooldownUntil == nil)
        try s.report(700, at: 1110)
        #expect(try s.seek(from: 700, to: 1500, at: 1120).seeks == [Seek(1200, .snapback)])
    }
}
