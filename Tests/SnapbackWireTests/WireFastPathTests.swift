// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTestSupport
import SnapbackTimeline
import Testing

@testable import SnapbackWire

/// `v` written through protobuf-c: its struct built in an arena, then packed.
private func protoCPacked<M: ProtoCMessage>(_ v: M) -> [UInt8] {
    let arena = CArena()
    var out: [UInt8] = []
    _ = ProtoC.append(UnsafeRawPointer(arena.message(v)).assumingMemoryBound(to: ProtobufCMessage.self), to: &out)
    return withExtendedLifetime(arena) { out }
}

/// What protobuf-c reads from `body` (unpacked, then mapped), or nil when it refuses it.
private func protoCRead<M: ProtoCMessage>(_ body: [UInt8]) -> M? {
    body.withUnsafeBytes { raw in
        guard let p = M.cUnpack(raw.count, raw.baseAddress?.assumingMemoryBound(to: UInt8.self)) else { return nil }
        defer { M.cFree(p) }
        return try? M(p, path: { "" }, maxElements: .max)
    }
}

/// The hand-written encoders of the round trip's messages produce exactly protobuf-c's bytes.
@Suite struct WireFastPathTests {
    static func protoC<M>(_ message: inout M) -> [UInt8] {
        var out: [UInt8] = []
        ProtoC.append(&message, to: &out)
        return out
    }

    static func protoCSeekPush(sessionId: UInt64, seq: UInt64, reason: String, to: Double, why: SeekReason) -> [UInt8] {
        var seek = Snapback__V1__SeekCommand()
        snapback__v1__seek_command__init(&seek)
        seek.stream_time = to
        seek.reason = why.proto
        var m = Snapback__V1__Push()
        snapback__v1__push__init(&m)
        m.session_id = sessionId
        m.seq = seq
        return reason.withCString { r in
            m.reason = UnsafeMutablePointer(mutating: r)
            return withUnsafeMutablePointer(to: &seek) { p in
                m.kind_case = SNAPBACK__V1__PUSH__KIND_SEEK
                m.seek = p
                return protoC(&m)
            }
        }
    }

