// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackTimeline
import SnapbackWire
import Testing

/// Large requests are decoded off the service's thread (``RequestDecoding``): in process, a
/// ``ManualRequestDecoder`` decodes when the test says, so each moment the daemon's worker thread could
/// finish at is played: the requests behind a large one wait and are then answered in order, a player gone
/// meanwhile gets nothing and keeps nothing, a shutdown answers what was being decoded.
@Suite struct OffLoopDecodeTests {
    /// An on-demand program with `count` breaks, 700 s apart: 70 bytes a break on the wire.
    static func bigOpen(_ count: Int, contentId: String = "big", kind: SessionKind = .onDemand) -> OpenSessionRequest {
        var open = Streams.seed(contentId: contentId, breaks: breaks(count))
        open.kind = kind
        open.contentDuration = kind == .live ? 0 : Double(count + 1) * 700
        return open
    }

    static func breaks(_ count: Int, from first: Int = 0) -> [AdBreak] {
        (first..<first + count).map {
            AdBreak(id: "break-\($0)", start: 600 + Double($0) * 700, duration: 60, adDurations: [15, 15, 15, 15])
        }
    }

    final class Harness {
        let daemon = EmbeddedDaemon()
        let decoder = ManualRequestDecoder()
        let peer: EmbeddedPeer
        private var callId: UInt32 = 1

