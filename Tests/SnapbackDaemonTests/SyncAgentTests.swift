// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackCLI
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackSync

/// A real `nats-server -js` on a loopback port with its store in a directory of its own; stopped and
/// started again on the same port and store.
final class NatsServer {
    /// Debian installs it in /usr/sbin.
    static let path = "/usr/sbin/nats-server"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: path) }

    let directory: URL
    private(set) var port = 0
    private var process: Process?

    /// More options for every start (`--user`, `--pass`).
    let arguments: [String]

    init(directory: URL, arguments: [String] = []) throws {
        self.directory = directory
        self.arguments = arguments
        try start()
    }

    deinit { stop() }

    var url: String { "nats://127.0.0.1:\(port)" }
    var tlsURL: String { "tls://127.0.0.1:\(port)" }

    /// Starts the server: on a port of its choosing the first time (read from its ports file), on the
    /// same port after.
    func start() throws {
        let portsDirectory = directory.appendingPathComponent("ports")
        try? FileManager.default.removeItem(at: portsDirectory)
        try FileManager.default.createDirectory(at: portsDirectory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments =
            [
                "-js", "-a", "127.0.0.1", "-p", port == 0 ? "-1" : "\(port)", "-sd", directory.appendingPathComponent("js").path,
                "--ports_file_dir", portsDirectory.path, "-l", directory.appendingPathComponent("nats.log").path
            ] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let file = try? FileManager.default.contentsOfDirectory(atPath: portsDirectory.path).first,
                let text = try? String(contentsOfFile: portsDirectory.appendingPathComponent(file).path, encoding: .utf8),
                let range = text.range(of: "://127.0.0.1:"),
                let number = Int(text[range.upperBound...].prefix(while: \.isNumber))
            {
                port = number
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw HarnessFailure("nats-server did not start: \(log)")
    }

    /// Sends the server a signal (SIGSTOP freezes it: connections stay open, nothing is answered).
    func signal(_ number: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, number)
    }

    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        self.process = nil
    }

    var log: String { (try? String(contentsOfFile: directory.appendingPathComponent("nats.log").path, encoding: .utf8)) ?? "" }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The `snapback-sync` binary on a configuration written for the test: `$SNAPBACK_SYNC_BIN`, else the one
/// built beside the daemon under test.
final class SyncAgentProcess {
    static var binaryPath: String {
        if let path = ProcessInfo.processInfo.environment["SNAPBACK_SYNC_BIN"], !path.isEmpty { return path }
        return URL(fileURLWithPath: DaemonHarness.binaryPath).deletingLastPathComponent().appendingPathComponent("snapback-sync")
            .path
    }

    let directory: URL
    let configPath: String
    let statusPath: String
    let stderrPath: String
    private let process = Process()

    /// Starts another agent on the same configuration and state directory.
    func restarted() throws -> SyncAgentProcess {
        try SyncAgentProcess(configPath: configPath, in: directory)
    }

    private init(configPath: String, in directory: URL) throws {
        self.directory = directory
        self.configPath = configPath
        statusPath = directory.appendingPathComponent("status").path
        stderrPath = directory.appendingPathComponent("agent.log").path
        try launch()
    }

