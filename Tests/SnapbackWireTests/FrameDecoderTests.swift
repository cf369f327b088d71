// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import SnapbackWire
import Testing

/// A decoder event with the body copied out, so events can be compared after the fact.
enum Decoded: Hashable, CustomStringConvertible {
    case frame(Frame)
    case oversized(FrameHeader)
    case protocolError(FrameProtocolError)

    init(_ event: FrameDecoder.Event) {
        switch event {
        case .frame(let header, let body): self = .frame(Frame(header: header, body: body))
        case .oversized(let header): self = .oversized(header)
        case .protocolError(let error): self = .protocolError(error)
        }
    }

    var description: String {
        switch self {
        case .frame(let frame): "frame(\(frame.header), \(frame.body.count) bytes)"
        case .oversized(let header): "oversized(\(header))"
        case .protocolError(let error): "protocolError(\(error))"
        }
    }
}

extension FrameDecoder {
    /// Feeds `chunks` one after another through ``feed(_:_:)``, collecting the events.
    mutating func decode(chunks: [[UInt8]]) -> [Decoded] {
        var events: [Decoded] = []
        for chunk in chunks {
            feed(chunk) { events.append(Decoded($0)) }
        }
        return events
    }

    /// Feeds `chunks` through the zero-copy path (writable tail, commit, next), the way the daemon's
    /// read callback and the blocking client do.
    mutating func decodeInPlace(chunks: [[UInt8]], minimumTail: Int = 1) -> [Decoded] {
        var events: [Decoded] = []
        for chunk in chunks {
            var offset = 0
            repeat {
                let tail = writableTail(minimumCount: minimumTail)
                let count = min(tail.count, chunk.count - offset)
                chunk[offset..<offset + count].withUnsafeBytes { tail.copyMemory(from: $0) }
                commit(count)
                offset += count
                while let event = next() {
                    events.append(Decoded(event))
                }
            } while offset < chunk.count
        }
        return events
    }
}

/// What goes on the wire in a test, and what the decoder must make of it.
struct Script {
    var bytes: [UInt8] = []
    var expected: [Decoded] = []

    mutating func request(callId: UInt32, method: UInt16 = 0x0001, body: [UInt8]) {
        let frame = Frame(header: .request(callId: callId, method: method), body: body)
        bytes += frame.encoded
        expected.append(.frame(frame))
    }

    mutating func oversized(callId: UInt32, bodyCount: Int, fill: UInt8 = 0xAB) {
        let header = FrameHeader.request(callId: callId, method: 0x0102, length: UInt32(bodyCount))
        bytes += header.encoded + [UInt8](repeating: fill, count: bodyCount)
        expected.append(.oversized(header))
    }

    func chunked(_ sizes: [Int]) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var offset = 0
        for size in sizes where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            chunks.append(Array(bytes[offset..<end]))
            offset = end
        }
        if offset < bytes.count { chunks.append(Array(bytes[offset...])) }
        return chunks
    }
}

@Suite struct FrameDecoderTests {
    static let maxFrameSize = 64

    static func sampleScript() -> Script {
        var script = Script()
        script.request(callId: 1, body: [])
        script.request(callId: 2, body: [7])
        script.request(callId: 3, method: 0xFFFF, body: Array(0..<64))
        script.oversized(callId: 4, bodyCount: 65)
        script.request(callId: 5, body: Array(repeating: 0x55, count: 30))
        script.oversized(callId: 6, bodyCount: 1000)
        script.oversized(callId: 7, bodyCount: 200, fill: 0)
        script.request(callId: 8, body: [1, 2, 3, 4])
        return script
    }

    @Test func bytesOneAtATime() {
        let script = Self.sampleScript()
        var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        let events = decoder.decode(chunks: script.bytes.map { [$0] })
        #expect(events == script.expected)
        #expect(decoder.bufferedCount == 0)
    }

    @Test func bytesOneAtATimeInPlace() {
        let script = Self.sampleScript()
        var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        #expect(decoder.decodeInPlace(chunks: script.bytes.map { [$0] }) == script.expected)
    }

    @Test func manyFramesInOneBuffer() {
        let script = Self.sampleScript()
        var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        #expect(decoder.decode(chunks: [script.bytes]) == script.expected)
        var inPlace = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        #expect(inPlace.decodeInPlace(chunks: [script.bytes]) == script.expected)
    }

    @Test func splitAtEveryOffset() {
        let script = Self.sampleScript()
        for split in 0...script.bytes.count {
            let chunks = [Array(script.bytes[..<split]), Array(script.bytes[split...])]
            var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
            #expect(decoder.decode(chunks: chunks) == script.expected, "split at \(split)")
            var inPlace = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
            #expect(inPlace.decodeInPlace(chunks: chunks) == script.expected, "split at \(split), in place")
        }
    }

