// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Opening a session from a bookmark (`AdPolicy.resumeBreaks`): where to start in this stream's layout,
/// which breaks play first, and the exemption of the breaks the resume skipped. Stream: the seeds' layout,
/// pre 0–30, b1 630–690 (content 600), b2 1290–1380 (content 1200); a bookmark at content 900 is stream
/// 990.
@Suite struct ResumeTests {
    func resumePolicy(_ r: AdPolicy.ResumeBreaks) -> AdPolicy { Factory.policy { $0.resumeBreaks = r } }

    @Test func noneGoesStraightToTheBookmark() throws {
        let (s, opened) = try Factory.session(policy: resumePolicy(.none), resume: 900)
        #expect(opened.seeks == [Seek(990, .resumeFromBookmark)])
        #expect(opened.first(where: \.isSeek)?.reason.description == "resume at content 900 = stream 990 in this layout")
        #expect(s.snapshot(at: 1000).lastBookmarkContentTime == 900)
    }

    @Test func prerollPlaysThePreRollThenGoesToTheBookmark() throws {
        var (s, opened) = try Factory.session(policy: resumePolicy(.preroll), resume: 900)
        #expect(opened.seeks == [Seek(0, .breakBeforeResume)])
        #expect(s.snapshot(at: 1000).pendingReturn == 990)
        #expect(try s.playBreak("pre", at: 1001, duration: 30).seeks == [Seek(990, .resumeFromBookmark)])
    }

    @Test func lastBeforePlaysTheLastBreakBeforeTheBookmarkThenGoesToIt() throws {
        var (s, opened) = try Factory.session(policy: resumePolicy(.lastBefore), resume: 900)
        #expect(opened.seeks == [Seek(630, .breakBeforeResume)])
        #expect(try s.playBreak("b1", at: 1001).seeks == [Seek(990, .resumeFromBookmark)])
    }