    @Test func seekPushMatchesProtobufC() {
        var rng = SplitMix64(seed: 42)
        let times: [Double] = [0, -0.0, 600, 0.1, 1e300, .infinity, 123_456.789, .leastNonzeroMagnitude]
        let reasons = ["", "seek 300→900 skipped unwatched break b1 at 600", String(repeating: "x", count: 200)]
        for _ in 0..<2000 {
            let session = rng.next() >> (rng.next() % 64)
            let seq = rng.next() >> (rng.next() % 64)
            let to = rng.next() % 3 == 0 ? times[Int(rng.next() % UInt64(times.count))] : Double(rng.next() % 100_000) / 8
            let reason = reasons[Int(rng.next() % UInt64(reasons.count))]
            let why = SeekReason.allCases[Int(rng.next() % UInt64(SeekReason.allCases.count))]
            var fast: [UInt8] = []
            let n = WireFastPath.append(to: &fast, bound: WireFastPath.seekPushBound(reasonBound: reason.utf8.count)) {
                WireFastPath.encodeSeekPush(
                    sessionId: session, seq: seq, reason: reason, to: to,
                    seekReason: UInt64(why.proto.rawValue), into: $0)
            }
            #expect(n == fast.count)
            #expect(
                fast == Self.protoCSeekPush(sessionId: session, seq: seq, reason: reason, to: to, why: why),
                "session \(session) seq \(seq) to \(to) \(why)")
        }
    }

    /// The snapback's reason is worded straight into the push: the same bytes as its text through protobuf-c,
    /// for short and long (two-byte length) reasons.
    @Test(arguments: ["b1", String(repeating: "long-break-id-", count: 12)])
    func wordedReasonMatchesProtobufC(breakId: String) {
        let reason = TimelineReason.snapback(jump: false, from: 300, to: 900, breakId: breakId, start: 600)
        var fast: [UInt8] = []
        WirePush.encodePush(
            sessionId: 1, seq: 2, action: TimelineAction(.seek(to: 600, reason: .snapback), reason: reason), into: &fast)
        #expect(fast == Self.protoCSeekPush(sessionId: 1, seq: 2, reason: reason.description, to: 600, why: .snapback))
    }

    /// The daemon's snapback push, written from the action in place, has the bytes of `encodePush`; any
    /// other push (another reason, another kind) is left to `encodePush`.
    @Test(arguments: ["b1", "ü", String(repeating: "long-break-id-", count: 12)])
    func seekPushFromTheActionMatchesEncodePush(breakId: String) {
        let reason = TimelineReason.snapback(jump: true, from: 300.5, to: 900, breakId: breakId, start: 600)
        let action = TimelineAction(.seek(to: 600.25, reason: .snapback), reason: reason)
        var expected: [UInt8] = []
        WirePush.encodePush(sessionId: 7, seq: 300, action: action, into: &expected)
        guard let bound = WireSeekPush.bound(action) else {
            Issue.record("no bound for a snapback's seek")
            return
        }
        var fast: [UInt8] = []
        _ = WireFastPath.append(to: &fast, bound: bound) { WireSeekPush.encode(action, sessionId: 7, seq: 300, into: $0) }
        #expect(fast == expected)
        #expect(
            WireSeekPush.bound(
                TimelineAction(.seek(to: 1, reason: .startOfBreak), reason: .seekRefused(from: 1, to: 2, breakId: "b"))) == nil)
        #expect(WireSeekPush.bound(TimelineAction(.breakWatched(breakId: breakId), reason: reason)) == nil)
    }

    /// A seek with any other reason is written by the same encoder, with the reason's text.
    @Test func textReasonMatchesProtobufC() {
        let reason = TimelineReason.seekRefused(from: 610, to: 900, breakId: "m1")
        var fast: [UInt8] = []
        WirePush.encodePush(
            sessionId: 5, seq: 6, action: TimelineAction(.seek(to: 610, reason: .seekRefusedDuringAd), reason: reason),
            into: &fast)
        #expect(fast == Self.protoCSeekPush(sessionId: 5, seq: 6, reason: reason.description, to: 610, why: .seekRefusedDuringAd))
    }

    @Test(arguments: [UInt64(0), 1, 127, 128, 300, 16_384, UInt64.max])
    func eventReplyMatchesProtobufC(seq: UInt64) {
        var m = Snapback__V1__EventReply()
        snapback__v1__event_reply__init(&m)
        m.last_push_seq = seq
        var fast: [UInt8] = []
        _ = WireReply.encodeEventReply(lastPushSeq: seq, into: &fast)
        #expect(fast == Self.protoC(&m))
    }
}

/// The generated straight readers (`ProtoPlainMessage`), SeekEnded's and ReportPlayhead's first, agree
/// with protobuf-c: whenever they accept a body, protobuf-c accepts it too with the same values
/// (otherwise the daemon falls back to protobuf-c).
@Suite struct WireFastPathDecodeTests {
    static func protoCSeekEnded(_ body: [UInt8]) -> (UInt64, Double, Double)? {
        body.withUnsafeBytes { raw in
            guard
                let m = snapback__v1__seek_ended_request__unpack(
                    nil, raw.count, raw.baseAddress?.assumingMemoryBound(to: UInt8.self))
            else { return nil }
            defer { snapback__v1__seek_ended_request__free_unpacked(m, nil) }
            return (m.pointee.session_id, m.pointee.from_stream_time, m.pointee.to_stream_time)
        }
    }

