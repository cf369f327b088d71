// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import SnapbackTimeline
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
        #expect(KeyCodec.parse(record, household: "A") == .record(profile: "kids", contentId: "movie.1"))
        let watched = KeyCodec.key(household: "A", .watched(contentId: "movie.1"))
        #expect(watched == "A.=watched.movie=2E1")
        #expect(KeyCodec.parse(watched, household: "A") == .watched(contentId: "movie.1"))
        // A profile spelled like the marker is escaped, so it stays a profile.
        let lookalike = KeyCodec.key(household: "A", .record(profile: "=watched", contentId: "m"))
        #expect(KeyCodec.parse(lookalike, household: "A") == .record(profile: "=watched", contentId: "m"))
        // The empty profile.
        #expect(KeyCodec.parse("A.=.m", household: "A") == .record(profile: "", contentId: "m"))
        // Other households' keys, and keys the agent never writes, are nobody's.
        #expect(KeyCodec.parse(record, household: "B") == nil)
        #expect(KeyCodec.parse("A.kids", household: "A") == nil)
        #expect(KeyCodec.parse("A.kids.m.x", household: "A") == nil)
        #expect(KeyCodec.parse("A.kids.=", household: "A") == nil)  // an empty content id
    }

    /// Ids whose key would pass the bound get the key of their digest: every id the Sync protocol carries
    /// (1 KiB at most) syncs, with one key per pair of ids, and a value under a digest key is taken only
    /// if its ids give that key.
    @Test func aKeyOverTheBoundIsTheKeyOfItsDigest() throws {
        let long = String(repeating: "é", count: 512)  // 1 KiB of UTF-8, 3 KiB escaped
        let key = KeyCodec.key(household: "A", .record(profile: long, contentId: "m"))
        #expect(key.hasPrefix("A.=long.") && key.utf8.count == "A.=long.".utf8.count + 64)
        #expect(KeyCodec.kind(of: key, household: "A") == .record)
        #expect(KeyCodec.parse(key, household: "A") == nil)
        #expect(KeyCodec.key(household: "A", .record(profile: long, contentId: "n")) != key)
        // The profile's length is in the digest: moving bytes between the ids gives another key.
        let longer = long + "m"
        #expect(KeyCodec.key(household: "A", .record(profile: long + "é", contentId: "m")) != key)
        #expect(KeyCodec.key(household: "A", .record(profile: String(longer.dropLast()), contentId: "m")) == key)
        let watched = KeyCodec.key(household: "A", .watched(contentId: long))
        #expect(watched.hasPrefix("A.=longwatched.") && KeyCodec.kind(of: watched, household: "A") == .watched)
        // A key that fits is spelled out, and its digest form is no key of it.
        let fits = String(repeating: "a", count: 1024)
        #expect(KeyCodec.key(household: "A", .record(profile: fits, contentId: fits)) == "A.\(fits).\(fits)")
        // A value under a digest key must be of ids that give it.
        let stamp = SyncStamp(physical: 1, counter: 0, device: try DeviceID("box-1"))
        let record = try SyncRecord(profile: long, contentId: "m", value: .tombstone(.deleted), stamp: stamp)
        #expect(KVValue.record(KVValue.encode(record), key: key, household: "A") == record)
        let other = try SyncRecord(profile: "p", contentId: "m", value: .tombstone(.deleted), stamp: stamp)
        #expect(KVValue.record(KVValue.encode(other), key: key, household: "A") == nil)
        #expect(KeyCodec.kind(of: "A.=long.abc", household: "A") == nil)
        #expect(KeyCodec.problem("A.=long.ABC", household: "A")?.contains("64 lower-case hex") == true)
    }

    /// SHA-256's test vectors (FIPS 180-4 examples).
    @Test func sha256() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Why a key is skipped, for its log line: the hostile keys a member could write.
    @Test func everyKeyTheAgentSkipsHasAReason() {
        let cases: [(String, String)] = [
            ("A.p.=4G", "escape at 0"), ("A.p", "2 tokens"), ("A.p.c.d", "4 tokens"), ("A.p.=FF", "not UTF-8"),
            ("A.p.=2c", "escape at 0"), ("A.p.caf\u{E9}", "outside the key alphabet"), ("B.p.c", "another household"),
            ("A.=61.c", "plain character"), ("A.p.=", "empty content id")
        ]
        for (key, reason) in cases {
            #expect(KeyCodec.kind(of: key, household: "A") == nil, "\(key)")
            #expect(
                KeyCodec.problem(key, household: "A")?.contains(reason) == true,
                "\(key): \(String(describing: KeyCodec.problem(key, household: "A")))")
        }
        #expect(KeyCodec.problem("A.p.c", household: "A") == nil)
    }
}
