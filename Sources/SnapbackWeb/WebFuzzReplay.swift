// SPDX-License-Identifier: Apache-2.0
/// What a browser's bytes go through in the bridge, in process, for libFuzzer and the tests: the request
/// head (parser and upgrade decision against a fixed configuration), then the WebSocket stream (in the
/// chunks the input's first bytes choose) and each text message's JSON-RPC envelope. Invariants are
/// checked with preconditions, so a violation is a crash the fuzzer keeps.
public enum WebFuzzReplay {
    public static let configuration: BridgeConfiguration = {
        var c = BridgeConfiguration()
        c.port = 9932
        c.maxFrameSize = 4096
        c.maxMessageSize = 16384
        c.apps = [
            WebApp(name: "guide", origins: ["http://127.0.0.1:8000"], token: Array("guide-token-0123456789".utf8)),
            WebApp(name: "other", origins: ["http://localhost:8001"], token: Array("other-token-0123456789".utf8))
        ]
        return c
    }()

    public static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        let chunk = Int(input[0]) + 1
        let bytes = UnsafeRawBufferPointer(rebasing: input[1...])
        var stream = bytes
        switch HTTPRequestHead.parse(bytes, maxHeadBytes: 8192) {
        case .needMore, .invalid:
            break
        case .complete(let head, let consumed):
            precondition(consumed <= bytes.count)
            if case .upgrade(let index, let response) = Handshake.decide(head, configuration: configuration) {
                precondition(index < configuration.apps.count && response.starts(with: Array("HTTP/1.1 101".utf8)))
                precondition(head.single("origin").value.map { configuration.apps[index].origins.contains($0) } ?? false)
            }
            stream = UnsafeRawBufferPointer(rebasing: bytes[consumed...])
        }
        var decoder = WebSocketDecoder(maxFrameSize: configuration.maxFrameSize, maxMessageSize: configuration.maxMessageSize)
        var offset = 0
        var ended = false
        while offset < stream.count && !ended {
            let end = min(stream.count, offset + chunk)
            decoder.append(UnsafeRawBufferPointer(rebasing: stream[offset..<end]))
            offset = end
            while let event = decoder.next() {
                switch event {
                case .text(let message):
                    precondition(
                        message.count <= configuration.maxMessageSize && String(validating: message, as: UTF8.self) != nil)
                    _ = JSONRPC.parseRequest(message)
                case .binary(let message):
                    precondition(message.count <= configuration.maxMessageSize)
                case .ping(let payload), .pong(let payload):
                    precondition(payload.count <= 125)
                case .close, .failure:
                    ended = true
                }
                if ended { break }
            }
        }
        if ended { precondition(decoder.next() == nil) }
    }
}
