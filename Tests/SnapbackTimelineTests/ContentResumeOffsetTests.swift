import SnapbackTimeline
import Testing

/// Breaks that replace content (`AdBreak.contentResumeOffset`: HLS interstitials' `X-RESUME-OFFSET`, absent
/// there = the interstitial's duration; Media3's `contentResumeOffsetUs`). Stream unless told: a 30-minute
/// program, one break r1 at stream 600 (60 s) that replaces all 60 s of content it covers: content 600–660
/// is never shown, and stream time equals content time outside the break; the stream ends at 1800.
@Suite struct ContentResumeOffsetTests {
    static let replacing = [AdBreak(id: "r1", start: 600, duration: 60, contentResumeOffset: 60)]

    // MARK: Conversions

    @Test func aReplacingBreakKeepsContentTimeOnStreamTimeAfterIt() throws {
        let layout = try TimelineLayout(breaks: Self.replacing)
        #expect(layout.contentTime(forStreamTime: 300) == 300)
        #expect(layout.contentTime(forStreamTime: 630) == 600)  // inside: where the content stopped
        #expect(layout.contentTime(forStreamTime: 660) == 660)
        #expect(layout.contentTime(forStreamTime: 900) == 900)
        #expect(layout.streamTime(forContentTime: 900) == 900)
        #expect(layout.streamDuration(forContentDuration: 1800) == 1800)
    }

    @Test func contentTheBreakReplacedResolvesToWhereTheContentComesBack() throws {
        let layout = try TimelineLayout(breaks: Self.replacing)
        #expect(layout.streamTime(forContentTime: 600) == 660)
        #expect(layout.streamTime(forContentTime: 630) == 660)
        #expect(layout.streamTime(forContentTime: 599.5) == 599.5)
        #expect(layout.contentResumePosition(ofBreakAt: 0) == 660)
    }

    @Test func aPartialOffsetReplacesThatMuchContent() throws {
        // 60 s of ads replacing 20 s of content: 40 s more stream than content after it.
        let layout = try TimelineLayout(breaks: [AdBreak(id: "p", start: 600, duration: 60, contentResumeOffset: 20)])
        #expect(layout.contentTime(forStreamTime: 660) == 620)
        #expect(layout.contentTime(forStreamTime: 700) == 660)
        #expect(layout.streamTime(forContentTime: 660) == 700)
        #expect(layout.streamTime(forContentTime: 610) == 660)
        #expect(layout.streamDuration(forContentDuration: 1800) == 1840)
    }

    @Test func anAbsentOffsetIsInsertedAsBefore() throws {
        let explicit = try TimelineLayout(breaks: [AdBreak(id: "b", start: 600, duration: 60, contentResumeOffset: 0)])
        let absent = try TimelineLayout(breaks: Factory.oneBreak)
        for t in [300.0, 630, 660, 900] {
            #expect(explicit.contentTime(forStreamTime: t) == absent.contentTime(forStreamTime: t))
            #expect(explicit.streamTime(forContentTime: t) == absent.streamTime(forContentTime: t))
        }
        #expect(absent.contentTime(forStreamTime: 900) == 840)
    }

