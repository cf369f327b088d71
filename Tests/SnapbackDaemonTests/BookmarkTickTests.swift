// SPDX-License-Identifier: Apache-2.0
import SnapbackEmbedded
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackDaemon

/// Periodic bookmarks on a shared tick: the saves of all playing sessions fall on a few instants, so
/// the store can commit each instant's saves together. In process, through the real service.
@Suite struct BookmarkTickTests {
    @Test func deadlinesMoveToTheNearestTickAndNeverBeforeNow() {
        let now = 1_800_000_012.3
        // 30 s ahead on a 5 s grid: the nearest multiple of 5.
        #expect(TickTimers.aligned(now + 30, now: now, tick: 5) == 1_800_000_040)
        #expect(TickTimers.aligned(1_800_000_043, now: 1_800_000_013, tick: 5) == 1_800_000_045)
        // Already on the grid: unchanged (a session stays on it).
        #expect(TickTimers.aligned(1_800_000_070, now: 1_800_000_040, tick: 5) == 1_800_000_070)
        // A delay shorter than the tick is its own grid: moved by at most half of it, after now.
        let short = TickTimers.aligned(now + 1, now: now, tick: 5)
        #expect(abs(short - (now + 1)) <= 0.5 && short > now)
        // No tick, or values that are not finite: unchanged, and nothing traps.
        #expect(TickTimers.aligned(now + 30, now: now, tick: 0) == now + 30)
        #expect(TickTimers.aligned(.infinity, now: now, tick: 5) == .infinity)
        #expect(TickTimers.aligned(now + 1e17, now: now, tick: 5).isFinite)
        #expect(TickTimers.aligned(.nan, now: now, tick: 5).isNaN)
    }

    /// Timers of one instant fire from one callback, in the order they were made; a stopped one does
    /// not fire, a restarted one fires at its new instant.
    @Test func timersOfOneTickFireTogetherInOrder() {
        let clock = ManualClock(at: 1000)
        let ticks = TickTimers(clock: clock, tick: 5)
        var fired: [(Int, Double)] = []
        let timers = (0..<4).map { i in ticks.makeTimer { fired.append((i, clock.time)) } }
        timers[0].start(afterSeconds: 30)  // 1030
        clock.advance(by: 1.2)
        timers[1].start(afterSeconds: 30)  // 1031.2 → 1030
        clock.advance(by: 1.6)
        timers[2].start(afterSeconds: 30)  // 1032.8 → 1035
        timers[3].start(afterSeconds: 30)
        timers[3].stop()
        #expect(timers[2].isActive && !timers[3].isActive)
        clock.advance(by: 40)
        #expect(fired.map(\.0) == [0, 1, 2])
        #expect(fired.map(\.1) == [1030, 1030, 1035])
        #expect(timers.allSatisfy { !$0.isActive })
        timers[0].start(afterSeconds: 30)
        timers[0].close()
        clock.advance(by: 60)
        #expect(fired.count == 3)
    }

    /// 100 sessions that start playing at scattered moments: with the tick, their periodic saves in a
    /// minute fall on at most 12 instants (5 s apart) instead of about 200; each still saves every 30 s.
    @Test func periodicSavesOfManySessionsFallOnFewInstants() throws {
        let aligned = try periodicSaves(tick: 5)
        let alone = try periodicSaves(tick: 0)
        #expect(aligned.instants <= 12, "\(aligned)")
        #expect(alone.instants >= 150, "\(alone)")
        for run in [aligned, alone] { #expect((190...210).contains(run.saves), "\(run)") }
    }

    private func periodicSaves(tick: Double) throws -> (instants: Int, saves: Int) {
        let daemon = EmbeddedDaemon(bookmarkTick: tick)
        var players: [EmbeddedPlayer] = []
        for i in 0..<100 {
            let player = try daemon.player()
            let session = try player.openSession(
                OpenSessionRequest(
                    streamId: "s\(i)", contentId: "c\(i)",
                    contentDuration: 7200)
            ).sessionId
            try player.send(.playheadReported(streamTime: 0, rate: 1, playing: true), session: session)
            _ = player.peer.takeSent()
            players.append(player)
            daemon.clock.advance(by: 0.29)  // starts spread over 29 s
        }
        var instants = 0
        var saves = 0
        for _ in 0..<600 {  // one minute in 0.1 s steps
            daemon.clock.advance(by: 0.1)
            daemon.store.completeWrites()
            var savedNow = 0
            for player in players {
                for frame in player.peer.takeSent() where frame.header.type == .push {
                    if case .bookmarkSaved(_, _, .periodic) = try WirePushMessage.decode(frame.body).kind { savedNow += 1 }
                }
            }
            saves += savedNow
            if savedNow > 0 { instants += 1 }
        }
        return (instants, saves)
    }
}
