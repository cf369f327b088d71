// SPDX-License-Identifier: Apache-2.0
import SnapbackJSON
import SnapbackWire

/// Feeds bytes to the generated JSON decoders as a browser page or a script would send them (the web
/// bridge's input): the first byte picks the message (`everyProtoJSONMessage`), the rest is its JSON.
/// The libFuzzer entry point (`snapback-fuzz-json`) and the corpus replay test both call it. It must
/// never trap, and what it reads must write itself back: the JSON of a decoded message reads back as the
/// same JSON, and its binary form (of a body) decodes.
public enum JSONReplay {
    /// The limits the replay reads with: the bridge's largest request at the protocol's default limits.
    public static let limits = ProtoJSONLimits(maxBytes: 256 * 1024, maxDepth: 16, maxElements: 1000)

    /// Whether the JSON was read (false: refused, as it should be for most of what a fuzzer makes).
    @discardableResult
    public static func run(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let selector = bytes.first else { return false }
        let type = everyProtoJSONMessage[Int(selector) % everyProtoJSONMessage.count]
        return check(type, Array(bytes.dropFirst()))
    }

    private static func check<M: ProtoJSONMessage>(_: M.Type, _ json: [UInt8]) -> Bool {
        guard let message = try? M(jsonUTF8: json, limits: limits) else { return false }
        let text = message.jsonString
        guard let again = try? M(jsonString: text), again.jsonString == text else {
            preconditionFailure("\(M.self): \(text) does not read back as itself")
        }
        if let body = message as? any WireMessage, (try? type(of: body).decode(body.encoded())) == nil {
            preconditionFailure("\(M.self): the binary form of \(text) does not decode")
        }
        return true
    }
}
