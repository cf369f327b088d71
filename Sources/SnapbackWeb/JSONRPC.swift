// SPDX-License-Identifier: Apache-2.0
import SnapbackJSON

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

    /// Reads one request from a text message, with SnapbackJSON's bounded reader: the whole text is
    /// checked to be one JSON value first (else -32700), then read as the envelope.
    public static func parseRequest(_ text: [UInt8], maxDepth: Int = 32) -> Result<Request, Failure> {
        let limits = ProtoJSONLimits(maxBytes: text.count, maxDepth: maxDepth)
        do {
            var whole = try ProtoJSONReader(text, limits: limits)
            _ = try whole.skipValue()
            try whole.end()
        } catch {
            return .failure(Failure(code: .parseError, message: "not JSON: \(error)", id: nil))
        }
        var id: [UInt8]?
        var method: String?
        var params: [UInt8]?
        var version: String?
        do throws(ProtoJSONError) {
            var r = try ProtoJSONReader(text, limits: limits)
            switch r.nextKind() {
            case .object: break
            case .array: return .failure(Failure(code: .invalidRequest, message: "batches are not accepted", id: nil))
            default: return .failure(Failure(code: .invalidRequest, message: "a request is a JSON object", id: nil))
            }
            try r.beginObject()
            while let name = try r.nextKey() {
                let kind = r.nextKind()
                switch name {
                case "jsonrpc":
                    if kind == .string { version = try r.string() } else { _ = try r.skipValue() }
                case "id":
                    guard kind == .string || kind == .number || kind == .null else {
                        return .failure(Failure(code: .invalidRequest, message: "id must be a string, a number or null", id: nil))
                    }
                    id = Array(text[try r.skipValue()])
                case "method":
                    if kind == .string { method = try r.string() } else { _ = try r.skipValue() }
                case "params":
                    guard kind == .object || kind == .array else {
                        return .failure(Failure(code: .invalidRequest, message: "params must be an object or an array", id: id))
                    }
                    params = Array(text[try r.skipValue()])
                default: _ = try r.skipValue()
                }
            }
        } catch {
            // The text was read whole above: the envelope's reading cannot fail on it.
            return .failure(Failure(code: .parseError, message: "not JSON: \(error)", id: nil))
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
