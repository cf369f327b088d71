// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// The stories of the seeds, with their numbers.
@Suite struct SeedStoryTests {
    /// IMA snapback (seeds 000/001): watching at 5:00, the viewer seeks to 15:00 over an unwatched break
    /// at 10:00; snapped back to 10:00, the break plays, then on to 15:00.
    @Test func seekFrom5To15OverBreakAt10SnapsBackThenReturns() throws {
        var (s, _) = try Factory.session(breaks: [AdBreak(id: "b1", start: 600, duration: 60)], contentDuration: 1800)
        _ = try s.handle(.playheadReported(streamTime: 300, rate: 1, playing: true), at: 1000)
        let seek = try s.handle(.seekEnded(from: 300, to: 900), at: 1001)
        #expect(seek.seeks == [Seek(600, .snapback)])
        #expect(seek.first { $0.isSeek }?.reason.description == "seek 300→900 skipped unwatched break b1 at 600")
        _ = try s.handle(.adBreakStarted(breakId: "b1"), at: 1002)
        let ended = try s.handle(.adBreakEnded(breakId: "b1"), at: 1062)
        #expect(ended.watched == ["b1"])
        #expect(ended.seeks == [Seek(900, .resumeAfterSnapback)])
        // Content 900 − 60 s of ads = 840.
        #expect(ended.bookmarks == [840])
    }

    /// IMA iOS Objective-C sample (seeds 000/001): "Add 1 to the seek time to get the keyframe at the start
    /// of the ad to be your landing place"; after AD_BREAK_ENDED, back to the seek end time.
    @Test func iosSampleLandsOneSecondIntoTheBreakForTheKeyframe() throws {
        var (s, _) = try Factory.session(
            breaks: [AdBreak(id: "b1", start: 600, duration: 60)],
            policy: Factory.policy { $0.snapbackLandingOffset = 1 })
        _ = try s.handle(.playheadReported(streamTime: 300, rate: 1, playing: true), at: 1000)
        #expect(try s.handle(.seekEnded(from: 300, to: 900), at: 1001).seeks == [Seek(601, .snapback)])
        _ = try s.handle(.playheadReported(streamTime: 601, rate: 1, playing: true), at: 1002)
        #expect(try s.handle(.adBreakEnded(breakId: "b1"), at: 1061).seeks == [Seek(900, .resumeAfterSnapback)])
    }

    /// IMA iOS Swift sample (seed 001): `if contentPlayer.currentTime().seconds < seekEndTime` — no return
    /// seek when the viewer is already at (or past) the target once the break ends.
    @Test func swiftSampleReturnsOnlyToATargetStillAhead() throws {
        var (s, _) = try Factory.session(breaks: [AdBreak(id: "b1", start: 600, duration: 60)])
        _ = try s.handle(.playheadReported(streamTime: 300, rate: 1, playing: true), at: 1000)
        _ = try s.handle(.seekEnded(from: 300, to: 660), at: 1001)
        #expect(try s.handle(.adBreakEnded(breakId: "b1"), at: 1061).seeks == [])
    }

    /// TVSDK (seed 003): at the 20th minute with five minutes of ads before it, stream time 1200 is
    /// content (local) time 900.
    @Test func twentiethMinuteWithFiveMinutesOfAdsIsContent900() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "pre", start: 0, duration: 120), AdBreak(id: "mid", start: 600, duration: 180)
        ])
        #expect(layout.contentTime(forStreamTime: 1200) == 900)
        #expect(layout.streamTime(forContentTime: 900) == 1200)
    }

    /// IMA bookmarks (seed 002): a bookmark saved as content time resumes at the same point of the program
    /// in a stream whose ads have other durations.
    @Test func bookmarkResumesAtSameContentPointWithOtherAdDurations() throws {
        var (first, _) = try Factory.session(breaks: [
            AdBreak(id: "pre", start: 0, duration: 30, watched: true), AdBreak(id: "b1", start: 630, duration: 60, watched: true)
        ])
        _ = try first.handle(.playheadReported(streamTime: 1000, rate: 1, playing: true), at: 1000)
        let closed = try first.handle(.closed, at: 1000)
        // 1000 − 30 − 60 = 910.
        #expect(closed.bookmarks == [910])

        let (_, opened) = try Factory.session(
            breaks: [AdBreak(id: "pre", start: 0, duration: 15), AdBreak(id: "b1", start: 615, duration: 120)],
            policy: Factory.policy { $0.resumeBreaks = .none }, resume: 910)
        // 910 + 15 + 120 = 1045 in the new layout.
        #expect(opened.seeks == [Seek(1045, .resumeFromBookmark)])
    }
}
