// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

@Suite struct SessionLifecycleTests {
    /// Opening twice must not run the resume plan twice.
    @Test func openingTwiceDoesNothingTheSecondTime() throws {
        var (s, first) = try Factory.session(resume: 900)
        #expect(!first.seeks.isEmpty)
        #expect(s.opened(at: 1001).isEmpty)
    }

    /// A pause inside a break saves the break's content position, never a position inside the ads.
    @Test func pauseInsideABreakSavesTheBreaksContentPosition() throws {
        var (s, _) = try Factory.session()
        _ = try s.report(620, at: 1000)
        _ = try s.report(640, at: 1020)
        let paused = try s.handle(.paused(streamTime: 650), at: 1030)
        // b1 starts at stream 630 after the 30 s pre-roll: content 600.
        #expect(paused.bookmarks == [600])
    }

    /// Slow motion is ordinary playback, not trick play.
    @Test(arguments: [0.5, 0.0, 1.0])
    func slowMotionIsNotTrickPlay(rate: Double) throws {
        var (s, _) = try Factory.session()
        #expect(throws: TimelineError.invalidRate(rate)) {
            try s.handle(.trickPlayStarted(streamTime: 100, rate: rate), at: 1000)
        }
    }

    @Test(arguments: [-2.0, 2.0, 32.0])
    func fastForwardAndRewindAreTrickPlay(rate: Double) throws {
        var (s, _) = try Factory.session()
        _ = try s.report(100, at: 1000)
        _ = try s.handle(.trickPlayStarted(streamTime: 100, rate: rate), at: 1001)
        #expect(s.snapshot(at: 1001).phase == .trickPlay)
    }
}

@Suite struct SecondsFormattingTests {
    @Test(arguments: [(600.0, "600"), (600.5, "600.5"), (0.125, "0.125"), (-1.25, "-1.25"), (0.0004, "0")])
    func formats(value: Double, text: String) {
        #expect(Seconds(value).description == text)
    }

    /// Found by the fuzz test: a peer's pause at 1e300 trapped while the reason was formatted.
    @Test(arguments: [1e300, -1e300, Double.greatestFiniteMagnitude, .infinity, .nan])
    func hugeAndNonFiniteValuesDoNotTrap(value: Double) {
        #expect(!Seconds(value).description.isEmpty)
    }
}

@Suite struct CloseWithoutPlaybackTests {
    /// Opened and closed (or disconnected) before any playback: no bookmark, so the viewer's stored one
    /// is not overwritten with the stream's start.
    @Test(arguments: [TimelineEvent.closed, .playerDisconnected])
    func closingBeforeAnyPlaybackSavesNothing(event: TimelineEvent) throws {
        var (s, _) = try Factory.session()
        #expect(try s.handle(event, at: 1005).bookmarks.isEmpty)
    }

    @Test func closingAfterPlaybackSavesTheBookmark() throws {
        var (s, _) = try Factory.session()
        _ = try s.report(120, at: 1000)
        #expect(try s.handle(.closed, at: 1000).bookmarks == [90])
    }
}

/// `breakCompleted` marks a break played to its end whatever the watched policy: it is what starts the
/// device-wide cooldown, so it must not follow `breakWatched` (on begin, never, the loop guard).
@Suite struct BreakCompletedTests {
    static func completed(_ actions: [TimelineAction]) -> [String] {
        actions.compactMap { if case .breakCompleted(let id) = $0.kind { return id } else { return nil } }
    }

    @Test(arguments: [AdPolicy.WatchedWhen.onBegin, .onEnd, .never])
    func aBreakPlayedToItsEndIsCompletedWhateverTheWatchedPolicy(when: AdPolicy.WatchedWhen) throws {
        var (s, _) = try Factory.session(policy: Factory.policy { $0.watchedWhen = when })
        _ = try s.report(620, at: 1000)
        let begun = try s.handle(.adBreakStarted(breakId: "b1"), at: 1010)
        #expect(Self.completed(begun).isEmpty)
        #expect(begun.watched == (when == .onBegin ? ["b1"] : []))
        let ended = try s.handle(.adBreakEnded(breakId: "b1"), at: 1070)
        #expect(Self.completed(ended) == ["b1"])
    }

    @Test func theLoopGuardWatchesWithoutCompleting() throws {
        var (s, _) = try Factory.session(
            policy: Factory.policy {
                $0.maxSnapbacksPerBreak = 1
                $0.refuseSeeksDuringUnwatchedBreak = false
            })
        _ = try s.report(300, at: 1000)
        #expect(try s.handle(.seekEnded(from: 300, to: 900), at: 1001).seeks == [Seek(630, .snapback)])
        // The viewer gets away from b1 and skips it again: a second snapback would be the loop.
        _ = try s.handle(.seekEnded(from: 640, to: 300), at: 1002)
        let guarded = try s.handle(.seekEnded(from: 300, to: 900), at: 1003)
        #expect(guarded.seeks.isEmpty)
        #expect(guarded.watched == ["b1"])
        #expect(Self.completed(guarded).isEmpty)
    }
}