    static func protoCPlayhead(_ body: [UInt8]) -> (UInt64, Double, Double, Bool)? {
        body.withUnsafeBytes { raw in
            guard
                let m = snapback__v1__report_playhead_request__unpack(
                    nil, raw.count, raw.baseAddress?.assumingMemoryBound(to: UInt8.self))
            else { return nil }
            defer { snapback__v1__report_playhead_request__free_unpacked(m, nil) }
            return (m.pointee.session_id, m.pointee.stream_time, m.pointee.rate, m.pointee.playing != 0)
        }
    }

    static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern }

    @Test func seekEndedAgreesWithProtobufC() {
        var rng = SplitMix64(seed: 7)
        var fastHits = 0
        for i in 0..<20_000 {
            var body = WireRequest.event(
                sessionId: rng.next() >> (rng.next() % 64),
                .seekEnded(from: Double(rng.next() % 10_000), to: Double(rng.next() % 10_000) / 4)
            ).encoded()
            if i % 2 == 1 { mutate(&body, &rng) }
            let fast = body.withUnsafeBytes { SnapbackV1.SeekEndedRequest(clean: $0) }
            let slow = Self.protoCSeekEnded(body)
            if let fast {
                fastHits += 1
                #expect(slow != nil, "fast accepted what protobuf-c rejects: \(body)")
                if let slow {
                    #expect(
                        fast.sessionId == slow.0 && Self.same(fast.fromStreamTime, slow.1)
                            && Self.same(fast.toStreamTime, slow.2), "\(body)")
                }
            }
        }
        #expect(fastHits > 10_000)
    }

    @Test func reportPlayheadAgreesWithProtobufC() {
        var rng = SplitMix64(seed: 11)
        var fastHits = 0
        for i in 0..<20_000 {
            var body = WireRequest.event(
                sessionId: rng.next() >> (rng.next() % 64),
                .playheadReported(
                    streamTime: Double(rng.next() % 100_000) / 8, rate: Double(rng.next() % 5),
                    playing: rng.next() % 2 == 0)
            ).encoded()
            if i % 2 == 1 { mutate(&body, &rng) }
            let fast = body.withUnsafeBytes { SnapbackV1.ReportPlayheadRequest(clean: $0) }
            let slow = Self.protoCPlayhead(body)
            if let fast {
                fastHits += 1
                #expect(slow != nil, "fast accepted what protobuf-c rejects: \(body)")
                if let slow {
                    #expect(
                        fast.sessionId == slow.0 && Self.same(fast.streamTime, slow.1) && Self.same(fast.rate, slow.2)
                            && fast.playing == slow.3, "\(body)")
                }
            }
        }
        #expect(fastHits > 10_000)
    }

    /// Every plain message: its writer's bytes are protobuf-c's, and its reader agrees with protobuf-c on
    /// its sample's bytes, mutated.
    @Test func everyPlainMessageAgreesWithProtobufC() {
        var rng = SplitMix64(seed: 13)
        var plain = 0
        for message in everyGeneratedMessage {
            guard let m = message as? any (Sampled & ProtoPlainMessage).Type else { continue }
            plain += 1
            check(m, &rng)
        }
        #expect(plain >= 15, "the session events and their reply")
    }

    func check<M: Sampled & ProtoPlainMessage>(_: M.Type, _ rng: inout SplitMix64) {
        #expect(M.sample.encoded() == protoCPacked(M.sample), "\(M.protoName)")
        #expect(M.sample.encoded().count <= M.byteBound, "\(M.protoName)")
        for _ in 0..<2000 {
            var body = M.sample.encoded()
            mutate(&body, &rng)
            guard let fast = body.withUnsafeBytes({ M(clean: $0) }) else { continue }
            let slow: M? = protoCRead(body)
            #expect(slow != nil, "\(M.protoName): fast accepted what protobuf-c rejects: \(body)")
            if let slow { #expect(protoCPacked(fast) == protoCPacked(slow), "\(M.protoName): \(body)") }
        }
    }

    /// Every message with a clean reader (requests with lists of sub-messages, and those sub-messages): it
    /// reads every sample, and agrees with protobuf-c on the samples' bytes, mutated.
    @Test func everyCleanReaderAgreesWithProtobufC() {
        var rng = SplitMix64(seed: 17)
        var clean: [String] = []
        for message in everyGeneratedMessage where !(message is any ProtoPlainMessage.Type) {
            if checkClean(message, &rng) { clean.append(message.protoName) }
        }
        #expect(clean.contains("snapback.v1.OpenSessionRequest") && clean.contains("snapback.v1.UpdateBreaksRequest"))
        #expect(clean.contains("snapback.v1.AdBreak") && clean.contains("snapback.v1.PolicyOverrides"))
        #expect(clean.count >= 6, "\(clean)")
    }

    /// Whether `M` has a clean reader; if it has, checks it.
    func checkClean<M: Sampled>(_: M.Type, _ rng: inout SplitMix64) -> Bool {
        guard M.sample.encoded().withUnsafeBytes({ M(clean: $0) }) != nil else { return false }
        for sample in M.samples {
            #expect(sample.encoded().withUnsafeBytes({ M(clean: $0) }) == sample, "\(M.protoName)")
        }
        var fastHits = 0
        for _ in 0..<2000 {
            var body = M.sample.encoded()
            mutate(&body, &rng)
            guard let fast = body.withUnsafeBytes({ M(clean: $0) }) else { continue }
            fastHits += 1
            let slow: M? = protoCRead(body)
            #expect(slow != nil, "\(M.protoName): fast accepted what protobuf-c rejects: \(body)")
            if let slow { #expect(protoCPacked(fast) == protoCPacked(slow), "\(M.protoName): \(body)") }
        }
        #expect(fastHits > 100, "\(M.protoName): the clean reader took \(fastHits) of 2,000 mutated bodies")
        return true
    }

    /// A string is read up to a NUL, as protobuf-c's C string is; one that is not UTF-8 goes to protobuf-c's
    /// path, whose refusal names it.
    @Test func cleanStringsReadAsProtobufCsPathReadsThem() throws {
        // OpenSessionRequest{breaks: [AdBreak{id: "a\0b"}]}
        let nul: [UInt8] = [0x2A, 0x05, 0x0A, 0x03, 0x61, 0x00, 0x62]
        #expect(nul.withUnsafeBytes { SnapbackV1.OpenSessionRequest(clean: $0) }?.breaks.first?.id == "a")
        #expect(try SnapbackV1.OpenSessionRequest.decode(nul).breaks.first?.id == "a")
        // OpenSessionRequest{breaks: [AdBreak{}, AdBreak{id: ff fe}]}
        let bad: [UInt8] = [0x2A, 0x00, 0x2A, 0x04, 0x0A, 0x02, 0xFF, 0xFE]
        #expect(bad.withUnsafeBytes { SnapbackV1.OpenSessionRequest(clean: $0) } == nil)
        #expect(throws: WireError.invalidArgument("breaks[1].id: not valid UTF-8")) {
            try SnapbackV1.OpenSessionRequest.decode(bad)
        }
    }

    /// What players send (fields in order, doubles packed) is read without protobuf-c: a thousand breaks
    /// with their ad durations, and the request's every other field.
    @Test func anOpenSessionOfAThousandBreaksIsReadClean() throws {
        let breaks = (0..<1000).map {
            AdBreak(id: "break-\($0)", start: 600 + Double($0) * 700, duration: 60, adDurations: [15, 15, 15, 15])
        }
        var overrides = PolicyOverrides()
        overrides.cooldown = 5
        let open = OpenSessionRequest(
            streamId: "s", contentId: "c", profile: "p", kind: .live, breaks: breaks, contentDuration: 1e6,
            preset: .media3, overrides: overrides, resume: SnapbackV1.ResumeOptions(useBookmark: true, resumeStreamTime: 42),
            adRules: AdRules(preroll: true, midrollTimes: [60]))
        let body = open.encoded()
        let clean = try #require(body.withUnsafeBytes { SnapbackV1.OpenSessionRequest(clean: $0) })
        #expect(try OpenSessionRequest(proto: clean) == open)
        let update = WireRequest.event(sessionId: 7, .breaksUpdated(breaks)).encoded()
        #expect(update.withUnsafeBytes { SnapbackV1.UpdateBreaksRequest(clean: $0) }?.breaks.count == 1000)
    }

    /// Every message with a direct writer (replies with lists of sub-messages, and those sub-messages):
    /// for its samples, and for whatever protobuf-c reads from their bytes mutated (fields at zero, -0.0,
    /// strings cut, lists of every length), its bytes are protobuf-c's.
    @Test func everyDirectWriterWritesWhatProtobufCPacks() {
        var rng = SplitMix64(seed: 19)
        var direct: [String] = []
        for message in everyGeneratedMessage {
            guard let m = message as? any (Sampled & ProtoDirectMessage).Type else { continue }
            direct.append(m.protoName)
            checkDirect(m, &rng)
        }
        #expect(direct.contains("snapback.v1.SessionStateReply") && direct.contains("snapback.v1.AdBreak"))
        #expect(direct.contains("snapback.v1.ListSessionsReply") && direct.contains("snapback.v1.ListBookmarksReply"))
    }

    func checkDirect<M: Sampled & ProtoDirectMessage>(_: M.Type, _ rng: inout SplitMix64) {
        for sample in M.samples {
            #expect(sample.encoded() == protoCPacked(sample), "\(M.protoName)")
            #expect(sample.encoded().count == sample.directSize, "\(M.protoName)")
        }
        var read = 0
        for _ in 0..<2000 {
            var body = M.sample.encoded()
            mutate(&body, &rng)
            let value: M? = protoCRead(body)
            guard let value else { continue }
            read += 1
            #expect(value.encoded() == protoCPacked(value), "\(M.protoName): \(body)")
        }
        #expect(read > 100, "\(M.protoName): protobuf-c read \(read) of 2,000 mutated bodies")
    }

    /// What a Swift value holds and a C string cannot: a NUL ends the string protobuf-c writes (one empty up
    /// to it is left out), -0.0 is left out as 0 is, a negative int32 takes ten bytes.
    @Test func aDirectWriterCutsStringsAtANulAndWritesEdgeNumbersAsProtobufCDoes() {
        let breaks = [
            AdBreak(id: "a\0b", start: -0.0, duration: 60, adDurations: [-0.0, 15]),
            AdBreak(id: "\0", start: 0, duration: 0, contentResumeOffset: 0), AdBreak(id: "ü", start: 1e300, duration: 1)
        ]
        let state = SnapbackV1.SessionStateReply(
            currentBreakId: "x\0", streamTime: -0.0, pendingReturn: 0, breaks: breaks,
            breakStates: [SnapbackV1.BreakState(breakId: "", watched: true)], totalBreaks: .max)
        #expect(state.encoded() == protoCPacked(state))
        let info = SnapbackV1.SessionInfo(sessionId: .max, contentId: "c", peerUid: .max, peerPid: -1, openedAt: -0.0)
        #expect(info.encoded() == protoCPacked(info))
        #expect(
            SnapbackV1.ListSessionsReply(sessions: [info, SnapbackV1.SessionInfo()]).encoded()
                == protoCPacked(SnapbackV1.ListSessionsReply(sessions: [info, SnapbackV1.SessionInfo()])))
    }

    func mutate(_ bytes: inout [UInt8], _ rng: inout SplitMix64) {
        for _ in 0..<(1 + Int(rng.next() % 3)) {
            guard !bytes.isEmpty else { bytes.append(UInt8(truncatingIfNeeded: rng.next())); continue }
            let i = Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 4 {
            case 0: bytes[i] ^= UInt8(1 << (rng.next() % 8))
            case 1: bytes.removeSubrange(i...)
            case 2: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
            default: bytes += bytes[i...]
            }
        }
    }
}