        init() {
            daemon.service.requestDecoder = decoder
            peer = daemon.connect()
            peer.receive(
                .request(callId: 1, method: WireMethod.hello.rawValue),
                body: WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "t")).encoded()
            )
            _ = peer.takeSent()
        }

        /// The frame of `request` with the next call id, and that id.
        func frame(_ request: WireRequest) -> (bytes: [UInt8], callId: UInt32) {
            callId += 1
            let body = request.encoded()
            var header = FrameHeader.request(callId: callId, method: request.method.rawValue)
            header.length = UInt32(body.count)
            var bytes = [UInt8](repeating: 0, count: FrameHeader.size)
            bytes.withUnsafeMutableBytes { header.encode(to: $0.baseAddress!) }
            return (bytes + body, callId)
        }

        /// The call ids of the responses sent so far, in order, with their status.
        func responses() -> [(callId: UInt32, status: UInt8)] {
            peer.takeSent().filter { $0.header.type == .response }.map { ($0.header.callId, $0.header.status) }
        }

        func sessions() throws -> UInt32 {
            let (bytes, id) = frame(.getStatus)
            peer.receive(bytes)
            let reply = try #require(peer.takeSent().last { $0.header.callId == id })
            return try SnapbackV1.StatusReply.decode(reply.body).sessions
        }
    }

    /// Requests pipelined behind a large OpenSession, in the same bytes, wait for it; then all are answered
    /// in the order sent.
    @Test func requestsBehindALargeOneWaitAndAreAnsweredInOrder() throws {
        let h = Harness()
        let open = h.frame(.openSession(Self.bigOpen(1000)))
        #expect(open.bytes.count >= 16 * 1024)
        let status = h.frame(.getStatus)
        let small = h.frame(.openSession(Streams.seed(contentId: "small")))
        h.peer.receive(open.bytes + status.bytes + small.bytes)
        #expect(h.decoder.pending == 1)
        #expect(h.peer.requestsHeld)
        #expect(h.responses().isEmpty)
        // More arrives while the large one is decoded: it waits too.
        let later = h.frame(.getStatus)
        h.peer.receive(later.bytes)
        #expect(h.responses().isEmpty)

        h.decoder.runAll()
        let answered = h.responses()
        #expect(answered.map(\.callId) == [open.callId, status.callId, small.callId, later.callId])
        #expect(answered.allSatisfy { $0.status == StatusCode.ok.rawValue })
        #expect(!h.peer.requestsHeld)
        #expect(try h.sessions() == 2)
        // Only the large request went to the decoder; the small ones were decoded in place.
        #expect(h.decoder.taken == 1)
    }

    /// Two large requests in a row: the second is handed over only once the first is answered.
    @Test func largeRequestsInARowAreDecodedOneAfterTheOther() throws {
        let h = Harness()
        let first = h.frame(.openSession(Self.bigOpen(500, contentId: "a")))
        let second = h.frame(.openSession(Self.bigOpen(500, contentId: "b")))
        h.peer.receive(first.bytes + second.bytes)
        #expect(h.decoder.pending == 1)
        h.decoder.runNext()
        #expect(h.responses().map(\.callId) == [first.callId])
        #expect(h.decoder.pending == 1)
        h.decoder.runNext()
        #expect(h.responses().map(\.callId) == [second.callId])
        #expect(try h.sessions() == 2)
    }

    /// An UpdateBreaks decoded off the thread takes effect before the requests sent after it: a BreakAt of a
    /// new break finds it.
    @Test func anUpdateTakesEffectBeforeTheRequestsBehindIt() throws {
        let h = Harness()
        let opened = h.frame(.openSession(Self.bigOpen(10, kind: .live)))
        h.peer.receive(opened.bytes)
        let openReply = try #require(h.peer.takeSent().first { $0.header.callId == opened.callId })
        let session = try SnapbackV1.OpenSessionReply.decode(openReply.body).sessionId
        let update = h.frame(.event(sessionId: session, .breaksUpdated(Self.breaks(900))))
        let lastStart = 600 + 899.0 * 700
        let query = h.frame(.breakAt(sessionId: session, streamTime: lastStart + 1))
        h.peer.receive(update.bytes + query.bytes)
        #expect(h.decoder.pending == 1)
        h.decoder.runAll()
        let frames = h.peer.takeSent().filter { $0.header.type == .response }
        #expect(frames.map(\.header.callId) == [update.callId, query.callId])
        #expect(frames.allSatisfy { $0.header.status == StatusCode.ok.rawValue })
        let at = try SnapbackV1.BreakAtReply.decode(frames[1].body)
        #expect(at.previous?.id == "break-899")
    }

    /// A malformed large body is refused once decoded, with the same status as in place, and the requests
    /// behind it go on.
    @Test func aMalformedLargeRequestIsRefusedAndTheNextAnswered() throws {
        let h = Harness()
        var open = h.frame(.openSession(Self.bigOpen(1000)))
        // The last break's last ad duration cut off: a packed field runs past the body.
        let cut = 3
        open.bytes.removeLast(cut)
        open.bytes.withUnsafeMutableBytes { raw in
            var header = FrameHeader.request(callId: open.callId, method: WireMethod.openSession.rawValue)
            header.length = UInt32(raw.count - FrameHeader.size)
            header.encode(to: raw.baseAddress!)
        }
        let status = h.frame(.getStatus)
        h.peer.receive(open.bytes + status.bytes)
        #expect(h.decoder.pending == 1)
        h.decoder.runAll()
        let answered = h.responses()
        #expect(answered.map(\.callId) == [open.callId, status.callId])
        #expect(answered.first?.status == StatusCode.invalidArgument.rawValue)
        #expect(answered.last?.status == StatusCode.ok.rawValue)
        #expect(try h.sessions() == 0)
    }

    /// A player gone while its request is decoded: nothing is answered, no session is left open, and the
    /// others are served.
    @Test func aPlayerGoneWhileDecodingKeepsNothing() throws {
        let h = Harness()
        let other = h.daemon.connect()
        other.receive(
            .request(callId: 1, method: WireMethod.hello.rawValue),
            body: WireRequest.hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "o")).encoded())
        h.peer.receive(h.frame(.openSession(Self.bigOpen(1000))).bytes)
        h.peer.disconnect()
        h.decoder.runAll()
        #expect(h.peer.takeSent().isEmpty)
        other.receive(.request(callId: 2, method: WireMethod.getStatus.rawValue), body: [])
        let reply = try #require(other.takeSent().last)
        let status = try SnapbackV1.StatusReply.decode(reply.body)
        #expect(status.sessions == 0)
        #expect(status.connections == 1)
    }

    /// Shutdown while a request is decoded: it is answered first, and its session closed with the others.
    @Test func shutdownAnswersWhatWasBeingDecoded() throws {
        let h = Harness()
        let open = h.frame(.openSession(Self.bigOpen(1000)))
        h.peer.receive(open.bytes)
        h.daemon.service.shutdown()
        #expect(h.decoder.isClosed)
        let frames = h.peer.takeSent()
        #expect(frames.first { $0.header.type == .response }?.header.callId == open.callId)
        #expect(frames.first { $0.header.type == .response }?.header.status == StatusCode.ok.rawValue)
        // The session it opened was closed for the shutdown: its SessionError push says so.
        #expect(frames.contains { $0.header.type == .push })
        // Closed, the decoder takes no more: a large request now is decoded in place.
        let late = h.frame(.openSession(Self.bigOpen(1000, contentId: "late")))
        h.peer.receive(late.bytes)
        #expect(h.decoder.taken == 1)
        #expect(h.responses().map(\.callId) == [late.callId])
    }
}
