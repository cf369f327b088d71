// SPDX-License-Identifier: Apache-2.0

/// How much of itself a JSON input may make the reader spend: bytes, nesting, elements of one array.
/// Every number is read into its field's range, every string is checked to be UTF-8.
public struct ProtoJSONLimits: Sendable {
    /// The most bytes of input (the protocol's largest frame, at the default limit, is 256 KiB).
    public var maxBytes: Int
    /// The most objects and arrays open at once (the protocol's messages nest four deep).
    public var maxDepth: Int
    /// The most elements of one array (an OpenSession's breaks are at most 1,000 by default).
    public var maxElements: Int

    public init(maxBytes: Int = 1 << 20, maxDepth: Int = 32, maxElements: Int = 100_000) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxElements = maxElements
    }
}

/// Why a JSON input was refused, and at which byte.
public struct ProtoJSONError: Error, Equatable, CustomStringConvertible {
    public var message: String
    /// The byte offset in the input where reading stopped.
    public var offset: Int

    public var description: String { "JSON at byte \(offset): \(message)" }
}

/// A pull reader of one JSON value, for the generated decoders: they ask for what the field they
/// found takes (`uint64()`, `message(_:)`…), and the reader refuses anything else. Nothing it reads can
/// trap: lengths and nesting are bounded by `ProtoJSONLimits`, numbers are parsed into their type's
/// range or refused, and strings are valid UTF-8 without lone surrogates.
public struct ProtoJSONReader {
    private let bytes: [UInt8]
    private var at = 0
    private var depth = 0
    private let limits: ProtoJSONLimits

    public init(_ bytes: [UInt8], limits: ProtoJSONLimits = ProtoJSONLimits()) throws(ProtoJSONError) {
        self.bytes = bytes
        self.limits = limits
        guard bytes.count <= limits.maxBytes else {
            throw ProtoJSONError(message: "\(bytes.count) bytes, more than the \(limits.maxBytes) allowed", offset: 0)
        }
    }

    public func error(_ message: String) -> ProtoJSONError { ProtoJSONError(message: message, offset: at) }

    /// Refuses anything but whitespace after the value.
    public mutating func end() throws(ProtoJSONError) {
        skipSpace()
        guard at == bytes.count else { throw error("unexpected bytes after the JSON value") }
    }

    // MARK: Objects

    /// Reads a message's object (nil for null), the fields given to `M.init(json:)`.
    public mutating func message<M: ProtoJSONMessage>(_: M.Type) throws(ProtoJSONError) -> M? {
        if try null() { return nil }
        return try M(json: &self)
    }

    /// Opens the object of a message; its members follow from `nextKey(seen:)`.
    public mutating func beginObject() throws(ProtoJSONError) {
        try open(UInt8(ascii: "{"), "an object")
        first = true
    }

    /// Whether the next member is the object's first (no comma before it).
    private var first = true

    /// The next member's name, its ':' read; nil at the object's end. The caller reads the value.
    public mutating func nextKey() throws(ProtoJSONError) -> String? {
        skipSpace()
        if peek == UInt8(ascii: "}") {
            at += 1
            depth -= 1
            first = false
            return nil
        }
        if !first {
            guard peek == UInt8(ascii: ",") else { throw error("expected ',' or '}' in an object") }
            at += 1
            skipSpace()
        }
        guard peek == UInt8(ascii: "\"") else { throw error("expected a member name") }
        let key = try stringToken()
        skipSpace()
        guard peek == UInt8(ascii: ":") else { throw error("expected ':' after the member name \"\(key)\"") }
        at += 1
        first = false
        return key
    }

    /// Marks field `bit` of the message being read as seen: a field (or a oneof) given twice is refused,
    /// as protobuf's parser refuses it.
    public func once(_ seen: inout UInt64, _ bit: Int, _ name: String) throws(ProtoJSONError) {
        let mask: UInt64 = 1 << UInt64(bit)
        guard seen & mask == 0 else { throw error("\"\(name)\" is given more than once (or with another of its oneof)") }
        seen |= mask
    }

    public func unknownField(_ name: String, in message: String) -> ProtoJSONError {
        error("\(message) has no field \"\(name)\"")
    }

    // MARK: Arrays

