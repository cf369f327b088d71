// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackWire
import Testing

/// Command line, start-up, socket file handling and signals: none of these needs the RPC service.
@Suite struct DaemonLifecycleTests {
    @Test func helpPrintsUsageAndExitsZero() throws {
        let run = try DaemonHarness.run(["--help"])
        #expect(run.termination == .exit(0))
        #expect(run.stdout.contains("Usage: snapbackd"))
        #expect(run.stdout.contains("--max-outbound-bytes"))
        #expect(run.stdout.contains("--hello-timeout") && run.stdout.contains("--partial-frame-timeout"))
        #expect(run.stderr.isEmpty)
        // An operator's 80-column terminal shows it as written.
        for line in run.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }

    @Test func versionExitsZero() throws {
        let run = try DaemonHarness.run(["--version"])
        #expect(run.termination == .exit(0))
        #expect(run.stdout.hasPrefix("snapbackd "))
    }

    @Test(arguments: [
        ["--bogus"],
        ["--socket"],
        ["--socket="],
        ["--max-frame-size", "lots"],
        ["--max-frame-size", "-1"],
        ["--max-outbound-bytes", "10"],
        ["--log-level", "loud"],
        ["--hello-timeout", "0"],
        ["--partial-frame-timeout", "soon"],
        ["--help=yes"],
        ["stray"]
    ])
    func badCommandLineExitsTwoWithUsage(_ arguments: [String]) throws {
        let run = try DaemonHarness.run(arguments)
        #expect(run.termination == .exit(2))
        #expect(run.stderr.hasPrefix("snapbackd: "))
        #expect(run.stderr.contains("Usage: snapbackd"))
        #expect(run.stdout.isEmpty)
    }

    @Test func sigtermWithIdleConnectionsExitsZeroAndRemovesTheSocket() throws {
        let daemon = try DaemonHarness()
        let clients = try (0..<3).map { _ in try daemon.connect() }
        #expect(daemon.waitForLog(containing: "connection 4 opened"))  // 1 was the readiness probe

        daemon.terminate(signal: SIGTERM)
        #expect(daemon.waitForExit() == .exit(0))
        for client in clients {
            #expect(client.waitForClose(timeout: .seconds(1)))
        }
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.errorLines == [])
        #expect(daemon.stderrLines.contains { $0.hasPrefix("<5>") && $0.contains("SIGTERM") })
        #expect(daemon.stderrLines.last == "<5>stopped")
    }

    /// A peer's text that contains line breaks cannot forge a journald record: CR and LF become spaces,
    /// so the line keeps its own priority and nothing starts a new one.
    @Test func lineBreaksInLoggedPeerTextStayOnOneLine() throws {
        let daemon = try DaemonHarness()
        let client = try SnapbackClient(socketPath: daemon.socketPath, clientName: "evil\r\n<0>forged\nrecord")
        #expect(daemon.waitForLog(containing: "hello from"))
        let hello = daemon.stderrLines.filter { $0.contains("hello from") }
        #expect(hello.count == 1)
        #expect(hello.first?.hasPrefix("<6>") == true)
        #expect(hello.first?.contains("\"evil  <0>forged record\"") == true, "\(hello)")
        #expect(!daemon.stderrText.contains("\r"))
        #expect(daemon.stderrLines.allSatisfy { $0.hasPrefix("<") && $0.dropFirst(2).hasPrefix(">") }, "\(daemon.stderrLines)")
        client.close()
        daemon.terminate(signal: SIGTERM)
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func sigintStopsLikeSigterm() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        daemon.terminate(signal: SIGINT)
        #expect(daemon.waitForExit() == .exit(0))
        #expect(client.waitForClose(timeout: .seconds(1)))
        #expect(daemon.errorLines == [])
    }

    @Test func sigtermWithAClientMidFrameExitsZero() throws {
        let daemon = try DaemonHarness()
        let client = try daemon.connect()
        try client.sendRaw(Array(FrameHeader.request(callId: 1, method: 0, length: 100).encoded.prefix(7)))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    @Test func sighupIsLoggedAndTheDaemonKeepsRunning() throws {
        let daemon = try DaemonHarness()
        daemon.terminate(signal: SIGHUP)
        #expect(daemon.waitForLog(containing: "SIGHUP"))
        #expect(daemon.isRunning)
        let client = try daemon.connect()
        #expect(!client.waitForClose(timeout: .milliseconds(100)))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func createsTheSocketDirectoryAndMakesTheSocket0660() throws {
        let daemon = try DaemonHarness(socketPath: "run/nested/snapbackd.sock")
        let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        #expect(attributes[.type] as? FileAttributeType == .typeSocket)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o660)
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func replacesAStaleSocketFile() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.sock").path
        try makeStaleSocket(at: path)
        let daemon = try DaemonHarness(in: directory)
        #expect(daemon.stderrText.contains("removed stale socket"))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func refusesToStartWhileAnotherDaemonListensOnTheSocket() throws {
        let first = try DaemonHarness()
        let second = try DaemonHarness(in: first.directory, waitUntilReady: false)
        #expect(second.waitForExit() == .exit(1))
        #expect(second.stderrText.contains("another daemon is already listening"))
        // A failed start still closes every handle it opened.
        #expect(second.errorLines.count == 1, "\(second.errorLines)")
        // The first one is untouched: its socket file is still there and still answers.
        let client = try first.connect()
        #expect(!client.waitForClose(timeout: .milliseconds(100)))
        first.terminate()
        #expect(first.waitForExit() == .exit(0))
    }

    @Test func refusesToReplaceAFileThatIsNotASocket() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.sock").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("precious".utf8))
        let daemon = try DaemonHarness(in: directory, waitUntilReady: false)
        #expect(daemon.waitForExit() == .exit(1))
        #expect(daemon.stderrText.contains("is not a socket"))
        #expect(daemon.errorLines.count == 1, "\(daemon.errorLines)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    @Test func logsThePeerCredentialsOfEachConnection() throws {
        let daemon = try DaemonHarness()
        _ = try daemon.connect()
        #expect(daemon.waitForLog(containing: "opened (pid \(getpid()), uid \(getuid()), gid \(getgid()))"))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func logLinesCarrySyslogPriorityPrefixes() throws {
        let daemon = try DaemonHarness()
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        let lines = daemon.stderrLines
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil, "\(line)")
        }
    }
}
