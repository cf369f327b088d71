// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackFuzzing
import SnapbackTestSupport
import SnapbackTimeline
import SnapbackWire
import Testing

/// The fuzz target's code path (frame decoder → request decoding → timeline) on the committed corpus
/// (seeds and past failures, `Tests/Fuzz/corpus`) and on seeded random mutations of realistic streams.
/// libFuzzer itself runs with `make fuzz`.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    /// Realistic request streams: what a player sends.
    static var seeds: [[UInt8]] {
        var streams: [[UInt8]] = []
        func frames(_ requests: [WireRequest]) -> [UInt8] {
            var out: [UInt8] = []
            for (i, r) in requests.enumerated() {
                let body = r.encoded()
                FrameHeader.request(callId: UInt32(i + 1), method: r.method.rawValue, length: UInt32(body.count)).encode(
                    into: &out)
                out += body
            }
            return out
        }
        let breaks = [
            AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "b1", start: 630, duration: 60, adDurations: [30, 30]),
            AdBreak(id: "b2", start: 1290, duration: 90)
        ]
        let open = OpenSessionRequest(
            streamId: "s", contentId: "c", breaks: breaks, contentDuration: 1800,
            resume: SnapbackV1.ResumeOptions(resumeContentTime: 700))
        streams.append(
            frames([
                .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "fuzz")), .openSession(open),
                .event(sessionId: 1, .playheadReported(streamTime: 300, rate: 1, playing: true)),
                .event(sessionId: 1, .seekStarted(from: 300)), .event(sessionId: 1, .seekEnded(from: 300, to: 1500)),
                .event(sessionId: 1, .adBreakStarted(breakId: "b2")), .event(sessionId: 1, .adStarted(breakId: "b1", index: 0)),
                .event(sessionId: 1, .adEnded(breakId: "b1", index: 1)), .event(sessionId: 1, .adBreakEnded(breakId: "b2")),
                .event(sessionId: 1, .trickPlayStarted(streamTime: 1500, rate: 8)),
                .event(sessionId: 1, .trickPlayEnded(streamTime: 1700)),
                .event(sessionId: 1, .paused(streamTime: 1700)), .contentTimeForStreamTime(sessionId: 1, streamTime: 640),
                .streamTimeForContentTime(sessionId: 1, contentTime: 600), .breakAt(sessionId: 1, streamTime: 700),
                .getSessionState(sessionId: 1), .event(sessionId: 1, .contentCompleted), .closeSession(sessionId: 1)
            ]))
        let rules = OpenSessionRequest(
            streamId: "r", contentId: "r", contentDuration: 3600,
            adRules: AdRules(midrollTimes: [600], midrollEvery: 1800))
        streams.append(
            frames([
                .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version)), .openSession(rules),
                .event(sessionId: 1, .adBreakEnded(breakId: "preroll")),
                .event(sessionId: 1, .playheadReported(streamTime: 700, rate: 1, playing: true)),
                .event(sessionId: 1, .seekEnded(from: 700, to: 3000)), .event(sessionId: 1, .contentCompleted)
            ]))
        let live = OpenSessionRequest(streamId: "l", contentId: "l", kind: .live)
        streams.append(
            frames([
                .openSession(live), .event(sessionId: 1, .breaksUpdated([AdBreak(id: "x", start: 100, duration: 30)])),
                .event(sessionId: 1, .playheadReported(streamTime: 110, rate: 1, playing: true))
            ]))
        // The sync agent's calls: a change stream resumed after 42, a merge of a bookmark, a tombstone and
        // a watched break.
        let device = try! DeviceID("box-2")
        let bookmark = try! SyncRecord(
            profile: "kids", contentId: "c",
            value: .bookmark(SyncedBookmark(contentTime: 600, streamId: "s", streamTime: 630, finished: false, updatedAt: 1e9)),
            stamp: SyncStamp(physical: 1_000_000_000_000, counter: 3, device: device))
        let tombstone = try! SyncRecord(
            profile: "", contentId: "d", value: .tombstone(.cleared),
            stamp: SyncStamp(physical: 1_000_000_000_001, counter: 0, device: device))
        let watched = try! WatchedBreaks(contentId: "c", watchedAt: ["b1": 1e9])
        streams.append(
            frames([
                .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "sync")), .openSession(live),
                .watchChanges(after: 42),
                .merge(SyncMerge(records: [bookmark, tombstone], watched: [watched]))
            ]))
        return streams
    }

    @Test func committedCorpusReplaysWithoutTrapping() throws {
        let files = (try? FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)) ?? []
        #expect(!files.isEmpty, "the corpus at \(Self.corpus.path) is empty")
        var frames = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            var replay = FuzzReplay()
            bytes.withUnsafeBytes { replay.run($0) }
            frames += replay.frames
        }
        #expect(frames > 0)
    }

    @Test func seedsExerciseTheTimeline() {
        for seed in Self.seeds {
            var replay = FuzzReplay()
            seed.withUnsafeBytes { replay.run($0) }
            #expect(replay.sessionsOpened == 1)
            #expect(replay.frames >= 3)
        }
    }

    /// 20,000 seeded mutations: bit flips, byte overwrites, truncation, splices, duplicated ranges.
    @Test func randomMutationsNeverTrap() {
        var rng = SplitMix64(seed: 0x5EED_0F_5A_9BAC)
        let seeds = Self.seeds
        for _ in 0..<20_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            rng.mutate(&bytes)
            var replay = FuzzReplay()
            bytes.withUnsafeBytes { replay.run($0) }
        }
    }

    /// Writes the seeds into the corpus when `SNAPBACK_WRITE_FUZZ_SEEDS=1` (after a protocol change).
    @Test func writeSeedsWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["SNAPBACK_WRITE_FUZZ_SEEDS"] == "1" else { return }
        for (i, seed) in Self.seeds.enumerated() {
            try Data(seed).write(to: Self.corpus.appendingPathComponent("seed-\(i)"))
        }
        #expect(Self.seeds.count == 4)
    }
}
