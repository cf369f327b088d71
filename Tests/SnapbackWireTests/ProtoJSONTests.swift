// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Foundation
import SnapbackJSON
import SnapbackTimeline
import Testing

@testable import SnapbackWire

/// One message to check against json_format: its name, binary form, the JSON the generated encoder
/// writes, and how to read a JSON text back and compare it with the message.
private struct JSONCase {
    var name: String
    var binary: [UInt8]
    var json: String
    var readsBack: (String) throws -> Bool
}

private func jsonCases<M: Sampled>(_ values: [M]) -> [JSONCase] {
    values.compactMap { value in
        guard let message = value as? any ProtoJSONMessage else { return nil }
        return JSONCase(
            name: M.protoName, binary: value.encoded(), json: message.jsonString,
            readsBack: { text in
                let decoded = try type(of: message).init(jsonString: text)
                return (decoded as? M) == value
            })
    }
}

private func jsonCases<M: Sampled>(of _: M.Type) -> [JSONCase] { jsonCases(M.samples) }

/// The values of the edges of the JSON mapping that the samples do not reach: 64-bit extremes, negative
/// int32, an enum value this version does not know, infinities, strings that need escapes (not NUL: a
/// protobuf-c string ends at it, so the binary message holds another string than the value).
private var edgeCases: [JSONCase] {
    var push = SnapbackV1.Push.sample
    push.seq = .max
    push.reason = "tab\t, quote \", backslash \\, SOH \u{1}, DEL \u{7F}, U+2028 \u{2028}, 🎬, é"
    var seek = SnapbackV1.SeekCommand(streamTime: -0.0, reason: Snapback__V1__SeekReason(rawValue: 99))
    seek.streamTime = 1e-300
    var info = SnapbackV1.SessionInfo.sample
    info.peerPid = .min
    info.openedAt = .infinity
    info.contentDuration = 0
    var rules = SnapbackV1.AdRules.sample
    rules.midrollTimes = [-.infinity, 5e-324, 1.7976931348623157e308, 0.1]
    var bookmark = Bookmark()
    bookmark.contentTime = 0
    bookmark.finished = true
    return jsonCases([push]) + jsonCases([seek]) + jsonCases([info]) + jsonCases([rules]) + jsonCases([bookmark])
        + jsonCases([SnapbackV1.OpenSessionReply(sessionId: 1, startStreamTime: 0)])
}

