// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackWire
import Testing

/// Issue 9: log lines were blocking writes to stderr, so a stalled journald would have stalled the loop
/// and every player. Here stderr is a pipe nobody reads (shrunk to one page so it fills at once).
@Suite struct LoggingTests {
    /// Collects what a pipe's read end gives, on a thread of its own, once started.
    final class PipeReader: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private let handle: FileHandle

        init(_ handle: FileHandle) { self.handle = handle }

        func start() {
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    lock.withLock { data.append(chunk) }
                }
            }
        }

        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

        func waitFor(_ text: String, timeout: TimeInterval = 20) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if self.text.contains(text) { return true }
                usleep(20_000)
            }
            return self.text.contains(text)
        }
    }

    @Test func aStderrNobodyReadsDoesNotStopAnswersAndTheDroppedLinesAreReported() throws {
        let pipe = Pipe()
        // One page: the daemon's start-up lines already fill most of it.
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ, which Glibc's module does not export
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, setPipeSize, 4096)
        let daemon = try DaemonHarness(stderrPipe: pipe)
        try pipe.fileHandleForWriting.close()  // the daemon has its copy

        // 100 players, each snapped back ten times, each decision logged (info) and every connection
        // and session too (debug): far more than the pipe and the daemon's backlog hold. Each call has
        // the client's timeout as a hang guard: a daemon blocked on stderr would answer none.
        var players: [SnapbackClient] = []
        var sessions: [UInt64] = []
        for index in 0..<100 {
            let player = try daemon.player("player-\(index)")
            sessions.append(try player.openSession(Streams.seed(contentId: "c\(index)")).sessionId)
            players.append(player)
        }
        for _ in 0..<10 {
            for (player, session) in zip(players, sessions) {
                try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
                let seek = try player.send(.seekEnded(from: 300, to: 900), session: session)
                #expect(seek.seekTargets == [600])
                try player.send(.seekEnded(from: 600, to: 300), session: session)
            }
        }
        let stalled: SnapbackV1.StatusReply = try players[0].call(.getStatus)
        #expect(stalled.logLinesDropped > 0)
        #expect(stalled.sessions == 100)

        // Someone reads again: the backlog goes out, then one line says how many were dropped.
        let reader = PipeReader(pipe.fileHandleForReading)
        reader.start()
        #expect(reader.waitFor(" log lines dropped: stderr did not take them"), "\(reader.text.suffix(600))")
        let reports = reader.text.split(separator: "\n").filter { $0.contains("log lines dropped") }
        #expect(reports.count == 1)
        #expect(reports.allSatisfy { $0.hasPrefix("<4>") })
        let reported = reports.first.flatMap { UInt64($0.dropFirst(3).prefix { $0.isNumber }) } ?? 0
        #expect(reported >= stalled.logLinesDropped, "the report counts at least what the status saw")
        let after: SnapbackV1.StatusReply = try players[0].call(.getStatus)
        #expect(after.logLinesDropped == reported, "nothing dropped after the report")
        // Lines are whole: every one starts with its priority.
        #expect(reader.text.split(separator: "\n").allSatisfy { $0.hasPrefix("<") })

        // And logging goes on normally.
        try players[1].send(.seekEnded(from: 300, to: 900), session: sessions[1])
        for player in players { player.close() }
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(reader.waitFor("<5>stopped"))
    }
}