    @Test func oversizedIsReportedFromTheHeaderAloneAndItsBodyIsNeverBuffered() {
        let header = FrameHeader.request(callId: 9, method: 3, length: 10_000_000)
        var decoder = FrameDecoder(side: .server, maxFrameSize: 1024, initialCapacity: 256)
        var events: [Decoded] = []
        for byte in header.encoded {
            decoder.feed([byte]) { events.append(Decoded($0)) }
        }
        // Reported as soon as the 12th header byte arrived, before any body byte.
        #expect(events == [.oversized(header)])
        #expect(decoder.bytesToSkip == 10_000_000)

        let chunk = [UInt8](repeating: 0xCC, count: 100_000)
        for _ in 0..<100 {
            decoder.feed(chunk) { events.append(Decoded($0)) }
            #expect(decoder.bufferedCount == 0)
        }
        #expect(decoder.bytesToSkip == 0)
        #expect(decoder.bufferCapacity <= 256)

        let next = Frame(header: .request(callId: 10, method: 4), body: [9, 8, 7])
        decoder.feed(next.encoded) { events.append(Decoded($0)) }
        #expect(events == [.oversized(header), .frame(next)])
    }

    @Test func oversizedInPlaceDiscardsBodyInTheSameReadAndTheNextFrameIsIntact() {
        var script = Script()
        script.oversized(callId: 1, bodyCount: 5000)
        script.request(callId: 2, body: [1, 2, 3])
        var decoder = FrameDecoder(side: .server, maxFrameSize: 1024, initialCapacity: 256)
        // Reads of at most the buffer's free tail, like a socket read.
        var events: [Decoded] = []
        var offset = 0
        var largestCapacity = 0
        while offset < script.bytes.count {
            let tail = decoder.writableTail()
            let count = min(tail.count, script.bytes.count - offset)
            script.bytes[offset..<offset + count].withUnsafeBytes { tail.copyMemory(from: $0) }
            decoder.commit(count)
            offset += count
            largestCapacity = max(largestCapacity, decoder.bufferCapacity)
            while let event = decoder.next() {
                events.append(Decoded(event))
            }
        }
        #expect(events == script.expected)
        #expect(largestCapacity == 256)
    }

    @Test func lengthEqualToTheMaximumIsAccepted() {
        var script = Script()
        script.request(callId: 1, body: Array(repeating: 1, count: 64))
        var decoder = FrameDecoder(side: .server, maxFrameSize: 64)
        #expect(decoder.decode(chunks: [script.bytes]) == script.expected)
    }

    @Test func zeroMaximumAcceptsOnlyEmptyBodies() {
        var script = Script()
        script.request(callId: 1, body: [])
        script.oversized(callId: 2, bodyCount: 1)
        script.request(callId: 3, body: [])
        var decoder = FrameDecoder(side: .server, maxFrameSize: 0)
        #expect(decoder.decode(chunks: script.chunked([5, 5, 5, 5, 5])) == script.expected)
    }

    static let garbageHeaders: [(header: [UInt8], error: FrameProtocolError)] = [
        (FrameHeader.response(callId: 1, method: 0).encoded, .unexpectedType(.response)),
        (FrameHeader.push(callId: 1, method: 0).encoded, .unexpectedType(.push)),
        ([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], .unknownType(0)),
        ([0, 0, 0, 0, 0, 0, 0, 1, 9, 0, 0, 0], .unknownType(9)),
        (FrameHeader(callId: 1, type: .request, status: 2, method: 0).encoded, .nonzeroStatus(2)),
        (FrameHeader.request(callId: 0, method: 0).encoded, .zeroCallId),
        (Array("GET / HTTP/1.1\r\n".utf8.prefix(12)), .unknownType(UInt8(ascii: "T")))  // byte 8
    ]

    @Test(arguments: 0..<garbageHeaders.count)
    func garbageHeaderFailsTheServerDecoder(_ index: Int) {
        let (garbage, error) = Self.garbageHeaders[index]
        var script = Script()
        script.request(callId: 1, body: [1])
        let good = script.bytes
        var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        // The frame before the garbage is delivered; nothing after it is.
        let events = decoder.decode(chunks: [good + Array(garbage.prefix(5)), Array(garbage.dropFirst(5)) + good, good])
        #expect(events == script.expected + [.protocolError(error)])
        #expect(decoder.protocolError == error)
        #expect(decoder.bufferedCount == 0)
    }

    @Test func garbageHeaderFailsTheInPlaceDecoderToo() {
        var decoder = FrameDecoder(side: .server, maxFrameSize: Self.maxFrameSize)
        let garbage = FrameHeader.request(callId: 0, method: 0).encoded
        #expect(decoder.decodeInPlace(chunks: [garbage]) == [.protocolError(.zeroCallId)])
        var script = Script()
        script.request(callId: 1, body: [1])
        #expect(decoder.decodeInPlace(chunks: [script.bytes]) == [])
    }

