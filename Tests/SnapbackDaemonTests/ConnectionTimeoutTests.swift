// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackWire
import Testing

/// Issue 9: connections that hold a slot without making progress — no Hello, or a frame begun and never
/// finished — are closed after their timeout with one log line; a player that said Hello and is simply
/// idle between events keeps its connection and its session. The timeouts are shortened here; the
/// waits are hang guards, never speed checks.
@Suite struct ConnectionTimeoutTests {
    /// Regression: 200 connections that sent one byte of a header and then nothing stayed open for ever
    /// (four allowed uids could fill every connection slot).
    @Test func oneByteOfAHeaderThenSilenceIsClosedWhileAnIdlePlayerKeepsItsSession() throws {
        let daemon = try DaemonHarness(arguments: ["--hello-timeout", "1500ms", "--partial-frame-timeout", "600ms"])
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)

        var stallers: [FrameSocket] = []
        for _ in 0..<200 {
            let socket = try daemon.connect()
            try socket.sendRaw([TestFrames.hello(callId: 1).encoded[0]])
            stallers.append(socket)
        }
        for socket in stallers {
            #expect(socket.waitForClose(timeout: .seconds(20)))
        }
        #expect(daemon.waitForLog(containing: "closed: partial frame not completed within 600 ms"))
        let partialLines = daemon.stderrLines.filter { $0.contains("closed: partial frame not completed within 600 ms") }
        #expect(partialLines.count == 200, "one line per connection")
        #expect(partialLines.allSatisfy { $0.hasPrefix("<4>") && $0.contains("(1 of its bytes received)") })

        // Idle for longer than both timeouts (the 200 were closed after at least 600 ms; this adds more
        // than the Hello timeout), then still served, with the same session and correct answers.
        usleep(1_800_000)
        let seek = try player.send(.seekEnded(from: 300, to: 900), session: session)
        #expect(seek.seekTargets == [600])
        #expect(seek.seeks.first?.1 == .snapback)
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.sessions == 1)
        #expect(status.connections == 1)
        #expect(!daemon.stderrText.contains("session \(session) closed"))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    /// A connection that never says Hello is closed: one that stays silent, and one that sends a whole
    /// request other than Hello (answered FAILED_PRECONDITION, which is not a handshake).
    @Test func aConnectionThatNeverSaysHelloIsClosed() throws {
        let daemon = try DaemonHarness(arguments: ["--hello-timeout", "500ms", "--partial-frame-timeout", "60s"])
        let silent = try daemon.connect()
        let impatient = try daemon.connect()
        try impatient.send(Frame(header: .request(callId: 3, method: WireMethod.getStatus.rawValue), body: []))
        let answer = try impatient.readFrame()
        #expect(answer.header.callId == 3 && answer.header.status == StatusCode.failedPrecondition.rawValue)
        #expect(silent.waitForClose(timeout: .seconds(20)))
        #expect(impatient.waitForClose(timeout: .seconds(20)))
        #expect(daemon.waitForLog(containing: "closed: no Hello within 500 ms of connecting"))
        #expect(daemon.stderrLines.filter { $0.contains("closed: no Hello within 500 ms") }.count == 2)
        // The slots came back: a new player is served.
        let player = try daemon.player()
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.connections == 1)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// After Hello, a frame begun and not finished (here a header whose body never comes) is what closes
    /// a player; a frame sent slowly but completed within the timeout is answered.
    @Test func aPlayerHoldingAPartialBodyIsClosedAndASlowButCompleteFrameIsNot() throws {
        let daemon = try DaemonHarness(arguments: ["--hello-timeout", "60s", "--partial-frame-timeout", "800ms"])
        let slow = try daemon.connect()
        #expect(try slow.hello(callId: 1).header.status == 0)
        let hello = TestFrames.hello(callId: 2).encoded
        for byte in hello {
            try slow.sendRaw([byte])
            usleep(10_000)
        }
        #expect(try slow.readFrame().header.callId == 2)

        let stuck = try daemon.connect()
        #expect(try stuck.hello(callId: 1).header.status == 0)
        try stuck.sendRaw(Array(TestFrames.hello(callId: 2).encoded.prefix(FrameHeader.size + 3)))
        #expect(stuck.waitForClose(timeout: .seconds(20)))
        #expect(daemon.waitForLog(containing: "closed: partial frame not completed within 800 ms (15 of its bytes received)"))
        // The slow one, idle since, is still served.
        #expect(try slow.hello(callId: 3).header.callId == 3)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }
}
