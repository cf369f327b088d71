// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Stream ↔ content conversions and break look-ups of `TimelineLayout`, and the validation of a set of
/// breaks. Layout used unless told: the seeds' stream, pre 0–30, b1 630–690 (content 600), b2 1290–1380
/// (content 1200).
@Suite struct LayoutConversionTests {
    let seed = try! TimelineLayout(breaks: Factory.seedBreaks)

    // MARK: stream → content

    @Test func streamTimeBeforeAnyBreakIsContentTime() throws {
        let layout = try TimelineLayout(breaks: Factory.oneBreak)
        #expect(layout.contentTime(forStreamTime: 300) == 300)
    }

    @Test func streamTimeBetweenBreaksSubtractsEveryBreakBefore() {
        // 1000 − 30 − 60.
        #expect(seed.contentTime(forStreamTime: 1000) == 910)
    }

    @Test func streamTimeInsideABreakIsTheBreaksContentPosition() {
        #expect(seed.contentTime(forStreamTime: 650) == 600)
        #expect(seed.contentTime(forStreamTime: 689.9) == 600)
    }

    @Test func streamTimeExactlyAtABreakStartIsTheBreaksContentPosition() {
        #expect(seed.contentTime(forStreamTime: 630) == 600)
    }

    @Test func streamTimeExactlyAtABreakEndIsTheContentRightAfterIt() {
        #expect(seed.contentTime(forStreamTime: 690) == 600)
        #expect(seed.contentTime(forStreamTime: 691) == 601)
    }

    @Test func preRollAtZeroMapsToContentZero() {
        #expect(seed.contentTime(forStreamTime: 0) == 0)
        #expect(seed.contentTime(forStreamTime: 29) == 0)
        #expect(seed.contentTime(forStreamTime: 30) == 0)
        #expect(seed.contentTime(forStreamTime: 31) == 1)
    }

