// SPDX-License-Identifier: Apache-2.0
/// The client-to-server half of RFC 6455's framing: bytes in, whole messages and control frames out.
///
/// Every frame must be masked (§5.1), have the reserved bits clear (no extension is negotiated), a known
/// opcode and a minimally encoded length; control frames are at most 125 bytes and never fragmented;
/// continuations follow a text or binary start; a frame longer than `maxFrameSize` or a message longer
/// than `maxMessageSize` is refused when its header says so, before its payload is buffered. A text
/// message must be UTF-8 (checked when it is complete), as must a close frame's reason; a close code
/// must be one a peer may send. After a failure the decoder yields nothing more: the connection is
/// closed with the failure's code.
public struct WebSocketDecoder {
    public enum Event: Equatable {
        case text([UInt8])
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The peer's close frame: its code (nil when the payload was empty) and reason.
        case close(code: UInt16?, reason: String)
        /// The stream broke the protocol: close with `code` and `reason`.
        case failure(WebSocketCloseCode, String)
    }

    /// Changed by a configuration reload; a message being reassembled is held to the new limit from its
    /// next frame on.
    public var maxFrameSize: Int
    public var maxMessageSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The message being reassembled from fragments: its opcode and the payload so far.
    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    private var failed = false
    /// Set once the peer's close frame was decoded: nothing after it is read.
    private var closed = false

    public init(maxFrameSize: Int, maxMessageSize: Int) {
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
    }

    /// Bytes buffered and not yet part of a yielded event (a frame in progress).
    public var bufferedCount: Int { buffer.count - readIndex + fragments.count }

    /// Whether a frame or a fragmented message is partly received.
    public var isMidMessage: Bool { buffer.count > readIndex || fragmentOpcode != nil }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, !closed else { return }
        if readIndex > 0 && readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ reason: String) -> Event {
        failed = true
        buffer = []
        readIndex = 0
        fragments = []
        return .failure(code, reason)
    }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        while true {
            guard !failed, !closed else { return nil }
            let available = buffer.count - readIndex
            guard available >= 2 else { return nil }
            let b0 = buffer[readIndex]
            let b1 = buffer[readIndex + 1]
            let fin = b0 & 0x80 != 0
            guard b0 & 0x70 == 0 else { return fail(.protocolError, "reserved bits set (no extension was negotiated)") }
            guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else {
                return fail(.protocolError, "unknown opcode \(b0 & 0x0F)")
            }
            guard b1 & 0x80 != 0 else { return fail(.protocolError, "client frame not masked") }
            var headerSize = 2 + 4
            var length = UInt64(b1 & 0x7F)
            if length == 126 {
                headerSize += 2
                guard available >= 4 else { return nil }
                length = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
                guard length >= 126 else { return fail(.protocolError, "frame length not minimally encoded") }
            } else if length == 127 {
                headerSize += 8
                guard available >= 10 else { return nil }
                length = 0
                for i in 0..<8 { length = length << 8 | UInt64(buffer[readIndex + 2 + i]) }
                guard length >> 63 == 0 else { return fail(.protocolError, "frame length has its top bit set") }
                guard length > 0xFFFF else { return fail(.protocolError, "frame length not minimally encoded") }
            }
            if opcode.isControl {
                guard fin else { return fail(.protocolError, "fragmented control frame") }
                guard length <= 125 else { return fail(.protocolError, "control frame longer than 125 bytes") }
            } else {
                guard length <= UInt64(maxFrameSize) else {
                    return fail(.messageTooBig, "frame of \(length) bytes over the \(maxFrameSize)-byte limit")
                }
                if opcode == .continuation {
                    guard fragmentOpcode != nil else { return fail(.protocolError, "continuation without a message to continue") }
                } else if fragmentOpcode != nil {
                    return fail(.protocolError, "new message before the fragmented one ended")
                }
                guard UInt64(fragments.count) + length <= UInt64(maxMessageSize) else {
                    return fail(.messageTooBig, "message over the \(maxMessageSize)-byte limit")
                }
            }
            let payloadLength = Int(length)
            guard available >= headerSize + payloadLength else { return nil }
            let maskStart = readIndex + headerSize - 4
            let mask = (buffer[maskStart], buffer[maskStart + 1], buffer[maskStart + 2], buffer[maskStart + 3])
            let start = readIndex + headerSize
            var payload = [UInt8](repeating: 0, count: payloadLength)
            for i in 0..<payloadLength {
                let m: UInt8
                switch i & 3 {
                case 0: m = mask.0
                case 1: m = mask.1
                case 2: m = mask.2
                default: m = mask.3
                }
                payload[i] = buffer[start + i] ^ m
            }
            readIndex = start + payloadLength
            switch opcode {
            case .ping: return .ping(payload)
            case .pong: return .pong(payload)
            case .close: return closeEvent(payload)
            case .text, .binary, .continuation:
                let messageOpcode = opcode == .continuation ? fragmentOpcode! : opcode
                if !fin {
                    fragmentOpcode = messageOpcode
                    fragments.append(contentsOf: payload)
                    continue
                }
                var message = payload
                if fragmentOpcode != nil {
                    fragments.append(contentsOf: payload)
                    message = fragments
                    fragments = []
                    fragmentOpcode = nil
                }
                if messageOpcode == .binary { return .binary(message) }
                guard String(validating: message, as: UTF8.self) != nil else {
                    return fail(.invalidPayload, "text message is not valid UTF-8")
                }
                return .text(message)
            }
        }
    }

    private mutating func closeEvent(_ payload: [UInt8]) -> Event {
        if payload.isEmpty {
            closed = true
            return .close(code: nil, reason: "")
        }
        guard payload.count >= 2 else { return fail(.protocolError, "close frame with a 1-byte payload") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidReceived(code) else { return fail(.protocolError, "close code \(code) may not be sent") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            return fail(.invalidPayload, "close reason is not valid UTF-8")
        }
        closed = true
        return .close(code: code, reason: reason)
    }
}
