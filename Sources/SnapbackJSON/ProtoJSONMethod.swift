// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// One rpc of the protocol with the message types of its bodies, for a front end that speaks proto3 JSON
/// on one side and the protocol's frames on the other (snapback-web): the request read from JSON and
/// encoded as protobuf, the RESPONSE body and a stream's PUSH bodies decoded and written as JSON. The
/// table of them, `everyProtoJSONMethod`, is generated from proto/ (scripts/gen-wire.py).
public struct ProtoJSONMethod: Sendable {
    public typealias Body = any (ProtoJSONMessage & WireMessage).Type

    public let method: WireMethod
    /// The method's name in JSON APIs: its `WireMethod` case ("seekEnded", "getBookmark").
    public let jsonName: String
    public let request: Body
    /// The RESPONSE body's type; nil when it is empty (the RESPONSE that starts a WatchDecisions stream).
    public let reply: Body?
    /// A server stream's PUSH bodies; nil for a unary rpc.
    public let stream: Body?

    public init(_ method: WireMethod, _ jsonName: String, request: Body, reply: Body?, stream: Body?) {
        self.method = method
        self.jsonName = jsonName
        self.request = request
        self.reply = reply
        self.stream = stream
    }

    /// Reads the request's JSON (null or absent: every field at its default) within `limits`.
    public func decodeRequest(
        _ json: [UInt8]?, limits: ProtoJSONLimits
    ) throws(ProtoJSONError) -> any (ProtoJSONMessage & WireMessage) {
        guard let json else { return request.init() }
        return try request.init(jsonUTF8: json, limits: limits)
    }

    /// The RESPONSE body's message; nil when the rpc's RESPONSE is empty.
    public func decodeReply(_ body: [UInt8]) throws(WireError) -> (any (ProtoJSONMessage & WireMessage))? {
        guard let reply else { return nil }
        return try reply.decode(body)
    }

    /// A stream's PUSH body as JSON; nil for a unary rpc.
    public func streamJSON(_ body: [UInt8]) throws(WireError) -> String? {
        guard let stream else { return nil }
        return try stream.decode(body).jsonString
    }

    /// The methods by their JSON names.
    public static let byJSONName: [String: ProtoJSONMethod] = Dictionary(
        uniqueKeysWithValues: everyProtoJSONMethod.map { ($0.jsonName, $0) })

}
