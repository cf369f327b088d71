// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline
import SnapbackWire
import Testing

/// The generated service descriptors, by service id: the method table's source of truth.
func serviceDescriptor(_ service: WireService) -> ProtobufCServiceDescriptor {
    switch service {
    case .control: return snapback__v1__control__descriptor
    case .timeline: return snapback__v1__timeline__descriptor
    case .sync: return snapback__v1__sync__descriptor
    case .bookmarks: return snapback__v1__bookmarks__descriptor
    }
}

func methodDescriptor(_ method: WireMethod) -> ProtobufCMethodDescriptor {
    let service = serviceDescriptor(method.service)
    precondition(UInt32(method.index) < service.n_methods)
    return service.methods[Int(method.index)]
}

@Suite("Method ids")
struct ProtoMethodTableTests {
    @Test(arguments: WireService.allCases)
    func everyRpcHasAMethodIdInDeclarationOrder(_ service: WireService) {
        let descriptor = serviceDescriptor(service)
        #expect(String(cString: descriptor.name) == service.name)
        let ours = WireMethod.allCases.filter { $0.service == service }
        #expect(ours.count == Int(descriptor.n_methods))
        for i in 0..<Int(descriptor.n_methods) {
            let method = WireMethod(service: service, index: UInt8(i))
            #expect(method?.methodName == String(cString: descriptor.methods[i].name))
            #expect(method?.rawValue == UInt16(service.rawValue) << 8 | UInt16(i))
        }
    }

    @Test func names() {
        #expect(WireMethod.seekEnded.name == "snapback.v1.Timeline/SeekEnded")
        #expect(WireMethod.hello.name == "snapback.v1.Control/Hello")
        #expect(WireMethod.listBookmarks.name == "snapback.v1.Bookmarks/List")
        #expect(WireMethod.seekEnded.rawValue == 0x0103)
        #expect(WireMethod.getSessionState.rawValue == 0x0111)
        #expect(WireMethod.clearBookmarks.rawValue == 0x0203)
        #expect(WireMethod.watchDecisions.name == "snapback.v1.Control/WatchDecisions")
        #expect(WireMethod.watchDecisions.rawValue == 0x0004)
        #expect(WireMethod.getMetrics.name == "snapback.v1.Control/GetMetrics")
        #expect(WireMethod.getMetrics.rawValue == 0x0005)
        #expect(WireMethod.watchChanges.name == "snapback.v1.Sync/WatchChanges")
        #expect(WireMethod.merge.rawValue == 0x0301)
    }

    @Test(arguments: [UInt16(0x0006), 0x00FF, 0x0112, 0x01FF, 0x0204, 0x0302, 0x03FF, 0x0400, 0xFF00, 0xFFFF])
    func unknownIdsAreNil(_ raw: UInt16) {
        #expect(WireMethod(rawValue: raw) == nil)
    }

    @Test func eventMethods() {
        let events = WireMethod.allCases.filter(\.isEvent)
        #expect(events.first == .reportPlayhead)
        #expect(events.last == .closeSession)
        #expect(events.count == 13)
        for method in events {
            #expect(String(cString: methodDescriptor(method).output.pointee.name) == "snapback.v1.EventReply")
        }
    }

    /// The client encodes each request as the rpc's input message: the bytes unpack with the generated
    /// descriptor and pack back to the same bytes.
    @Test(arguments: everyRequest)
    func requestsUseTheRpcsInputMessage(_ request: WireRequest) throws {
        let input = methodDescriptor(request.method).input!
        let body = request.encoded()
        let message = try #require(
            body.withUnsafeBufferPointer {
                protobuf_c_message_unpack(input, nil, $0.count, $0.baseAddress)
            })
        defer { protobuf_c_message_free_unpacked(message, nil) }
        var repacked = [UInt8](repeating: 0, count: protobuf_c_message_get_packed_size(message))
        _ = repacked.withUnsafeMutableBufferPointer { protobuf_c_message_pack(message, $0.baseAddress) }
        #expect(repacked == body)
    }

    /// The server decodes each method's body as the rpc's input message.
    @Test(arguments: WireMethod.allCases)
    func decoderUsesTheRpcsInputMessage(_ method: WireMethod) {
        let inputName = String(cString: methodDescriptor(method).input.pointee.name)
        #expect(throws: WireError.malformed(message: inputName)) {
            try WireRequest.decode(method: method, body: [0x08])
        }
    }

    @Test func statusCodesAreGRPCs() {
        #expect(StatusCode.allCases.count == 17)
        for (i, code) in StatusCode.allCases.enumerated() { #expect(Int(code.rawValue) == i) }
        #expect(StatusCode.ok.name == "OK")
        #expect(StatusCode.invalidArgument.name == "INVALID_ARGUMENT")
        #expect(StatusCode.internalError.name == "INTERNAL")
        #expect(StatusCode.unauthenticated.rawValue == 16)
    }

    @Test func timelineErrorsMapToTheirCodes() {
        #expect(TimelineError.invalidTime(field: "to", value: -1).statusCode == .invalidArgument)
        #expect(TimelineError.overlappingBreaks("a", "b").statusCode == .invalidArgument)
        #expect(TimelineError.duplicateBreakId("a").statusCode == .invalidArgument)
        #expect(TimelineError.unknownBreak("x").statusCode == .notFound)
        #expect(TimelineError.unexpectedEvent(event: "seek-ended", state: "closed").statusCode == .failedPrecondition)
        #expect(TimelineError.sessionClosed.statusCode == .failedPrecondition)
        #expect(TimelineError.tooManyBreaks(limit: 10).statusCode == .resourceExhausted)
    }
}
