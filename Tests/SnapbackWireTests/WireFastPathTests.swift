import CSnapbackProto
@testable import SnapbackWire
import SnapbackTimeline
import Testing

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
        var rng = SplitMix(seed: 42)
        let times: [Double] = [0, -0.0, 600, 0.1, 1e300, .infinity, 123_456.789, 5e-324]
        let reasons = ["", "seek 300→900 skipped unwatched break b1 at 600", String(repeating: "x", count: 200)]
        for _ in 0..<2000 {
            let session = rng.next() >> (rng.next() % 64)
            let seq = rng.next() >> (rng.next() % 64)
            let to = rng.next() % 3 == 0 ? times[Int(rng.next() % UInt64(times.count))] : Double(rng.next() % 100_000) / 8
            let reason = reasons[Int(rng.next() % UInt64(reasons.count))]
            let why = SeekReason.allCases[Int(rng.next() % UInt64(SeekReason.allCases.count))]
            var fast: [UInt8] = []
            let n = WirePush.encodePush(sessionId: session, seq: seq,
                                        action: TimelineAction(.seek(to: to, reason: why), reason: reason), into: &fast)
            #expect(n)
            #expect(fast == Self.protoCSeekPush(sessionId: session, seq: seq, reason: reason, to: to, why: why),
                    "session \(session) seq \(seq) to \(to) \(why)")
        }
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