    /// HLS interstitials at one date play in order and the primary resumes after the sum of their resume
    /// offsets: a (30 s, replaces 10) then b (20 s, replaces 5) at content 600.
    @Test func backToBackBreaksAccumulateTheirOffsets() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "b", start: 630, duration: 20, contentResumeOffset: 5),
            AdBreak(id: "a", start: 600, duration: 30, contentResumeOffset: 10)
        ])
        #expect(layout.breaks.map(\.id) == ["a", "b"])
        #expect(layout.contentTime(forStreamTime: 620) == 600)
        #expect(layout.contentTime(forStreamTime: 640) == 600)
        #expect(layout.contentTime(forStreamTime: 650) == 615)
        #expect(layout.contentTime(forStreamTime: 700) == 665)
        #expect(layout.streamTime(forContentTime: 600) == 650)
        #expect(layout.streamTime(forContentTime: 612) == 650)
        #expect(layout.streamTime(forContentTime: 665) == 700)
        #expect(layout.contentResumePosition(ofBreakAt: 1) == 615)
    }

    @Test(arguments: [-1.0, 60.5, .nan, .infinity])
    func anOffsetOutsideTheBreakIsRefused(offset: Double) {
        let b = AdBreak(id: "r", start: 600, duration: 60, contentResumeOffset: offset)
        #expect(throws: TimelineError.self) { try TimelineLayout(breaks: [b]) }
    }

    @Test func aLiveUpdateChangingTheOffsetOfAKnownBreakIsRefused() throws {
        var (s, _) = try Factory.session(breaks: [], kind: .live, contentDuration: nil)
        try s.breaksUpdated([AdBreak(id: "r", start: 600, duration: 60)], at: 1000)
        try s.breaksUpdated([AdBreak(id: "r", start: 600, duration: 60, contentResumeOffset: 60)], at: 1001)
        #expect(throws: TimelineError.duplicateBreakId("r")) {
            try s.breaksUpdated([AdBreak(id: "r", start: 600, duration: 60, contentResumeOffset: 0)], at: 1002)
        }
    }

    // MARK: The session

    @Test func aBookmarkAfterAReplacingBreakIsItsContentTime() throws {
        var s = try Factory.playing(at: 590, breaks: Self.replacing)
        try s.report(600, at: 1010)
        try s.report(660, at: 1070)
        try s.report(700, at: 1110)
        let paused = try s.handle(.paused(streamTime: 700), at: 1110)
        #expect(paused.savedBookmarks == [Bookmark(700, 700, .paused)])
        // Inside the break: where the content stopped.
        var t = try Factory.playing(at: 590, breaks: Self.replacing)
        try t.report(600, at: 1010)
        #expect(try t.handle(.paused(streamTime: 630), at: 1040).bookmarks == [600])
    }

    @Test func aSnapbackOverAReplacingBreakReturnsToTheTargetAndBookmarksItsContentTime() throws {
        var s = try Factory.playing(at: 300, breaks: Self.replacing)
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        let ended = try s.playBreak("r1", at: 1002)
        #expect(ended.seeks == [Seek(900, .resumeAfterSnapback)])
        #expect(ended.bookmarks == [900])  // an inserted break would have made it 840
    }

    /// The same program stitched twice: in A the break at 600 is inserted, in B it replaces the content it
    /// covers. A bookmark taken in A resumes at the same content point in B.
    @Test func aBookmarkResumesAtTheSameContentPointInAStitchingWhereTheBreakReplacesContent() throws {
        var a = try Factory.playing(at: 990, breaks: Factory.oneBreak)
        let saved = try a.handle(.paused(streamTime: 1000), at: 1010).bookmarks
        #expect(saved == [940])
        let none = Factory.policy { $0.resumeBreaks = .none }
        let (_, opened) = try Factory.session(breaks: Self.replacing, policy: none, resume: 940)
        #expect(opened.seeks == [Seek(940, .resumeFromBookmark)])
        // The last break before it plays first, then the same point.
        var (b, first) = try Factory.session(breaks: Self.replacing, resume: 940)
        #expect(first.seeks == [Seek(600, .breakBeforeResume)])
        #expect(try b.playBreak("r1", at: 1001).seeks == [Seek(940, .resumeFromBookmark)])
        // A point the break replaced comes back where the content does, after the break.
        let (_, replaced) = try Factory.session(breaks: Self.replacing, policy: none, resume: 630)
        #expect(replaced.seeks == [Seek(660, .resumeFromBookmark)])
    }

    @Test func backToBackReplacingBreaksPlayInOrderWithTheirOffsetsAccumulated() throws {
        let breaks = [
            AdBreak(id: "a", start: 600, duration: 30, contentResumeOffset: 10),
            AdBreak(id: "b", start: 630, duration: 20, contentResumeOffset: 5)
        ]
        var s = try Factory.playing(at: 590, breaks: breaks)
        try s.report(600, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "a")
        try s.report(630, at: 1040)
        #expect(s.snapshot(at: 1040).currentBreakId == "b")
        try s.report(650, at: 1060)
        #expect(s.isWatched("a") && s.isWatched("b"))
        #expect(s.snapshot(at: 1060).contentTime == 615)
        #expect(try s.handle(.paused(streamTime: 700), at: 1110).bookmarks == [665])
    }

    // MARK: Live

    /// A live stream goes on while its ads play: a break without an offset replaces the content it covers,
    /// so content time stays stream time around it, and inside it is where the content stopped.
    @Test func aLiveBreakReplacesContentByDefault() throws {
        var (s, _) = try Factory.session(
            breaks: [], kind: .live, contentDuration: nil,
            policy: Factory.policy { $0.liveBookmarks = true })
        try s.report(1_700_000_500, at: 1000)
        try s.breaksUpdated([AdBreak(id: "live-1", start: 1_700_000_600, duration: 60)], at: 1001)
        #expect(s.breaks.first?.contentResumeOffset == 60)
        #expect(s.layout.contentTime(forStreamTime: 1_700_000_700) == 1_700_000_700)
        try s.report(1_700_000_600, at: 1100)
        #expect(s.snapshot(at: 1100).currentBreakId == "live-1")
        #expect(try s.handle(.paused(streamTime: 1_700_000_630), at: 1130).bookmarks == [1_700_000_600])
    }

    @Test func aLiveBreakWithAnOffsetOfZeroIsInserted() throws {
        var (s, _) = try Factory.session(breaks: [], kind: .live, contentDuration: nil)
        try s.breaksUpdated([AdBreak(id: "ins", start: 600, duration: 60, contentResumeOffset: 0)], at: 1001)
        #expect(s.layout.contentTime(forStreamTime: 700) == 640)
    }

    // MARK: A bookmark while a resume's breaks play

    /// Found by the mpv integration test: resuming at content 900 plays b1 first; a viewer who pauses or
    /// quits during it must find content 900 again, not b1's position (600).
    @Test func aPauseInABreakBeforeTheResumePointKeepsTheResumePoint() throws {
        var (s, opened) = try Factory.session(resume: 900)
        #expect(opened.seeks == [Seek(630, .breakBeforeResume)])
        try s.report(630, at: 1001)
        try s.report(650, at: 1021)
        #expect(try s.handle(.paused(streamTime: 650), at: 1022).savedBookmarks == [Bookmark(900, 990, .paused)])
        #expect(try s.handle(.closed, at: 1023).bookmarks == [])
    }

    @Test func aCloseInABreakBeforeTheResumePointSavesTheResumePoint() throws {
        var (s, _) = try Factory.session(policy: Factory.policy { $0.resumeBreaks = .prerollAndLastBefore }, resume: 900)
        try s.report(0, at: 1001)
        try s.report(10, at: 1011)
        #expect(try s.handle(.closed, at: 1012).savedBookmarks == [Bookmark(900, 990, .closed)])
    }

    @Test func onceTheResumePointIsReachedBookmarksFollowTheViewerAgain() throws {
        var (s, _) = try Factory.session(resume: 900)
        #expect(try s.playBreak("b1", at: 1001).seeks == [Seek(990, .resumeFromBookmark)])
        try s.report(990, at: 1062)
        #expect(try s.handle(.paused(streamTime: 1000), at: 1072).bookmarks == [910])
    }
}
