// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// How one misbehaving client is cut off without the others noticing. Tests tagged `.needsHello`
/// rely on the RPC service answering Control/Hello (method 0x0000) with a RESPONSE frame.
@Suite struct DaemonConnectionTests {
    @Test func garbageHeaderDisconnectsThatClientOnly() throws {
        let daemon = try DaemonHarness()
        let bystander = try daemon.connect()
        let offender = try daemon.connect()
        try offender.sendRaw(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(offender.waitForClose(timeout: .seconds(2)))
        #expect(daemon.waitForLog(containing: "protocol error"))
        #expect(!bystander.waitForClose(timeout: .milliseconds(200)))
        #expect(daemon.stderrLines.filter { $0.contains("protocol error") }.count == 1)
        #expect(daemon.stderrLines.contains { $0.hasPrefix("<4>") && $0.contains("protocol error: unknown frame type") })
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(arguments: [
        FrameHeader.request(callId: 0, method: 0).encoded,
        FrameHeader(callId: 1, type: .request, status: 2, method: 0).encoded,
        FrameHeader.response(callId: 1, method: 0).encoded,
        FrameHeader.push(callId: 1, method: 0).encoded
    ])
    func invalidRequestHeadersDisconnect(_ header: [UInt8]) throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        try client.sendRaw(header)
        #expect(client.waitForClose(timeout: .seconds(2)))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func clientDisconnectingMidFrameDoesNotDisturbOthers() throws {
        let daemon = try DaemonHarness()
        let bystander = try daemon.connect()
        do {
            let leaver = try daemon.connect()
            let frame = Frame(header: .request(callId: 7, method: 0x0101), body: Array(repeating: 1, count: 300))
            try leaver.sendRaw(Array(frame.encoded.prefix(100)))
            leaver.close()
        }
        #expect(daemon.waitForLog(containing: "closed: peer closed the connection"))
        #expect(!bystander.waitForClose(timeout: .milliseconds(200)))
        #expect(daemon.isRunning)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    // MARK: With the RPC service

    @Test(.tags(.needsHello)) func helloIsAnswered() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        let response = try client.hello(callId: 41)
        #expect(response.header.type == .response)
        #expect(response.header.callId == 41)
        #expect(response.header.method == TestFrames.helloMethod)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func pipelinedRequestsAreAnsweredInOrder() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        // 500 requests in one write: the daemon parses them from one read buffer and answers in batches.
        try client.sendRaw((1...500).flatMap { TestFrames.hello(callId: UInt32($0)).encoded })
        var callIds: [UInt32] = []
        while callIds.count < 500 {
            let frame = try client.readFrame()
            if frame.header.type == .response { callIds.append(frame.header.callId) }
        }
        #expect(callIds == Array(1...500))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func requestsSplitIntoSingleBytesAreAnswered() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        let bytes = TestFrames.hello(callId: 5).encoded + TestFrames.hello(callId: 6).encoded
        for byte in bytes {
            try client.sendRaw([byte])
            usleep(200)
        }
        var callIds: [UInt32] = []
        while callIds.count < 2 {
            let frame = try client.readFrame()
            if frame.header.type == .response { callIds.append(frame.header.callId) }
        }
        #expect(callIds == [5, 6])
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func garbageHeaderDoesNotStopOthersBeingAnswered() throws {
        let daemon = try DaemonHarness()
        let bystander = try daemon.connect()
        #expect(try bystander.hello(callId: 1).header.callId == 1)
        let offender = try daemon.connect()
        try offender.sendRaw(FrameHeader.request(callId: 0, method: 0).encoded)
        #expect(offender.waitForClose(timeout: .seconds(2)))
        #expect(try bystander.hello(callId: 2).header.callId == 2)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func clientDisconnectingMidFrameLeavesOthersAnswered() throws {
        let daemon = try DaemonHarness()
        let bystander = try daemon.connect()
        let leaver = try daemon.connect()
        try leaver.sendRaw(Array(TestFrames.hello(callId: 3).encoded.prefix(5)))
        leaver.close()
        #expect(try bystander.hello(callId: 9).header.callId == 9)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func oversizedRequestIsAnsweredResourceExhaustedAndTheConnectionGoesOn() throws {
        let daemon = try DaemonHarness(arguments: ["--max-frame-size", "1024"])
        let client = try daemon.connect()
        let header = FrameHeader.request(callId: 77, method: TestFrames.helloMethod, length: 200_000)
        // The body follows in pieces; none of it may be taken for a header.
        try client.sendRaw(header.encoded)
        for _ in 0..<20 {
            try client.sendRaw([UInt8](repeating: 0x01, count: 10_000))
        }
        let answer = try client.readFrame()
        #expect(answer.header.type == .response)
        #expect(answer.header.callId == 77)
        #expect(answer.header.status == TestFrames.resourceExhausted)
        #expect(try client.hello(callId: 78).header.status != TestFrames.resourceExhausted)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// An OpenSession over max-breaks-per-session is refused for its count, taken over its bytes before
    /// anything is unpacked: here bytes that would not parse follow the breaks, and the answer is still
    /// the count's RESOURCE_EXHAUSTED, not INVALID_ARGUMENT; the connection goes on.
    @Test(.tags(.needsHello)) func breaksOverTheSessionLimitAreRefusedForTheirCountBeforeTheyAreUnpacked() throws {
        let daemon = try DaemonHarness(arguments: ["--max-frame-size", "1048576"])
        let client = try daemon.connect()
        #expect(try client.hello(callId: 1).header.status == 0)
        let breaks = (0..<1001).map { AdBreak(id: "b\($0)", start: Double($0) * 100, duration: 30) }
        // A stream_id announced 5 bytes long with 1 byte left: protobuf-c refuses the whole body.
        let body = OpenSessionRequest(streamId: "", contentId: "c", breaks: breaks).encoded() + [0x0A, 0x05, 0x61]
        let header = FrameHeader.request(callId: 2, method: WireMethod.openSession.rawValue, length: UInt32(body.count))
        try client.sendRaw(header.encoded + body)
        let answer = try client.readFrame()
        #expect(answer.header.callId == 2)
        #expect(answer.header.status == TestFrames.resourceExhausted)
        #expect(try WireStatus.decode(answer.body).message.contains("1001 breaks, more than the 1000 allowed"))
        #expect(try client.hello(callId: 3).header.status != TestFrames.resourceExhausted)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// An OpenSession and an UpdateBreaks of max-breaks-per-session breaks as players send them are read
    /// straight from their bytes; the same requests with a field this version does not know, which the
    /// clean reader leaves to protobuf-c (which skips it), are read by protobuf-c. Both lay out the same
    /// timeline, ids with non-ASCII letters and resume offsets included.
    @Test(.tags(.needsHello)) func aThousandBreaksMakeOneTimelineReadCleanOrByProtobufC() throws {
        let daemon = try DaemonHarness(arguments: ["--max-frame-size", "1048576"])
        let client = try daemon.connect()
        #expect(try client.hello(callId: 1).header.status == 0)
        var callId: UInt32 = 1
        func call(_ method: WireMethod, _ body: [UInt8]) throws -> Frame {
            callId += 1
            try client.send(.request(callId: callId, method: method.rawValue), body: body)
            while true {
                let frame = try client.readFrame(timeout: .seconds(30))
                if frame.header.type == .response && frame.header.callId == callId { return frame }
            }
        }
        func breaksHeld(by session: UInt64) throws -> [AdBreak] {
            let state = try call(.getSessionState, WireRequest.getSessionState(sessionId: session, maxBreaks: 1000).encoded())
            #expect(state.header.status == 0)
            return try SessionStateReply.decode(state.body).breaks
        }
        let breaks: [AdBreak] = (0..<1000).map { (i: Int) -> AdBreak in
            let id = i % 2 == 0 ? "b\(i)" : "pause-é-\(i)"
            let offset: Double? = i % 3 == 0 ? 10 : nil
            return AdBreak(
                id: id, start: 600 + Double(i) * 700, duration: 60, adDurations: [15, 15, 15, 15],
                contentResumeOffset: offset)
        }
        // Field 99, a varint of 1: unknown to this version.
        let unknownField: [UInt8] = [0x98, 0x06, 0x01]
        let open = OpenSessionRequest(streamId: "s", contentId: "c", breaks: breaks).encoded()
        for body in [open, open + unknownField] {
            let opened = try call(.openSession, body)
            #expect(opened.header.status == 0)
            #expect(try breaksHeld(by: SnapbackV1.OpenSessionReply.decode(opened.body).sessionId) == breaks)
        }
        let live = OpenSessionRequest(streamId: "l", contentId: "l", kind: .live).encoded()
        for extra in [[], unknownField] {
            let session = try SnapbackV1.OpenSessionReply.decode(try call(.openSession, live).body).sessionId
            let update = WireRequest.event(sessionId: session, .breaksUpdated(breaks)).encoded() + extra
            #expect(try call(.updateBreaks, update).header.status == 0)
            // A live break without an offset replaces as much content as it lasts.
            let replacing = breaks.map { b in
                var b = b
                b.contentResumeOffset = b.contentResumeOffset ?? b.duration
                return b
            }
            #expect(try breaksHeld(by: session) == replacing)
        }
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// Large requests are decoded on a worker thread; the requests a player pipelines behind one wait for
    /// it and are handled in the order sent (an UpdateBreaks takes effect before the BreakAt behind it), a
    /// player that goes away while its request is decoded leaves no session, and the others are served.
    @Test(.tags(.needsHello)) func requestsPipelinedBehindLargeOnesAreHandledInOrder() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        #expect(try client.hello(callId: 1).header.status == 0)
        let breaks = (0..<1000).map {
            AdBreak(id: "break-\($0)", start: 600 + Double($0) * 700, duration: 60, adDurations: [15, 15, 15, 15])
        }
        func frame(_ callId: UInt32, _ request: WireRequest) -> [UInt8] {
            Frame(header: .request(callId: callId, method: request.method.rawValue), body: request.encoded()).encoded
        }
        func responses(_ count: Int) throws -> [Frame] {
            var frames: [Frame] = []
            while frames.count < count {
                let frame = try client.readFrame(timeout: .seconds(30))
                if frame.header.type == .response { frames.append(frame) }
            }
            return frames
        }
        let live = OpenSessionRequest(streamId: "l", contentId: "", kind: .live)
        try client.sendRaw(
            frame(2, .openSession(OpenSessionRequest(streamId: "s", contentId: "c", breaks: breaks)))
                + frame(3, .getStatus) + frame(4, .openSession(live)))
        let opened = try responses(3)
        #expect(opened.map(\.header.callId) == [2, 3, 4])
        #expect(opened.allSatisfy { $0.header.status == 0 })
        #expect(try SnapbackV1.StatusReply.decode(opened[1].body).sessions == 1)
        let session = try SnapbackV1.OpenSessionReply.decode(opened[2].body).sessionId
        try client.sendRaw(
            frame(5, .event(sessionId: session, .breaksUpdated(breaks)))
                + frame(6, .breakAt(sessionId: session, streamTime: 600 + 999 * 700 + 1)))
        let updated = try responses(2)
        #expect(updated.map(\.header.callId) == [5, 6])
        #expect(try SnapbackV1.BreakAtReply.decode(updated[1].body).previous?.id == "break-999")

        // Gone before its request is answered: repeated, so that some go while it is being decoded.
        for i in 0..<20 {
            let leaver = try daemon.connect()
            #expect(try leaver.hello(callId: 1).header.status == 0)
            try leaver.sendRaw(frame(2, .openSession(OpenSessionRequest(streamId: "x\(i)", contentId: "x", breaks: breaks))))
            leaver.close()
        }
        try client.sendRaw(frame(7, .closeSession(sessionId: session)))
        #expect(try responses(1).first?.header.status == 0)
        var sessions: UInt32 = .max
        for attempt in 0..<100 {
            try client.sendRaw(frame(8 + UInt32(attempt), .getStatus))
            sessions = try SnapbackV1.StatusReply.decode(responses(1)[0].body).sessions
            if sessions == 1 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // The on-demand session of call 2 is the one left open.
        #expect(sessions == 1)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    @Test(.tags(.needsHello)) func clientThatNeverReadsIsDisconnectedAndOthersDoNotNotice() throws {
        let daemon = try DaemonHarness(arguments: ["--max-outbound-bytes", "4096"])
        let bystander = try daemon.connect()
        let sluggard = try daemon.connect()
        // Requests until the daemon gives up on us; the answers pile up unread in the kernel and then in
        // the daemon's queue for this connection.
        let batch = (1...1000).flatMap { TestFrames.hello(callId: UInt32($0)).encoded }
        var disconnected = false
        for _ in 0..<5000 {
            do {
                try sluggard.sendRaw(batch)
            } catch {
                disconnected = true
                break
            }
            if daemon.stderrText.contains("peer is not reading") {
                disconnected = true
                break
            }
        }
        #expect(disconnected)
        #expect(daemon.waitForLog(containing: "peer is not reading"))
        #expect(daemon.stderrLines.filter { $0.contains("peer is not reading") }.count == 1)
        #expect(daemon.stderrLines.contains { $0.hasPrefix("<4>") && $0.contains("peer is not reading") })
        #expect(sluggard.waitForClose(timeout: .seconds(5)))
        // The bystander is still served.
        #expect(try bystander.hello(callId: 1).header.callId == 1)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    @Test(.tags(.needsHello)) func sigtermStillDeliversAnswersQueuedBeforeIt() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        try client.sendRaw((1...200).flatMap { TestFrames.hello(callId: UInt32($0)).encoded })
        // Wait for the first answer so the requests were read, then stop.
        _ = try client.readFrame()
        daemon.terminate()
        var answered = 1
        while true {
            do {
                if try client.readFrame(timeout: .seconds(5)).header.type == .response { answered += 1 }
            } catch {
                break
            }
        }
        #expect(answered == 200)
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test(.tags(.needsHello)) func sigtermDoesNotWaitLongerThanTheDrainDeadlineForAClientThatNeverReads() throws {
        let daemon = try DaemonHarness()
        let sluggard = try daemon.connect()
        // Enough answers to fill the socket buffers, so some stay queued in the daemon.
        let batch = (1...1000).flatMap { TestFrames.hello(callId: UInt32($0)).encoded }
        for _ in 0..<40 {
            try sluggard.sendRaw(batch)
        }
        // One answer arrived, so the requests are being handled; the rest stay unread.
        _ = try sluggard.readFrame()
        usleep(200_000)
        let start = Date()
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed > 1.5 && elapsed < 5, "stopped after \(elapsed) s")
        #expect(daemon.stderrText.contains("drain deadline passed"))
        #expect(daemon.errorLines == [])
    }
}
