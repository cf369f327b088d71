// SPDX-License-Identifier: Apache-2.0
/// JSON-RPC 2.0 envelopes as Thunder frames them: a request `{"jsonrpc":"2.0","id":…,"method":…,
/// "params":…}` in, results, errors and notifications out. The envelope is read here; `params` stays the
/// raw JSON it was (validated), for the method's message decoder.
public enum JSONRPC {
    /// The standard error codes (JSON-RPC 2.0 §5.1); snapbackd's status codes (1-16) are used as they are.
    public enum ErrorCode: Int, Sendable {
        case parseError = -32700
        case invalidRequest = -32600
        case methodNotFound = -32601
        case invalidParams = -32602
        case internalError = -32603
    }

    public struct Request: Equatable, Sendable {
        /// The id as it was written (a string, a number or null), echoed in the answer; nil for a notification.
        public var id: [UInt8]?
        public var method: String
        /// The params' JSON text (an object or an array); nil when absent.
        public var params: [UInt8]?
    }

    public struct Failure: Error, Equatable, Sendable {
        public var code: ErrorCode
        public var message: String
        /// The id, when the envelope had a usable one.
        public var id: [UInt8]?

        public init(code: ErrorCode, message: String, id: [UInt8]? = nil) {
            self.code = code
            self.message = message
            self.id = id
        }
    }

    /// Reads one request from a text message.
    public static func parseRequest(_ text: [UInt8], maxDepth: Int = 32) -> Result<Request, Failure> {
        var reader = JSONReader(bytes: text, maxDepth: maxDepth)
        guard let top = reader.readDocument() else {
            return .failure(Failure(code: .parseError, message: "not JSON: \(reader.error)", id: nil))
        }
        guard case .object(let members, _) = top else {
            if case .array = top { return .failure(Failure(code: .invalidRequest, message: "batches are not accepted", id: nil)) }
            return .failure(Failure(code: .invalidRequest, message: "a request is a JSON object", id: nil))
        }
        var id: [UInt8]?
        var method: String?
        var params: [UInt8]?
        var version: String?
        for (name, value) in members {
            switch name {
            case "jsonrpc": version = value.stringValue
            case "id":
                switch value {
                case .string, .number, .null: id = Array(text[value.range])
                default:
                    return .failure(Failure(code: .invalidRequest, message: "id must be a string, a number or null", id: nil))
                }
            case "method": method = value.stringValue
            case "params":
                switch value {
                case .object, .array: params = Array(text[value.range])
                default: return .failure(Failure(code: .invalidRequest, message: "params must be an object or an array", id: id))
                }
            default: break
            }
        }
        guard version == "2.0" else {
            return .failure(Failure(code: .invalidRequest, message: "jsonrpc must be \"2.0\"", id: id))
        }
        guard let method else { return .failure(Failure(code: .invalidRequest, message: "method must be a string", id: id)) }
        return .success(Request(id: id, method: method, params: params))
    }