    /// A resume stream time is converted by the session's own layout (what a client reopening a session
    /// after a daemon restart names): stream 990 is content 900; inside b1, stream 660 is content 600,
    /// which resumes after b1. It wins over a content time, and a bad one is refused as a resume time.
    @Test func aResumeStreamTimeResumesAtItsContentTimeInTheLayout() throws {
        for (stream, content, start) in [(990.0, 900.0, 990.0), (660, 600, 690)] {
            var s = try TimelineSession(
                SessionConfiguration(
                    contentDuration: 1800, breaks: Factory.seedBreaks, policy: resumePolicy(.none),
                    resumeContentTime: 10, resumeStreamTime: stream))
            #expect(s.resumeContentTime == content)
            #expect(s.opened(at: 1000).seeks == [Seek(start, .resumeFromBookmark)], "stream \(stream)")
        }
        #expect(throws: TimelineError.self) {
            try TimelineSession(SessionConfiguration(breaks: Factory.seedBreaks, resumeStreamTime: -1))
        }
    }

    @Test func lastBeforeIsTheDefault() throws {
        let (_, opened) = try Factory.session(resume: 900)
        #expect(opened.seeks == [Seek(630, .breakBeforeResume)])
    }

    @Test func lastBeforeWithNoMidRollBeforeTheBookmarkPlaysThePreRoll() throws {
        // Content 300 = stream 330, only the pre-roll before it.
        var (s, opened) = try Factory.session(policy: resumePolicy(.lastBefore), resume: 300)
        #expect(opened.seeks == [Seek(0, .breakBeforeResume)])
        #expect(try s.playBreak("pre", at: 1001, duration: 30).seeks == [Seek(330, .resumeFromBookmark)])
    }

    @Test func prerollAndLastBeforePlaysBothInOrderThenGoesToTheBookmark() throws {
        var (s, opened) = try Factory.session(policy: resumePolicy(.prerollAndLastBefore), resume: 900)
        #expect(opened.seeks == [Seek(0, .breakBeforeResume)])
        #expect(try s.playBreak("pre", at: 1001, duration: 30).seeks == [Seek(630, .breakBeforeResume)])
        #expect(try s.playBreak("b1", at: 1032).seeks == [Seek(990, .resumeFromBookmark)])
    }

    @Test func aWatchedBreakBeforeTheBookmarkDoesNotPlayAgain() throws {
        let (_, opened) = try Factory.session(policy: resumePolicy(.lastBefore), resume: 900, watched: ["b1"])
        #expect(opened.seeks == [Seek(990, .resumeFromBookmark)])
    }

    @Test func aDisabledPreRollDoesNotPlayBeforeTheBookmark() throws {
        let (_, opened) = try Factory.session(
            policy: Factory.policy {
                $0.resumeBreaks = .preroll
                $0.prerollDisabled = true
            }, resume: 900)
        #expect(opened.seeks == [Seek(990, .resumeFromBookmark)])
    }

    @Test func aBookmarkExactlyAtABreakResumesAfterThatBreak() throws {
        let (_, opened) = try Factory.session(policy: resumePolicy(.none), resume: 600)
        #expect(opened.seeks == [Seek(690, .resumeFromBookmark)])
    }

    @Test func aBookmarkExactlyAtABreakCountsThatBreakAsBeforeIt() throws {
        var (s, opened) = try Factory.session(policy: resumePolicy(.lastBefore), resume: 600)
        #expect(opened.seeks == [Seek(630, .breakBeforeResume)])
        #expect(try s.playBreak("b1", at: 1001).seeks == [Seek(690, .resumeFromBookmark)])
    }

    @Test func aBookmarkAtZeroIsAnOrdinaryOpen() throws {
        let (_, opened) = try Factory.session(resume: 0)
        #expect(opened == [])
    }

    @Test func aBookmarkBeyondTheContentResumesWithinTheStream() throws {
        let (s, opened) = try Factory.session(policy: resumePolicy(.none), resume: 5000)
        #expect(opened.seeks.count == 1)
        #expect(opened.seeks.allSatisfy { $0.to >= 0 && $0.to <= s.streamEnd! })
    }

    @Test(arguments: [-1.0, .nan, .infinity])
    func anInvalidBookmarkIsRejected(_ c: Double) {
        do {
            _ = try TimelineSession(SessionConfiguration(contentDuration: 1800, breaks: Factory.seedBreaks, resumeContentTime: c))
            Issue.record("accepted")
        } catch {
            guard case .invalidTime(let field, _) = error else { Issue.record("got \(error)"); return }
            #expect(field == "resume content time")
        }
    }

    // MARK: Exemption of the breaks the resume skipped (videojs-ima #1220)

    /// videojs-ima #1220: a break the resume skipped must not snap the viewer back on a later seek.
    @Test func aBreakSkippedByTheResumeDoesNotSnapBackOnALaterSeek() throws {
        var (s, _) = try Factory.session(policy: resumePolicy(.none), resume: 900)
        #expect(try s.report(990, at: 1001).seeks == [])
        #expect(try s.seek(from: 990, to: 300, at: 1002).seeks == [])
        #expect(try s.seek(from: 300, to: 990, at: 1003).seeks == [])
    }

    @Test func withLastBeforeTheEarlierBreaksTheResumeSkippedAreExempt() throws {
        // Content 1500 = stream 1620: m1 and m2 before it; m2 plays, m1 is exempt.
        var (s, opened) = try Factory.session(
            breaks: Factory.threeBreaks, contentDuration: Factory.threeBreaksContent,
            resume: 1500)
        #expect(opened.seeks == [Seek(1200, .breakBeforeResume)])
        #expect(try s.playBreak("m2", at: 1001).seeks == [Seek(1620, .resumeFromBookmark)])
        try s.report(1620, at: 1062)
        try s.seek(from: 1620, to: 300, at: 1063)
        #expect(try s.seek(from: 300, to: 1000, at: 1064).seeks == [])
    }

    @Test func aBreakAfterTheBookmarkStillSnapsBack() throws {
        var (s, _) = try Factory.session(policy: resumePolicy(.none), resume: 900)
        try s.report(990, at: 1001)
        #expect(try s.seek(from: 990, to: 1500, at: 1002).seeks == [Seek(1290, .snapback)])
    }
}
