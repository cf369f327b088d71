// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Ad events that race the playhead, as real players' do (issue #11): what confirms the session's own
/// conclusion is accepted with no second effect; only what contradicts it is refused. And the position an
/// ad event may carry, taken as a playhead report.
@Suite struct TolerantEventTests {
    /// androidx/media #1538: the SDK's AD_BREAK_ENDED arrives after the playhead already left the break
    /// through its end. The playhead completed it (watched); the late end is OK and changes nothing.
    @Test func anEndAfterThePlayheadLeftTheBreakIsAConfirmation() throws {
        var s = try Factory.playing(at: 590)
        try s.report(600, at: 1010)
        let left = try s.report(661, at: 1071)
        #expect(left.contains { $0.kind == .breakWatched(breakId: "b1") })
        let before = s.snapshot(at: 1072)
        let late = try s.handle(.adBreakEnded(breakId: "b1"), at: 1072)
        #expect(late.map(\.kind) == [.noEffect])
        #expect(
            late.first?.reason.description
                == "ad-break-ended b1 confirms what the session already concluded: accepted, nothing to do")
        #expect(s.snapshot(at: 1072) == before)
        // The last ad's end, late too.
        #expect(try s.handle(.adEnded(breakId: "b1", index: 0), at: 1073).map(\.kind) == [.noEffect])
    }

    /// A late start of a break the playhead already played through, the viewer still at its end, does not
    /// put the viewer back at the break's start.
    @Test func aLateStartOfABreakJustLeftIsAConfirmation() throws {
        var s = try Factory.playing(at: 590)
        try s.report(600, at: 1010)
        try s.report(660.5, at: 1070)
        let before = s.snapshot(at: 1070.2)
        #expect(try s.handle(.adBreakStarted(breakId: "b1"), at: 1070.2).map(\.kind) == [.noEffect])
        #expect(s.snapshot(at: 1070.2) == before)
    }

    /// What contradicts the session is still refused: the end of a break the viewer never met.
    @Test func anEndOfABreakNeverMetIsRefused() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .adBreakEnded(breakId: "b1"), at: 1001,
            with: .unexpectedEvent(event: "ad-break-ended b1", state: "playing content"))
        expectRefused(
            &s, .adEnded(breakId: "b1", index: 0), at: 1001,
            with: .unexpectedEvent(event: "ad-ended b1#0", state: "playing content"))
    }

    /// An ad event's position is a playhead report made just before it: the start at 600 puts the session
    /// in the break without a report of its own, the end at 660 covers it (watched) and moves the playhead.
    @Test func anAdEventsPositionIsAPlayheadReport() throws {
        var s = try Factory.playing(at: 300)
        _ = try s.handle(.adBreakStarted(breakId: "b1", streamTime: 600), at: 1300)
        #expect(s.snapshot(at: 1300).currentBreakId == "b1")
        let end = try s.handle(.adBreakEnded(breakId: "b1", streamTime: 660), at: 1360)
        #expect(end.filter { $0.kind == .breakWatched(breakId: "b1") }.count == 1)
        #expect(s.snapshot(at: 1360).streamTime == 660)
        #expect(s.snapshot(at: 1360).phase == .content)
    }

    /// A refused ad event leaves the session as it was, its position included.
    @Test func aRefusedAdEventsPositionIsNotTaken() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .adBreakEnded(breakId: "b1", streamTime: 400), at: 1100,
            with: .unexpectedEvent(event: "ad-break-ended b1", state: "playing content"))
        #expect(s.snapshot(at: 1000).streamTime == 300)
    }

    /// A position outside the times' range is refused, naming it, before anything applies.
    @Test func anAdEventsPositionIsChecked() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .adBreakStarted(breakId: "b1", streamTime: -1), at: 1100,
            with: .invalidTime(field: "playhead", value: -1))
    }
}