@Suite("Proto3 JSON, against json_format")
struct ProtoJSONTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every sample of every generated message, and the edge cases: the Swift encoder's JSON is what
    /// protobuf's json_format writes for the same binary message (as JSON values), json_format reads it
    /// back as that message, and the Swift decoder reads both json_format's JSON and its own back as it.
    @Test func everyMessageMatchesJSONFormatBothWays() throws {
        var cases: [JSONCase] = []
        for type in everyGeneratedMessage { cases += jsonCases(of: type) }
        cases += edgeCases
        #expect(cases.count > everyGeneratedMessage.count)
        let input =
            cases.map { c in
                c.name + "\t" + c.binary.map { String(format: "%02x", $0) }.joined() + "\t" + c.json
            }.joined(separator: "\n") + "\n"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapback-json-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("cases.tsv")
        try Data(input.utf8).write(to: inputFile)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let script = Self.repository.appendingPathComponent("Tests/clients/python/json_format_check.py").path
        let proto = Self.repository.appendingPathComponent("proto").path
        process.arguments = ["-c", "exec /usr/bin/python3 \"$0\" \"$1\" < \"$2\"", script, proto, inputFile.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "json_format_check.py (needs python3-protobuf and protoc-c) failed")
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast()
        try #require(lines.count == cases.count, "json_format_check.py answered \(lines.count) of \(cases.count) lines")
        for (c, line) in zip(cases, lines) {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == "ok" else {
                Issue.record("\(parts.last ?? "")")
                continue
            }
            #expect(try c.readsBack(parts[1]), "\(c.name): json_format's \(parts[1]) does not read back as the message")
            #expect(try c.readsBack(c.json), "\(c.name): its own JSON \(c.json) does not read back as the message")
        }
    }

    /// What proto3's JSON mapping refuses, the decoder refuses, saying why; none of it traps.
    @Test(
        arguments: [
            (#"{"sessionId": "1", "sessionId": "2"}"#, "more than once"),
            (#"{"session_id": "1", "sessionId": "2"}"#, "more than once"),
            (#"{"nope": 1}"#, "has no field \"nope\""),
            (#"{"sessionId": "-1"}"#, "not a uint64"),
            (#"{"sessionId": "18446744073709551616"}"#, "not a uint64"),
            (#"{"sessionId": 1.5}"#, "not a uint64"),
            (#"{"streamTime": 1e400}"#, "out of a double's range"),
            (#"{"streamTime": "12"}"#, nil),
            (#"{"streamTime": 01}"#, "expected"),
            (#"{"streamTime": .5}"#, "expected a number"),
            (#"{"streamTime": 1,}"#, "expected a member name"),
            (#"{"streamTime": 1} x"#, "after the JSON value"),
            (#"{"streamTime": tru}"#, "expected a number"),
            (#"{"sessionId": "1" "streamTime": 1}"#, "expected ','"),
            ("[1]", "expected an object"),
            ("", "unexpected end")
        ] as [(String, String?)])
    func refusals(_ text: String, _ why: String?) {
        do {
            _ = try SnapbackV1.BreakAtRequest(jsonString: text)
            #expect(why == nil, "\(text) was read")
        } catch {
            #expect(why != nil && error.description.contains(why!), "\(text): \(error)")
        }
    }

    @Test func bytesThatAreNotUTF8AndTooDeepAndTooLongAreRefused() {
        var bytes = Array(#"{"reason": "x"}"#.utf8)
        bytes[12] = 0xFF
        #expect(throws: ProtoJSONError.self) { try SnapbackV1.Push(jsonUTF8: bytes) }
        for (text, why) in [
            ("{\"reason\": \"1\u{1}\"}", "control character"), (#"{"reason": "\ud800"}"#, "lone UTF-16 surrogate"),
            (#"{"reason": "\udc00\ud800"}"#, "lone UTF-16 surrogate"), (#"{"reason": "\x"}"#, "invalid escape"),
            (#"{"reason": "\u12"}"#, "invalid \\u escape"), (#"{"reason": "open"#, "unterminated")
        ] {
            #expect("\(text)" != "" && (try? SnapbackV1.Push(jsonString: text)) == nil, "\(text)")
            do { _ = try SnapbackV1.Push(jsonString: text) } catch { #expect(error.description.contains(why), "\(error)") }
        }
        #expect((try? SnapbackV1.Push(jsonString: #"{"reason": "\ud83c\udfac \u00e9\n"}"#))?.reason == "🎬 é\n")
        // The messages do not nest themselves, and an unknown field is refused before its value is read:
        // the schema bounds the nesting, which the limit bounds again.
        let deep = #"{"state": {"breaks": [{"adDurations": [1]}]}}"#
        #expect((try? SnapbackV1.SessionInfo(jsonString: deep))?.state?.breaks.first?.adDurations == [1])
        #expect { try SnapbackV1.SessionInfo(jsonString: deep, limits: ProtoJSONLimits(maxDepth: 3)) } throws: { error in
            (error as? ProtoJSONError)?.message.contains("nested deeper") == true
        }
        let breaks = "{\"breaks\": [" + Array(repeating: "{}", count: 11).joined(separator: ",") + "]}"
        #expect(throws: ProtoJSONError.self) {
            try SnapbackV1.UpdateBreaksRequest(jsonString: breaks, limits: ProtoJSONLimits(maxElements: 10))
        }
        #expect(throws: ProtoJSONError.self) {
            try SnapbackV1.Push(jsonString: #"{"reason": "0123456789"}"#, limits: ProtoJSONLimits(maxBytes: 10))
        }
        #expect((try? SnapbackV1.UpdateBreaksRequest(jsonString: breaks))?.breaks.count == 11)
    }
}
