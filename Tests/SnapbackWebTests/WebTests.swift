// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackConfigFile
import SnapbackDaemon
import SnapbackTestSupport
import SnapbackWeb
import Testing

/// A masked client frame, as a browser writes it.
func clientFrame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8] = [1, 2, 3, 4]) -> [UInt8] {
    var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    if payload.count < 126 {
        out.append(0x80 | UInt8(payload.count))
    } else if payload.count <= 0xFFFF {
        out += [0x80 | 126 as UInt8, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        out.append(0x80 | 127)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
    }
    out += mask
    out += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    return out
}

func upgradeRequest(
    host: String = "127.0.0.1:9932", origin: String? = "http://127.0.0.1:8000",
    target: String = "/jsonrpc?token=guide-token-0123456789", extra: String = ""
) -> String {
    "GET \(target) HTTP/1.1\r\nHost: \(host)\r\n" + (origin.map { "Origin: \($0)\r\n" } ?? "")
        + "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n"
}

func decide(_ text: String) -> Handshake.Decision? {
    let bytes = Array(text.utf8)
    guard case .complete(let head, _) = bytes.withUnsafeBytes({ HTTPRequestHead.parse($0, maxHeadBytes: 8192) }) else {
        return nil
    }
    return Handshake.decide(head, configuration: WebFuzzReplay.configuration)
}

func status(_ decision: Handshake.Decision?) -> Int? {
    switch decision {
    case .upgrade: 101
    case .respond(let response, _): Int(String(decoding: response.dropFirst(9).prefix(3), as: UTF8.self))
    case nil: nil
    }
}

@Suite struct WebSocketDecoderTests {
    @Test func sha1AndTheRFCsAcceptKey() {
        let hex = SHA1.digest(Array("abc".utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        guard case .upgrade(_, let response) = decide(upgradeRequest()) else { Issue.record("no upgrade"); return }
        // RFC 6455 §1.3's example key and its accept value.
        #expect(String(decoding: response, as: UTF8.self).contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
    }

    @Test func messagesArriveWholeWhateverTheChunks() {
        let message = Array(#"{"jsonrpc":"2.0","id":1,"method":"Snapback.1.register"}"#.utf8)
        let stream =
            clientFrame(0x1, Array(message[..<5]), fin: false) + clientFrame(0x9, [7]) + clientFrame(0x0, Array(message[5...]))
            + clientFrame(0x1, Array(repeating: 0x61, count: 300))
        for chunk in [1, 2, 7, stream.count] {
            var decoder = WebSocketDecoder(maxFrameSize: 4096, maxMessageSize: 8192)
            var events: [WebSocketDecoder.Event] = []
            var i = 0
            while i < stream.count {
                decoder.append(Array(stream[i..<min(stream.count, i + chunk)]))
                while let event = decoder.next() { events.append(event) }
                i += chunk
            }
            #expect(events == [.ping([7]), .text(message), .text(Array(repeating: 0x61, count: 300))], "chunks of \(chunk)")
        }
    }

    @Test func eachBreachHasItsCloseCode() {
        let cases: [([UInt8], WebSocketCloseCode)] = [
            ([0x81, 0x02, 0x7B, 0x7D], .protocolError),  // not masked
            (clientFrame(0x3, []), .protocolError),  // unknown opcode
            ([0xC1] + clientFrame(0x1, []).dropFirst(), .protocolError),  // RSV1
            (clientFrame(0x9, [], fin: false), .protocolError),
            (clientFrame(0x9, Array(repeating: 0, count: 126)), .protocolError),
            (clientFrame(0x0, [1]), .protocolError),
            (clientFrame(0x1, [1], fin: false) + clientFrame(0x1, [1]), .protocolError),
            (clientFrame(0x1, [0xC3, 0x28]), .invalidPayload),
            (clientFrame(0x8, [0x03, 0xED]), .protocolError),  // 1005 may not be sent
            (clientFrame(0x8, [0x03, 0xE8, 0xFF]), .invalidPayload),
            (clientFrame(0x8, [0x03]), .protocolError),
            (clientFrame(0x1, Array(repeating: 0x61, count: 5000)), .messageTooBig),
            ([0x81, 0xFE, 0x00, 0x10, 0, 0, 0, 0] + Array(repeating: 0, count: 16), .protocolError),  // 16 in two bytes
            ([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], .protocolError)
        ]
        for (stream, code) in cases {
            var decoder = WebSocketDecoder(maxFrameSize: 4096, maxMessageSize: 8192)
            decoder.append(stream)
            guard case .failure(let got, _) = decoder.next() else { Issue.record("no failure for \(stream.prefix(4))"); continue }
            #expect(got == code, "\(stream.prefix(4))")
            #expect(decoder.next() == nil)
        }
        // A message over the limit is refused at the fragment's header, before its payload arrives.
        var decoder = WebSocketDecoder(maxFrameSize: 4096, maxMessageSize: 8192)
        for _ in 0..<2 {
            decoder.append(clientFrame(0x1 - (decoder.isMidMessage ? 1 : 0), Array(repeating: 0x61, count: 4000), fin: false))
        }
        #expect(decoder.next() == nil)
        decoder.append(Array(clientFrame(0x0, Array(repeating: 0x61, count: 4000), fin: false).prefix(4)))
        guard case .failure(.messageTooBig, _) = decoder.next() else { Issue.record("no 1009"); return }
    }

    @Test func serverFramesAndCloseReasonsFit() {
        var out: [UInt8] = []
        WebSocketFrame.encode(.text, payload: Array(repeating: 0x61, count: 70000), into: &out)
        #expect(out.prefix(2) == [0x81, 127] && out.count == 70010)
        let payload = WebSocketFrame.closePayload(.policyViolation, reason: String(repeating: "é", count: 100))
        #expect(payload.count <= 125 && String(validating: payload.dropFirst(2), as: UTF8.self) != nil)
    }
}

@Suite struct HandshakeTests {
    @Test func refusalsByStatus() {
        #expect(status(decide(upgradeRequest())) == 101)
        #expect(status(decide(upgradeRequest(host: "localhost:9932"))) == 101)
        #expect(status(decide(upgradeRequest(host: "[::1]:9932"))) == 101)
        #expect(status(decide(upgradeRequest(host: "evil.example:9932"))) == 403)
        #expect(status(decide(upgradeRequest(host: "127.0.0.1:9933"))) == 403)
        #expect(status(decide(upgradeRequest(origin: nil))) == 403)
        #expect(status(decide(upgradeRequest(origin: "null"))) == 403)
        #expect(status(decide(upgradeRequest(origin: "http://127.0.0.1:8000/"))) == 403)
        // The other app's origin with this one's token.
        #expect(status(decide(upgradeRequest(origin: "http://localhost:8001"))) == 403)
        #expect(status(decide(upgradeRequest(target: "/jsonrpc?token=guide-token-012345678"))) == 403)
        #expect(status(decide(upgradeRequest(target: "/jsonrpc"))) == 403)
        #expect(
            status(
                decide(
                    upgradeRequest(
                        target: "/jsonrpc",
                        extra: "Sec-WebSocket-Protocol: snapback.v1.json, snapback.token.guide-token-0123456789\r\n"))) == 101)
        #expect(
            status(
                decide(
                    upgradeRequest(target: "/jsonrpc", extra: "Sec-WebSocket-Protocol: snapback.token.guide-token-0123456789\r\n")
                )) == 400)
        #expect(status(decide(upgradeRequest(extra: "Host: 127.0.0.1:9932\r\n"))) == 400)
        #expect(status(decide(upgradeRequest(extra: "Origin: http://127.0.0.1:8000\r\n"))) == 400)
        #expect(status(decide(upgradeRequest(extra: "Content-Length: 5\r\n"))) == 400)
        #expect(status(decide(upgradeRequest(target: "/other"))) == 404)
        #expect(status(decide(upgradeRequest().replacingOccurrences(of: "Version: 13", with: "Version: 8"))) == 426)
        #expect(status(decide(upgradeRequest().replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: "c2hvcnQ="))) == 400)
        #expect(status(decide(upgradeRequest().replacingOccurrences(of: "GET", with: "POST"))) == 405)
    }

    @Test func headParsing() {
        func parse(_ text: String) -> HTTPRequestHead.ParseResult {
            Array(text.utf8).withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: 8192) }
        }
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n") == .needMore)
        #expect(parse("GET / HTTP/1.0\r\n\r\n") == .invalid(status: 505, reason: "only HTTP/1.1 is served"))
        #expect(parse("GET / HTTP/1.1\nHost: a\n") == .invalid(status: 400, reason: "bare LF in the request head"))
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n") == .invalid(status: 400, reason: "obsolete line folding"))
        #expect(parse("GET / HTTP/1.1\r\nHo st: a\r\n\r\n") == .invalid(status: 400, reason: "malformed header name"))
        #expect(
            parse("GET / HTTP/1.1\r\nX: \u{e9}\r\n\r\n") == .invalid(status: 400, reason: "request head is not printable ASCII"))
        #expect(
            parse("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 9000))
                == .invalid(status: 431, reason: "request head longer than 8192 bytes"))
        guard case .complete(let head, let consumed) = parse("GET /jsonrpc?a=1&token=x%41y HTTP/1.1\r\nHOST:  h \r\n\r\nrest")
        else {
            Issue.record("not parsed")
            return
        }
        #expect(consumed == 52 && head.single("host").value == "h" && head.queryParameter("token") == Array("xAy".utf8))
        #expect(head.path == "/jsonrpc")
    }

    @Test func aHeadInPiecesIsReadOnceAndTheSame() {
        let text = Array(upgradeRequest().utf8)
        var scanned = 0
        var buffer: [UInt8] = []
        var result = HTTPRequestHead.ParseResult.needMore
        for byte in text {
            buffer.append(byte)
            result = buffer.withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: 8192, scanned: &scanned) }
            if case .complete = result { break }
            #expect(result == .needMore && scanned == buffer.count)
        }
        #expect(result == text.withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: 8192) })
        // A bad byte in a later piece is still found.
        scanned = 0
        var bad = Array("GET / HTTP/1.1\r\nHost: a".utf8)
        _ = bad.withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: 8192, scanned: &scanned) }
        bad += [0x0A]
        #expect(
            bad.withUnsafeBytes { HTTPRequestHead.parse($0, maxHeadBytes: 8192, scanned: &scanned) }
                == .invalid(status: 400, reason: "bare LF in the request head"))
    }
}

