// SPDX-License-Identifier: Apache-2.0
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
        let reply = SnapbackV1.OpenSessionReply(sessionId: 7, policyPreset: "ima", lastPushSeq: 2)
        #expect(try SnapbackV1.OpenSessionReply.decode(reply.encoded() + unknownFields) == reply)
        let push = WirePushMessage(sessionId: 1, seq: 2, reason: "r", kind: .breakWatched(breakId: "b1"))
        #expect(try WirePushMessage.decode(push.encoded() + unknownFields) == push)
        #expect(
            try SnapbackV1.EventReply.decode(SnapbackV1.EventReply(lastPushSeq: 3).encoded() + unknownFields).lastPushSeq == 3)
    }

    /// A request with more breaks than a session may hold is refused RESOURCE_EXHAUSTED before they are read
    /// (reading is what costs the loop); at the limit it decodes.
    @Test func moreBreaksThanASessionMayHoldAreRefusedBeforeTheyAreRead() throws {
        let breaks = (0..<3).map { AdBreak(id: "b\($0)", start: 600 * Double($0 + 1), duration: 30) }
        let open = WireRequest.openSession(OpenSessionRequest(streamId: "s", contentId: "c", breaks: breaks))
        let update = WireRequest.event(sessionId: 1, .breaksUpdated(breaks))
        for request in [open, update] {
            #expect(try WireRequest.decode(method: request.method, body: request.encoded(), maxBreaks: 3) == request)
            #expect(throws: WireError.tooLarge("3 breaks, more than the 2 allowed")) {
                try WireRequest.decode(method: request.method, body: request.encoded(), maxBreaks: 2)
            }
            #expect(WireError.tooLarge("").statusCode == .resourceExhausted)
        }
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
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]  // an over-long varint
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
        #expect(throws: WireError.malformed(message: "snapback.v1.HelloReply")) { try SnapbackV1.HelloReply.decode([0x12, 0x09]) }
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
        (13, "resume_breaks")
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
        #expect(
            throws: WireError.invalidArgument(
                "unknown policy preset \"bogus\" (known: snapback, ima, tvsdk, media3, hlsjs)")
        ) {
            try WireRequest.decode(method: .openSession, body: body)
        }
    }

    /// Every number is checked where it enters, in the field's own name: finite is not enough (a break
    /// of 1e300 s once trapped the daemon's timer conversion).
    @Test(arguments: [
        (
            WireRequest.event(sessionId: 1, .seekEnded(from: -1, to: 900)),
            "from_stream_time must be a time from 0 to 1e10 seconds (got -1.0)"
        ),
        (
            .event(sessionId: 1, .seekEnded(from: 300, to: .infinity)),
            "to_stream_time must be a time from 0 to 1e10 seconds (got inf)"
        ),
        (.event(sessionId: 1, .paused(streamTime: .nan)), "stream_time must be a time from 0 to 1e10 seconds (got nan)"),
        (
            .event(sessionId: 1, .playheadReported(streamTime: 1e11, rate: 1, playing: true)),
            "stream_time must be a time from 0 to 1e10 seconds (got 100000000000.0)"
        ),
        (
            .event(sessionId: 1, .playheadReported(streamTime: 10, rate: -2000, playing: true)),
            "rate must be a rate from -1000 to 1000 (got -2000.0)"
        ),
        (
            .event(sessionId: 1, .trickPlayStarted(streamTime: 10, rate: 1e300)),
            "rate must be a rate from -1000 to 1000 (got 1e+300)"
        ),
        (
            .event(
                sessionId: 1,
                .breaksUpdated([AdBreak(id: "a", start: 10, duration: 5), AdBreak(id: "b", start: 100, duration: 1e300)])),
            "breaks[1].duration must be a duration from 0 to 1e8 seconds (got 1e+300)"
        ),
        (
            .event(sessionId: 1, .breaksUpdated([AdBreak(id: "a", start: 10, duration: 5, adDurations: [2, 1e9])])),
            "breaks[0].ad_durations[1] must be a duration from 0 to 1e8 seconds (got 1000000000.0)"
        ),
        (
            .contentTimeForStreamTime(sessionId: 1, streamTime: 2e10),
            "stream_time must be a time from 0 to 1e10 seconds (got 20000000000.0)"
        ),
        (
            .streamTimeForContentTime(sessionId: 1, contentTime: -0.5),
            "content_time must be a time from 0 to 1e10 seconds (got -0.5)"
        ),
        (.breakAt(sessionId: 1, streamTime: .infinity), "stream_time must be a time from 0 to 1e10 seconds (got inf)"),
        (
            .event(sessionId: 1, .midrollsScheduled([600, .nan])),
            "midroll_times[1] must be a time from 0 to 1e10 seconds (got nan)"
        )
    ])
    func numbersOutOfRangeAreRefusedNamingTheField(_ request: WireRequest, _ message: String) {
        #expect(throws: WireError.invalidArgument(message)) {
            try WireRequest.decode(method: request.method, body: request.encoded())
        }
    }

    /// A live ad-rules session's schedule is its mid-roll times; a stitched session's, its break list: an
    /// UpdateBreaks with both is refused, and one with more times than ad rules may hold.
    @Test func midRollTimesComeAloneAndBounded() {
        let both = SnapbackV1.UpdateBreaksRequest(
            sessionId: 1, breaks: [SnapbackV1.AdBreak(id: "a", start: 10, duration: 5)], midrollTimes: [600]
        ).encoded()
        #expect(throws: WireError.invalidArgument("UpdateBreaks with both breaks and midroll_times: one or the other")) {
            try WireRequest.decode(method: .updateBreaks, body: both)
        }
        let many = WireRequest.event(sessionId: 1, .midrollsScheduled(Array(repeating: 5, count: Limits.adRulesMidrolls + 1)))
        #expect(throws: WireError.tooLarge("midroll_times: 1001 times, above 1000")) {
            try WireRequest.decode(method: many.method, body: many.encoded())
        }
    }

    @Test func theEdgesOfEachRangeAreAccepted() throws {
        for request in [
            WireRequest.event(sessionId: 1, .seekEnded(from: 0, to: 1e10)),
            .event(sessionId: 1, .playheadReported(streamTime: 1e10, rate: -1000, playing: true)),
            .event(sessionId: 1, .trickPlayStarted(streamTime: 0, rate: 1000)),
            .event(sessionId: 1, .breaksUpdated([AdBreak(id: "a", start: 1e10, duration: 1e8, adDurations: [1e8])])),
            .event(sessionId: 1, .midrollsScheduled(Array(repeating: 1e10, count: Limits.adRulesMidrolls)))
        ] {
            #expect(try WireRequest.decode(method: request.method, body: request.encoded()) == request)
        }
    }

    @Test(arguments: [
        (open { r in r.contentDuration = 1e300 }, "content_duration must be a duration from 0 to 1e8 seconds (got 1e+300)"),
        (
            open { r in r.breaks = [AdBreak(id: "b1", start: 600, duration: 1e300)] },
            "breaks[0].duration must be a duration from 0 to 1e8 seconds (got 1e+300)"
        ),
        (
            open { r in r.breaks = [AdBreak(id: "b1", start: -600, duration: 30)] },
            "breaks[0].start must be a time from 0 to 1e10 seconds (got -600.0)"
        ),
        (
            open { r in r.breaks = [AdBreak(id: "b1", start: 600, duration: 60, contentResumeOffset: 1e9)] },
            "breaks[0].content_resume_offset must be a content resume offset from 0 to 1e8 seconds (got 1000000000.0)"
        ),
        (
            open { r in r.breaks = [AdBreak(id: "b1", start: 600, duration: 60, contentResumeOffset: -1)] },
            "breaks[0].content_resume_offset must be a content resume offset from 0 to 1e8 seconds (got -1.0)"
        ),
        (
            open { r in r.breaks = [AdBreak(id: "b1", start: 600, duration: 60, contentResumeOffset: .nan)] },
            "breaks[0].content_resume_offset must be a content resume offset from 0 to 1e8 seconds (got nan)"
        ),
        (
            open { r in r.resume.resumeContentTime = 1e17 },
            "resume.resume_content_time must be a time from 0 to 1e10 seconds (got 1e+17)"
        ),
        (
            open { r in r.adRules = AdRules(breakDuration: 1e300) },
            "ad_rules.break_duration must be a duration from 0 to 1e8 seconds (got 1e+300)"
        ),
        (
            open { r in r.adRules = AdRules(midrollTimes: [60, 1e12]) },
            "ad_rules.midroll_times[1] must be a time from 0 to 1e10 seconds (got 1000000000000.0)"
        ),
        (
            open { r in r.adRules = AdRules(midrollEvery: -1) },
            "ad_rules.midroll_every must be a duration from 0 to 1e8 seconds (got -1.0)"
        ),
        (
            open { r in r.overrides.bookmarkInterval = 1e17 },
            "policy_overrides.bookmark_interval must be a duration from 0 to 1e8 seconds (got 1e+17)"
        ),
        (
            open { r in r.overrides.cooldown = .nan },
            "policy_overrides.cooldown must be a duration from 0 to 1e8 seconds (got nan)"
        ),
        (
            open { r in r.overrides.snapbackLandingOffset = -1 },
            "policy_overrides.snapback_landing_offset must be a duration from 0 to 1e8 seconds (got -1.0)"
        ),
        (
            open { r in r.overrides.coverageTolerance = 1e9 },
            "policy_overrides.coverage_tolerance must be a duration from 0 to 1e8 seconds (got 1000000000.0)"
        ),
        (
            open { r in r.overrides.finishedMargin = .infinity },
            "policy_overrides.finished_margin must be a duration from 0 to 1e8 seconds (got inf)"
        ),
        (
            open { r in r.overrides.maxSnapbacksPerBreak = 0 },
            "policy_overrides.max_snapbacks_per_break must be from 1 to 1000000000 (got 0)"
        )
    ])
    func openSessionNumbersOutOfRange(_ open: OpenSessionRequest, _ message: String) {
        #expect(throws: WireError.invalidArgument(message)) {
            try WireRequest.decode(method: .openSession, body: open.encoded())
        }
    }

    /// A break may cut more content than it lasts (Media3's 200 s ad group resuming the content 400 s later;
    /// HLS's `X-RESUME-OFFSET` past the interstitial's `DURATION`): the offset's range is its own, not the
    /// break's duration.
    @Test func aContentResumeOffsetAboveTheBreaksDurationIsTaken() throws {
        let cut = open { r in r.breaks = [AdBreak(id: "ad3", start: 4300, duration: 200, contentResumeOffset: 400)] }
        #expect(try WireRequest.decode(method: .openSession, body: cut.encoded()) == .openSession(cut))
        let top = open { r in r.breaks = [AdBreak(id: "b1", start: 600, duration: 0, contentResumeOffset: 1e8)] }
        #expect(try WireRequest.decode(method: .openSession, body: top.encoded()) == .openSession(top))
    }

    /// proto3 strings are UTF-8; repaired into U+FFFD, `ff fe` and `ff ff` would be one content id.
    @Test func invalidUTF8IsRefusedNamingTheField() {
        // GetBookmarkRequest{profile: "", content_id: ff fe}
        #expect(throws: WireError.invalidArgument("content_id: not valid UTF-8")) {
            try WireRequest.decode(method: .getBookmark, body: [0x12, 0x02, 0xFF, 0xFE])
        }
        // OpenSessionRequest{breaks: [AdBreak{id: c3 28}]} (a truncated two-byte sequence)
        #expect(throws: WireError.invalidArgument("breaks[0].id: not valid UTF-8")) {
            try WireRequest.decode(method: .openSession, body: [0x2A, 0x04, 0x0A, 0x02, 0xC3, 0x28])
        }
        // HelloRequest{client_name: ed a0 80} (an encoded surrogate)
        #expect(throws: WireError.invalidArgument("client_name: not valid UTF-8")) {
            try WireRequest.decode(method: .hello, body: [0x12, 0x03, 0xED, 0xA0, 0x80])
        }
        #expect(throws: Never.self) {
            try WireRequest.decode(method: .getBookmark, body: [0x12, 0x05] + Array("été".utf8))
        }
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

/// A valid OpenSession (one break, 30 min of content) with one change.
private func open(_ change: (inout OpenSessionRequest) -> Void) -> OpenSessionRequest {
    var open = OpenSessionRequest(
        streamId: "s", contentId: "c", breaks: [AdBreak(id: "b1", start: 600, duration: 30)],
        contentDuration: 1800)
    change(&open)
    return open
}
