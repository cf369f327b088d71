// SPDX-License-Identifier: Apache-2.0
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

    @Test func theStreamEndIsTheLayoutsAndFollowsItsNewBreaks() throws {
        #expect(try TimelineLayout(breaks: Self.replacing).streamEnd == nil)  // no content duration: no end
        let layout = try TimelineLayout(breaks: Self.replacing, contentDuration: 1800)
        #expect(layout.streamEnd == 1800)
        let grown = try #require(try layout.adding([AdBreak(id: "i", start: 900, duration: 30)]))
        #expect(grown.streamEnd == 1830)
        #expect(grown.streamEnd == grown.streamDuration(forContentDuration: 1800))
        #expect(try TimelineLayout(breaks: Self.replacing, identity: true, contentDuration: 1800).streamEnd == 1800)
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

    /// Any offset within `Limits.contentResumeOffset`, whatever the break lasts; below 0, past the top or not
    /// a number is refused naming the break.
    @Test(arguments: [-1.0, 1e8.nextUp, .nan, .infinity])
    func anOffsetOutsideItsRangeIsRefused(offset: Double) {
        let b = AdBreak(id: "r", start: 600, duration: 60, contentResumeOffset: offset)
        #expect(throws: TimelineError.self) { try TimelineLayout(breaks: [b]) }
    }

    // MARK: Breaks that cut more content than they last

    /// androidx/media `ServerSideAdInsertionUtilTest.addAdGroupToAdPlaybackState_insertsCorrectAdGroupData`
    /// (Media3's microseconds read as seconds): a 200 s ad group at stream 4300 that resumes the content
    /// 400 s later, beside groups that cut less than they last (a 100 s pre-roll resuming 50 s in) or
    /// nothing. Media3 places the groups at content 0, 2050, 3950 and 4850; the content resumes after the
    /// third at 4350 ("content timeline: 0 - [ad1] - 50-2050 -[ad2] - 2050-3950 - [ad3] - 4350-4850").
    @Test func media3sAdGroupsThatCutMoreThanTheyLastSitWhereMedia3PutsThem() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "ad1", start: 0, duration: 100, contentResumeOffset: 50),
            AdBreak(id: "ad2", start: 2100, duration: 300, contentResumeOffset: 0),
            AdBreak(id: "ad3", start: 4300, duration: 200, contentResumeOffset: 400),
            AdBreak(id: "ad4", start: 5000, duration: 1000, contentResumeOffset: 0)
        ])
        #expect(layout.breaks.indices.map(layout.contentPosition(ofBreakAt:)) == [0, 2050, 3950, 4850])
        #expect(layout.breaks.indices.map(layout.contentResumePosition(ofBreakAt:)) == [50, 2050, 4350, 4850])
        #expect(layout.contentTime(forStreamTime: 4500) == 4350)
        #expect(layout.contentTime(forStreamTime: 4999) == 4849)
        #expect(layout.streamTime(forContentTime: 4350) == 4500)
    }

    /// androidx/media `ServerSideAdInsertionUtilTest.getMediaPeriodPositionUsForContent_returnsCorrectPositions`
    /// and `getStreamPositionUsForContent_returnsCorrectPositions`: a 200 s pre-roll resuming 100 s in, a
    /// 200 s group at content 2000 resuming where it stopped, and a 200 s group at content 4000 resuming
    /// 400 s later ("content timeline: 0 - [ad1] - 100-2000 -[ad2] - 2000-4000 - [ad3] - 4400-end").
    static let media3Conversions = [
        AdBreak(id: "ad1", start: 0, duration: 200, contentResumeOffset: 100),
        AdBreak(id: "ad2", start: 2100, duration: 200, contentResumeOffset: 0),
        AdBreak(id: "ad3", start: 4300, duration: 200, contentResumeOffset: 400)
    ]

    @Test func streamToContentGivesMedia3sValues() throws {
        let layout = try TimelineLayout(breaks: Self.media3Conversions)
        // Media3's values for the content played after each group (nextAdGroupIndex unset).
        let media3: [(Double, Double)] = [
            (200, 100), (2099, 1999), (2300, 2000), (4299, 3999), (4500, 4400), (4700, 4600)
        ]
        for (stream, content) in media3 { #expect(layout.contentTime(forStreamTime: stream) == content, "stream \(stream)") }
        // Inside a group: where the content stopped for it (Media3's value before the group plays).
        #expect(layout.contentTime(forStreamTime: 100) == 0)
        #expect(layout.contentTime(forStreamTime: 2100) == 2000)
        #expect(layout.contentTime(forStreamTime: 4300) == 4000)
    }

    @Test func contentToStreamGivesMedia3sValuesAndCutContentResolvesToTheBreaksEnd() throws {
        let layout = try TimelineLayout(breaks: Self.media3Conversions)
        let media3: [(Double, Double)] = [(100, 200), (1999, 2099), (2000, 2300), (3999, 4299), (4400, 4500)]
        for (content, stream) in media3 { #expect(layout.streamTime(forContentTime: content) == stream, "content \(content)") }
        // Content a group cut: Media3 puts it inside the group (content 4300 at stream 4400, 100 s into the ads,
        // which then play); snapback at the group's end, where the content comes back — never a resume or
        // seek target inside the ads.
        for content in [0.0, 50, 99.5] { #expect(layout.streamTime(forContentTime: content) == 200, "content \(content)") }
        for content in [4000.0, 4200, 4300, 4399.5] {
            #expect(layout.streamTime(forContentTime: content) == 4500, "content \(content)")
        }
        #expect(layout.streamDuration(forContentDuration: 5000) == 5100)
    }

    /// RFC 8216bis, appendix D.2: `X-RESUME-OFFSET` is where primary playback resumes, measured from where
    /// the interstitial was scheduled; nothing bounds it by the interstitial's `DURATION`. A live event
    /// whose 30 s of ads cover 120 s of the program, back to back with a 20 s interstitial that covers 200
    /// s more: both leave the content at 600, which comes back at 920 (600 + 120 + 200), at stream 650.
    @Test func backToBackBreaksCuttingMoreThanTheyLastAddTheirOffsetsUp() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "a", start: 600, duration: 30, contentResumeOffset: 120),
            AdBreak(id: "b", start: 630, duration: 20, contentResumeOffset: 200)
        ])
        #expect(layout.contentTime(forStreamTime: 640) == 600)
        #expect(layout.contentTime(forStreamTime: 650) == 920)
        #expect(layout.contentTime(forStreamTime: 700) == 970)
        #expect(layout.contentResumePosition(ofBreakAt: 0) == 720)
        #expect(layout.contentResumePosition(ofBreakAt: 1) == 920)
        for content in [600.0, 700, 720, 919] { #expect(layout.streamTime(forContentTime: content) == 650) }
        #expect(layout.streamTime(forContentTime: 970) == 700)
        #expect(layout.streamDuration(forContentDuration: 1800) == 1530)
    }

    /// Offsets of up to 1e8 s on many breaks could carry the content past the last content time a request
    /// may name: refused, naming the break; and a stream time near the top stays a content time.
    @Test func theContentNeverResumesPastTheLastContentTime() throws {
        let far = AdBreak(id: "far", start: 9_999_999_000, duration: 10, contentResumeOffset: 1e8)
        #expect(
            throws: TimelineError.outOfRange(
                field: "break far content resume point", value: 9_999_999_000 + 1e8, limit: Limits.position)
        ) {
            try TimelineLayout(breaks: [far])
        }
        let layout = try TimelineLayout(breaks: [AdBreak(id: "cut", start: 100, duration: 10, contentResumeOffset: 1000)])
        #expect(layout.contentTime(forStreamTime: 1e10) == 1e10)
        #expect(layout.contentTime(forStreamTime: 1e10 - 990) == 1e10)
        #expect(layout.contentTime(forStreamTime: 1e10 - 991) == 1e10 - 1)
    }

    /// A live break whose ads are shorter than the content they cover (a 60 s ad slot filled with 45 s):
    /// the content comes back where the program is, 60 s after it stopped.
    @Test func aLiveBreakShorterThanTheContentItCovers() throws {
        var (s, _) = try Factory.session(
            breaks: [], kind: .live, contentDuration: nil, policy: Factory.policy { $0.liveBookmarks = true })
        try s.report(1_700_000_500, at: 1000)
        try s.breaksUpdated([AdBreak(id: "short", start: 1_700_000_600, duration: 45, contentResumeOffset: 60)], at: 1001)
        #expect(s.layout.contentTime(forStreamTime: 1_700_000_645) == 1_700_000_660)
        #expect(s.layout.streamTime(forContentTime: 1_700_000_650) == 1_700_000_645)
        try s.report(1_700_000_600, at: 1100)
        #expect(s.snapshot(at: 1100).currentBreakId == "short")
        try s.report(1_700_000_645, at: 1145)
        #expect(try s.handle(.paused(streamTime: 1_700_000_700), at: 1200).bookmarks == [1_700_000_715])
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

    /// A blackout: 30 s of slate cut 300 s of the program (r at stream 600). Playback through it, a
    /// bookmark after it, a snapback over it, and resumes before, inside and after the cut, in this stitching
    /// and in one where the break is inserted.
    static let blackout = [AdBreak(id: "r", start: 600, duration: 30, contentResumeOffset: 300)]

    @Test func aBookmarkAfterABreakThatCutMoreThanItLastsIsItsContentTime() throws {
        var s = try Factory.playing(at: 590, breaks: Self.blackout)
        try s.report(600, at: 1010)
        #expect(s.snapshot(at: 1010).currentBreakId == "r")
        #expect(try s.handle(.paused(streamTime: 615), at: 1025).bookmarks == [600])
        var t = try Factory.playing(at: 590, breaks: Self.blackout)
        try t.report(600, at: 1010)
        try t.report(630, at: 1040)
        #expect(t.isWatched("r"))
        #expect(try t.handle(.paused(streamTime: 700), at: 1110).bookmarks == [970])
    }

    @Test func aSnapbackOverABreakThatCutMoreThanItLastsReturnsToTheTarget() throws {
        var s = try Factory.playing(at: 300, breaks: Self.blackout)
        #expect(try s.seek(from: 300, to: 900, at: 1001).seeks == [Seek(600, .snapback)])
        let ended = try s.playBreak("r", at: 1002)
        #expect(ended.seeks == [Seek(900, .resumeAfterSnapback)])
        #expect(ended.bookmarks == [1170])
    }

    @Test func resumesAroundABreakThatCutMoreThanItLasts() throws {
        let none = Factory.policy { $0.resumeBreaks = .none }
        // Before the cut, after it, and inside it: the content the break cut comes back at its end.
        for (content, stream) in [(500.0, 500.0), (1170, 900), (600, 630), (750, 630), (899.5, 630), (900, 630)] {
            let (_, opened) = try Factory.session(breaks: Self.blackout, policy: none, resume: content)
            #expect(opened.seeks == [Seek(stream, .resumeFromBookmark)], "content \(content)")
        }
        // The last break before the resume point plays first, then the point.
        var (s, first) = try Factory.session(breaks: Self.blackout, resume: 1170)
        #expect(first.seeks == [Seek(600, .breakBeforeResume)])
        #expect(try s.playBreak("r", at: 1001).seeks == [Seek(900, .resumeFromBookmark)])
        // A bookmark taken where the break is inserted (content 1000 at stream 1030) resumes at the same point
        // of the program here: stream 730.
        var inserted = try Factory.playing(at: 1020, breaks: [AdBreak(id: "r", start: 600, duration: 30)])
        #expect(try inserted.handle(.paused(streamTime: 1030), at: 1010).bookmarks == [1000])
        let (_, here) = try Factory.session(breaks: Self.blackout, policy: none, resume: 1000)
        #expect(here.seeks == [Seek(730, .resumeFromBookmark)])
    }

    /// The stream ends with the content less the cut: a program of 1800 s with the blackout is 1530 s of
    /// stream, and every seek the session commands stays within it.
    @Test func theStreamEndsWhereTheCutContentEnds() throws {
        let (s, _) = try Factory.session(breaks: Self.blackout)
        #expect(s.streamEnd == 1530)
        var t = try Factory.playing(at: 1400, breaks: Self.blackout)
        #expect(try t.handle(.paused(streamTime: 1510), at: 1110).clearsBookmark)
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
