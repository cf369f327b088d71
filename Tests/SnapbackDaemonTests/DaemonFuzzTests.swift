// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackFuzzing
import SnapbackTestSupport
import SnapbackTimeline
import SnapbackWire
import Testing

/// The in-process daemon fuzz target (`snapback-fuzz-daemon`, `DaemonReplay`) on its committed corpus
/// (seeds and past failures, `Tests/Fuzz/daemon-corpus`) and on seeded random mutations of the seeds.
/// The replay traps when an invariant breaks, so a passing run means every step kept them.
@Suite struct DaemonFuzzTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/daemon-corpus")

    /// Programs a player and an operator could run: the seed story, bookmarks, live, ad rules, a second
    /// peer (refused), a full disk, timers firing over a day.
    static var seeds: [[UInt8]] {
        var seeds: [[UInt8]] = []
        let breaks = [
            AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "b1", start: 630, duration: 60, adDurations: [30, 30]),
            AdBreak(id: "b2", start: 1290, duration: 90)
        ]
        var p = DaemonProgram()
        // Peer 0 (root) watches its own decisions: the replay checks the stream's seqs too.
        p.send(.watchDecisions(sessionId: 0, contentId: ""), callId: 99)
        p.send(.openSession(OpenSessionRequest(streamId: "s", contentId: "movie", breaks: breaks, contentDuration: 1800)))
        p.send(.event(sessionId: 1, .playheadReported(streamTime: 300, rate: 1, playing: true)), callId: 2)
        p.send(.event(sessionId: 1, .seekStarted(from: 300)), callId: 3)
        p.send(.event(sessionId: 1, .seekEnded(from: 300, to: 1500)), callId: 4)
        p.send(.event(sessionId: 1, .adBreakStarted(breakId: "b2")), callId: 5)
        p.stepWall(0)  // the clock set back 56 years while the break plays
        p.advance(halfSeconds: 60)
        p.send(.event(sessionId: 1, .playheadReported(streamTime: 1320, rate: 1, playing: true)), callId: 6)
        p.send(.event(sessionId: 1, .adBreakEnded(breakId: "b2")), callId: 7)
        p.commitWrites()
        p.read(peer: 0)
        p.send(.event(sessionId: 1, .trickPlayStarted(streamTime: 1500, rate: 8)), callId: 8)
        p.send(.event(sessionId: 1, .trickPlayEnded(streamTime: 1700)), callId: 9)
        p.send(.event(sessionId: 1, .paused(streamTime: 1700)), callId: 10)
        p.send(.getSessionState(sessionId: 1), callId: 11)
        p.send(.listSessions(), callId: 15)
        p.send(.getSession(sessionId: 1), callId: 16)
        p.send(.closeSession(sessionId: 1), callId: 12)
        p.commitWrites()
        p.send(.getBookmark(profile: "", contentId: "movie"), callId: 13)
        p.send(
            .openSession(
                OpenSessionRequest(
                    streamId: "s2", contentId: "movie", breaks: breaks, contentDuration: 1800,
                    resume: SnapbackV1.ResumeOptions(useBookmark: true))), callId: 14)
        seeds.append(p.bytes)

        p = DaemonProgram()
        p.send(.openSession(OpenSessionRequest(streamId: "l", contentId: "l", kind: .live)))
        p.send(.event(sessionId: 1, .breaksUpdated([AdBreak(id: "x", start: 100, duration: 30)])), callId: 2)
        p.send(.event(sessionId: 1, .playheadReported(streamTime: 110, rate: 1, playing: true)), callId: 3)
        p.advance(halfSeconds: 80)
        p.connect(refused: true)
        p.connect()
        p.send(.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "second")), peer: 2)
        p.send(.listBookmarks(profile: "", pageSize: 2, pageToken: ""), peer: 2, callId: 2)
        p.disk(1)
        p.send(.deleteBookmark(profile: "", contentId: "movie"), peer: 2, callId: 3)
        p.commitWrites()
        p.disk(0)
        p.send(.clearBookmarks(profile: ""), peer: 2, callId: 4)
        p.disconnect(peer: 0)
        seeds.append(p.bytes)

        p = DaemonProgram()
        p.send(
            .openSession(
                OpenSessionRequest(
                    streamId: "r", contentId: "r", contentDuration: 3600,
                    adRules: AdRules(midrollTimes: [600], midrollEvery: 1800))))
        p.send(.event(sessionId: 1, .adBreakEnded(breakId: "preroll")), callId: 2)
        p.send(.event(sessionId: 1, .playheadReported(streamTime: 700, rate: 1, playing: true)), callId: 3)
        p.send(.event(sessionId: 1, .seekEnded(from: 700, to: 3000)), callId: 4)
        p.advance(halfSeconds: 255)
        p.send(.event(sessionId: 1, .contentCompleted), callId: 5)
        p.send(.contentTimeForStreamTime(sessionId: 1, streamTime: 640), callId: 6)
        p.send(.breakAt(sessionId: 1, streamTime: 700), callId: 7)
        p.raw([0, 0, 0, 9, 0, 0, 0, 1, 1, 0, 0x7F, 0x7F])
        seeds.append(p.bytes)
        return seeds
    }

    @Test func seedsPlayTheirSessions() {
        for seed in Self.seeds {
            var replay = seed.withUnsafeBytes { DaemonReplay($0) }
            replay.run()
            #expect(replay.sessionsOpened >= 1)
            #expect(replay.responses >= 5)
        }
        // The seed story snaps back, returns, and saves bookmarks: pushes reach the checks.
        var story = Self.seeds[0].withUnsafeBytes { DaemonReplay($0) }
        story.run()
        #expect(story.pushes >= 3)
    }

    @Test func committedCorpusReplays() throws {
        let files = (try? FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count >= Self.seeds.count, "the corpus at \(Self.corpus.path) lacks its seeds")
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            bytes.withUnsafeBytes { DaemonReplay.run($0) }
        }
    }

    /// 3,000 seeded mutations of the seeds through the whole service.
    @Test func randomMutationsKeepTheInvariants() {
        var rng = SplitMix64(seed: 0xDAE_0_F055)
        let seeds = Self.seeds
        for _ in 0..<3_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            rng.mutate(&bytes)
            bytes.withUnsafeBytes { DaemonReplay.run($0) }
        }
    }

    /// The committed seeds are these programs: a program names its method by its index among the
    /// protocol's methods, so a new method shifts them and the files must be written again
    /// (`SNAPBACK_WRITE_FUZZ_SEEDS=1 swift test --filter DaemonFuzzTests`).
    @Test func committedSeedsAreCurrent() throws {
        let write = ProcessInfo.processInfo.environment["SNAPBACK_WRITE_FUZZ_SEEDS"] == "1"
        for (i, seed) in Self.seeds.enumerated() {
            let file = Self.corpus.appendingPathComponent("seed-\(i)")
            if write { try Data(seed).write(to: file) }
            #expect((try? [UInt8](Data(contentsOf: file))) == seed, "\(file.lastPathComponent) is stale")
        }
    }
}
