// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackDaemon

/// The wall clock stepped under a running daemon — NTP setting a box that booted at 1970, an operator
/// moving it by minutes — in process, through the real service: durations run on the monotonic clock,
/// stored wall times are judged by the clock that wrote them.
@Suite struct ClockStepTests {
    static let years56 = 56 * 365.25 * 86_400
    static let steps = [-years56, -600, 600, years56]

    /// A seed session with two mid-rolls (b1 at 600, b2 at 1200) and a two-minute cooldown.
    static func twoBreaks(contentId: String = "seed", cooldown: Double = 120) -> OpenSessionRequest {
        var overrides = PolicyOverrides()
        overrides.cooldown = cooldown
        return Streams.seed(
            contentId: contentId,
            breaks: [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "b2", start: 1200, duration: 60)],
            overrides: overrides)
    }

    /// The seeds' story: a seek over b1 snaps back, b1 plays to its end (watched, the cooldown starts),
    /// the viewer is returned to 900.
    static func watchB1(_ player: EmbeddedPlayer, _ session: UInt64) throws {
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [600])
        try player.send(.adBreakStarted(breakId: "b1"), session: session)
        try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: session)
        var pushes = try player.send(.adBreakEnded(breakId: "b1"), session: session)
        pushes += try player.nextPushes()
        #expect(pushes.seekTargets == [900])
        #expect(pushes.watchedBreaks == ["b1"])
    }

    /// After the clock was set back, the cooldown still ends its two minutes after the break.
    @Test(arguments: steps.filter { $0 < 0 })
    func aCooldownEndsAfterItsDurationWhenTheClockIsSetBack(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Self.twoBreaks()).sessionId
        try Self.watchB1(player, session)
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 121)
        try player.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: session)
        #expect(try player.send(.seekEnded(from: 1000, to: 1300), session: session).seekTargets == [1200])
    }

    /// After the clock was set forward, the cooldown still lasts its two minutes.
    @Test(arguments: steps.filter { $0 > 0 })
    func aCooldownLastsItsDurationWhenTheClockIsSetForward(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Self.twoBreaks()).sessionId
        try Self.watchB1(player, session)
        daemon.advance(by: 30)
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 30)
        try player.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: session)
        let pushes = try player.send(.seekEnded(from: 1000, to: 1300), session: session)
        #expect(!pushes.seekTargets.contains(1200), "a seek over b2 snapped back within the cooldown")
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        // On the wire the cooldown's end is a wall time, on the clock as it reads now.
        #expect(state.cooldownUntil.map { abs($0 - (daemon.clock.time + 60)) < 0.01 } == true, "\(state.cooldownUntil ?? 0)")
    }

    /// The box-wide cooldown: a session opened ten seconds after another's break completed, the clock
    /// set back meanwhile, starts in the cooldown; one opened after it has run starts without.
    @Test(arguments: steps)
    func theBoxWideCooldownRunsOnRealTime(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let first = try daemon.player()
        try Self.watchB1(first, try first.openSession(Self.twoBreaks()).sessionId)
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 10)
        func seekOverB1() throws -> [Double] {
            let player = try daemon.player()
            let session = try player.openSession(Self.twoBreaks(contentId: "other")).sessionId
            try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
            return try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets
        }
        #expect(try seekOverB1() == [], "a session opened within the cooldown snapped back")
        daemon.advance(by: 120)
        #expect(try seekOverB1() == [600])
    }

    /// A clock set forward while the program plays: the playhead is not taken to have moved by the
    /// step, so closing the session keeps the viewer's position (it was cleared as finished, the
    /// playhead extrapolated past the end) and a jump over a break the player did not report as a seek
    /// still snaps back (the step "explained" it).
    @Test(arguments: steps.filter { $0 > 0 })
    func aPlayingSessionIgnoresAForwardStep(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "movie")).sessionId
        try player.send(.playheadReported(streamTime: 100, rate: 1, playing: true), session: session)
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 1)
        #expect(
            try player.send(.playheadReported(streamTime: 900, rate: 1, playing: true), session: session).seekTargets == [600])

        let other = try daemon.player()
        let second = try other.openSession(Streams.seed(contentId: "film")).sessionId
        try other.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: second)
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 10)
        var closed = try other.closeSession(second)
        closed += try other.nextPushes()
        #expect(closed.savedBookmarks == [310])
        let stored: Bookmark = try other.call(.getBookmark(profile: "", contentId: "film"))
        #expect(!stored.finished && stored.contentTime == 310)
    }

    /// Whether b1 of `contentId` is watched in a session opened now.
    static func b1Watched(_ daemon: EmbeddedDaemon, contentId: String = "seed") throws -> Bool {
        let player = try daemon.player()
        let session = try player.openSession(Self.twoBreaks(contentId: contentId, cooldown: 0)).sessionId
        defer { player.peer.disconnect() }
        return daemon.service.timeline(ofSession: session)?.breaks.first?.watched == true
    }

    /// A box that booted at 1970 and was set to 2027 by NTP: the break watched before the step stays
    /// watched for a day of real time — through a prune of the store — and not longer.
    @Test func aBreakWatchedBeforeNTPSetTheClockIsKeptADay() throws {
        let daemon = EmbeddedDaemon(clock: ManualClock(at: 100, monotonic: 12))
        let player = try daemon.player()
        try Self.watchB1(player, try player.openSession(Self.twoBreaks(cooldown: 0)).sessionId)
        player.peer.disconnect()
        daemon.clock.setWall(to: 1_800_000_000)
        daemon.advance(by: 2 * 3600)
        // Another break watched more than an hour after the last prune: the store is pruned again.
        let other = try daemon.player()
        try Self.watchB1(other, try other.openSession(Self.twoBreaks(contentId: "other", cooldown: 0)).sessionId)
        other.peer.disconnect()
        #expect(daemon.store.watchedCount == 2)
        #expect(try Self.b1Watched(daemon))
        daemon.advance(by: 21 * 3600)
        #expect(try Self.b1Watched(daemon))
        daemon.advance(by: 3600 + 2)  // past the day and the one-second tolerance
        #expect(try !Self.b1Watched(daemon))
        #expect(try Self.b1Watched(daemon, contentId: "other"))
    }

    /// A clock set back: the break watched "in the future" is kept a day of real time, not until the
    /// clock catches up with it.
    @Test(arguments: steps.filter { $0 < 0 })
    func aBreakWatchedBeforeTheClockWasSetBackIsKeptADay(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        try Self.watchB1(player, try player.openSession(Self.twoBreaks(cooldown: 0)).sessionId)
        player.peer.disconnect()
        daemon.clock.stepWall(by: step)
        daemon.advance(by: 23 * 3600)
        #expect(try Self.b1Watched(daemon))
        daemon.advance(by: 3600 + 2)  // past the day and the one-second tolerance
        #expect(try !Self.b1Watched(daemon))
    }

    /// Periodic bookmarks of sessions on different ticks go on every 30 s through steps both ways, and
    /// a step sets off no burst of timers.
    @Test func periodicSavesGoOnThroughStepsWithoutATimerStorm() throws {
        let daemon = EmbeddedDaemon()
        var players: [(EmbeddedPlayer, UInt64)] = []
        for i in 0..<3 {
            let player = try daemon.player()
            let session = try player.openSession(Streams.seed(contentId: "c\(i)", breaks: [])).sessionId
            try player.send(.playheadReported(streamTime: 0, rate: 1, playing: true), session: session)
            players.append((player, session))
            daemon.advance(by: 11)  // each on its own tick
        }
        for step in [-Self.years56, Self.years56, -600, 600] {
            daemon.clock.stepWall(by: step)
            let firings = daemon.clock.firings
            var saves = [0, 0, 0]
            for _ in 0..<120 {
                daemon.advance(by: 1)
                for (i, (player, _)) in players.enumerated() {
                    saves[i] += try player.nextPushes().savedBookmarks.count
                }
            }
            // Every 30 s: 4 in two minutes each (3 for a session whose first save moved to its tick).
            #expect(saves.allSatisfy { (3...5).contains($0) }, "step \(step): saves \(saves)")
            // One shared timer, at most one firing per 5-second tick.
            #expect(daemon.clock.firings - firings <= 24, "step \(step): \(daemon.clock.firings - firings) firings")
            #expect(daemon.clock.activeTimers <= 1 + 2 * players.count)
        }
    }

    /// Bookmarks list (and are evicted) in the order they were saved: one saved after the clock was set
    /// back is the most recent, its older time notwithstanding.
    @Test(arguments: steps.filter { $0 < 0 })
    func bookmarksSavedAfterTheClockWasSetBackAreTheMostRecent(step: Double) throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        func pauseIn(_ contentId: String) throws {
            let session = try player.openSession(Streams.seed(contentId: contentId)).sessionId
            try player.send(.playheadReported(streamTime: 100, rate: 1, playing: true), session: session)
            try player.send(.paused(streamTime: 100), session: session)
            try player.closeSession(session)
            daemon.advance(by: 60)
        }
        try pauseIn("a")
        try pauseIn("b")
        daemon.clock.stepWall(by: step)
        try pauseIn("c")
        let list: SnapbackV1.ListBookmarksReply = try player.call(.listBookmarks(profile: "", pageSize: 10, pageToken: ""))
        #expect(list.bookmarks.map(\.contentId) == ["c", "b", "a"])
        // The time shown is the clock's at the save, stepped or not.
        #expect(list.bookmarks[0].updatedAt < list.bookmarks[1].updatedAt)
    }
}

