// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import Testing

@testable import SnapbackSync

/// The bucket's keys: every id round-trips, only NATS key characters are written, and the two kinds of
/// key never meet.
@Suite struct KeyCodecTests {
    static let keyAlphabet = Set("-/_=.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    @Test func plainIdsReadAsThemselvesAndOthersAreEscaped() {
        #expect(KeyCodec.encode("movie-42") == "movie-42")
        #expect(KeyCodec.encode("a/b_c") == "a/b_c")
        #expect(KeyCodec.encode("") == "=")
        #expect(KeyCodec.encode("s01.e02") == "s01=2Ee02")
        #expect(KeyCodec.encode("a=b") == "a=3Db")
        #expect(KeyCodec.encode("é") == "=C3=A9")
        #expect(KeyCodec.encode("a b*>") == "a=20b=2A=3E")
    }

    @Test func everyIdRoundTripsThroughOneTokenOfTheKeyAlphabet() {
        var random = SplitMix64(seed: 27)
        let pieces = ["", "a", "Z", "0", "-", "_", "/", ".", "=", " ", "*", ">", "é", "🎬", "\u{0}", "%", "=3D", "=watched"]
        for _ in 0..<5_000 {
            var id = ""
            for _ in 0..<Int(random.next() % 8) { id += pieces[Int(random.next() % UInt64(pieces.count))] }
            let token = KeyCodec.encode(id)
            #expect(!token.isEmpty && !token.contains("."))
            #expect(token.utf8.allSatisfy { Self.keyAlphabet.contains($0) }, "\(token)")
            #expect(KeyCodec.decode(token[...]) == id, "\(id) → \(token)")
        }
    }

    @Test func tokensNoEncodingWritesAreRefused() {
        for token in ["", "=4", "=4g", "=41" /* 'A' is plain */, "=2e" /* lower case */, "a b", "=FF", "=C3", "*", ">"] {
            #expect(KeyCodec.decode(token[...]) == nil, "\(token)")
        }
    }

    @Test func recordAndWatchedKeysParseBackAndNeverMeet() {
        let record = KeyCodec.key(household: "A", .record(profile: "kids", contentId: "movie.1"))
        #expect(record == "A.kids.movie=2E1")
        #expect(KeyCodec.parse(record!, household: "A") == .record(profile: "kids", contentId: "movie.1"))
        let watched = KeyCodec.key(household: "A", .watched(contentId: "movie.1"))
        #expect(watched == "A.=watched.movie=2E1")
        #expect(KeyCodec.parse(watched!, household: "A") == .watched(contentId: "movie.1"))
        // A profile spelled like the marker is escaped, so it stays a profile.
        let lookalike = KeyCodec.key(household: "A", .record(profile: "=watched", contentId: "m"))!
        #expect(KeyCodec.parse(lookalike, household: "A") == .record(profile: "=watched", contentId: "m"))
        // The empty profile.
        #expect(KeyCodec.parse("A.=.m", household: "A") == .record(profile: "", contentId: "m"))
        // Other households' keys, and keys the agent never writes, are nobody's.
        #expect(KeyCodec.parse(record!, household: "B") == nil)
        #expect(KeyCodec.parse("A.kids", household: "A") == nil)
        #expect(KeyCodec.parse("A.kids.m.x", household: "A") == nil)
        #expect(KeyCodec.parse("A.kids.=", household: "A") == nil)  // an empty content id
    }

    @Test func aKeyOverTheBoundIsNotMade() {
        let long = String(repeating: "é", count: 512)  // 1 KiB of UTF-8, 3 KiB escaped
        #expect(KeyCodec.key(household: "A", .record(profile: long, contentId: "m")) == nil)
        let fits = String(repeating: "a", count: 1024)
        #expect(KeyCodec.key(household: "A", .record(profile: fits, contentId: fits)) != nil)
    }
}
