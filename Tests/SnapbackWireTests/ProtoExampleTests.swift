// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire
import Testing

// The hex examples of proto/PROTOCOL.md, produced by this module's encoders and checked here so the
// document cannot drift from the code. The frame header is built from the spec table, independently of
// the frame codec.

enum ExampleFrameType: UInt8 { case request = 1, response = 2, push = 3 }

func exampleFrame(
    _ type: ExampleFrameType, callId: UInt32, method: WireMethod, status: StatusCode = .ok,
    body: [UInt8]
) -> [UInt8] {
    func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    return be32(UInt32(body.count)) + be32(callId) + [
        type.rawValue, status.rawValue,
        UInt8(method.rawValue >> 8), UInt8(method.rawValue & 0xFF)
    ] + body
}

/// "0000000d 00000001 01 00 0000  08 01 12 04 …": the header's fields, then the body.
func exampleHex(_ frame: [UInt8]) -> String {
    func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined()
    }
    let header = [hex(frame[0..<4]), hex(frame[4..<8]), hex(frame[8..<9]), hex(frame[9..<10]), hex(frame[10..<12])]
        .joined(separator: " ")
    let body = frame[12...].map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(separator: " ")
    return body.isEmpty ? header : header + "  " + body
}

struct Example {
    var note: String
    var frame: [UInt8]
}

var protocolExamples: [Example] {
    var examples: [Example] = []
    examples.append(
        Example(
            note: "C→S Hello{protocol_version: 1, client_name: \"demo\"}",
            frame: exampleFrame(
                .request, callId: 1, method: .hello,
                body: WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "demo"))
                    .encoded())))
    let hello = SnapbackV1.HelloReply(
        protocolVersion: WireProtocol.version, serverName: "snapbackd", serverVersion: "0.1.0",
        maxFrameSize: WireProtocol.defaultMaxFrameSize, maxOutboundQueueBytes: WireProtocol.defaultMaxOutboundQueueBytes,
        policyPresets: ["snapback", "ima"], defaultPolicyPreset: "snapback",
        maxBreaksPerSession: WireProtocol.defaultMaxBreaksPerSession)
    examples.append(
        Example(
            note: "S→C HelloReply",
            frame: exampleFrame(
                .response, callId: 1, method: .hello,
                body: hello.encoded())))
    let open = OpenSessionRequest(
        streamId: "s1", contentId: "movie-42",
        breaks: [AdBreak(id: "b1", start: 600, duration: 30)], contentDuration: 1800)
    examples.append(
        Example(
            note: "C→S OpenSession",
            frame: exampleFrame(
                .request, callId: 2, method: .openSession,
                body: WireRequest.openSession(open).encoded())))
    examples.append(
        Example(
            note: "S→C OpenSessionReply{session_id: 1, policy_preset: \"snapback\"}",
            frame: exampleFrame(
                .response, callId: 2, method: .openSession,
                body: SnapbackV1.OpenSessionReply(sessionId: 1, policyPreset: "snapback").encoded())))
    examples.append(
        Example(
            note: "C→S SeekEnded{session_id: 1, from_stream_time: 300, to_stream_time: 900}",
            frame: exampleFrame(
                .request, callId: 3, method: .seekEnded,
                body: WireRequest.event(sessionId: 1, .seekEnded(from: 300, to: 900))
                    .encoded())))
    var push: [UInt8] = []
    WirePushMessage(sessionId: 1, seq: 1, reason: "skipped b1", kind: .seek(to: 600, reason: .snapback)).encode(into: &push)
    examples.append(
        Example(
            note: "S→C Push{session_id: 1, seq: 1, reason: \"skipped b1\", seek{600, SNAPBACK}}",
            frame: exampleFrame(.push, callId: 2, method: .openSession, body: push)))
    var reply: [UInt8] = []
    WireReply.encodeEventReply(lastPushSeq: 1, into: &reply)
    examples.append(
        Example(
            note: "S→C EventReply{last_push_seq: 1}",
            frame: exampleFrame(.response, callId: 3, method: .seekEnded, body: reply)))
    examples.append(
        Example(
            note: "C→S SeekEnded{session_id: 9, …}",
            frame: exampleFrame(
                .request, callId: 4, method: .seekEnded,
                body: WireRequest.event(sessionId: 9, .seekEnded(from: 0, to: 60))
                    .encoded())))
    var status: [UInt8] = []
    WireReply.encodeStatus(code: .notFound, message: "no session 9", into: &status)
    examples.append(
        Example(
            note: "S→C NOT_FOUND Status{code: 5, message: \"no session 9\"}",
            frame: exampleFrame(
                .response, callId: 4, method: .seekEnded, status: .notFound,
                body: status)))
    return examples
}

@Suite("PROTOCOL.md examples")
struct ProtoExampleTests {
    @Test func examplesMatchTheDocument() {
        let expected = [
            "00000008 00000001 01 00 0000  08 01 12 04 64 65 6d 6f",
            "00000039 00000001 02 00 0000  08 01 12 09 73 6e 61 70 62 61 63 6b 64 1a 05 30 2e 31 2e 30 20 80 80 10 28 "
                + "80 80 80 04 32 08 73 6e 61 70 62 61 63 6b 32 03 69 6d 61 3a 08 73 6e 61 70 62 61 63 6b 40 e8 07",
            "00000031 00000002 01 00 0100  0a 02 73 31 12 08 6d 6f 76 69 65 2d 34 32 20 01 2a 16 0a 02 62 31 11 00 00 "
                + "00 00 00 c0 82 40 19 00 00 00 00 00 00 3e 40 31 00 00 00 00 00 20 9c 40",
            "0000000c 00000002 02 00 0100  08 01 22 08 73 6e 61 70 62 61 63 6b",
            "00000014 00000003 01 00 0103  08 01 11 00 00 00 00 00 c0 72 40 19 00 00 00 00 00 20 8c 40",
            "0000001d 00000002 03 00 0100  08 01 10 01 1a 0a 73 6b 69 70 70 65 64 20 62 31 22 0b 09 00 00 00 00 00 c0 "
                + "82 40 10 01",
            "00000002 00000003 02 00 0103  08 01",
            "0000000b 00000004 01 00 0103  08 09 19 00 00 00 00 00 00 4e 40",
            "00000010 00000004 02 05 0103  08 05 12 0c 6e 6f 20 73 65 73 73 69 6f 6e 20 39"
        ]
        let actual = protocolExamples.map { exampleHex($0.frame) }
        #expect(actual == expected)
        if actual != expected {
            // What to paste into PROTOCOL.md (and above) after a deliberate change.
            for example in protocolExamples { print("// \(example.note)\n\(exampleHex(example.frame))") }
        }
    }
}
