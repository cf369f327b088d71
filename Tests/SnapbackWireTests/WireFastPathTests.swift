import CSnapbackProto
import SnapbackTestSupport
import SnapbackTimeline
import Testing

@testable import SnapbackWire

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
        let times: [Double] = [0, -0.0, 600, 0.1, 1e300, .infinity, 123_456.789, 5e-324]
        let reasons = ["", "seek 300→900 skipped unwatched break b1 at 600", String(repeating: "x", count: 200)]
        for _ in 0..<2000 {
            let session = rng.next() >> (rng.next() % 64)
            let seq = rng.next() >> (rng.next() % 64)
            let to = rng.next() % 3 == 0 ? times[Int(rng.next() % UInt64(times.count))] : Double(rng.next() % 100_000) / 8
            let reason = reasons[Int(rng.next() % UInt64(reasons.count))]
            let why = SeekReason.allCases[Int(rng.next() % UInt64(SeekReason.allCases.count))]
            var fast: [UInt8] = []
            let n = WireFastPath.append(to: &fast, bound: WireFastPath.seekPushBound(reason: .text(reason))) {
                WireFastPath.encodeSeekPush(
                    sessionId: session, seq: seq, reason: .text(reason), to: to,
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

/// The fast readers of SeekEnded and ReportPlayhead agree with protobuf-c: whenever they accept a body,
/// protobuf-c accepts it too with the same values (otherwise the daemon falls back to protobuf-c).
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
            let fast = body.withUnsafeBytes { WireFastPath.decodeSeekEnded($0) }
            let slow = Self.protoCSeekEnded(body)
            if let fast {
                fastHits += 1
                #expect(slow != nil, "fast accepted what protobuf-c rejects: \(body)")
                if let slow {
                    #expect(fast.session == slow.0 && Self.same(fast.from, slow.1) && Self.same(fast.to, slow.2), "\(body)")
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
            let fast = body.withUnsafeBytes { WireFastPath.decodeReportPlayhead($0) }
            let slow = Self.protoCPlayhead(body)
            if let fast {
                fastHits += 1
                #expect(slow != nil, "fast accepted what protobuf-c rejects: \(body)")
                if let slow {
                    #expect(
                        fast.session == slow.0 && Self.same(fast.streamTime, slow.1) && Self.same(fast.rate, slow.2)
                            && fast.playing == slow.3, "\(body)")
                }
            }
        }
        #expect(fastHits > 10_000)
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