    @Test func clientSideAcceptsResponsesAndPushesAndRejectsRequests() {
        let response = Frame(header: .response(callId: 3, method: 0x0101, status: 5), body: [1, 2])
        let push = Frame(header: .push(callId: 3, method: 0x0201), body: [3])
        let request = Frame(header: .request(callId: 4, method: 0), body: [])
        var decoder = FrameDecoder(side: .client, maxFrameSize: Self.maxFrameSize)
        let events = decoder.decode(chunks: [response.encoded + push.encoded + request.encoded + push.encoded])
        #expect(events == [.frame(response), .frame(push), .protocolError(.unexpectedType(.request))])
    }

    @Test func writableTailMakesRoomForAPendingLargeFrameAndShrinksAfterwards() {
        var decoder = FrameDecoder(side: .server, maxFrameSize: 1 << 20, initialCapacity: 1024)
        let frame = Frame(header: .request(callId: 1, method: 2), body: Array(repeating: 0x42, count: 300_000))
        let bytes = frame.encoded
        // First read: the header and a little of the body.
        var tail = decoder.writableTail(minimumCount: 100)
        #expect(tail.count == 1024)
        bytes[0..<100].withUnsafeBytes { tail.copyMemory(from: $0) }
        decoder.commit(100)
        #expect(decoder.next() == nil)
        // The next tail has room for the rest of the body, so one read can finish the frame.
        tail = decoder.writableTail()
        #expect(tail.count >= 300_000 - 88)
        bytes[100...].withUnsafeBytes { tail.copyMemory(from: $0) }
        decoder.commit(bytes.count - 100)
        guard case .frame(let header, let body)? = decoder.next() else {
            Issue.record("expected a frame")
            return
        }
        #expect(header == frame.header)
        #expect(Array(body) == frame.body)
        // Once the large frame is consumed the buffer goes back to its initial size.
        tail = decoder.writableTail()
        #expect(decoder.bufferCapacity == 1024)
    }

    @Test func bodiesStayValidAcrossNextCalls() {
        var script = Script()
        script.request(callId: 1, body: [1, 1, 1])
        script.request(callId: 2, body: [2, 2])
        var decoder = FrameDecoder(side: .server)
        let tail = decoder.writableTail(minimumCount: script.bytes.count)
        script.bytes.withUnsafeBytes { tail.copyMemory(from: $0) }
        decoder.commit(script.bytes.count)
        guard case .frame(_, let first)? = decoder.next(), case .frame(_, let second)? = decoder.next() else {
            Issue.record("expected two frames")
            return
        }
        #expect(Array(first) == [1, 1, 1])
        #expect(Array(second) == [2, 2])
    }

    /// ByteToMessageDecoderVerifier in spirit: random streams of valid and oversized frames, cut into
    /// random chunks, must always decode to the same events through both input paths.
    @Test(arguments: 0..<200 as Range<UInt64>)
    func randomChunkingsDecodeTheSame(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var script = Script()
        let maxFrameSize = Int.random(in: 0...300, using: &rng)
        for callId in 1...UInt32.random(in: 1...30, using: &rng) {
            let count = Int.random(in: 0...(maxFrameSize + 50), using: &rng)
            if count > maxFrameSize {
                script.oversized(callId: callId, bodyCount: count, fill: UInt8(truncatingIfNeeded: callId))
            } else {
                let body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
                script.request(callId: callId, method: UInt16.random(in: 0...0xFFFF, using: &rng), body: body)
            }
        }
        var sizes: [Int] = []
        var total = 0
        while total < script.bytes.count {
            // Mostly small chunks, sometimes large ones, sometimes empty ones.
            let size =
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: 0
                case 1: Int.random(in: 100...2000, using: &rng)
                default: Int.random(in: 1...20, using: &rng)
                }
            sizes.append(size)
            total += size
        }
        let chunks = script.chunked(sizes)

        var copying = FrameDecoder(side: .server, maxFrameSize: maxFrameSize, initialCapacity: 16)
        #expect(copying.decode(chunks: chunks) == script.expected, "seed \(seed), copying")
        #expect(copying.bufferedCount == 0)

        var inPlace = FrameDecoder(side: .server, maxFrameSize: maxFrameSize, initialCapacity: 16)
        let minimumTail = Int.random(in: 1...64, using: &rng)
        #expect(inPlace.decodeInPlace(chunks: chunks, minimumTail: minimumTail) == script.expected, "seed \(seed), in place")
        #expect(inPlace.bufferedCount == 0)
    }
}
