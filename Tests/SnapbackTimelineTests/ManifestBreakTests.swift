// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// What a manifest says of a break beyond its start and duration (issue #39): an open break (its end not
/// known yet), an unfilled one (plays nothing), and the manifest's restrictions (HLS X-RESTRICT SKIP and
/// JUMP), mapped onto the policy's own mechanisms.
@Suite struct ManifestBreakTests {
    static let liveSnapback = Factory.policy { $0.liveSnapback = true }

    func live(_ breaks: [AdBreak], policy: AdPolicy = liveSnapback, at t: Double = 300) throws -> TimelineSession {
        var (s, _) = try Factory.session(breaks: breaks, kind: .live, contentDuration: nil, policy: policy)
        try s.report(t, at: 1000)
        return s
    }

    func layoutBreak(_ s: TimelineSession, _ id: String) -> AdBreak? { s.snapshot(at: 0).breaks.first { $0.id == id } }

    // MARK: Open breaks

    @Test func anOpenBreakIsExtendedThenClosedAndThenCannotChange() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 30, open: true)])
        #expect(try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 60, open: true)]), at: 1001) == [])
        #expect(layoutBreak(s, "o")?.duration == 60)
        #expect(layoutBreak(s, "o")?.open == true)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 45)]), at: 1002)
        #expect(layoutBreak(s, "o")?.duration == 45)
        #expect(layoutBreak(s, "o")?.open == false)
        // The same closed break again changes nothing; any change to it is refused, and so is reopening it.
        #expect(try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 45)]), at: 1003) == [])
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "o", start: 600, duration: 90)]), at: 1004, with: .closedBreakChanged("o"))
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "o", start: 600, duration: 45, open: true)]), at: 1004,
            with: .closedBreakChanged("o"))
    }

    @Test func anOpenBreakKeepsItsStartAndCannotGrowOverTheNextBreak() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 30, open: true), AdBreak(id: "n", start: 700, duration: 30)])
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "o", start: 610, duration: 30, open: true)]), at: 1001,
            with: .closedBreakChanged("o"))
        expectRefused(
            &s, .breaksUpdated([AdBreak(id: "o", start: 600, duration: 120, open: true)]), at: 1001,
            with: .overlappingBreaks("o", "n"))
    }

    /// Inside a break that replaces content (a live one), a stream time is where the content stopped, as
    /// far as the break reaches now: an extension moves the end, never maps a time into the ads.
    @Test func timesInsideAnOpenBreakMapToWhereTheContentStopsAsItGrows() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 30, open: true)])
        #expect(s.layout.contentTime(forStreamTime: 620) == 600)
        #expect(s.layout.contentTime(forStreamTime: 650) == 650)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 90, open: true)]), at: 1001)
        #expect(s.layout.contentTime(forStreamTime: 650) == 600)
        #expect(s.layout.contentTime(forStreamTime: 700) == 700)
        #expect(s.layout.streamTime(forContentTime: 620) == 690)
        // Inserted (the player says it replaces nothing): after it, content runs behind by what it lasts.
        _ = try s.handle(
            .breaksUpdated([AdBreak(id: "i", start: 900, duration: 20, contentResumeOffset: 0, open: true)]), at: 1002)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "i", start: 900, duration: 40, contentResumeOffset: 0)]), at: 1003)
        #expect(s.layout.contentTime(forStreamTime: 930) == 900)
        #expect(s.layout.contentTime(forStreamTime: 1000) == 960)
    }

    /// A seek over an open break's start snaps back to it; the return to the target waits for the break's
    /// end, wherever the refreshes put it.
    @Test func aSeekPastAnOpenBreakSnapsBackAndReturnsWhenItEnds() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 30, open: true)])
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        try s.report(600, at: 1002)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 60, open: true)]), at: 1010)
        #expect(try s.report(631, at: 1033).seeks == [])
        #expect(s.snapshot(at: 1033).currentBreakId == "o")
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 90)]), at: 1050)
        #expect(try s.report(661, at: 1063).seeks == [])
        #expect(try s.report(690.2, at: 1092).seeks == [Seek(900, .resumeAfterSnapback)])
    }

    /// A target inside an open break's estimate may lie beyond its real end: the viewer starts the break
    /// from its start and goes on to the target if the break closes before it (a closed break: no return).
    @Test func aSeekIntoAnOpenBreakReturnsToItsTargetIfTheBreakEndsBeforeIt() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 120, open: true)])
        #expect(try s.seek(from: 300, to: 680, at: 1001).seeks == [Seek(600, .startOfBreak)])
        try s.report(600, at: 1002)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 30)]), at: 1010)
        #expect(try s.report(630.2, at: 1032).seeks == [Seek(680, .resumeAfterSnapback)])

        var closed = try live([AdBreak(id: "c", start: 600, duration: 120)])
        #expect(try closed.seek(from: 300, to: 680, at: 1001).seeks == [Seek(600, .startOfBreak)])
        try closed.report(600, at: 1002)
        #expect(try closed.report(720.2, at: 1122).seeks == [])
    }

    /// The return stays inside the break when it closes after the target: the viewer is not sent back.
    @Test func aTargetTheClosedBreakCoversIsNotReturnedTo() throws {
        var s = try live([AdBreak(id: "o", start: 600, duration: 30, open: true)])
        #expect(try s.seek(from: 300, to: 620, at: 1001).seeks == [Seek(600, .startOfBreak)])
        try s.report(600, at: 1002)
        _ = try s.handle(.breaksUpdated([AdBreak(id: "o", start: 600, duration: 60)]), at: 1010)
        #expect(try s.report(660.2, at: 1062).seeks == [])
    }

    // MARK: Unfilled breaks

    static let withUnfilled = [
        AdBreak(id: "b1", start: 200, duration: 30),
        AdBreak(id: "u", start: 600, duration: 30, unfilled: true)
    ]

    @Test func anUnfilledBreakHoldsNoSeekAndPlaybackPassesIt() throws {
        var s = try Factory.playing(at: 300, breaks: Self.withUnfilled)
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [])
        var t = try Factory.playing(at: 590, breaks: Self.withUnfilled)
        try t.report(605, at: 1015)
        #expect(t.snapshot(at: 1015).currentBreakId == nil)
        #expect(try t.seek(from: 605, to: 615, at: 1016).seeks == [])
        // Landing in it is landing in content.
        var u = try Factory.playing(at: 300, breaks: Self.withUnfilled)
        #expect(try u.seek(from: 300, to: 610, at: 1001).seeks == [])
        #expect(u.snapshot(at: 1001).currentBreakId == nil)
    }

    @Test func aResumeNeverPlaysAnUnfilledBreak() throws {
        let (s, opened) = try Factory.session(breaks: Self.withUnfilled, resume: 1000)
        #expect(opened.seeks == [Seek(200, .breakBeforeResume)])
        #expect(s.plannedBreakIds == ["b1"])
    }

    @Test func anUnfilledBreakIsListedInTheSessionState() throws {
        let s = try Factory.playing(at: 300, breaks: Self.withUnfilled)
        #expect(s.snapshot(at: 1000).breaks.map(\.unfilled) == [false, true])
    }

    // MARK: Restrictions: SKIP

    static let skipRestricted = [AdBreak(id: "b1", start: 600, duration: 60, restrictSkip: true)]

    /// tvsdk carries seeks out during ads; the manifest's SKIP refuses them for its break anyway.
    @Test func skipRefusesASeekOutOfTheBreakWhateverThePreset() throws {
        var s = try Factory.playing(at: 610, breaks: Self.skipRestricted, policy: AdPolicy(preset: .tvsdk))
        #expect(s.snapshot(at: 1000).currentBreakId == "b1")
        #expect(try s.seek(from: 615, to: 900, at: 1005).seeks == [Seek(615, .seekRefusedDuringAd)])
        var free = try Factory.playing(at: 610, policy: AdPolicy(preset: .tvsdk))
        #expect(try free.seek(from: 615, to: 900, at: 1005).seeks == [])
    }

    @Test func skipRefusesSeeksAndTrickPlayOnALiveStream() throws {
        var s = try live(Self.skipRestricted, policy: AdPolicy(), at: 610)
        #expect(try s.seek(from: 615, to: 900, at: 1005).seeks == [Seek(615, .seekRefusedDuringAd)])
        try s.report(620, at: 1006)
        #expect(
            try s.handle(.trickPlayStarted(streamTime: 620, rate: 8), at: 1007).seeks == [Seek(620, .seekRefusedDuringAd)])
        var free = try live(Factory.oneBreak, policy: AdPolicy(), at: 610)
        #expect(try free.seek(from: 615, to: 900, at: 1005).seeks == [])
    }

    // MARK: Restrictions: JUMP

    /// Live sessions do not snap back by default; a JUMP-restricted break holds the seek anyway.
    @Test func jumpHoldsAForwardSeekOnALiveStreamAndReturnsToTheTarget() throws {
        var s = try live([AdBreak(id: "b1", start: 600, duration: 60, restrictJump: true)], policy: AdPolicy())
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        try s.report(600, at: 1002)
        #expect(try s.report(660.2, at: 1063).seeks == [Seek(900, .resumeAfterSnapback)])
        // Backwards, or once watched, the viewer goes where they asked.
        #expect(try s.seek(from: 950, to: 300, at: 1070).seeks == [])
        #expect(try s.seek(from: 300, to: 900, at: 1071).seeks == [])
        var free = try live(Factory.oneBreak, policy: AdPolicy())
        #expect(try free.seek(from: 300, to: 900, at: 1001).seeks == [])
    }

    /// ima plays the nearest crossed break only, and none when that one is watched; an earlier JUMP break
    /// still holds the seek.
    @Test func jumpHoldsWhereThePresetWouldLetTheSeekPass() throws {
        let breaks = [
            AdBreak(id: "m1", start: 600, duration: 60, restrictJump: true),
            AdBreak(id: "m2", start: 1200, duration: 60)
        ]
        var s = try Factory.playing(
            at: 300, breaks: breaks, contentDuration: 2400, policy: AdPolicy(preset: .ima), watched: ["m2"])
        #expect(try s.seek(from: 300, to: 1500, at: 1001).seeks == [Seek(600, .snapback)])
        var free = try Factory.playing(
            at: 300, breaks: Factory.threeBreaks, contentDuration: 2400, policy: AdPolicy(preset: .ima), watched: ["m2"])
        #expect(try free.seek(from: 300, to: 1500, at: 1001).seeks == [])
    }

    /// Among several JUMP breaks a live seek crossed: the first for hlsjs (hls.js enforces the first
    /// restricted interstitial), the last (nearest the target) otherwise.
    @Test func amongJumpBreaksTheChoiceIsThePolicys() throws {
        let breaks = [
            AdBreak(id: "j1", start: 600, duration: 60, restrictJump: true),
            AdBreak(id: "j2", start: 1200, duration: 60, restrictJump: true)
        ]
        var last = try live(breaks, policy: AdPolicy())
        #expect(try last.seek(from: 300, to: 1500, at: 1001).seeks == [Seek(1200, .snapback)])
        var first = try live(breaks, policy: AdPolicy(preset: .hlsjs))
        #expect(try first.seek(from: 300, to: 1500, at: 1001).seeks == [Seek(600, .snapback)])
    }

    @Test func anUnreportedJumpOverAJumpBreakIsHeldOnALiveStream() throws {
        var s = try live([AdBreak(id: "b1", start: 600, duration: 60, restrictJump: true)], policy: AdPolicy())
        #expect(try s.report(900, at: 1001).seeks == [Seek(600, .snapback)])
    }
}
