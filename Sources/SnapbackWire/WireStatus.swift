// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// The protocol's version and default limits, as announced in `HelloReply`.
public enum WireProtocol {
    /// The protocol version this module speaks (`HelloRequest.protocol_version`).
    public static let version: UInt32 = 1
    /// The default largest frame body the server accepts (`--max-frame-size`).
    public static let defaultMaxFrameSize: UInt32 = 1 << 18
    /// The ad breaks one session may hold unless the daemon's configuration says otherwise.
    public static let defaultMaxBreaksPerSession: UInt32 = 1000
    /// The default bound on bytes queued for one connection before the server disconnects it.
    public static let defaultMaxOutboundQueueBytes: UInt64 = 8 << 20
}

/// gRPC's status codes, as carried in a RESPONSE frame's status byte and in `Status.code`.
public enum StatusCode: UInt8, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    case ok = 0
    case cancelled = 1
    case unknown = 2
    case invalidArgument = 3
    case deadlineExceeded = 4
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case aborted = 10
    case outOfRange = 11
    case unimplemented = 12
    case internalError = 13
    case unavailable = 14
    case dataLoss = 15
    case unauthenticated = 16

    /// The canonical name: "INVALID_ARGUMENT".
    public var name: String {
        switch self {
        case .ok: return "OK"
        case .cancelled: return "CANCELLED"
        case .unknown: return "UNKNOWN"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .deadlineExceeded: return "DEADLINE_EXCEEDED"
        case .notFound: return "NOT_FOUND"
        case .alreadyExists: return "ALREADY_EXISTS"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .resourceExhausted: return "RESOURCE_EXHAUSTED"
        case .failedPrecondition: return "FAILED_PRECONDITION"
        case .aborted: return "ABORTED"
        case .outOfRange: return "OUT_OF_RANGE"
        case .unimplemented: return "UNIMPLEMENTED"
        case .internalError: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        case .dataLoss: return "DATA_LOSS"
        case .unauthenticated: return "UNAUTHENTICATED"
        }
    }

    public var description: String { name }

    /// The code a timeline error is reported with.
    public init(_ category: TimelineError.Category) {
        switch category {
        case .invalidArgument: self = .invalidArgument
        case .notFound: self = .notFound
        case .failedPrecondition: self = .failedPrecondition
        case .resourceExhausted: self = .resourceExhausted
        }
    }
}

extension TimelineError {
    /// The status code the wire reports this error with.
    public var statusCode: StatusCode { StatusCode(category) }
}

/// A body that could not be turned into a Swift value. Both cases are answered INVALID_ARGUMENT.
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes do not decode as the expected message (truncated, wrong wire type, bad length). `message`
    /// names it: "snapback.v1.SeekEndedRequest".
    case malformed(message: String)
    /// The message decoded but holds a value this version does not accept: an unknown enum value or preset.
    case invalidArgument(String)
    /// The message holds more than the daemon takes in one request (more ad breaks than a session may
    /// hold): refused as soon as the count is known, before the elements are read.
    case tooLarge(String)

    public var statusCode: StatusCode {
        switch self {
        case .malformed, .invalidArgument: .invalidArgument
        case .tooLarge: .resourceExhausted
        }
    }

    public var description: String {
        switch self {
        case .malformed(let message): return "the body does not decode as \(message)"
        case .invalidArgument(let why), .tooLarge(let why): return why
        }
    }

    /// The error as the body of a non-OK response.
    public var status: WireStatus { WireStatus(code: statusCode, message: description) }
}

/// `snapback.v1.Status`: the body of every non-OK response. A client library can throw it.
public struct WireStatus: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: StatusCode
    public var message: String

    public init(code: StatusCode, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message.isEmpty ? code.name : "\(code.name): \(message)" }
}

extension WireStatus: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        WireReply.encodeStatus(code: code, message: message, into: &out)
    }

    /// Decodes a `Status` body; a code this version does not know reads as `.unknown`.
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WireStatus {
        let m = try SnapbackV1.Status.decode(body)
        let code = m.code <= UInt32(UInt8.max) ? StatusCode(rawValue: UInt8(m.code)) : nil
        return WireStatus(code: code ?? .unknown, message: m.message)
    }
}

extension WireReply {
    /// Appends a `Status` body (the body of a response whose header status is `code`).
    @discardableResult
    public static func encodeStatus(code: StatusCode, message: String, into out: inout [UInt8]) -> Int {
        SnapbackV1.Status(code: UInt32(code.rawValue), message: message).encode(into: &out)
    }
}