@Suite struct JSONRPCTests {
    @Test func envelopes() throws {
        let request = try JSONRPC.parseRequest(
            Array(
                #" {"jsonrpc":"2.0","id":"a\"b","method":"Snapback.1.x","params":{"k":[1,-2.5e3,true,null,"\ud83d\ude00"]}} "#
                    .utf8)
        ).get()
        #expect(request.id == Array(#""a\"b""#.utf8) && request.method == "Snapback.1.x")
        #expect(request.params == Array(#"{"k":[1,-2.5e3,true,null,"\ud83d\ude00"]}"#.utf8))
        for bad in [
            #"{"jsonrpc":"2.0","method":1}"#, #"{"jsonrpc":"2.0","id":{},"method":"m"}"#, #"{"id":1,"method":"m"}"#, "[]", "1"
        ] {
            guard case .failure(let f) = JSONRPC.parseRequest(Array(bad.utf8)) else { Issue.record("\(bad)"); continue }
            #expect(f.code == .invalidRequest, "\(bad)")
        }
        for bad in [
            "{", #"{"a":01}"#, #"{"a":"\ud800"}"#, #"{"a":"x"} x"#,
            String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "{\"a\":\"\u{1}\"}"
        ] {
            guard case .failure(let f) = JSONRPC.parseRequest(Array(bad.utf8)) else { Issue.record("\(bad)"); continue }
            #expect(f.code == .parseError, "\(bad)")
        }
        #expect(
            String(decoding: JSONRPC.error(id: nil, code: -32700, message: "a\"\n\u{1}"), as: UTF8.self)
                == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"a\"\n\u0001"}}"#)
        #expect(
            String(decoding: JSONRPC.notification(method: "player.push", params: Array("{}".utf8)), as: UTF8.self)
                == #"{"jsonrpc":"2.0","method":"player.push","params":{}}"#)
    }
}

