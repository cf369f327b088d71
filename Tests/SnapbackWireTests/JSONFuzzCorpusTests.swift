// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackFuzzing
import SnapbackJSON
import SnapbackTestSupport
import Testing

@testable import SnapbackWire

/// The JSON fuzz target's code path (`JSONReplay`: a generated JSON decoder, then the message written back)
/// on the committed corpus (`Tests/Fuzz/json-corpus`: a seed per message, and past failures) and on seeded
/// random mutations of the seeds.
@Suite("JSON fuzz corpus")
struct JSONFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/json-corpus")

    /// Per message, its selector byte and its sample's JSON.
    static var seeds: [[UInt8]] {
        everyGeneratedMessage.compactMap { type in
            guard let i = everyProtoJSONMessage.firstIndex(where: { ObjectIdentifier($0) == ObjectIdentifier(type) }),
                let sample = type.samples.first as? any ProtoJSONMessage
            else { return nil }
            return [UInt8(i)] + Array(sample.jsonString.utf8)
        }
    }

    @Test func everyMessageHasASeedThatReads() {
        #expect(Self.seeds.count == everyProtoJSONMessage.count)
        for seed in Self.seeds {
            #expect(seed.withUnsafeBytes { JSONReplay.run($0) }, "\(String(decoding: seed.dropFirst(), as: UTF8.self))")
        }
    }

    @Test func committedCorpusReplaysWithoutTrapping() throws {
        let files = (try? FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count >= everyProtoJSONMessage.count, "the corpus at \(Self.corpus.path) lacks seeds")
        var read = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            if bytes.withUnsafeBytes({ JSONReplay.run($0) }) { read += 1 }
        }
        #expect(read >= everyProtoJSONMessage.count)
    }

    /// 20,000 seeded mutations: bit flips, byte overwrites, truncation, splices, duplicated ranges.
    @Test func randomMutationsNeverTrap() {
        var rng = SplitMix64(seed: 0x15_0A_F0_22)
        let seeds = Self.seeds
        for _ in 0..<20_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            rng.mutate(&bytes)
            bytes.withUnsafeBytes { _ = JSONReplay.run($0) }
        }
    }

    /// Writes the seeds into the corpus when `SNAPBACK_WRITE_FUZZ_SEEDS=1` (after a protocol change).
    @Test func writeSeedsWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["SNAPBACK_WRITE_FUZZ_SEEDS"] == "1" else { return }
        try FileManager.default.createDirectory(at: Self.corpus, withIntermediateDirectories: true)
        for (i, seed) in Self.seeds.enumerated() {
            try Data(seed).write(to: Self.corpus.appendingPathComponent("seed-\(i)"))
        }
    }
}
