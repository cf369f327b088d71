// SPDX-License-Identifier: Apache-2.0
/// An HTTP/1.1 request head (RFC 9112 §2-5), read strictly: the bridge answers only `GET` with no body,
/// so anything unusual is refused rather than interpreted.
///
/// Lines end in CRLF; the request line is `METHOD SP target SP HTTP/1.1`; a header is a token, a colon
/// and a value of visible ASCII, spaces and tabs (no obsolete line folding, no bytes above 0x7E); at most
/// `maxHeaders` of them; the whole head within the caller's byte limit.
public struct HTTPRequestHead: Equatable, Sendable {
    public var method: String
    /// The request target as sent (origin form: a path and an optional query).
    public var target: String
    /// Headers in order, names lower-cased.
    public var headers: [(name: String, value: String)]

    public static let maxHeaders = 64

    public static func == (a: Self, b: Self) -> Bool {
        a.method == b.method && a.target == b.target && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }

    /// The target's path (before any `?`).
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// The value of the query parameter `name`, percent-decoded; nil if absent or not decodable.
    public func queryParameter(_ name: String) -> [UInt8]? {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv[0] == name else { continue }
            return kv.count == 2 ? Self.percentDecoded(kv[1].utf8) : []
        }
        return nil
    }

    static func percentDecoded(_ text: Substring.UTF8View) -> [UInt8]? {
        var out: [UInt8] = []
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(high << 4 | low)
            } else {
                out.append(byte)
            }
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Every value of header `name` (lower case).
    public func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }

    /// The value of `name` (nil if absent), and whether it was given more than once: a request
    /// carrying two Hosts or two Origins is refused, not resolved.
    public func single(_ name: String) -> (value: String?, duplicate: Bool) {
        let all = values(name)
        return (all.first, all.count > 1)
    }

    public enum ParseResult: Equatable {
        /// The head is complete: it and the number of bytes it took (the rest belongs to the stream).
        case complete(HTTPRequestHead, consumed: Int)
        case needMore
        /// Not an HTTP/1.1 request the bridge serves: answer `status` and close.
        case invalid(status: Int, reason: String)
    }

    /// Parses the head at the start of `bytes`, if it is all there.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int) -> ParseResult {
        var scanned = 0
        return parse(bytes, maxHeadBytes: maxHeadBytes, scanned: &scanned)
    }

    /// The same for a head that arrives in pieces: `scanned` (0 at first) is how far earlier calls
    /// looked, so that each byte is looked at once whatever the pieces (a peer sending a byte at a time
    /// costs no more than one sending the head at once).
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int, scanned: inout Int) -> ParseResult {
        // Find CRLF CRLF within the limit, from where the last call stopped.
        var end = -1
        let limit = min(bytes.count, maxHeadBytes)
        var i = max(3, scanned)
        while i < limit {
            if bytes[i] == 0x0A && bytes[i - 1] == 0x0D && bytes[i - 2] == 0x0A && bytes[i - 3] == 0x0D {
                end = i + 1
                break
            }
            i += 1
        }
        if end < 0 {
            // A head that already breaks the rules need not be waited for.
            for k in min(scanned, bytes.count)..<bytes.count {
                let byte = bytes[k]
                if byte == 0x0A && (k == 0 || bytes[k - 1] != 0x0D) {
                    return .invalid(status: 400, reason: "bare LF in the request head")
                }
                if !(byte == 0x09 || byte == 0x0D || byte == 0x0A || (byte >= 0x20 && byte < 0x7F)) {
                    return .invalid(status: 400, reason: "request head is not printable ASCII")
                }
            }
            scanned = bytes.count
            if bytes.count >= maxHeadBytes {
                return .invalid(status: 431, reason: "request head longer than \(maxHeadBytes) bytes")
            }
            return .needMore
        }
        var lines: [String] = []
        var lineStart = 0
        var j = 0
        while j < end - 2 {
            let byte = bytes[j]
            if byte == 0x0D {
                guard bytes[j + 1] == 0x0A else { return .invalid(status: 400, reason: "CR not followed by LF") }
                lines.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[lineStart..<j]), as: UTF8.self))
                j += 2
                lineStart = j
                continue
            }
            guard byte == 0x09 || (byte >= 0x20 && byte < 0x7F) else {
                return .invalid(
                    status: 400, reason: byte == 0x0A ? "bare LF in the request head" : "request head is not printable ASCII")
            }
            j += 1
        }
        guard let requestLine = lines.first else { return .invalid(status: 400, reason: "empty request") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(isTokenByte), parts[1].hasPrefix("/") else {
            return .invalid(status: 400, reason: "malformed request line")
        }
        guard parts[2] == "HTTP/1.1" else { return .invalid(status: 505, reason: "only HTTP/1.1 is served") }
        var head = HTTPRequestHead(method: String(parts[0]), target: String(parts[1]), headers: [])
        for line in lines.dropFirst() {
            guard let first = line.utf8.first, first != 0x20, first != 0x09 else {
                return .invalid(status: 400, reason: "obsolete line folding")
            }
            guard let colon = line.firstIndex(of: ":") else {
                return .invalid(status: 400, reason: "header line without a colon")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                return .invalid(status: 400, reason: "malformed header name")
            }
            guard head.headers.count < maxHeaders else { return .invalid(status: 431, reason: "more than \(maxHeaders) headers") }
            let value = line[line.index(after: colon)...].trimmingBlanks()
            head.headers.append((name.lowercased(), value))
        }
        return .complete(head, consumed: end)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
    }
}

extension Substring {
    func trimmingBlanks() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
