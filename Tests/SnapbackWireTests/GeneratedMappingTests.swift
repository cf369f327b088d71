// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Testing

@testable import SnapbackWire

/// The generated mapping (Generated/*.pb.swift, scripts/gen-wire.py) against protobuf-c itself: every
/// message, every field set (Generated/Samples.swift), written through the mapping, is what protobuf-c
/// packs again from its own unpacking of it, carries every field of the descriptor, and reads back equal.
@Suite struct GeneratedMappingTests {
    /// The field numbers at the top level of a message's bytes.
    static func fieldNumbers(_ bytes: [UInt8]) -> Set<UInt32> {
        var numbers = Set<UInt32>()
        var at = 0
        func varint() -> UInt64 {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while at < bytes.count {
                let b = bytes[at]
                at += 1
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { break }
                shift += 7
            }
            return v
        }
        while at < bytes.count {
            let tag = varint()
            numbers.insert(UInt32(tag >> 3))
            switch tag & 7 {
            case 0: _ = varint()
            case 1: at += 8
            case 2: at += Int(varint())
            case 5: at += 4
            default: Issue.record("wire type \(tag & 7)")
            }
        }
        return numbers
    }

    /// protobuf-c's unpacking of `bytes` packed again.
    static func repacked(_ bytes: [UInt8], _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> [UInt8]? {
        guard let m = protobuf_c_message_unpack(descriptor, nil, bytes.count, bytes) else { return nil }
        defer { protobuf_c_message_free_unpacked(m, nil) }
        var out = [UInt8](repeating: 0, count: protobuf_c_message_get_packed_size(m))
        let n = out.withUnsafeMutableBufferPointer { protobuf_c_message_pack(m, $0.baseAddress!) }
        return Array(out.prefix(n))
    }

    func check<M: Sampled>(_: M.Type) throws {
        let descriptor = M.cDescriptor.pointee
        #expect(String(cString: descriptor.name) == M.protoName)
        var seen = Set<UInt32>()
        for sample in M.samples {
            let bytes = sample.encoded()
            #expect(Self.repacked(bytes, M.cDescriptor) == bytes, "\(M.protoName)")
            #expect(try M.decode(bytes) == sample, "\(M.protoName)")
            seen.formUnion(Self.fieldNumbers(bytes))
        }
        let numbers = (0..<Int(descriptor.n_fields)).map { descriptor.fields[$0].id }
        #expect(seen == Set(numbers), "\(M.protoName): every field written")
    }

    @Test func everyMessageWithEveryFieldSetIsWhatProtobufCPacksAndReadsBack() throws {
        #expect(everyGeneratedMessage.count == 74, "every message of proto/snapback/v1")
        for message in everyGeneratedMessage { try check(message) }
    }

    @Test func aStringThatIsNotUTF8IsRefusedNamingItsPath() {
        // OpenSessionRequest{breaks: [AdBreak{}, AdBreak{id: ff fe}]}
        let body: [UInt8] = [0x2A, 0x00, 0x2A, 0x04, 0x0A, 0x02, 0xFF, 0xFE]
        #expect(throws: WireError.invalidArgument("breaks[1].id: not valid UTF-8")) {
            try SnapbackV1.OpenSessionRequest.decode(body)
        }
    }

    @Test func aRepeatedMessageOverItsBoundIsRefusedBeforeItsElementsAreRead() {
        // Three breaks, the second's id not UTF-8: the count is refused first.
        let body: [UInt8] = [0x2A, 0x00, 0x2A, 0x04, 0x0A, 0x02, 0xFF, 0xFE, 0x2A, 0x00]
        #expect(throws: WireError.tooLarge("3 breaks, more than the 2 allowed")) {
            try SnapbackV1.OpenSessionRequest.decode(body, maxElements: 2)
        }
        #expect(throws: WireError.invalidArgument("breaks[1].id: not valid UTF-8")) {
            try SnapbackV1.OpenSessionRequest.decode(body, maxElements: 3)
        }
    }

    /// The count is taken over the bytes, before protobuf-c unpacks anything: three breaks and then bytes
    /// that do not parse are refused for their count, not for the bytes protobuf-c would have refused.
    @Test func theCountIsRefusedBeforeProtobufCUnpacks() {
        let body: [UInt8] = [0x2A, 0x00, 0x2A, 0x00, 0x2A, 0x00, 0x0A, 0x05, 0x61]
        #expect(throws: WireError.tooLarge("3 breaks, more than the 2 allowed")) {
            try SnapbackV1.OpenSessionRequest.decode(body, maxElements: 2)
        }
        #expect(throws: WireError.malformed(message: "snapback.v1.OpenSessionRequest")) {
            try SnapbackV1.OpenSessionRequest.decode(body, maxElements: 3)
        }
    }

    @Test func aOneofReadsAsTheCaseSentAndAnOptionalAsAbsentOrPresentAtZero() throws {
        var open = SnapbackV1.OpenSessionRequest()
        open.contentDuration = 0
        let decoded = try SnapbackV1.OpenSessionRequest.decode(open.encoded())
        #expect(decoded.contentDuration == 0)
        #expect(try SnapbackV1.OpenSessionRequest.decode([]).contentDuration == nil)
        let push = SnapbackV1.Push(sessionId: 1, seq: 2, kind: .bookmarkCleared(SnapbackV1.BookmarkCleared()))
        #expect(try SnapbackV1.Push.decode(push.encoded()).kind == .bookmarkCleared(SnapbackV1.BookmarkCleared()))
        #expect(try SnapbackV1.Push.decode(SnapbackV1.Push(sessionId: 1).encoded()).kind == nil)
    }

    /// A seek Push has one encoder, the round trip's (`WireFastPath`): a client's `WirePushMessage` of a seek
    /// is written by it too, with the bytes protobuf-c packs from the generated message.
    @Test(arguments: ["", "seek 300→900 skipped unwatched break b1 at 600", String(repeating: "x", count: 200)])
    func aSeekPushMessageIsWrittenByTheFastPathWithProtobufCsBytes(reason: String) throws {
        let push = WirePushMessage(sessionId: 300, seq: 7, reason: reason, kind: .seek(to: 600.5, reason: .snapback))
        #expect(push.encoded() == push.proto.encoded())
        #expect(try WirePushMessage.decode(push.encoded()) == push)
    }
}
