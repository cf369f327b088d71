// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Each preset reproduces its anchor where the anchor documents a behaviour (issue #11). Each test cites
/// the anchor's source; the differences that remain are listed in docs/policy.md, "Where a preset differs
/// from its anchor".
@Suite struct AnchorTests {
    /// IMA DAI: a cue point's `played` flag is set when its break starts (Shaka's IMA DAI integration: "the
    /// cue point gets marked as 'played' as soon as the playhead hits it (at the start of an ad)"). The
    /// ima preset counts the break watched as it begins; seeks are still refused while it plays (the IMA
    /// samples disable the seek bar during ads).
    @Test func imaCountsABreakWatchedWhenItStarts() throws {
        var s = try Factory.playing(at: 590, policy: .ima)
        let entered = try s.report(600, at: 1010)
        #expect(entered.watched == ["b1"])
        #expect(try s.seek(from: 605, to: 900, at: 1015).seeks == [Seek(605, .seekRefusedDuringAd)])
        // Played to its end: no second watched mark.
        #expect(try s.report(661, at: 1071).watched == [])
    }

    /// TVSDK: "TVSDK does not provide a way to disable seeking during ads" (Adobe TVSDK, "Customize
    /// playback with ads"; the application may). A seek out of an unwatched break is carried out, and the
    /// break stays watched under TVSDK's default OnBegin policy...
    @Test func tvsdkLetsTheViewerSeekOutOfABreakWatchedOnBegin() throws {
        var s = try Factory.playing(at: 590, policy: .tvsdk)
        #expect(try s.report(600, at: 1010).watched == ["b1"])
        let out = try s.seek(from: 605, to: 900, at: 1015)
        #expect(!out.seeks.contains { $0.reason == .seekRefusedDuringAd })
        #expect(s.snapshot(at: 1015).phase == .content)
        #expect(s.isWatched("b1"))
    }

    /// ...and not watched under its OnEnd policy: leaving early is what tells the two apart.
    @Test func tvsdkOnEndLeavesABreakLeftEarlyUnwatched() throws {
        var s = try Factory.playing(at: 590, policy: Factory.preset(.tvsdk) { $0.watchedWhen = .onEnd })
        #expect(try s.report(600, at: 1010).watched == [])
        #expect(try s.seek(from: 605, to: 900, at: 1015).seeks.allSatisfy { $0.reason != .seekRefusedDuringAd })
        #expect(!s.isWatched("b1"))
    }

    /// hls.js #7029: on a primary timeline with interstitials, after the jump-restricted interstitial a
    /// seek crossed has played, the primary content resumes at the interstitial's resumption point, not at
    /// the seek target.
    @Test func hlsjsResumesAtTheInterstitialsResumptionPoint() throws {
        let rules = AdRules(preroll: true, midrollTimes: [600, 1200], postroll: true, breakDuration: 30)
        var (s, _) = try Factory.session(breaks: [], contentDuration: 1800, policy: .hlsjs, adRules: rules)
        try s.playBreak("preroll", at: 1000, duration: 30)
        try s.report(100, at: 1031)
        #expect(try s.seek(from: 100, to: 1500, at: 1032).played == ["midroll-600"])
        let ended = try s.playBreak("midroll-600", at: 1033, duration: 30)
        #expect(ended.seeks == [Seek(600, .resumeAfterSnapback)])
        #expect(
            ended.first { $0.isSeek }?.reason.description
                == "interstitial midroll-600 done, the content resumes at its resumption point 600")
    }

    /// RDK Firebolt's `skipRestriction: adsAll` ("enforce even watched breaks"): with watched-when
    /// `never`, a break the player opened as watched (or the store remembered) is enforced too.
    @Test func watchedNeverEnforcesBreaksOpenedAsWatched() throws {
        let never = Factory.policy { $0.watchedWhen = .never }
        var s = try Factory.playing(
            at: 300, breaks: [AdBreak(id: "b1", start: 600, duration: 60, watched: true)],
            policy: never, watched: ["b1"])
        #expect(!s.isWatched("b1"))
        #expect(try s.seek(from: 300, to: 900, at: 1010).seeks == [Seek(600, .snapback)])
    }

    /// Media3 (ExoPlayer's ad playback with a post-roll): a seek to the content's end, where the post-roll
    /// starts, plays the last mid-roll it skipped, then ends the content and plays the post-roll.
    @Test func media3SeekToTheEndPlaysTheLastMidRollThenThePostRoll() throws {
        let breaks = [
            AdBreak(id: "m1", start: 600, duration: 60), AdBreak(id: "m2", start: 1200, duration: 60),
            AdBreak(id: "post", start: 1920, duration: 30)
        ]
        var s = try Factory.playing(at: 300, breaks: breaks, contentDuration: 1800, policy: .media3)
        #expect(try s.seek(from: 300, to: 1920, at: 1010).seeks == [Seek(1200, .snapback)])
        #expect(s.snapshot(at: 1010).pendingReturn == 1920)
        try s.report(1200.5, at: 1011)
        let ended = try s.report(1260, at: 1070)
        #expect(ended.seeks == [Seek(1920, .resumeAfterSnapback)])
        #expect(ended.clearsBookmark)
        #expect(s.snapshot(at: 1070).currentBreakId == "post")
    }

    /// The other presets keep the post-roll alone for a seek to the content's end (IMA DAI's
    /// `previousCuepointForStreamTime(seekEnd)` is the post-roll's cue point).
    @Test func otherPresetsPlayThePostRollAloneOnASeekToTheEnd() throws {
        let breaks = [AdBreak(id: "m1", start: 600, duration: 60), AdBreak(id: "post", start: 1860, duration: 30)]
        for preset in [AdPolicy.ima, .snapback, .tvsdk] {
            var s = try Factory.playing(at: 300, breaks: breaks, contentDuration: 1800, policy: preset)
            #expect(try s.seek(from: 300, to: 1860, at: 1010).seeks == [Seek(1860, .startOfBreak)])
        }
    }
}
