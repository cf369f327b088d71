// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// What a message's field holds, written and read by the one call the generated encoders and decoders
/// make per field, whatever its kind: `w.field(name, value)`, `r.field(&value, &seen, bit, key)`.
public protocol ProtoJSONValue {
    /// Whether it is proto3's default: a singular field that is, is left out.
    var isProtoJSONDefault: Bool { get }
    func writeJSONValue(to w: inout ProtoJSONWriter)
    /// The value read; nil for null.
    static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Self?
}

extension String: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { isEmpty }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.string(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> String? { try r.string() }
}

extension Bool: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { !self }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.bool(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Bool? { try r.bool() }
}

extension Double: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { self == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.double(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Double? { try r.double() }
}

extension UInt32: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { self == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.int(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> UInt32? { try r.uint32() }
}

extension Int32: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { self == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.int(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Int32? { try r.int32() }
}

extension UInt64: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { self == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.int64(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> UInt64? { try r.uint64() }
}

extension Int64: ProtoJSONValue {
    public var isProtoJSONDefault: Bool { self == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.int64(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Int64? { try r.int64() }
}

extension ProtoJSONEnum {
    public var isProtoJSONDefault: Bool { rawValue == 0 }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.enumValue(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Self? { try r.enumValue(Self.self) }
}

extension ProtoJSONMessage {
    /// A sub-message is written whenever it is present: never a default to leave out.
    public var isProtoJSONDefault: Bool { false }
    public func writeJSONValue(to w: inout ProtoJSONWriter) { w.message(self) }
    public static func readJSONValue(_ r: inout ProtoJSONReader) throws(ProtoJSONError) -> Self? { try r.message(Self.self) }
}

extension ProtoJSONWriter {
    /// A singular field, left out at its default.
    public mutating func field<V: ProtoJSONValue>(_ name: String, _ value: V) {
        guard !value.isProtoJSONDefault else { return }
        key(name)
        value.writeJSONValue(to: &self)
    }

    /// A proto3 optional, a sub-message or a oneof's member: written when present, at its default too.
    public mutating func field<V: ProtoJSONValue>(_ name: String, _ value: V?) {
        guard let value else { return }
        key(name)
        value.writeJSONValue(to: &self)
    }

    /// A repeated field, left out when empty.
    public mutating func field<V: ProtoJSONValue>(_ name: String, _ values: [V]) {
        guard !values.isEmpty else { return }
        key(name)
        array(values) { w, v in v.writeJSONValue(to: &w) }
    }
}

extension ProtoJSONReader {
    /// A singular field's value, given once (field `bit` of `seen`); null leaves it at its default.
    public mutating func field<V: ProtoJSONValue>(
        _ value: inout V, _ seen: inout UInt64, _ bit: Int, _ key: String
    ) throws(ProtoJSONError) {
        try once(&seen, bit, key)
        if let v = try V.readJSONValue(&self) { value = v }
    }

    /// A proto3 optional's or a sub-message's value, given once; null reads as absent.
    public mutating func field<V: ProtoJSONValue>(
        _ value: inout V?, _ seen: inout UInt64, _ bit: Int, _ key: String
    ) throws(ProtoJSONError) {
        try once(&seen, bit, key)
        value = try V.readJSONValue(&self)
    }

    /// A repeated field's elements, given once; null reads as none.
    public mutating func field<V: ProtoJSONValue>(
        _ values: inout [V], _ seen: inout UInt64, _ bit: Int, _ key: String
    ) throws(ProtoJSONError) {
        try once(&seen, bit, key)
        values = try array { (e: inout ProtoJSONReader) throws(ProtoJSONError) in try V.readJSONValue(&e) } ?? []
    }
}