    @Test func backToBackBreaksShareOneContentPosition() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "a", start: 600, duration: 60), AdBreak(id: "b", start: 660, duration: 30)
        ])
        #expect(layout.contentTime(forStreamTime: 630) == 600)
        #expect(layout.contentTime(forStreamTime: 660) == 600)
        #expect(layout.contentTime(forStreamTime: 689) == 600)
        #expect(layout.contentTime(forStreamTime: 690) == 600)
        #expect(layout.contentTime(forStreamTime: 700) == 610)
        #expect(layout.streamTime(forContentTime: 600) == 690)
    }

    @Test func postRollMapsToTheContentEnd() throws {
        // 30-minute program, one mid-roll at 600 (60 s), a post-roll after content 1800.
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)
        ])
        #expect(layout.contentTime(forStreamTime: 1860) == 1800)
        #expect(layout.contentTime(forStreamTime: 1889) == 1800)
        #expect(layout.contentTime(forStreamTime: 1890) == 1800)
        #expect(layout.streamDuration(forContentDuration: 1800) == 1890)
    }

    // MARK: content → stream

    @Test func contentTimeAddsEveryBreakBefore() {
        #expect(seed.streamTime(forContentTime: 910) == 1000)
    }

    @Test func contentTimeExactlyAtABreakResolvesAfterTheBreak() {
        #expect(seed.streamTime(forContentTime: 600) == 690)
        #expect(seed.streamTime(forContentTime: 599.5) == 629.5)
    }

    @Test func contentZeroWithAPreRollResolvesAfterThePreRoll() {
        #expect(seed.streamTime(forContentTime: 0) == 30)
    }

    @Test func contentTimeWithoutBreaksIsStreamTime() throws {
        let layout = try TimelineLayout(breaks: [])
        #expect(layout.streamTime(forContentTime: 123.5) == 123.5)
        #expect(layout.contentTime(forStreamTime: 123.5) == 123.5)
        #expect(layout.totalAdTime == 0)
    }

    /// Seed 003: at the 20th minute with five minutes of ads before it, stream 1200 = content 900, also
    /// when the ads are split over a pre-roll and a mid-roll.
    @Test func twentiethMinuteWithFiveMinutesOfAdsRoundTrips() throws {
        let layout = try TimelineLayout(breaks: [
            AdBreak(id: "pre", start: 0, duration: 60), AdBreak(id: "mid", start: 660, duration: 240)
        ])
        #expect(layout.contentTime(forStreamTime: 1200) == 900)
        #expect(layout.streamTime(forContentTime: 900) == 1200)
        #expect(layout.totalAdTime == 300)
    }

    // MARK: Ad rules (live sessions: `ContentResumeOffsetTests`)

    /// Ad-rules sessions, whose player time is content time.
    @Test func identityConversionsIgnoreTheBreaks() throws {
        let layout = try TimelineLayout(breaks: Factory.seedBreaks, identity: true)
        #expect(layout.contentTime(forStreamTime: 650) == 650)
        #expect(layout.streamTime(forContentTime: 650) == 650)
        #expect(layout.streamDuration(forContentDuration: 1800) == 1800)
    }

    // MARK: Look-ups

    @Test func previousBreakIncludesABreakStartingExactlyThere() {
        #expect(seed.previousBreak(atOrBefore: 630)?.id == "b1")
        #expect(seed.previousBreak(atOrBefore: 629.9)?.id == "pre")
        #expect(seed.previousBreak(atOrBefore: 650)?.id == "b1")
    }

    @Test func previousBreakBeforeTheFirstBreakIsNone() throws {
        let layout = try TimelineLayout(breaks: Factory.oneBreak)
        #expect(layout.previousBreak(atOrBefore: 599) == nil)
    }

    @Test func nextBreakStartsStrictlyAfter() {
        #expect(seed.nextBreak(after: 629)?.id == "b1")
        #expect(seed.nextBreak(after: 630)?.id == "b2")
        #expect(seed.nextBreak(after: 1290) == nil)
    }

    @Test func breakContainsItsStartButNotItsEnd() {
        #expect(seed.breakContaining(630)?.id == "b1")
        #expect(seed.breakContaining(689.999)?.id == "b1")
        #expect(seed.breakContaining(690) == nil)
        #expect(seed.breakContaining(0)?.id == "pre")
    }

    @Test func breaksArriveUnsortedAndAreSorted() throws {
        let layout = try TimelineLayout(breaks: Factory.seedBreaks.reversed())
        #expect(layout.breaks.map(\.id) == ["pre", "b1", "b2"])
        #expect(layout.index(ofBreak: "b2") == 2)
        #expect(layout.contentTime(forStreamTime: 1000) == 910)
    }

    @Test func adStartFindsTheAdContainingATime() {
        let b = AdBreak(id: "b", start: 600, duration: 60, adDurations: [15, 15, 30])
        #expect(b.adStart(containing: 600) == 600)
        #expect(b.adStart(containing: 620) == 615)
        #expect(b.adStart(containing: 630) == 630)
        #expect(b.adStart(containing: 659) == 630)
        #expect(b.adIndex(containing: 620) == 1)
        #expect(b.adIndex(containing: 660) == nil)
        #expect(AdBreak(id: "u", start: 600, duration: 60).adStart(containing: 640) == 600)
    }

    // MARK: Validation

    @Test(arguments: [-1.0, -.ulpOfOne, .nan, .infinity, -.infinity])
    func breakStartMustBeFiniteAndNonNegative(_ start: Double) {
        do {
            _ = try TimelineLayout(breaks: [AdBreak(id: "b", start: start, duration: 30)])
            Issue.record("accepted")
        } catch {
            guard case .invalidTime(let field, _) = error else { Issue.record("got \(error)"); return }
            #expect(field == "break b start")
        }
    }

    @Test(arguments: [-1.0, .nan, .infinity])
    func breakDurationMustBeFiniteAndNonNegative(_ duration: Double) {
        do {
            _ = try TimelineLayout(breaks: [AdBreak(id: "b", start: 10, duration: duration)])
            Issue.record("accepted")
        } catch {
            guard case .invalidTime(let field, _) = error else { Issue.record("got \(error)"); return }
            #expect(field == "break b duration")
        }
    }

    @Test func adDurationsMustBeFiniteAndNonNegative() {
        do {
            _ = try TimelineLayout(breaks: [AdBreak(id: "b", start: 10, duration: 30, adDurations: [15, .nan])])
            Issue.record("accepted")
        } catch {
            guard case .invalidTime(let field, _) = error else { Issue.record("got \(error)"); return }
            #expect(field == "break b ad duration")
        }
    }

    @Test func emptyBreakIdIsRejected() {
        #expect(throws: TimelineError.emptyBreakId) { try TimelineLayout(breaks: [AdBreak(id: "", start: 0, duration: 1)]) }
    }

    @Test func duplicateBreakIdsAreRejected() {
        #expect(throws: TimelineError.duplicateBreakId("b")) {
            try TimelineLayout(breaks: [AdBreak(id: "b", start: 0, duration: 1), AdBreak(id: "b", start: 100, duration: 1)])
        }
    }

    @Test func overlappingBreaksAreRejected() {
        #expect(throws: TimelineError.overlappingBreaks("a", "b")) {
            try TimelineLayout(breaks: [AdBreak(id: "b", start: 650, duration: 30), AdBreak(id: "a", start: 600, duration: 60)])
        }
    }

    @Test func twoBreaksAtOneStartOverlapEvenIfOneIsEmpty() {
        #expect(throws: TimelineError.self) {
            try TimelineLayout(breaks: [AdBreak(id: "a", start: 600, duration: 0), AdBreak(id: "b", start: 600, duration: 30)])
        }
    }

    @Test func backToBackAndEmptyBreaksAtOneStartAreAccepted() throws {
        _ = try TimelineLayout(breaks: [AdBreak(id: "a", start: 600, duration: 60), AdBreak(id: "b", start: 660, duration: 30)])
        _ = try TimelineLayout(breaks: [AdBreak(id: "a", start: 600, duration: 0), AdBreak(id: "b", start: 600, duration: 0)])
    }

    @Test func moreThanTheLimitOfBreaksIsRejected() {
        let breaks = (0...TimelineLayout.maxBreaks).map { AdBreak(id: "b\($0)", start: Double($0) * 10, duration: 1) }
        #expect(throws: TimelineError.tooManyBreaks(limit: TimelineLayout.maxBreaks)) { try TimelineLayout(breaks: breaks) }
    }

    // MARK: Adding breaks (live)

    @Test func addingTheSameBreakAgainIsIdempotent() throws {
        var layout = try TimelineLayout(breaks: Factory.oneBreak, identity: true)
        layout = try layout.adding(Factory.oneBreak + [AdBreak(id: "b2", start: 1200, duration: 30)]) ?? layout
        layout = try layout.adding(Factory.oneBreak) ?? layout
        #expect(layout.breaks.map(\.id) == ["b1", "b2"])
    }

    @Test func addingAChangedBreakIsRejectedAndLeavesTheLayoutUnchanged() throws {
        var layout = try TimelineLayout(breaks: Factory.oneBreak, identity: true)
        let before = layout
        #expect(throws: TimelineError.closedBreakChanged("b1")) {
            layout =
                try layout.adding([AdBreak(id: "b2", start: 1200, duration: 30), AdBreak(id: "b1", start: 600, duration: 90)])
                ?? layout
        }
        #expect(layout == before)
    }

    @Test func anUpdateNamingABreakTwiceIsRejectedWhetherItIsKnownOrNew() throws {
        let layout = try TimelineLayout(breaks: Factory.oneBreak, identity: true)
        #expect(throws: TimelineError.duplicateBreakId("b1")) { try layout.adding(Factory.oneBreak + Factory.oneBreak) }
        let b2 = AdBreak(id: "b2", start: 1200, duration: 30)
        #expect(throws: TimelineError.duplicateBreakId("b2")) { try layout.adding([b2, b2]) }
        #expect(throws: TimelineError.duplicateBreakId("b2")) {
            try layout.adding([b2, AdBreak(id: "b2", start: 1800, duration: 30)])
        }
    }

    @Test func addingAnOverlappingBreakIsRejectedAndLeavesTheLayoutUnchanged() throws {
        let layout = try TimelineLayout(breaks: Factory.oneBreak, identity: true)
        let before = layout
        #expect(throws: TimelineError.overlappingBreaks("b1", "x")) {
            _ = try layout.adding([AdBreak(id: "x", start: 630, duration: 10)])
        }
        #expect(layout == before)
    }
}
