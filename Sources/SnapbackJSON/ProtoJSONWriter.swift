// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// A message of the protocol in proto3's canonical JSON form (https://protobuf.dev/programming-guides/json/),
/// as protobuf's own `json_format` writes and reads it: fields by their lowerCamelCase JSON names, in
/// field number order; a field at its proto3 default left out (an optional or a oneof member is written
/// when set, a sub-message when present); 64-bit integers as decimal strings; an enum by its value's
/// name (by number when this version does not know it); a double that is not finite as "NaN",
/// "Infinity" or "-Infinity". The encoders and decoders are generated (scripts/gen-wire.py) into
/// Generated/; this module holds what they share, and no product that does not speak JSON links it.
public protocol ProtoJSONMessage: Sendable, ProtoJSONValue {
    /// Every field at its default.
    init()
    /// Writes the message as one JSON object.
    func writeJSON(to w: inout ProtoJSONWriter)
    /// Reads one JSON object (or null: the message with every field at its default), refusing what
    /// proto3's JSON mapping does not take, an unknown field included.
    init(json r: inout ProtoJSONReader) throws(ProtoJSONError)
}

extension ProtoJSONMessage {
    /// The message as compact canonical JSON, on one line.
    public var jsonString: String {
        var w = ProtoJSONWriter()
        writeJSON(to: &w)
        return w.text
    }

    /// Reads `text`, one JSON value and nothing after it but whitespace, within `limits`.
    public init(jsonString text: String, limits: ProtoJSONLimits = ProtoJSONLimits()) throws(ProtoJSONError) {
        try self.init(jsonUTF8: Array(text.utf8), limits: limits)
    }

    /// Reads the UTF-8 bytes of one JSON value, within `limits`.
    public init(jsonUTF8 bytes: [UInt8], limits: ProtoJSONLimits = ProtoJSONLimits()) throws(ProtoJSONError) {
        var r = try ProtoJSONReader(bytes, limits: limits)
        self = try r.message(Self.self) ?? Self()
        try r.end()
    }
}

/// A proto enum's values by name, as its JSON form names them.
public protocol ProtoJSONEnum: RawRepresentable, ProtoJSONValue where RawValue == UInt32 {
    init(rawValue: UInt32)
    /// Every value of the enum: its number and its name in the .proto.
    static var protoNames: [(number: Int32, name: String)] { get }
}

/// The writer of canonical JSON: compact, members in the order they are written.
public struct ProtoJSONWriter {
    public private(set) var text = ""
    /// Whether the object being written has a member yet (its next one is preceded by a comma).
    private var hasMember = false

    public init() {}

    public mutating func beginObject() {
        text += "{"
        hasMember = false
    }

    public mutating func endObject() {
        text += "}"
        hasMember = true
    }

    /// The name of the next member.
    public mutating func key(_ name: String) {
        if hasMember { text += "," }
        Self.quote(name, into: &text)
        text += ":"
        hasMember = false
    }

    public mutating func string(_ s: String) {
        Self.quote(s, into: &text)
        hasMember = true
    }

    public mutating func bool(_ b: Bool) {
        text += b ? "true" : "false"
        hasMember = true
    }

    /// uint32 and int32 are JSON numbers.
    public mutating func int<I: BinaryInteger>(_ n: I) {
        text += String(n)
        hasMember = true
    }

    /// uint64 and int64 are decimal strings: a JSON number loses them beyond 2^53 in most readers.
    public mutating func int64<I: BinaryInteger>(_ n: I) {
        text += "\"" + String(n) + "\""
        hasMember = true
    }

    /// A double in the shortest form that reads back as the same value (Swift's description, which is
    /// a JSON number for every finite double: `600.0`, `1e-05`); not finite, as the strings proto3 gives.
    public mutating func double(_ d: Double) {
        if d.isNaN {
            text += "\"NaN\""
        } else if d.isInfinite {
            text += d < 0 ? "\"-Infinity\"" : "\"Infinity\""
        } else {
            text += d.description
        }
        hasMember = true
    }

    public mutating func enumValue<E: ProtoJSONEnum>(_ e: E) {
        let number = Int32(bitPattern: e.rawValue)
        if let name = E.protoNames.first(where: { $0.number == number })?.name {
            string(name)
        } else {
            int(number)
        }
    }

    public mutating func message<M: ProtoJSONMessage>(_ m: M) {
        m.writeJSON(to: &self)
        hasMember = true
    }

    public mutating func array<T>(_ items: [T], _ write: (inout ProtoJSONWriter, T) -> Void) {
        text += "["
        for (i, item) in items.enumerated() {
            if i > 0 { text += "," }
            write(&self, item)
        }
        text += "]"
        hasMember = true
    }

    /// `s` as a JSON string: `"` and `\` escaped, control characters as \n, \t… or \u00XX, the rest as it is.
    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}", "\u{7F}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
