// SPDX-License-Identifier: Apache-2.0
/// The bucket's keys (snapback-sync(8), docs/sync.md):
///
/// - `<household>.<profile>.<content>`: the record (bookmark or tombstone) of one bookmark key;
/// - `<household>.=watched.<content>`: the watched breaks of one content (of every profile, as the store
///   keeps them).
///
/// NATS keys are tokens of `A-Z a-z 0-9 - _ / =` separated by `.`; a token may not be empty. Profile and
/// content ids are any UTF-8, so each is written with its bytes outside `A-Z a-z 0-9 - _ /` as `=XX`
/// (two upper-case hex digits; `=` itself is `=3D`), and the empty id as a lone `=`. Ids of plain
/// characters read as themselves (`movie-42`), which keeps `nats kv ls` readable. `=watched` is no
/// encoded id (`=w` is no escape), so the two kinds of key never meet.
public enum KeyCodec {
    /// The token that stands in a watched-breaks key where a record key has its profile.
    public static let watchedToken = "=watched"
    /// The tokens of the keys of ids too long to spell out (``maxKeyBytes``): a record's and a content's
    /// watched breaks', followed by the SHA-256 of the ids in lower-case hex. No encoded id is either
    /// (`=l` is no escape); the value carries the ids, and is checked against the digest when read.
    public static let longRecordToken = "=long"
    public static let longWatchedToken = "=longwatched"
    /// The longest key spelled out: a subject travels in the NATS protocol's control line, 4,096 bytes by
    /// default with the bucket's `$KV.<bucket>.` prefix and the reply subject. An id whose key would be
    /// longer (over ~1 KiB of escaped bytes) gets the key of its digest instead: every id syncs.
    public static let maxKeyBytes = 3072

    /// A byte that stands for itself in an encoded token.
    @inline(__always)
    static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// One id as a key token (never empty, only key characters, no `.`).
    public static func encode(_ id: String) -> String {
        if id.isEmpty { return "=" }
        var out: [UInt8] = []
        out.reserveCapacity(id.utf8.count)
        for byte in id.utf8 {
            if isPlain(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "="))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xf)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The id a token encodes; nil for a token ``encode(_:)`` never writes (a bad escape, a byte outside
    /// the alphabet, bytes that are not UTF-8, or a non-canonical spelling such as `=61` for `a`).
    public static func decode(_ token: Substring) -> String? {
        if case .success(let id) = decoded(token) { return id }
        return nil
    }

    /// The id a token encodes, or why it encodes none (for the log line of a skipped value).
    static func decoded(_ token: Substring) -> Result<String, KeyProblem> {
        if token == "=" { return .success("") }
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { return .failure(KeyProblem("an empty token")) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if isPlain(byte) {
                out.append(byte)
                i += 1
                continue
            }
            guard byte == UInt8(ascii: "=") else {
                return .failure(KeyProblem("byte 0x\(String(byte, radix: 16)) at \(i) is outside the key alphabet"))
            }
            guard i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
                return .failure(KeyProblem("the escape at \(i) is not = and two upper-case hex digits"))
            }
            let decoded = high << 4 | low
            if isPlain(decoded) { return .failure(KeyProblem("the escape at \(i) stands for a plain character")) }
            out.append(decoded)
            i += 3
        }
        // Escapes of bytes that are not UTF-8 are refused: every id is valid UTF-8.
        guard let text = String(validating: out, as: UTF8.self) else {
            return .failure(KeyProblem("its escapes are not UTF-8"))
        }
        return .success(text)
    }

    /// Why a key is none the agent writes.
    struct KeyProblem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Why `key` is not a key of `household` that the agent writes; nil when it is one.
    static func problem(_ key: String, household: String) -> String? {
        let tokens = key.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count == 3 else { return "\(tokens.count) tokens, not 3" }
        guard tokens[0] == household else { return "another household's key" }
        if tokens[1] == longRecordToken || tokens[1] == longWatchedToken {
            return isDigest(tokens[2]) ? nil : "its digest token is not 64 lower-case hex digits"
        }
        if tokens[1] != watchedToken, case .failure(let why) = decoded(tokens[1]) { return "its profile token: \(why)" }
        switch decoded(tokens[2]) {
        case .failure(let why): return "its content token: \(why)"
        case .success(let id) where id.isEmpty: return "an empty content id"
        case .success: return nil
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// What a key of the household names.
    public enum Key: Equatable, Sendable {
        case record(profile: String, contentId: String)
        case watched(contentId: String)
    }

    /// The key of a record or of a content's watched breaks: spelled out, or the key of the ids' digest
    /// when that would pass ``maxKeyBytes``. One key for each (profile, content id) and each content.
    public static func key(household: String, _ key: Key) -> String {
        let text: String
        switch key {
        case .record(let profile, let contentId): text = "\(household).\(encode(profile)).\(encode(contentId))"
        case .watched(let contentId): text = "\(household).\(watchedToken).\(encode(contentId))"
        }
        if text.utf8.count <= maxKeyBytes { return text }
        switch key {
        case .record(let profile, let contentId):
            // The profile's length first: no two pairs of ids give the same bytes.
            let bytes = Array("\(profile.utf8.count):".utf8) + Array(profile.utf8) + Array(contentId.utf8)
            return "\(household).\(longRecordToken).\(SHA256.hex(bytes))"
        case .watched(let contentId):
            return "\(household).\(longWatchedToken).\(SHA256.hex(Array(contentId.utf8)))"
        }
    }

    /// What a key holds.
    public enum Kind: Equatable, Sendable {
        case record
        case watched
    }

    /// Whether `key` is a record's or a content's watched breaks' key of `household`, spelled out or by
    /// digest; nil for anything else. Its value is checked against the key when read (``KVValue``).
    public static func kind(of key: String, household: String) -> Kind? {
        let tokens = key.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count == 3, tokens[0] == household else { return nil }
        if tokens[1] == longRecordToken || tokens[1] == longWatchedToken {
            guard isDigest(tokens[2]) else { return nil }
            return tokens[1] == longRecordToken ? .record : .watched
        }
        switch parse(key, household: household) {
        case .record: return .record
        case .watched: return .watched
        case nil: return nil
        }
    }

    static func isDigest(_ token: Substring) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The key's meaning, if it is a key of `household` that the agent writes; nil for anything else.
    public static func parse(_ key: String, household: String) -> Key? {
        let tokens = key.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count == 3, tokens[0] == household, let contentId = decode(tokens[2]), !contentId.isEmpty else {
            return nil
        }
        if tokens[1] == watchedToken { return .watched(contentId: contentId) }
        guard let profile = decode(tokens[1]) else { return nil }
        return .record(profile: profile, contentId: contentId)
    }
}
