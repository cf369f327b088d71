// SPDX-License-Identifier: Apache-2.0
/// RFC 6455 §5.2 opcodes.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// The close codes the bridge sends (RFC 6455 §7.4.1, and 1013 from the IANA registry). A page sees the
/// code and the reason in its `CloseEvent`.
public enum WebSocketCloseCode: UInt16, Sendable {
    case normal = 1000
    case goingAway = 1001
    case protocolError = 1002
    case unsupportedData = 1003
    case invalidPayload = 1007
    case policyViolation = 1008
    case messageTooBig = 1009
    case internalError = 1011
    /// The service restarted: sent to an app's pages when a configuration reload removed or changed the app.
    case serviceRestart = 1012
    case tryAgainLater = 1013

    /// Whether a peer may send `code` in a close frame (§7.4.1-2: 1004-1006 and 1015 are reserved,
    /// 1016-2999 unassigned, 3000-4999 for registered and private use).
    public static func isValidReceived(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014: true
        case 3000...4999: true
        default: false
        }
    }
}

/// Server frames: never masked (§5.1), never fragmented.
public enum WebSocketFrame {
    /// Appends one unfragmented frame carrying `payload` to `out`.
    public static func encode(_ opcode: WebSocketOpcode, payload: some Collection<UInt8>, into out: inout [UInt8]) {
        out.append(0x80 | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            out.append(UInt8(count))
        } else if count <= 0xFFFF {
            out.append(126)
            out.append(UInt8(truncatingIfNeeded: count >> 8))
            out.append(UInt8(truncatingIfNeeded: count))
        } else {
            out.append(127)
            let length = UInt64(count)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        out.append(contentsOf: payload)
    }

    /// A close frame's payload: the code, then the reason cut to fit the 125-byte control frame limit
    /// on a character boundary.
    public static func closePayload(_ code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        var reasonBytes = 0
        for scalar in reason.unicodeScalars {
            let width = UTF8.width(scalar)
            guard reasonBytes + width <= 123 else { break }
            reasonBytes += width
        }
        payload.append(contentsOf: reason.utf8.prefix(reasonBytes))
        return payload
    }
}