    /// A repeated field's elements (nil for null): each read by `element`, none of them null.
    public mutating func array<T>(
        _ element: (inout ProtoJSONReader) throws(ProtoJSONError) -> T?
    ) throws(ProtoJSONError) -> [T]? {
        if try null() { return nil }
        try open(UInt8(ascii: "["), "an array")
        var items: [T] = []
        skipSpace()
        if peek == UInt8(ascii: "]") {
            at += 1
            depth -= 1
            return items
        }
        while true {
            guard items.count < limits.maxElements else {
                throw error("more than the \(limits.maxElements) elements allowed in an array")
            }
            guard let item = try element(&self) else { throw error("null is not an element of a repeated field") }
            items.append(item)
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): at += 1
            case UInt8(ascii: "]"):
                at += 1
                depth -= 1
                return items
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func open(_ byte: UInt8, _ what: String) throws(ProtoJSONError) {
        skipSpace()
        guard peek == byte else { throw error("expected \(what)") }
        guard depth < limits.maxDepth else { throw error("nested deeper than the \(limits.maxDepth) levels allowed") }
        at += 1
        depth += 1
    }

    // MARK: Scalars

    public mutating func string() throws(ProtoJSONError) -> String? {
        if try null() { return nil }
        guard peek == UInt8(ascii: "\"") else { throw error("expected a string") }
        return try stringToken()
    }

    public mutating func bool() throws(ProtoJSONError) -> Bool? {
        if try null() { return nil }
        if literal("true") { return true }
        if literal("false") { return false }
        throw error("expected true or false")
    }

    public mutating func uint32() throws(ProtoJSONError) -> UInt32? {
        try integer(min: 0, max: Int64(UInt32.max), "uint32").map { UInt32($0) }
    }

    public mutating func int32() throws(ProtoJSONError) -> Int32? {
        try integer(min: Int64(Int32.min), max: Int64(Int32.max), "int32").map { Int32($0) }
    }

    public mutating func uint64() throws(ProtoJSONError) -> UInt64? {
        if try null() { return nil }
        let (text, isWhole) = try numberText()
        let shown = String(decoding: text, as: UTF8.self)
        if isWhole, let v = Self.exactInteger(text), !v.negative || v.magnitude == 0 { return v.magnitude }
        // `1e3`, as json_format takes it; 2^64 is the first double out of range.
        guard !isWhole, let d = Double(shown), d == d.rounded(), d >= 0, d < 18_446_744_073_709_551_616 else {
            throw error("\(shown) is not a uint64")
        }
        return UInt64(d)
    }

    public mutating func int64() throws(ProtoJSONError) -> Int64? {
        if try null() { return nil }
        let (text, isWhole) = try numberText()
        let shown = String(decoding: text, as: UTF8.self)
        if isWhole, let v = Self.exactInteger(text),
            v.negative ? v.magnitude <= UInt64(Int64.max) + 1 : v.magnitude <= UInt64(Int64.max)
        {
            return v.negative ? Int64(truncatingIfNeeded: 0 &- v.magnitude) : Int64(v.magnitude)
        }
        guard !isWhole, let d = Double(shown), d == d.rounded(), d >= -9_223_372_036_854_775_808,
            d < 9_223_372_036_854_775_808
        else { throw error("\(shown) is not an int64") }
        return Int64(d)
    }

    /// A double: a number, or a string holding one or "NaN", "Infinity", "-Infinity". A number too large
    /// for a double is refused, not read as infinity.
    public mutating func double() throws(ProtoJSONError) -> Double? {
        if try null() { return nil }
        let quoted = peek == UInt8(ascii: "\"")
        if quoted {
            let start = at
            let s = try stringToken()
            switch s {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default: at = start + 1
            }
        }
        let (text, _) = try numberText()
        if quoted {
            guard peek == UInt8(ascii: "\"") else { throw error("expected a number in the string") }
            at += 1
        }
        guard let d = Double(String(decoding: text, as: UTF8.self)), d.isFinite else {
            throw error("\(String(decoding: text, as: UTF8.self)) is out of a double's range")
        }
        return d
    }

    /// An enum value: its name, or its number (a value this version does not know is kept as its number).
    public mutating func enumValue<E: ProtoJSONEnum>(_: E.Type) throws(ProtoJSONError) -> E? {
        if try null() { return nil }
        if peek == UInt8(ascii: "\"") {
            let name = try stringToken()
            guard let number = E.protoNames.first(where: { $0.name == name })?.number else {
                throw error("\"\(name)\" is not a value of the enum")
            }
            return E(rawValue: UInt32(bitPattern: number))
        }
        guard let n = try int32() else { throw error("expected an enum value") }
        return E(rawValue: UInt32(bitPattern: n))
    }

    // MARK: Tokens

    private var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while let b = peek, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { at += 1 }
    }

    /// Reads null, returning true; false (nothing read but whitespace) for any other value.
    public mutating func null() throws(ProtoJSONError) -> Bool {
        skipSpace()
        guard peek != nil else { throw error("unexpected end of input") }
        return literal("null")
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard bytes.count - at >= n else { return false }
        for i in 0..<n where bytes[at + i] != word.utf8Start[i] { return false }
        // A literal is a whole token: `nullx` is not null.
        if at + n < bytes.count, Self.isWordByte(bytes[at + n]) { return false }
        at += n
        return true
    }

