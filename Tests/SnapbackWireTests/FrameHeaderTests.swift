// SPDX-License-Identifier: Apache-2.0
import SnapbackWire
import Testing

@Suite struct FrameHeaderTests {
    @Test func encodesTheDocumentedLayout() {
        let header = FrameHeader(length: 0x0102_0304, callId: 0xA0B0_C0D0, type: .response, status: 8, method: 0x0305)
        #expect(header.encoded == [0x01, 0x02, 0x03, 0x04, 0xA0, 0xB0, 0xC0, 0xD0, 2, 8, 0x03, 0x05])
        #expect(FrameHeader.size == 12)
    }

    @Test func encodeToPointerMatchesEncodeIntoArray() {
        let header = FrameHeader.push(callId: 77, method: 0x0102, length: 999)
        var bytes = [UInt8](repeating: 0xEE, count: 14)
        bytes.withUnsafeMutableBytes { header.encode(to: $0.baseAddress! + 1) }
        #expect(Array(bytes[1..<13]) == header.encoded)
        #expect(bytes[0] == 0xEE && bytes[13] == 0xEE)
    }

    @Test(arguments: [
        FrameHeader.request(callId: 1, method: 0, length: 0),
        FrameHeader.response(callId: .max, method: .max, status: 255, length: .max),
        FrameHeader.push(callId: 42, method: FrameHeader.method(service: 2, index: 7), length: 5)
    ])
    func roundTrips(_ header: FrameHeader) throws {
        #expect(try FrameHeader.decode(from: header.encoded) == header)
    }

    @Test func methodHalves() {
        let header = FrameHeader.request(callId: 1, method: FrameHeader.method(service: 0x12, index: 0x34))
        #expect(header.method == 0x1234)
        #expect(header.serviceId == 0x12)
        #expect(header.methodIndex == 0x34)
    }

    @Test(arguments: [0, 4, 255] as [UInt8])
    func unknownTypeDoesNotDecode(_ type: UInt8) {
        var bytes = FrameHeader.request(callId: 1, method: 0).encoded
        bytes[8] = type
        #expect(throws: FrameProtocolError.unknownType(type)) { try FrameHeader.decode(from: bytes) }
    }

    @Test func serverValidation() throws {
        try FrameHeader.request(callId: 1, method: 0).validate(as: .server)
        #expect(throws: FrameProtocolError.unexpectedType(.response)) {
            try FrameHeader.response(callId: 1, method: 0).validate(as: .server)
        }
        #expect(throws: FrameProtocolError.unexpectedType(.push)) {
            try FrameHeader.push(callId: 1, method: 0).validate(as: .server)
        }
        #expect(throws: FrameProtocolError.nonzeroStatus(3)) {
            try FrameHeader(callId: 1, type: .request, status: 3, method: 0).validate(as: .server)
        }
        #expect(throws: FrameProtocolError.zeroCallId) {
            try FrameHeader.request(callId: 0, method: 0).validate(as: .server)
        }
    }

    @Test func clientValidation() throws {
        try FrameHeader.response(callId: 1, method: 0, status: 13).validate(as: .client)
        try FrameHeader.push(callId: 9, method: 0x0201).validate(as: .client)
        #expect(throws: FrameProtocolError.unexpectedType(.request)) {
            try FrameHeader.request(callId: 1, method: 0).validate(as: .client)
        }
    }

    @Test func frameSetsLengthFromBody() {
        let frame = Frame(header: .request(callId: 5, method: 1, length: 1234), body: [1, 2, 3])
        #expect(frame.header.length == 3)
        #expect(frame.encoded == [0, 0, 0, 3, 0, 0, 0, 5, 1, 0, 0, 1, 1, 2, 3])
    }
}