/// The wall clock's epochs against the monotonic clock, and the ranges the store is asked for.
@Suite struct WallClockStepsTests {
    @Test func slewingIsTheSameClockAndAStepStartsAnEpoch() {
        var steps = WallClockSteps(wall: 1_000_100, monotonic: 100)
        #expect(steps.observe(wall: 1_000_200.5, monotonic: 200) == nil)  // slewed by half a second
        #expect(steps.epochs.count == 1 && steps.offset == 1_000_000.5)
        // A day later, 40 s of slewing is within 1 ms per second.
        #expect(steps.observe(wall: 1_000_000.5 + 86_600 + 40, monotonic: 86_600) == nil)
        #expect(steps.observe(wall: 1_000_000 + 86_700 - 600, monotonic: 86_700).map { ($0 + 640.5).magnitude < 1e-6 } == true)
        #expect(steps.epochs.count == 2 && steps.steps == 1)
        #expect(steps.observe(wall: .nan, monotonic: 86_701) == nil)
    }

    @Test func rangesFollowTheClockThatWroteEachPart() {
        // Booted at 1970 (wall 100 at monotonic 10), set to 1.8e9 at monotonic 3610.
        var steps = WallClockSteps(wall: 100, monotonic: 10)
        steps.observe(wall: 1_800_000_000, monotonic: 3_610)
        let t = WallClockSteps.tolerance
        let day = 86_400.0
        let ranges = steps.wallRanges(last: day, at: 7_210)
        // Before the run: a day back by each clock; the run's first hour by the 1970 clock; since then, now's.
        let offset2 = 1_800_000_000.0 - 3_610
        #expect(
            ranges == [
                (10 - day + 7_200 + 90 - t)...(3_700 + t),
                (7_210 - day + offset2 - t)...(10 + offset2 + t),
                (3_610 + offset2 - t)...(7_210 + offset2 + t)
            ])
        // Once the run is more than a day old, the first epoch's rows are out of range.
        #expect(steps.wallRanges(last: day, at: day + 3_611) == [(3_611 + offset2 - t)...(day + 3_611 + offset2 + t)])
        #expect(steps.wallRanges(last: 0, at: 10).isEmpty)
    }

    @Test func aClockSteppedWithoutEndKeepsItsLatestEpochs() {
        var steps = WallClockSteps(wall: 0, monotonic: 0)
        for i in 1...100 { steps.observe(wall: Double(i) * 1000 + Double(i), monotonic: Double(i)) }
        #expect(steps.epochs.count == WallClockSteps.maxEpochs)
        #expect(steps.steps == 100)
        #expect(steps.wallRanges(last: 86_400, at: 100).count <= 2 * WallClockSteps.maxEpochs)
    }
}
