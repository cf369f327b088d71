import CSnapbackProto
import SnapbackTimeline
import SnapbackWire
import Testing

/// A varint field 1000 and a length-delimited field 1001 that no message of version 1 declares.
let unknownFields: [UInt8] = [0xC0, 0x3E, 0x01, 0xCA, 0x3E, 0x03, 0x61, 0x62, 0x63]

@Suite("Decoding")
struct MessageDecodeTests {
    @Test(arguments: everyRequest)
    func unknownFieldsAreIgnored(_ request: WireRequest) throws {
        let body = request.encoded()
        #expect(try WireRequest.decode(method: request.method, body: body + unknownFields) == request)
        #expect(try WireRequest.decode(method: request.method, body: unknownFields + body) == request)
    }

    @Test func unknownFieldsInRepliesAndPushesAreIgnored() throws {
        let reply = OpenSessionReply(sessionId: 7, policyPreset: "ima", lastPushSeq: 2)
        #expect(try OpenSessionReply.decode(reply.encoded() + unknownFields) == reply)
        let push = WirePushMessage(sessionId: 1, seq: 2, reason: "r", kind: .breakWatched(breakId: "b1"))
        #expect(try WirePushMessage.decode(push.encoded() + unknownFields) == push)
        #expect(try EventReply.decode(EventReply(lastPushSeq: 3).encoded() + unknownFields).lastPushSeq == 3)
    }

    @Test(arguments: WireMethod.allCases)
    func emptyBodyDecodesToDefaults(_ method: WireMethod) throws {
        let request = try WireRequest.decode(method: method, body: [])
        #expect(request.method == method)
    }

    static let malformedBodies: [[UInt8]] = [
        [0x08],  // a varint tag without its value
        [0x08, 0xFF],  // a varint cut short
        [0x12, 0x05, 0x61],  // a length beyond the body
        [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],  // a huge length
        [0x0B],  // a start-group wire type
        [0x00, 0x00],  // field number 0
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // an over-long varint
    ]

    @Test(arguments: WireMethod.allCases, malformedBodies)
    func malformedBodiesAreRejected(_ method: WireMethod, _ body: [UInt8]) throws {
        #expect(throws: WireError.self) { try WireRequest.decode(method: method, body: body) }
        do {
            _ = try WireRequest.decode(method: method, body: body)
        } catch {
            guard case .malformed = error else {
                Issue.record("expected .malformed, got \(error)")
                return
            }
            #expect(error.statusCode == .invalidArgument)
        }
    }

    @Test func malformedNamesTheMessage() {
        #expect(throws: WireError.malformed(message: "snapback.v1.SeekEndedRequest")) {
            try WireRequest.decode(method: .seekEnded, body: [0x11, 0x00])  // double field 2, 1 of 8 bytes
        }
    }

    @Test func wrongWireTypeForAKnownFieldIsRejected() {
        // SeekEndedRequest.from_stream_time (field 2, double) sent as a varint.
        #expect(throws: WireError.malformed(message: "snapback.v1.SeekEndedRequest")) {
            try WireRequest.decode(method: .seekEnded, body: [0x10, 0x05])
        }
    }

    @Test func malformedReplies() {
        #expect(throws: WireError.malformed(message: "snapback.v1.HelloReply")) { try HelloReply.decode([0x12, 0x09]) }
        #expect(throws: WireError.malformed(message: "snapback.v1.Push")) { try WirePushMessage.decode([0x22, 0x01]) }
        #expect(throws: WireError.malformed(message: "snapback.v1.Status")) { try WireStatus.decode([0x08]) }
    }

    @Test func unknownSessionKindIsInvalidArgument() {
        // OpenSessionRequest{kind: 7}
        #expect(throws: WireError.invalidArgument("kind: unknown enum value 7")) {
            try WireRequest.decode(method: .openSession, body: [0x20, 0x07])
        }
    }

    @Test func unspecifiedSessionKindIsOnDemand() throws {
        guard case .openSession(let open) = try WireRequest.decode(method: .openSession, body: [0x20, 0x00]) else {
            Issue.record("not an openSession")
            return
        }
        #expect(open.kind == .onDemand)
    }

    @Test(arguments: [
        (UInt8(1), "skipped_break_choice"), (2, "seek_gate"), (4, "return_to_target"),
        (5, "landing_in_unwatched_break"), (7, "watched_when"), (9, "watched_break_on_playback"),
        (13, "resume_breaks"),
    ])
    func unknownPolicyEnumIsInvalidArgument(_ field: UInt8, _ name: String) {
        // OpenSessionRequest{policy_overrides: {<field>: 9}}
        let body: [UInt8] = [0x42, 0x02, field << 3, 0x09]
        #expect(throws: WireError.invalidArgument("policy_overrides.\(name): unknown enum value 9")) {
            try WireRequest.decode(method: .openSession, body: body)
        }
    }

    @Test func negativeEnumValueIsInvalidArgument() {
        // OpenSessionRequest{kind: -1} (ten-byte varint)
        let body: [UInt8] = [0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        #expect(throws: WireError.invalidArgument("kind: unknown enum value -1")) {
            try WireRequest.decode(method: .openSession, body: body)
        }
    }

    @Test func unknownPresetIsInvalidArgument() {
        // OpenSessionRequest{policy_preset: "bogus"}
        let body: [UInt8] = [0x3A, 0x05] + Array("bogus".utf8)
        #expect(throws: WireError.invalidArgument(
            "unknown policy preset \"bogus\" (known: snapback, ima, tvsdk, media3, hlsjs)")) {
            try WireRequest.decode(method: .openSession, body: body)
        }
    }

    @Test func timesAreNotValidatedHere() throws {
        // NaN, infinities and negative times are the timeline's to reject (TimelineError.invalidTime).
        let request = WireRequest.event(sessionId: 1, .seekEnded(from: -1, to: .infinity))
        #expect(try WireRequest.decode(method: .seekEnded, body: request.encoded()) == request)
        let nan = try WireRequest.decode(method: .pause, body: WireRequest.event(sessionId: 1, .paused(streamTime: .nan)).encoded())
        guard case .event(_, .paused(let t)) = nan else {
            Issue.record("not a pause")
            return
        }
        #expect(t.isNaN)
    }

    @Test func decodeFromARawBufferWithoutCopying() throws {
        let body = WireRequest.event(sessionId: 4, .seekEnded(from: 300, to: 900)).encoded()
        let decoded = try body.withUnsafeBytes { raw in
            Result { () throws(WireError) in try WireRequest.decode(method: .seekEnded, body: raw) }
        }.get()
        #expect(decoded == .event(sessionId: 4, .seekEnded(from: 300, to: 900)))
    }

    @Test func wireErrorsMapToInvalidArgument() {
        #expect(WireError.malformed(message: "x").status.code == .invalidArgument)
        #expect(WireError.invalidArgument("bad").status == WireStatus(code: .invalidArgument, message: "bad"))
    }
}
