// SPDX-License-Identifier: Apache-2.0
import SnapbackJSON

/// A JSON value, written without Foundation: members keep the order they were given in, so that the
/// CLI's `--json` output is stable and reads in the same order as its text.
public indirect enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// Written in the shortest form that reads back as the same double (`600`, `7.5`); NaN and the
    /// infinities, which JSON cannot hold, as null.
    case number(Double)
    /// Counters and ids, exact beyond 2^53.
    case uint(UInt64)
    case string(String)
    case array([JSON])
    case object(Members)
    /// A protocol message, in its proto3 canonical JSON form (`ProtoJSONMessage`, generated): the one
    /// JSON mapping of the protocol.
    case message(String)

    /// `m` in its canonical JSON form.
    public static func message(_ m: some ProtoJSONMessage) -> JSON { .message(m.jsonString) }

    /// An object's members in order; written as a dictionary literal.
    public struct Members: Equatable, Sendable, ExpressibleByDictionaryLiteral {
        public var pairs: [(String, JSON)]

        public init(dictionaryLiteral elements: (String, JSON)...) { pairs = elements }
        public init(_ pairs: [(String, JSON)]) { self.pairs = pairs }

        public static func == (a: Members, b: Members) -> Bool {
            a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }

        public subscript(key: String) -> JSON? { pairs.first { $0.0 == key }?.1 }
    }

    /// An optional number: null when absent.
    public static func number(_ value: Double?) -> JSON { value.map { .number($0) } ?? .null }

    /// The member `key` of an object.
    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// Compact, on one line (a JSON-lines record as it is).
    public var rendered: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let d): out += JSON.format(d)
        case .uint(let n): out += String(n)
        case .string(let s): JSON.quote(s, into: &out)
        case .message(let text): out += text
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.pairs.enumerated() {
                if i > 0 { out += "," }
                JSON.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        // Swift's description is the shortest representation that reads back exactly; JSON takes its
        // exponent form (`1e-05`) as it is.
        return d.description
    }

    /// The protocol's JSON writer's quoting: one way of writing a JSON string.
    static func quote(_ s: String, into out: inout String) { ProtoJSONWriter.quote(s, into: &out) }
}
