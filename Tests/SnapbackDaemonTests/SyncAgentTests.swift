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

    init(directory: URL) throws {
        self.directory = directory
        try start()
    }

    deinit { stop() }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Starts the server: on a port of its choosing the first time (read from its ports file), on the
    /// same port after.
    func start() throws {
        let portsDirectory = directory.appendingPathComponent("ports")
        try? FileManager.default.removeItem(at: portsDirectory)
        try FileManager.default.createDirectory(at: portsDirectory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments = [
            "-js", "-a", "127.0.0.1", "-p", port == 0 ? "-1" : "\(port)", "-sd", directory.appendingPathComponent("js").path,
            "--ports_file_dir", portsDirectory.path, "-l", directory.appendingPathComponent("nats.log").path
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let file = try? FileManager.default.contentsOfDirectory(atPath: portsDirectory.path).first,
                let text = try? String(contentsOfFile: portsDirectory.appendingPathComponent(file).path, encoding: .utf8),
                let range = text.range(of: "nats://127.0.0.1:"),
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

    init(socket: String, servers: [String], household: String, in directory: URL) throws {
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

            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = ["--config", configPath]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: stderrPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
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
func eventually<T>(_ seconds: Double = 30, _ what: @autoclosure () -> String, _ condition: () throws -> T?) throws -> T {
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
    static func bucket(_ nats: NatsServer) throws -> NatsKV {
        var configuration = SyncConfiguration()
        configuration.servers = [nats.url]
        configuration.household = "A"
        let kv = try NatsKV(configuration: configuration, password: nil)
        _ = try eventually(30, "the test's NATS connection") { kv.isConnected ? true : nil }
        return kv
    }

    static func record(_ kv: NatsKV, _ contentId: String) -> (SyncRecord, UInt64)? {
        guard let key = KeyCodec.key(household: "A", .record(profile: "", contentId: contentId)),
            let current = try? kv.get(key),
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
        let connected = try eventually(30, "agent connected; log: \(agent.log)") {
            agent.status.flatMap { $0.state == .connected && !$0.deviceId.isEmpty ? $0 : nil }
        }
        let kv = try Self.bucket(nats)

        // A save on the box goes to the bucket under this box's device id.
        let player = try daemon.player()
        try SyncServiceDaemonTests.save(player, "film", at: 300)
        let (film, _) = try eventually(30, "film in the bucket; log: \(agent.log)") { Self.record(kv, "film") }
        #expect(film.value.bookmark?.contentTime == 300)
        #expect(film.origin.text == connected.deviceId)

        // Another box's record, written as that box's agent writes it, is merged: a new session resumes there.
        let now = SyncStamp.milliseconds(ofSeconds: Date().timeIntervalSince1970)
        let remote = try SyncServiceDaemonTests.bookmark("movie", at: 900, try SyncServiceDaemonTests.stamp(now + 1_000))
        let movieKey = try #require(KeyCodec.key(household: "A", .record(profile: "", contentId: "movie")))
        guard case .written(let movieRevision) = try kv.write(movieKey, KVValue.encode(remote), expecting: nil) else {
            Issue.record("the key was not free")
            return
        }
        let watched = try WatchedBreaks(contentId: "movie", watchedAt: ["b1": Double(now) / 1000])
        let watchedKey = try #require(KeyCodec.key(household: "A", .watched(contentId: "movie")))
        _ = try kv.write(watchedKey, KVValue.encode(watched), expecting: nil)
        try eventually(30, "movie resumes at 15:00; log: \(agent.log)") { () -> Bool? in
            let opened = try player.openSession(Streams.seed(contentId: "movie", useBookmark: true, breaks: []))
            _ = try player.closeSession(opened.sessionId)
            return opened.resumedFromBookmark && opened.resumeContentTime == 900 ? true : nil
        }
        let observer = try daemon.player("observer")
        _ = try observer.watchChanges(after: 0)
        try eventually(30, "watched break b1 of movie merged") { () -> Bool? in
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
        #expect(waiting.state == .connecting || waiting.state == .offline)
        try nats.start()
        let (show, _) = try eventually(60, "show in the bucket after the restart; log: \(agent.log)") { Self.record(kv, "show") }
        #expect(show.value.bookmark?.contentTime == 120)
        _ = try eventually(30, "outbox empty") { agent.status.flatMap { $0.outbox == 0 && $0.state == .connected ? $0 : nil } }

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
}
