// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackWire
import Testing

/// snapbackd the way systemd runs it: socket activation through `systemd-socket-activate` (Debian's
/// systemd package; it passes LISTEN_FDS as systemd does) and a fake `NOTIFY_SOCKET` the test reads.
@Suite struct SystemdIntegrationTests {
    /// An empty configuration file, so a file in /etc on the test machine changes nothing.
    static func emptyConfig(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("snapbackd.conf").path
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        return path
    }

    @Test func socketActivationReadyReloadingStopping() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let notify = try NotifySocket(path: directory.appendingPathComponent("notify").path)
        let config = try Self.emptyConfig(in: directory)
        let daemon = try DaemonHarness(
            arguments: ["--config", config], in: directory,
            environment: ["NOTIFY_SOCKET": notify.address], socketActivated: true)
        // The readiness probe's connection started it; READY=1 comes once the socket is adopted and the
        // store is open, and names the adopted socket.
        let ready = try #require(notify.next())
        #expect(ready.text == "READY=1\nSTATUS=listening on \(daemon.socketPath) (socket activation)")
        #expect(daemon.stderrText.contains("listening on \(daemon.socketPath) (socket activation)"))
        #expect(FileManager.default.fileExists(atPath: daemon.stateDirectory + "/snapback.db"))
        // The adopted socket serves.
        let player = try daemon.player()
        #expect(player.hello.serverName == "snapbackd")

        // SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1 again; the connection stays.
        daemon.terminate(signal: SIGHUP)
        let reloading = try #require(notify.next())
        #expect(reloading.text.hasPrefix("RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC="))
        let readyAgain = try #require(notify.next())
        #expect(
            readyAgain.text.hasPrefix(
                "READY=1\nSTATUS=listening on \(daemon.socketPath) (socket activation); configuration reloaded"))
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.connections >= 1)

        // SIGTERM: STOPPING=1 first, then a clean exit. The socket belongs to whoever passed it: it stays.
        daemon.terminate(signal: SIGTERM)
        let stopping = try #require(notify.next())
        #expect(stopping.text == "STOPPING=1\nSTATUS=stopping (SIGTERM)")
        #expect(daemon.waitForExit() == .exit(0))
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.errorLines == [])
    }

    /// WATCHDOG_USEC=200 ms: a ping every 100 ms from the loop thread. The loop thread alone is stopped
    /// for a second (``ThreadStall``; the daemon's other threads run on), as a stalled loop would be: the
    /// pings stop, so systemd would restart it; then they resume. Pings sent from any other thread would
    /// go on through the stall and fail this test.
    @Test func watchdogPingsEveryHalfIntervalAndStopWhileTheLoopStalls() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let notify = try NotifySocket(path: directory.appendingPathComponent("notify").path)
        let config = try Self.emptyConfig(in: directory)
        let daemon = try DaemonHarness(
            arguments: ["--config", config], in: directory,
            environment: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "200000"],
            socketActivated: true)
        #expect(notify.next(startingWith: "READY=1") != nil)
        #expect(daemon.stderrText.contains("WATCHDOG=1 every 100 ms"))

        let pings = notify.collect(for: .seconds(1)).filter { $0.text == "WATCHDOG=1" }
        // 10 expected; the bounds leave room for a loaded 2-core machine running the tests in parallel.
        #expect((6...12).contains(pings.count), "\(pings.count) pings in 1 s")
        let gaps = zip(pings, pings.dropFirst()).map { $0.0.at.duration(to: $0.1.at) }
        #expect(gaps.allSatisfy { $0 > .milliseconds(40) && $0 < .milliseconds(400) }, "\(gaps)")

        // The loop runs on the main thread, whose thread id is the process id (systemd-socket-activate
        // execs the daemon in place).
        let stall = try ThreadStall(thread: daemon.pid, seconds: 1)
        // A ping sent before the thread stopped is already queued (a datagram is queued by the send).
        notify.drain()
        let duringStall = notify.collect(for: .milliseconds(700))
        #expect(duringStall.isEmpty, "\(duringStall.map(\.text))")
        try stall.waitUntilResumed()
        #expect(notify.next(startingWith: "WATCHDOG=1", timeout: .seconds(3)) != nil)

        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    /// Started by hand (no LISTEN_FDS): it binds --socket itself and still notifies, here to an
    /// abstract socket; a WATCHDOG_PID naming another process means the watchdog is not ours.
    @Test func withoutActivationItBindsItsSocketAndAForeignWatchdogPidIsIgnored() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let notify = try NotifySocket(abstractName: "snapbackd-test-\(UUID().uuidString.prefix(12))")
        let config = try Self.emptyConfig(in: directory)
        let daemon = try DaemonHarness(
            arguments: ["--config", config], in: directory,
            environment: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1"])
        let ready = try #require(notify.next())
        #expect(ready.text == "READY=1\nSTATUS=listening on \(daemon.socketPath)")
        #expect(notify.collect(for: .milliseconds(400)).isEmpty)
        #expect(!daemon.stderrText.contains("watchdog:"))
        daemon.terminate()
        #expect(notify.next()?.text.hasPrefix("STOPPING=1") == true)
        #expect(daemon.waitForExit() == .exit(0))
        // A socket it bound itself, it removes.
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    /// snapbackd listens on exactly one socket: two passed is a unit file mistake, refused at start.
    @Test func twoActivatedSocketsAreRefused() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let config = try Self.emptyConfig(in: directory)
        let daemon = try DaemonHarness(
            arguments: ["--config", config], in: directory, waitUntilReady: true,
            socketActivated: true, socketActivationArguments: ["--listen=\(directory.path)/second.sock"])
        #expect(daemon.waitForExit() == .exit(1))
        #expect(
            daemon.errorLines == [
                "<3>cannot start: socket activation: 2 sockets passed (LISTEN_FDS); snapbackd listens on exactly one"
            ])
    }
}
