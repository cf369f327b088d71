// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// The configuration files through the real binary: refused at start, drop-ins, SIGHUP.
@Suite struct ConfigurationReloadTests {
    /// Two unwatched breaks the seek 10 → 300 crosses: `first` plays b1 (100), `last-unwatched` b2 (200).
    static func twoBreaks(_ contentId: String) -> OpenSessionRequest {
        OpenSessionRequest(
            streamId: "s-\(contentId)", contentId: contentId, kind: .onDemand,
            breaks: [AdBreak(id: "b1", start: 100, duration: 30), AdBreak(id: "b2", start: 200, duration: 30)],
            contentDuration: 1800, preset: nil)
    }

    /// Where the snapback of a seek 10 → 300 goes in `session`.
    static func snapbackTarget(_ player: SnapbackClient, _ session: UInt64) throws -> [Double] {
        _ = try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: session)
        return try player.send(.seekEnded(from: 10, to: 300), session: session).seekTargets
    }

    @Test func aBadFileRefusesTheStartWithFileLineAndReason() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try "[policy]\npreset = ima\ncoldown = 30\n".write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory, waitUntilReady: false)
        #expect(daemon.waitForExit() == .exit(1))
        #expect(daemon.errorLines == ["<3>\(path):3: unknown key 'coldown' (did you mean 'cooldown'?)"])
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        // --check-config says the same, and nothing is started.
        let check = try DaemonHarness.run(["--check-config", "--config", path])
        #expect(check.termination == .exit(1))
        #expect(check.stderr == "\(path):3: unknown key 'coldown' (did you mean 'cooldown'?)\n")
    }

    @Test func aMissingConfigFileNamedOnTheCommandLineIsRefused() throws {
        let run = try DaemonHarness.run(["--config", "/nonexistent/snapbackd.conf", "--socket", "x.sock"])
        #expect(run.termination == .exit(1))
        #expect(run.stderr == "<3>/nonexistent/snapbackd.conf: No such file or directory\n")
    }

    @Test func dropInsOverrideTheMainFileInLexicalOrderAndTheCommandLineWins() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let main = directory.appendingPathComponent("snapbackd.conf").path
        try "preset = ima\nmax-frame-size = 4K\nmax-outbound-bytes = 64K\n".write(toFile: main, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: main + ".d", withIntermediateDirectories: true)
        try "[policy]\npreset = tvsdk\n".write(toFile: main + ".d/20-later.conf", atomically: true, encoding: .utf8)
        try "[policy]\npreset = media3\n[limits]\nmax-frame-size = 8K\n".write(
            toFile: main + ".d/10-earlier.conf", atomically: true, encoding: .utf8)
        try "preset = hlsjs\n".write(toFile: main + ".d/99-off.conf.bak", atomically: true, encoding: .utf8)

        let check = try DaemonHarness.run(["--check-config", "--config", main, "--max-outbound-bytes", "32768"])
        #expect(check.termination == .exit(0))
        #expect(check.stdout.contains("(\(main), \(main).d/10-earlier.conf, \(main).d/20-later.conf, then the command line)"))
        #expect(check.stdout.contains("\npreset = tvsdk\n"))
        #expect(check.stdout.contains("\nmax-frame-size = 8192\n"))
        #expect(check.stdout.contains("\nmax-outbound-bytes = 32768\n"))

        let daemon = try DaemonHarness(arguments: ["--config", main, "--max-outbound-bytes", "32768"], in: directory)
        let player = try daemon.player()
        #expect(player.hello.defaultPolicyPreset == "tvsdk")
        #expect(player.hello.maxFrameSize == 8192)
        #expect(player.hello.maxOutboundQueueBytes == 32768)
        #expect(try player.openSession(Self.twoBreaks("x")).policyPreset == "tvsdk")
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// SIGHUP: a valid file applies to sessions opened afterwards (on the same connection too), open
    /// sessions keep their policy, nothing is dropped; a broken file is one log line and changes nothing.
    @Test func sighupAppliesToNewSessionsOnlyAndABrokenFileKeepsTheConfigurationInForce() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try "skipped-break-choice = first\n".write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory)
        let player = try daemon.player()
        let before = try player.openSession(Self.twoBreaks("before")).sessionId

        try "skipped-break-choice = last-unwatched\n[limits]\nmax-frame-size = 2048\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        daemon.terminate(signal: SIGHUP)
        #expect(daemon.waitForLog(containing: "SIGHUP: configuration reloaded from \(path)"))
        let after = try player.openSession(Self.twoBreaks("after")).sessionId

        try "skipped-break-choice = first\nthis line is broken\n".write(toFile: path, atomically: true, encoding: .utf8)
        daemon.terminate(signal: SIGHUP)
        #expect(daemon.waitForLog(containing: "configuration not reloaded"))
        let afterBroken = try player.openSession(Self.twoBreaks("after-broken")).sessionId

        #expect(try Self.snapbackTarget(player, before) == [100])  // opened under `first`: keeps it
        #expect(try Self.snapbackTarget(player, after) == [200])  // opened after the reload
        #expect(try Self.snapbackTarget(player, afterBroken) == [200])  // the broken file changed nothing
        // The connection opened before the reloads keeps its limits; a new one gets the new ones.
        #expect(player.hello.maxFrameSize == 262_144)
        #expect(try daemon.player("late").hello.maxFrameSize == 2048)

        let refusal = daemon.stderrLines.filter { $0.contains("configuration not reloaded") }
        #expect(
            refusal == [
                "<3>SIGHUP: configuration not reloaded, keeping the one in force: \(path):2: expected 'key = value', a [section] header or a # comment"
            ])
        #expect(daemon.errorLines.count == 1)
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.sessions == 3)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }
}

/// `watched-retention`: how long a watched break stays watched for the next session of that content.
@Suite struct WatchedRetentionTests {
    /// Watches b1 to its end in one session, then opens the same content again and seeks over b1:
    /// the seek targets of that second seek.
    static func secondSeekOverAWatchedBreak(config: String) throws -> [Double] {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory)
        let player = try daemon.player()
        let open = OpenSessionRequest(
            streamId: "s", contentId: "kept", kind: .onDemand,
            breaks: [AdBreak(id: "b1", start: 100, duration: 30)], contentDuration: 1800)
        let first = try player.openSession(open).sessionId
        try player.send(.playheadReported(streamTime: 90, rate: 1, playing: true), session: first)
        try player.send(.adBreakStarted(breakId: "b1"), session: first)
        // BreakWatched follows the watched mark's commit.
        var ended = try player.send(.adBreakEnded(breakId: "b1"), session: first)
        while ended.watchedBreaks.isEmpty { ended.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(ended.watchedBreaks == ["b1"])
        try player.closeSession(first)
        let second = try player.openSession(open).sessionId
        try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: second)
        return try player.send(.seekEnded(from: 10, to: 300), session: second).seekTargets
    }

    @Test func aWatchedBreakStaysWatchedForTheNextSessionByDefault() throws {
        #expect(try Self.secondSeekOverAWatchedBreak(config: "# defaults\n") == [])
    }

    @Test func aZeroRetentionKeepsNothing() throws {
        #expect(try Self.secondSeekOverAWatchedBreak(config: "[bookmarks]\nwatched-retention = 0\n") == [100])
    }
}