    private static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) || b == 0x5F
    }

    /// An integer field's value: a number, or a string holding one (proto3 takes both); a number with a
    /// fraction or an exponent is taken when it is a whole number. Out of `min...max` is refused.
    private mutating func integer(min: Int64, max: Int64, _ type: String) throws(ProtoJSONError) -> Int64? {
        if try null() { return nil }
        let (text, isWhole) = try numberText()
        let shown = String(decoding: text, as: UTF8.self)
        if isWhole, let v = Self.exactInteger(text) {
            guard v.magnitude <= UInt64(Int64.max) else { throw error("\(shown) is out of \(type)'s range") }
            let n = v.negative ? -Int64(v.magnitude) : Int64(v.magnitude)
            guard n >= min, n <= max else { throw error("\(shown) is out of \(type)'s range") }
            return n
        }
        guard let d = Double(shown), d == d.rounded(), d >= Double(min), d <= Double(max) else {
            throw error("\(shown) is not a \(type)")
        }
        return Int64(d)
    }

    /// A JSON number's bytes (RFC 8259's grammar, at most 64 of them), in quotes or not, and whether it
    /// is written as a whole number (no fraction, no exponent).
    private mutating func numberText() throws(ProtoJSONError) -> (ArraySlice<UInt8>, Bool) {
        skipSpace()
        var quoted = false
        if peek == UInt8(ascii: "\"") {
            quoted = true
            at += 1
        }
        let start = at
        var whole = true
        if peek == UInt8(ascii: "-") { at += 1 }
        guard let first = peek, Self.isDigit(first) else { throw error("expected a number") }
        at += 1
        if first != UInt8(ascii: "0") { while let b = peek, Self.isDigit(b) { at += 1 } }
        if peek == UInt8(ascii: ".") {
            whole = false
            at += 1
            guard let b = peek, Self.isDigit(b) else { throw error("expected a digit after '.'") }
            while let b = peek, Self.isDigit(b) { at += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            whole = false
            at += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
            guard let b = peek, Self.isDigit(b) else { throw error("expected a digit in the exponent") }
            while let b = peek, Self.isDigit(b) { at += 1 }
        }
        guard at - start <= 64 else { throw error("a number of more than 64 characters") }
        let text = bytes[start..<at]
        if quoted {
            guard peek == UInt8(ascii: "\"") else { throw error("expected '\"' after the number") }
            at += 1
        } else if let b = peek, Self.isWordByte(b) || b == UInt8(ascii: ".") {
            throw error("expected a number")
        }
        return (text, whole)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// A whole number's sign and magnitude, nil when the magnitude does not fit 64 bits (or it has a
    /// fraction or an exponent).
    private static func exactInteger(_ text: ArraySlice<UInt8>) -> (negative: Bool, magnitude: UInt64)? {
        var digits = text[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var n: UInt64 = 0
        for b in digits {
            guard isDigit(b) else { return nil }
            let (times, o1) = n.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(b - 0x30))
            guard !o1, !o2 else { return nil }
            n = plus
        }
        return (negative, n)
    }

    /// A string token, at its opening quote: escapes resolved (a \u surrogate only as half of a pair),
    /// control characters refused, and the bytes between escapes checked to be UTF-8.
    private mutating func stringToken() throws(ProtoJSONError) -> String {
        at += 1
        var out: [UInt8] = []
        while true {
            guard let b = peek else { throw error("unterminated string") }
            switch b {
            case UInt8(ascii: "\""):
                at += 1
                guard let s = String(validating: out, as: UTF8.self) else { throw error("a string that is not UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                at += 1
                guard let e = peek else { throw error("unterminated string") }
                at += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard literal2("\\u") else { throw error("a lone UTF-16 surrogate") }
                        let low = try hex4()
                        guard low >= 0xDC00 && low <= 0xDFFF else { throw error("a lone UTF-16 surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw error("a lone UTF-16 surrogate")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("an invalid \\u escape") }
                    UTF8.encode(u) { out.append($0) }
                default: throw error("an invalid escape in a string")
                }
            case 0x00..<0x20: throw error("a control character in a string")
            default:
                out.append(b)
                at += 1
            }
        }
    }

    private mutating func literal2(_ s: StaticString) -> Bool {
        guard bytes.count - at >= 2, bytes[at] == s.utf8Start[0], bytes[at + 1] == s.utf8Start[1] else { return false }
        at += 2
        return true
    }

    private mutating func hex4() throws(ProtoJSONError) -> UInt32 {
        guard bytes.count - at >= 4 else { throw error("an invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[at]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw error("an invalid \\u escape")
            }
            v = v << 4 | digit
            at += 1
        }
        return v
    }
}
