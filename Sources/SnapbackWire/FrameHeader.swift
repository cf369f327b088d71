// SPDX-License-Identifier: Apache-2.0
/// The fixed 12-byte header in front of every protobuf body on a snapback socket.
///
/// ```
/// offset size field
/// 0      4    length   uint32 BE: body bytes after the header
/// 4      4    call id  uint32 BE: chosen by the client, non-zero; a response echoes it;
///                      a push carries the call id of the OpenSession that opened its session
/// 8      1    type     1 = REQUEST (client→server), 2 = RESPONSE, 3 = PUSH (server→client)
/// 9      1    status   gRPC status code on RESPONSE; 0 on REQUEST and PUSH
/// 10     2    method   uint16 BE: service_id << 8 | method_index
/// ```
///
/// Limits: a receiver refuses a body longer than its maximum frame size from the header alone (see
/// ``FrameDecoder``); the daemon answers such a request RESOURCE_EXHAUSTED and skips the body.
public struct FrameHeader: Hashable, Sendable {
    /// Bytes in the encoded header.
    public static let size = 12

    /// Body bytes that follow the header.
    public var length: UInt32
    /// Chosen by the client (non-zero); echoed by a response; on a push, the OpenSession's call id.
    public var callId: UInt32
    public var type: FrameType
    /// gRPC status code on a RESPONSE, 0 otherwise.
    public var status: UInt8
    /// `serviceId << 8 | methodIndex`.
    public var method: UInt16

    public init(length: UInt32 = 0, callId: UInt32, type: FrameType, status: UInt8 = 0, method: UInt16) {
        self.length = length
        self.callId = callId
        self.type = type
        self.status = status
        self.method = method
    }

    /// A REQUEST header (client → server).
    public static func request(callId: UInt32, method: UInt16, length: UInt32 = 0) -> FrameHeader {
        FrameHeader(length: length, callId: callId, type: .request, status: 0, method: method)
    }

    /// A RESPONSE header echoing `callId` and `method` of the request it answers.
    public static func response(
        callId: UInt32, method: UInt16, status: UInt8 = 0, length: UInt32 = 0
    ) -> FrameHeader {
        FrameHeader(length: length, callId: callId, type: .response, status: status, method: method)
    }

    /// A PUSH header carrying the call id of the OpenSession that opened the session.
    public static func push(callId: UInt32, method: UInt16, length: UInt32 = 0) -> FrameHeader {
        FrameHeader(length: length, callId: callId, type: .push, status: 0, method: method)
    }

    /// The service half of ``method``.
    public var serviceId: UInt8 { UInt8(truncatingIfNeeded: method >> 8) }
    /// The method-within-service half of ``method``.
    public var methodIndex: UInt8 { UInt8(truncatingIfNeeded: method) }

    /// Builds the `method` field from its two halves.
    public static func method(service: UInt8, index: UInt8) -> UInt16 {
        UInt16(service) << 8 | UInt16(index)
    }

    /// Appends the 12 encoded bytes to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        buffer.reserveCapacity(buffer.count + Self.size)
        buffer.append(UInt8(truncatingIfNeeded: length >> 24))
        buffer.append(UInt8(truncatingIfNeeded: length >> 16))
        buffer.append(UInt8(truncatingIfNeeded: length >> 8))
        buffer.append(UInt8(truncatingIfNeeded: length))
        buffer.append(UInt8(truncatingIfNeeded: callId >> 24))
        buffer.append(UInt8(truncatingIfNeeded: callId >> 16))
        buffer.append(UInt8(truncatingIfNeeded: callId >> 8))
        buffer.append(UInt8(truncatingIfNeeded: callId))
        buffer.append(type.rawValue)
        buffer.append(status)
        buffer.append(UInt8(truncatingIfNeeded: method >> 8))
        buffer.append(UInt8(truncatingIfNeeded: method))
    }

    /// Writes the 12 encoded bytes at `destination`, which must have room for ``size`` bytes.
    /// Used to fill a header reserved in front of a body that was encoded in place.
    public func encode(to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: length.bigEndian, toByteOffset: 0, as: UInt32.self)
        destination.storeBytes(of: callId.bigEndian, toByteOffset: 4, as: UInt32.self)
        destination.storeBytes(of: type.rawValue, toByteOffset: 8, as: UInt8.self)
        destination.storeBytes(of: status, toByteOffset: 9, as: UInt8.self)
        destination.storeBytes(of: method.bigEndian, toByteOffset: 10, as: UInt16.self)
    }

    /// The encoded header as a new array (tests, tools).
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Decodes the first ``size`` bytes of `bytes` (which must hold at least that many).
    ///
    /// Only the type byte can make a header undecodable; everything else is checked by
    /// ``validate(as:)``, since what is acceptable depends on which side is reading.
    public static func decode(from bytes: UnsafeRawBufferPointer) throws(FrameProtocolError) -> FrameHeader {
        precondition(bytes.count >= size, "FrameHeader.decode needs \(size) bytes, got \(bytes.count)")
        let typeByte = bytes[8]
        guard let type = FrameType(rawValue: typeByte) else {
            throw .unknownType(typeByte)
        }
        return FrameHeader(
            length: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
            callId: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
            type: type,
            status: bytes[9],
            method: UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
        )
    }

    /// Decodes the first ``size`` bytes of an array (tests, tools).
    public static func decode(from bytes: [UInt8]) throws(FrameProtocolError) -> FrameHeader {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(FrameProtocolError) -> FrameHeader in try decode(from: raw) }
        }
        return try result.get()
    }

    /// Checks what a reader on the given side accepts.
    ///
    /// - server: only REQUEST frames, with a zero status byte and a non-zero call id.
    /// - client: only RESPONSE and PUSH frames.
    public func validate(as side: FrameDecoder.Side) throws(FrameProtocolError) {
        switch side {
        case .server:
            guard type == .request else { throw .unexpectedType(type) }
            guard status == 0 else { throw .nonzeroStatus(status) }
            guard callId != 0 else { throw .zeroCallId }
        case .client:
            guard type != .request else { throw .unexpectedType(type) }
        }
    }
}

extension FrameHeader: CustomStringConvertible {
    public var description: String {
        let methodHex = String(method, radix: 16)
        let paddedMethod = String(repeating: "0", count: max(0, 4 - methodHex.count)) + methodHex
        return "\(type) call=\(callId) method=0x\(paddedMethod) status=\(status) length=\(length)"
    }
}

/// The frame type byte.
public enum FrameType: UInt8, Hashable, Sendable, CustomStringConvertible {
    case request = 1
    case response = 2
    case push = 3

    public var description: String {
        switch self {
        case .request: "REQUEST"
        case .response: "RESPONSE"
        case .push: "PUSH"
        }
    }
}

/// Why a header broke the framing. The reader closes the connection after one of these.
public enum FrameProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The type byte is none of REQUEST, RESPONSE, PUSH.
    case unknownType(UInt8)
    /// A known type that this side never receives (a server only takes REQUEST, a client never does).
    case unexpectedType(FrameType)
    /// A REQUEST with a non-zero status byte.
    case nonzeroStatus(UInt8)
    /// A REQUEST with call id 0.
    case zeroCallId

    public var description: String {
        switch self {
        case .unknownType(let byte): "unknown frame type \(byte)"
        case .unexpectedType(let type): "unexpected frame type \(type)"
        case .nonzeroStatus(let status): "status byte \(status) on a request"
        case .zeroCallId: "call id 0"
        }
    }
}