    init(socket: String, servers: [String], household: String, more: String = "", in directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent("sync.conf").path
        statusPath = directory.appendingPathComponent("status").path
        stderrPath = directory.appendingPathComponent("agent.log").path
        let text = """
            servers = \(servers.joined(separator: " "))
            household = \(household)
            socket = \(socket)
            state-directory = \(directory.appendingPathComponent("state").path)
            status-file = \(statusPath)
            \(more)
            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        try launch()
    }

    private func launch() throws {
        try? FileManager.default.removeItem(atPath: statusPath)
        let log = FileHandle(forWritingAtPath: stderrPath)
        log?.seekToEndOfFile()
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = ["--config", configPath]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    var status: SyncStatus? {
        (try? String(contentsOfFile: statusPath, encoding: .utf8)).flatMap(SyncStatus.parse)
    }

    func stop() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Polls `condition` until it holds (a hang guard of `seconds`, never a timed assertion).
@discardableResult
func eventually<T>(_ seconds: Double = 60, _ what: @autoclosure () -> String, _ condition: () throws -> T?) throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if let value = try condition() { return value }
        guard Date() < deadline else { throw HarnessFailure("still not so after \(Int(seconds)) s: \(what())") }
        usleep(50_000)
    }
}

/// The agent through the real daemon, socket and NATS server: a box's save reaches the bucket, another
/// box's record in the bucket is where a new session resumes, and saves made while the server is down go
/// out when it is back.
@Suite(
    .serialized,
    .enabled(if: NatsServer.available, "nats-server is not installed (make deps installs Debian's nats-server)"))
struct SyncAgentTests {
    static func bucket(
        _ nats: NatsServer, user: String? = nil, password: String? = nil, tls: (ca: String, cert: String, key: String)? = nil
    ) throws -> NatsKV {
        var configuration = SyncConfiguration()
        configuration.servers = [tls == nil ? nats.url : nats.tlsURL]
        configuration.household = "A"
        configuration.user = user
        configuration.tlsCA = tls?.ca
        configuration.tlsCert = tls?.cert
        configuration.tlsKey = tls?.key
        let kv = try NatsKV(configuration: configuration, password: password, wake: try Wakeup())
        _ = try eventually(60, "the test's NATS connection") { kv.isConnected ? true : nil }
        return kv
    }

    static func record(_ kv: NatsKV, _ contentId: String) -> (SyncRecord, UInt64)? {
        let key = KeyCodec.key(household: "A", .record(profile: "", contentId: contentId))
        guard let current = try? kv.get(key),
            let record = KVValue.record(current.value, profile: "", contentId: contentId)
        else { return nil }
        return (record, current.revision)
    }

    @Test func aBoxExchangesWithTheBucketAndItsOutboxOutlivesTheServer() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nats = try NatsServer(directory: directory.appendingPathComponent("nats"))
        let daemon = try DaemonHarness()
        let agent = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.url], household: "A", in: directory.appendingPathComponent("agent"))
        let connected = try eventually(60, "agent connected; log: \(agent.log)") {
            agent.status.flatMap { $0.state == .connected && !$0.deviceId.isEmpty ? $0 : nil }
        }
        let kv = try Self.bucket(nats)

        // A save on the box goes to the bucket under this box's device id.
        let player = try daemon.player()
        try SyncServiceDaemonTests.save(player, "film", at: 300)
        let (film, _) = try eventually(60, "film in the bucket; log: \(agent.log)") { Self.record(kv, "film") }
        #expect(film.value.bookmark?.contentTime == 300)
        #expect(film.origin.text == connected.deviceId)

        // A break watched on the box goes to its content's watched-breaks key.
        let open = OpenSessionRequest(
            streamId: "s", contentId: "ads", kind: .onDemand, breaks: [AdBreak(id: "b1", start: 100, duration: 30)],
            contentDuration: 1800)
        let session = try player.openSession(open).sessionId
        try player.send(.playheadReported(streamTime: 90, rate: 1, playing: true), session: session)
        try player.send(.adBreakStarted(breakId: "b1"), session: session)
        var ended = try player.send(.adBreakEnded(breakId: "b1"), session: session)
        while ended.watchedBreaks.isEmpty { ended.append(try player.nextPush(timeout: .seconds(10))) }
        _ = try player.closeSession(session)
        let adsKey = KeyCodec.key(household: "A", .watched(contentId: "ads"))
        let adsBreaks = try eventually(60, "b1 of ads in the bucket; log: \(agent.log)") {
            (try? kv.get(adsKey)).flatMap { $0.flatMap { KVValue.watched($0.value, contentId: "ads") } }
        }
        #expect(Array(adsBreaks.watchedAt.keys) == ["b1"])

        // Another box's record, written as that box's agent writes it, is merged: a new session resumes there.
        let now = SyncStamp.milliseconds(ofSeconds: Date().timeIntervalSince1970)
        let remote = try SyncServiceDaemonTests.bookmark("movie", at: 900, try SyncServiceDaemonTests.stamp(now + 1_000))
        let movieKey = KeyCodec.key(household: "A", .record(profile: "", contentId: "movie"))
        guard case .written(let movieRevision) = try kv.write(movieKey, KVValue.encode(remote), expecting: nil) else {
            Issue.record("the key was not free")
            return
        }
        let watched = try WatchedBreaks(contentId: "movie", watchedAt: ["b1": Double(now) / 1000])
        let watchedKey = KeyCodec.key(household: "A", .watched(contentId: "movie"))
        _ = try kv.write(watchedKey, KVValue.encode(watched), expecting: nil)
        try eventually(60, "movie resumes at 15:00; log: \(agent.log)") { () -> Bool? in
            let opened = try player.openSession(Streams.seed(contentId: "movie", useBookmark: true, breaks: []))
            _ = try player.closeSession(opened.sessionId)
            return opened.resumedFromBookmark && opened.resumeContentTime == 900 ? true : nil
        }
        let observer = try daemon.player("observer")
        _ = try observer.watchChanges(after: 0)
        try eventually(60, "watched break b1 of movie merged") { () -> Bool? in
            let change = try observer.nextChange(timeout: .seconds(30))
            if case .watched(let w) = change.change, w.contentId == "movie", w.watchedAt["b1"] != nil { return true }
            return nil
        }

        // The server goes away: the box's save waits in the outbox, and goes out once the server is back.
        nats.stop()
        try SyncServiceDaemonTests.save(player, "show", at: 120)
        let waiting = try eventually(60, "the save waits in the outbox; log: \(agent.log)") {
            agent.status.flatMap { $0.outbox >= 1 && $0.state != .connected ? $0 : nil }
        }
        #expect(waiting.state == .connecting || waiting.state == .offline, "\(waiting); log: \(agent.log)")
        try nats.start()
        let (show, _) = try eventually(60, "show in the bucket after the restart; log: \(agent.log)") { Self.record(kv, "show") }
        #expect(show.value.bookmark?.contentTime == 120)
        _ = try eventually(60, "outbox empty") { agent.status.flatMap { $0.outbox == 0 && $0.state == .connected ? $0 : nil } }

        // Another box's record is never written back by this one: its key is still at the revision its own
        // write made.
        #expect(Self.record(kv, "movie")?.1 == movieRevision)

        // `snapback status` shows the agent's part.
        let (code, text) = try runToEnd(
            CLICommandTests.cli, ["status", "--socket", daemon.socketPath, "--sync-status", agent.statusPath])
        #expect(code == 0, "\(text)")
        #expect(text.contains("sync         connected to nats://127.0.0.1:\(nats.port), household A, outbox 0"), "\(text)")
        #expect(agent.stop() == 0)
        #expect(daemon.errorLines == [])
    }

    /// The outbox and the stream's cursor outlive the agent, and the rule decides at the moment of
    /// sending: a save made while the agent was stopped goes out when it starts again, unless the bucket
    /// holds a later record of the key, which is merged here instead. snapbackd restarting is ridden out.
    @Test func anAgentRestartResumesFromItsCursorAndTheRuleDecidesAtSendingTime() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nats = try NatsServer(directory: directory.appendingPathComponent("nats"))
        let daemonDirectory = try DaemonHarness.makeTemporaryDirectory()
        // The first daemon's harness is kept to the end: its directory (socket, store) goes with it.
        let daemon = try DaemonHarness(in: daemonDirectory)
        let first = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.url], household: "A", in: directory.appendingPathComponent("agent"))
        let connected = try eventually(60, "agent connected; log: \(first.log)") {
            first.status.flatMap { $0.state == .connected ? $0 : nil }
        }
        let kv = try Self.bucket(nats)
        let player = try daemon.player()
        try SyncServiceDaemonTests.save(player, "early", at: 30)
        _ = try eventually(60, "early in the bucket; log: \(first.log)") { Self.record(kv, "early") }
        #expect(first.stop() == 0)

        // While the agent is stopped: this box saves two contents; another box then saves one of them
        // later than this box did.
        try SyncServiceDaemonTests.save(player, "clip", at: 100)
        try SyncServiceDaemonTests.save(player, "mine", at: 200)
        let later = SyncStamp.milliseconds(ofSeconds: Date().timeIntervalSince1970) + 60_000
        let theirs = try SyncServiceDaemonTests.bookmark("clip", at: 50, try SyncServiceDaemonTests.stamp(later))
        let clipKey = KeyCodec.key(household: "A", .record(profile: "", contentId: "clip"))
        _ = try kv.write(clipKey, KVValue.encode(theirs), expecting: nil)

        let second = try first.restarted()
        let (mine, _) = try eventually(60, "mine in the bucket; log: \(second.log)") { Self.record(kv, "mine") }
        #expect(mine.value.bookmark?.contentTime == 200 && mine.origin.text == connected.deviceId)
        // clip: the bucket keeps the other box's later record, and this box resumes there.
        try eventually(60, "clip resumes at 0:50; log: \(second.log)") { () -> Bool? in
            let opened = try player.openSession(Streams.seed(contentId: "clip", useBookmark: true, breaks: []))
            _ = try player.closeSession(opened.sessionId)
            return opened.resumeContentTime == 50 ? true : nil
        }
        #expect(Self.record(kv, "clip")?.0 == theirs)
        _ = try eventually(60, "outbox empty") { second.status.flatMap { $0.outbox == 0 ? $0 : nil } }

        // snapbackd restarts (same socket and store): the agent reconnects and resumes its stream.
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        let restarted = try DaemonHarness(in: daemonDirectory)
        try SyncServiceDaemonTests.save(try restarted.player(), "after", at: 330)
        let (after, _) = try eventually(60, "after in the bucket; log: \(second.log)") { Self.record(kv, "after") }
        #expect(after.value.bookmark?.contentTime == 330)
        #expect(second.stop() == 0)
        #expect(second.log.contains("snapbackd's change stream"), "\(second.log)")
        #expect(restarted.errorLines == [])
        withExtendedLifetime((nats, daemon)) {}
    }

    /// The agent authenticates with `user` and the password in `password-file`; a wrong password keeps
    /// it from the server (its save waits, the status says why) without stopping it.
    @Test func theAgentAuthenticatesWithAUserAndAPasswordFile() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nats = try NatsServer(
            directory: directory.appendingPathComponent("nats"), arguments: ["--user", "box-1", "--pass", "s3cret"])
        let daemon = try DaemonHarness()
        let passwordFile = directory.appendingPathComponent("password").path
        try "wrong\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let more = "user = box-1\npassword-file = \(passwordFile)\n"
        let refused = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.url], household: "A", more: more,
            in: directory.appendingPathComponent("refused"))
        let player = try daemon.player()
        try SyncServiceDaemonTests.save(player, "film", at: 300)
        let waiting = try eventually(60, "the refused agent keeps the save; log: \(refused.log)") {
            refused.status.flatMap { $0.outbox >= 1 ? $0 : nil }
        }
        #expect(waiting.state != .connected)
        // The status says why, in the server's words (libnats's retrying connect alone said "No server
        // available for connection").
        #expect(waiting.lastError.contains("Authorization Violation"), "\(waiting.lastError)")
        #expect(refused.log.contains("Authorization Violation"), "\(refused.log)")
        #expect(refused.stop() == 0)

        try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let agent = try refused.restarted()
        let kv = try Self.bucket(nats, user: "box-1", password: "s3cret")
        let (film, _) = try eventually(60, "film in the bucket; log: \(agent.log)") { Self.record(kv, "film") }
        #expect(film.value.bookmark?.contentTime == 300)
        // The status file is rewritten on the agent's own pace: wait for it rather than read it once.
        let status = try eventually(60, "a status file; log: \(agent.log)") { agent.status }
        #expect(!status.server.contains("s3cret"))
        #expect(agent.stop() == 0)
    }

    /// TLS with a client certificate: the server verifies the agent's certificate and the agent the
    /// server's against `tls-ca` (certificates made by openssl for the test).
    @Test func theAgentSpeaksTLSWithAClientCertificate() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func openssl(_ arguments: [String]) throws {
            let (status, output) = try runToEnd("/usr/bin/openssl", arguments)
            guard status == 0 else { throw HarnessFailure("openssl \(arguments.joined(separator: " ")): \(output)") }
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + key + ["-keyout", file("ca.key"), "-out", file("ca.pem"), "-days", "2", "-subj", "/CN=test CA"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: file("san.ext"), atomically: true, encoding: .utf8)
        for name in ["server", "box"] {
            try openssl(["req"] + key + ["-keyout", file("\(name).key"), "-out", file("\(name).csr"), "-subj", "/CN=\(name)"])
            try openssl([
                "x509", "-req", "-in", file("\(name).csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial",
                "-out", file("\(name).pem"), "-days", "2", "-extfile", file("san.ext")
            ])
        }
        let nats = try NatsServer(
            directory: directory.appendingPathComponent("nats"),
            arguments: [
                "--tlsverify", "--tlscert", file("server.pem"), "--tlskey", file("server.key"), "--tlscacert", file("ca.pem")
            ])
        let daemon = try DaemonHarness()
        let agent = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.tlsURL], household: "A",
            more: "tls-ca = \(file("ca.pem"))\ntls-cert = \(file("box.pem"))\ntls-key = \(file("box.key"))\n",
            in: directory.appendingPathComponent("agent"))
        try SyncServiceDaemonTests.save(try daemon.player(), "film", at: 300)
        let kv = try Self.bucket(nats, tls: (file("ca.pem"), file("box.pem"), file("box.key")))
        let (film, _) = try eventually(60, "film in the bucket over TLS; log: \(agent.log)") { Self.record(kv, "film") }
        #expect(film.value.bookmark?.contentTime == 300)
        // The status file is rewritten on the agent's own pace: wait for it to say so.
        _ = try eventually(60, "a status file saying connected; log: \(agent.log)") {
            agent.status.flatMap { $0.state == .connected ? $0 : nil }
        }
        #expect(agent.stop() == 0)
    }

    /// A box that comes to a bucket holding more than one Merge's worth catches up in batches snapbackd
    /// takes (at most 256 records a call): 600 records of another box, every one merged.
    @Test func aCatchUpOfMoreThanOneMergeIsMergedInBatches() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nats = try NatsServer(directory: directory.appendingPathComponent("nats"))
        let kv = try Self.bucket(nats)
        let now = SyncStamp.milliseconds(ofSeconds: Date().timeIntervalSince1970)
        for i in 0..<600 {
            let record = try SyncServiceDaemonTests.bookmark("bulk-\(i)", at: Double(i), try SyncServiceDaemonTests.stamp(now))
            let key = KeyCodec.key(household: "A", .record(profile: "", contentId: "bulk-\(i)"))
            _ = try kv.write(key, KVValue.encode(record), expecting: nil)
        }
        let daemon = try DaemonHarness()
        let agent = try SyncAgentProcess(
            socket: daemon.socketPath, servers: [nats.url], household: "A", in: directory.appendingPathComponent("agent"))
        let player = try daemon.player()
        let all = try eventually(60, "600 bookmarks merged; log: \(agent.log)") { () -> [Bookmark]? in
            var all: [Bookmark] = []
            var token = ""
            repeat {
                let page: SnapbackV1.ListBookmarksReply = try player.call(
                    .listBookmarks(profile: "", pageSize: 0, pageToken: token))
                all += page.bookmarks
                token = page.nextPageToken
            } while !token.isEmpty
            return all.count == 600 ? all : nil
        }
        #expect(Set(all.map(\.contentId)) == Set((0..<600).map { "bulk-\($0)" }))
        #expect(all.allSatisfy { $0.contentTime == Double($0.contentId.dropFirst(5)) })
        #expect(agent.stop() == 0)
        #expect(daemon.errorLines == [])
    }
}

/// The snapback-sync binary's command line (no server needed).
@Suite struct SyncAgentCommandTests {
    @Test func checkConfigPrintsTheConfigurationOrFileLineReason() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sync.conf").path
        try "servers = nats://127.0.0.1:4222\nhousehold = A\n".write(toFile: path, atomically: true, encoding: .utf8)
        var (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--config", path, "--check-config"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("household = A\n") && output.contains("bucket = snapback\n"), "\(output)")

        try "servers = nats://127.0.0.1:4222\nhousehold = A\nhistory = 65\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--check-config", "--config=\(path)"])
        #expect(status == 1)
        #expect(output == "\(path):3: history: '65' is not a whole number from 1 to 64\n", "\(output)")

        let missing = directory.appendingPathComponent("password").path
        try "servers = nats://h\nhousehold = A\nuser = u\npassword-file = \(missing)\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--check-config", "--config", path])
        #expect(status == 1)
        #expect(output == "\(path):4: password-file: cannot read \(missing)\n", "\(output)")
        // The agent itself refuses to start on it, the same way.
        (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--config", path])
        #expect(status == 1 && output.hasPrefix("\(path):4:"), "\(output)")
    }

    @Test func helpAndBadCommandLines() throws {
        var (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--help"])
        #expect(status == 0 && output.hasPrefix("Usage: snapback-sync"), "\(output)")
        (status, output) = try runToEnd(SyncAgentProcess.binaryPath, ["--frobnicate"])
        #expect(status == 2 && output.hasPrefix("snapback-sync: unknown option --frobnicate"), "\(output)")
    }
}