@Suite struct BridgeConfigurationTests {
    func parse(_ text: String) throws(ConfigurationError) -> BridgeConfiguration {
        var c = BridgeConfiguration()
        try BridgeConfigurationFile.parse(text, file: "t.conf", into: &c)
        try BridgeConfigurationFile.validate(c, file: "t.conf")
        return c
    }

    @Test func appsAndLimits() throws {
        let c = try parse(
            "[bridge]\nport = 9998\n[limits]\nmessages-per-second = 10\nping-interval = 1min\n[app a]\norigin = http://127.0.0.1:1 https://x.example\ntoken = 0123456789abcdefXYZ\nprofiles = alice, bob\ngrants = sync\n"
        )
        #expect(c.port == 9998 && c.messagesPerSecond == 10 && c.pingIntervalMilliseconds == 60_000)
        #expect(
            c.apps == [
                WebApp(
                    name: "a", origins: ["http://127.0.0.1:1", "https://x.example"], token: Array("0123456789abcdefXYZ".utf8),
                    profiles: ["alice", "bob"], grants: [.sync])
            ])
        #expect(c.hostNames == ["127.0.0.1:9998", "localhost:9998", "[::1]:9998"])
    }

    @Test func refusals() {
        let cases: [(String, String)] = [
            ("[bridge]\nlisten = 0.0.0.0\n", "t.conf:2: listen: '0.0.0.0' is not a loopback address"),
            ("[app a]\norigin = null\n", "t.conf:2: origin: 'null'"),
            ("[app a]\norigin = http://a/b\n", "t.conf:2: origin: 'http://a/b' is not an origin"),
            ("[app a]\ntoken = short\n", "t.conf:2: token: a token is 16 to 256"),
            ("[app a]\ngrants = root\n", "t.conf:2: grants: unknown grant 'root'"),
            ("[app a]\norigin = http://a\n", "t.conf: [app a] has no token"),
            ("port = 1\n", "t.conf:1: port: before any [section] header"),
            ("[bridge]\nprot = 1\n", "t.conf:2: unknown key 'prot' (did you mean 'port'?)"),
            ("[bridge]\ntoken = 0123456789abcdef\n", "t.conf:2: 'token' belongs in [app], not [bridge]"),
            (
                "[limits]\nmax-connections = 3\n[app a]\nmax-connections = 2\n[bridge]\nmax-connections = 1\n",
                "t.conf:6: 'max-connections' belongs in [limits] or [app], not [bridge]"
            ),
            ("[app a b]\n", "t.conf:1: unknown section [app a b] (sections: [bridge] [limits] [app NAME])"),
            ("[app a/b]\n", "t.conf:1: [app a/b]: an app's name is up to 64 characters"),
            (
                "[app a]\norigin = http://a\ntoken = 0123456789abcdef\n[app b]\norigin = http://b\ntoken = 0123456789abcdef\n",
                "have the same token"
            )
        ]
        for (text, message) in cases {
            #expect(throws: ConfigurationError.self) { try parse(text) }
            do {
                _ = try parse(text)
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }

    @Test func messageRate() {
        var rate = MessageRate(perSecond: 10, burst: 3, now: 0)
        #expect((0..<4).map { _ in rate.admit(now: 0) } == [true, true, true, false])
        #expect(rate.admit(now: 100) && !rate.admit(now: 100))
    }
}

/// The fuzz target's path on the committed corpus and on seeded mutations of realistic streams.
@Suite struct WebFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/web-corpus")

    static var seeds: [[UInt8]] {
        let register = Array(#"{"jsonrpc":"2.0","id":1,"method":"Snapback.1.register","params":{"event":"push","id":"p"}}"#.utf8)
        let ws =
            clientFrame(0x1, register) + clientFrame(0x1, Array(register[..<9]), fin: false) + clientFrame(0xA, [])
            + clientFrame(0x0, Array(register[9...])) + clientFrame(0x8, [0x03, 0xE8])
        return [
            [3] + Array(upgradeRequest().utf8) + ws,
            [0]
                + Array(
                    upgradeRequest(
                        target: "/jsonrpc",
                        extra: "Sec-WebSocket-Protocol: snapback.v1.json, snapback.token.guide-token-0123456789\r\n"
                    ).utf8) + ws,
            [255] + Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1:9932\r\nOrigin: http://127.0.0.1:8000\r\n\r\n".utf8),
            [1] + Array(upgradeRequest(origin: "null").utf8) + clientFrame(0x1, Array(repeating: 0x61, count: 5000)),
            [7] + Array(upgradeRequest().utf8) + clientFrame(0x1, [0xC3, 0x28])
        ]
    }

    @Test func corpusAndSeedsRun() throws {
        var inputs = Self.seeds
        if let names = try? FileManager.default.contentsOfDirectory(atPath: Self.corpus.path) {
            for name in names.sorted() { inputs.append(Array(try Data(contentsOf: Self.corpus.appendingPathComponent(name)))) }
        }
        #expect(inputs.count > Self.seeds.count, "the committed corpus is replayed")
        for input in inputs { input.withUnsafeBytes { WebFuzzReplay.run($0) } }
    }

    @Test func seededMutations() {
        var generator = SplitMix64(seed: 38)
        for seed in Self.seeds {
            for _ in 0..<400 {
                var input = seed
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    let i = Int.random(in: 0..<input.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: input[i] = UInt8.random(in: 0...255, using: &generator)
                    case 1: input.remove(at: i)
                    default: input.insert(UInt8.random(in: 0...255, using: &generator), at: i)
                    }
                    if input.isEmpty { input = [0] }
                }
                input.withUnsafeBytes { WebFuzzReplay.run($0) }
            }
        }
    }
}