    /// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`.
    public static func result(id: [UInt8], json: [UInt8]) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":"#.utf8) + id + Array(#","result":"#.utf8) + json + [UInt8(ascii: "}")]
    }

    /// `{"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M}}` (id null when unknown).
    public static func error(id: [UInt8]?, code: Int, message: String, data: [UInt8]? = nil) -> [UInt8] {
        var out = Array(#"{"jsonrpc":"2.0","id":"#.utf8) + (id ?? Array("null".utf8))
        out += Array(#","error":{"code":\#(code),"message":"#.utf8)
        appendString(message, to: &out)
        if let data { out += Array(#","data":"#.utf8) + data }
        out += Array("}}".utf8)
        return out
    }

    /// `{"jsonrpc":"2.0","method":"<id>.<event>","params":PARAMS}`: Thunder's event notification.
    public static func notification(method: String, params: [UInt8]) -> [UInt8] {
        var out = Array(#"{"jsonrpc":"2.0","method":"#.utf8)
        appendString(method, to: &out)
        out += Array(#","params":"#.utf8) + params + [UInt8(ascii: "}")]
        return out
    }

    /// A JSON string literal of `text`.
    public static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// A JSON value as the envelope needs it: its kind, where it lies in the text, and the decoded members
/// and strings (numbers stay text).
public indirect enum JSONValue: Equatable, Sendable {
    case object([(String, JSONValue)], Range<Int>)
    case array([JSONValue], Range<Int>)
    case string(String, Range<Int>)
    case number(Range<Int>)
    case bool(Bool, Range<Int>)
    case null(Range<Int>)

    public var range: Range<Int> {
        switch self {
        case .object(_, let r), .array(_, let r), .string(_, let r), .number(let r), .bool(_, let r), .null(let r): r
        }
    }

    public var stringValue: String? {
        if case .string(let s, _) = self { return s }
        return nil
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x, let r), .object(let y, let s)): r == s && x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        case (.array(let x, let r), .array(let y, let s)): r == s && x == y
        case (.string(let x, let r), .string(let y, let s)): r == s && x == y
        case (.number(let r), .number(let s)), (.null(let r), .null(let s)): r == s
        case (.bool(let x, let r), .bool(let y, let s)): r == s && x == y
        default: false
        }
    }
}

/// RFC 8259, strictly: one value with optional whitespace around it, nesting at most `maxDepth` deep,
/// strings valid UTF-8 with valid escapes (a lone surrogate escape refused), numbers in JSON's grammar.
public struct JSONReader {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0
    var depth = 0
    public private(set) var error = ""

    public init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    public mutating func readDocument() -> JSONValue? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return fail("not UTF-8") }
        guard let value = readValue() else { return nil }
        skipBlanks()
        guard index == bytes.count else { return fail("text after the value at byte \(index)") }
        return value
    }

    private mutating func fail<T>(_ message: String) -> T? {
        if error.isEmpty { error = message }
        return nil
    }

    private mutating func skipBlanks() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func readValue() -> JSONValue? {
        skipBlanks()
        guard index < bytes.count else { return fail("unexpected end") }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            depth += 1
            guard depth <= maxDepth else { return fail("nested deeper than \(maxDepth)") }
            defer { depth -= 1 }
            index += 1
            var members: [(String, JSONValue)] = []
            skipBlanks()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members, start..<index)
            }
            while true {
                skipBlanks()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    return fail("expected a member name at byte \(index)")
                }
                guard let name = readString() else { return nil }
                skipBlanks()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return fail("expected ':' at byte \(index)") }
                index += 1
                guard let value = readValue() else { return nil }
                members.append((name, value))
                skipBlanks()
                guard index < bytes.count else { return fail("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { return fail("expected ',' or '}' at byte \(index)") }
                index += 1
                return .object(members, start..<index)
            }
        case UInt8(ascii: "["):
            depth += 1
            guard depth <= maxDepth else { return fail("nested deeper than \(maxDepth)") }
            defer { depth -= 1 }
            index += 1
            var elements: [JSONValue] = []
            skipBlanks()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements, start..<index)
            }
            while true {
                guard let value = readValue() else { return nil }
                elements.append(value)
                skipBlanks()
                guard index < bytes.count else { return fail("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "]") else { return fail("expected ',' or ']' at byte \(index)") }
                index += 1
                return .array(elements, start..<index)
            }
        case UInt8(ascii: "\""):
            guard let text = readString() else { return nil }
            return .string(text, start..<index)
        case UInt8(ascii: "t"): return literal("true", .bool(true, start..<(start + 4)))
        case UInt8(ascii: "f"): return literal("false", .bool(false, start..<(start + 5)))
        case UInt8(ascii: "n"): return literal("null", .null(start..<(start + 4)))
        default:
            guard readNumber() else { return fail("unexpected byte at \(index)") }
            return .number(start..<index)
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
        let w = Array(word.utf8)
        guard index + w.count <= bytes.count, Array(bytes[index..<(index + w.count)]) == w else {
            return fail("unexpected byte at \(index)")
        }
        index += w.count
        return value
    }

    private mutating func readNumber() -> Bool {
        func digits() -> Int {
            let s = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - s
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    /// A string at `index` (its opening quote), decoded.
    private mutating func readString() -> String? {
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { return fail("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case 0..<0x20: return fail("control character in a string at byte \(index - 1)")
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return fail("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = readHex4() else { return fail("bad \\u escape") }
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            return fail("lone surrogate escape")
                        }
                        index += 2
                        guard let low = readHex4(), low >= 0xDC00, low < 0xE000 else { return fail("lone surrogate escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        return fail("lone surrogate escape")
                    }
                    out += Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
                default: return fail("bad escape")
                }
            default: out.append(byte)
            }
        }
    }

    private mutating func readHex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            index += 1
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
