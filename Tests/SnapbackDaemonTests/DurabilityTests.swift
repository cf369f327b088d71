// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// Viewer state through the real daemon across kills and restarts: acknowledged = durable.
@Suite(.serialized) struct DurabilityTests {
    /// Players save bookmarks as fast as the daemon acknowledges them; the daemon is SIGKILLed at random
    /// moments, many times in a row, and restarted on the same state directory. Every bookmark whose
    /// BookmarkSaved push arrived must be there with its value (or a later value that was sent).
    @Test func acknowledgedBookmarksSurviveRepeatedSigkills() throws {
        let kills = 40
        let players = 6
        let directory = try DaemonHarness.makeTemporaryDirectory()
        var daemons: [DaemonHarness] = []  // kept alive: the last one releasing removes the directory
        let ledger = Ledger()
        var generator = SystemRandomNumberGenerator()
        var losses: [String] = []
        let started = Date()

        for round in 0..<kills {
            let daemon = try DaemonHarness(in: directory)
            daemons.append(daemon)
            // What the previous rounds acknowledged is there after this restart.
            losses += try ledger.verify(daemon, keys: ledger.keys(round: round - 1))
            let stop = StopFlag()
            let threads = (0..<players).map { player in
                PlayerThread(socketPath: daemon.socketPath, round: round, player: player, ledger: ledger, stop: stop)
            }
            threads.forEach { $0.start() }
            usleep(UInt32.random(in: 150_000...600_000, using: &generator))
            daemon.terminate(signal: SIGKILL)
            #expect(daemon.waitForExit() == .signal(SIGKILL))
            stop.set()
            threads.forEach { $0.join() }
        }
        let last = try DaemonHarness(in: directory)
        daemons.append(last)
        losses += try ledger.verify(last, keys: ledger.keys(round: nil))

        let summary = ledger.summary
        let seconds = Date().timeIntervalSince(started)
        print(
            "kill test: N=\(summary.acknowledged) acknowledged saves of \(summary.bookmarks) bookmarks "
                + "(\(summary.sent) sent), kills=\(kills), losses=\(losses.count), \(String(format: "%.1f", seconds)) s")
        #expect(losses.isEmpty, "lost: \(losses.prefix(20))")
        #expect(summary.acknowledged >= kills * 10, "too few saves to mean anything: \(summary.acknowledged)")
        #expect(last.errorLines.filter { $0.contains("bookmark store") }.isEmpty, "\(last.errorLines)")
    }

    /// A watched break stays watched when the player reconnects to a restarted daemon (SIGTERM).
    @Test func watchedBreakStaysWatchedAfterARestart() throws {
        try watchedBreakSurvives(stopWith: SIGTERM)
    }

    /// The same after SIGKILL: the watched break was written before the bookmark the break's end saved,
    /// and writes commit in order, so that bookmark's BookmarkSaved means the break is durable too.
    @Test func watchedBreakStaysWatchedAfterSigkill() throws {
        try watchedBreakSurvives(stopWith: SIGKILL)
    }

    private func watchedBreakSurvives(stopWith signal: Int32) throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let first = try DaemonHarness(in: directory)
        let watcher = try first.player()
        do {
            // Another viewer plays and never pauses: only the shutdown saves its bookmark.
            let session = try watcher.openSession(Streams.seed(contentId: "series", breaks: [])).sessionId
            try watcher.send(.playheadReported(streamTime: 100, rate: 1, playing: true), session: session)
        }
        do {
            let player = try first.player()
            let session = try player.openSession(Streams.seed(contentId: "movie")).sessionId
            try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
            #expect(try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [600])
            try player.send(.adBreakStarted(breakId: "b1"), session: session)
            try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: session)
            // Both are pushed once committed: after them, a SIGKILL must not lose them.
            var pushes = try player.send(.adBreakEnded(breakId: "b1"), session: session)
            while pushes.savedBookmarks.isEmpty || pushes.watchedBreaks.isEmpty {
                pushes.append(try player.nextPush(timeout: .seconds(5)))
            }
            #expect(pushes.watchedBreaks == ["b1"])
            #expect(pushes.savedBookmarks == [840])
        }
        first.terminate(signal: signal)
        #expect(first.waitForExit() == (signal == SIGKILL ? .signal(SIGKILL) : .exit(0)))

        let second = try DaemonHarness(in: directory)
        let player = try second.player()
        // The same content: the seek over b1 is not snapped back.
        let session = try player.openSession(Streams.seed(contentId: "movie")).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [])
        // Content never watched: snapped back as ever (the check above means something).
        let other = try player.openSession(Streams.seed(contentId: "movie-2")).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: other)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: other).seekTargets == [600])
        // The bookmark the break's end saved is there too (SIGTERM: the shutdown's final one, a moment later).
        let stored: Bookmark = try player.call(.getBookmark(profile: "", contentId: "movie"))
        #expect(stored.contentTime >= 840 && stored.contentTime < 841, "\(stored.contentTime)")
        if signal == SIGTERM {
            // Saved by the shutdown, committed before the daemon exited.
            let final: Bookmark = try player.call(.getBookmark(profile: "", contentId: "series"))
            #expect(final.contentTime >= 100 && final.contentTime < 101, "\(final.contentTime)")
        } else {
            #expect(throws: SnapbackClientError.self) {
                let _: Bookmark = try player.call(.getBookmark(profile: "", contentId: "series"))
            }
        }
        second.terminate()
        #expect(second.waitForExit() == .exit(0))
        #expect(second.errorLines == [])
        withExtendedLifetime((first, watcher)) {}
    }
}

/// The store's failures through the daemon: it keeps serving and says why.
@Suite(.serialized) struct StoreFailureTests {
    /// A corrupt database: moved aside, a fresh one serves, the status query shows what happened.
    @Test func aCorruptDatabaseIsReplacedAndTheStatusSaysSo() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 10_000).write(to: directory.appendingPathComponent("state/snapback.db"))
        let daemon = try DaemonHarness(in: directory)
        let player = try daemon.player()
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.store?.kind == "sqlite")
        #expect(status.store?.path == daemon.stateDirectory + "/snapback.db")
        #expect(status.store?.error.contains("corrupt") == true, "\(String(describing: status.store))")
        #expect(daemon.errorLines.contains { $0.contains("corrupt") })
        let aside = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)
        #expect(aside.contains { $0.hasPrefix("snapback.db.corrupt-") }, "\(aside)")
        // Serving: a save is acknowledged and read back.
        let session = try player.openSession(Streams.seed(contentId: "fresh", breaks: [])).sessionId
        try player.send(.playheadReported(streamTime: 50, rate: 1, playing: true), session: session)
        var pushes = try player.send(.paused(streamTime: 50), session: session)
        while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
        let stored: Bookmark = try player.call(.getBookmark(profile: "", contentId: "fresh"))
        #expect(stored.contentTime == 50)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// A full disk (a 1 MiB tmpfs as the state directory, filled by another file): the save fails with a
    /// RESOURCE_EXHAUSTED session error, the daemon stays up, and once space returns saves succeed.
    @Test func aFullDiskFailsTheSaveWithResourceExhaustedThenRecovers() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        guard geteuid() == 0, run(["mount", "-t", "tmpfs", "-o", "size=1m", "snapback-test", state]) == 0 else {
            print("skipped: cannot mount a tmpfs here (the store's own tests cover SQLITE_FULL with max_page_count)")
            try? FileManager.default.removeItem(at: directory)
            return
        }
        defer {
            // The harness removes the directory when released, which fails on a mount point: tidy up here.
            run(["umount", "-l", state])
            try? FileManager.default.removeItem(at: directory)
        }
        let daemon = try DaemonHarness(in: directory)
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "big", breaks: [])).sessionId
        // Fill the filesystem.
        let filler = state + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 1, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        // Each session is one bookmark: save many sessions' bookmarks with long stream ids until one fails.
        var failed: WirePushMessage?
        var saved = 0
        for i in 0..<500 where failed == nil {
            var open = Streams.seed(contentId: "filler-\(i)", breaks: [])
            open.streamId = String(repeating: "s", count: 3000)
            let s = try player.openSession(open).sessionId
            try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: s)
            var pushes = try player.send(.paused(streamTime: 10), session: s)
            while pushes.savedBookmarks.isEmpty, failed == nil {
                let push = try player.nextPush(timeout: .seconds(5))
                if case .sessionError = push.kind { failed = push } else { pushes.append(push) }
            }
            if failed == nil { saved += 1 }
        }
        let error = try #require(failed, "no save failed after \(saved) saves")
        guard case .sessionError(let code, let message) = error.kind else { return }
        #expect(code == .resourceExhausted, "\(message)")
        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.store?.error.contains("full") == true, "\(String(describing: status.store))")
        // Space returns: the next save is acknowledged.
        unlink(filler)
        try player.send(.playheadReported(streamTime: 20, rate: 1, playing: true), session: session)
        var pushes = try player.send(.paused(streamTime: 20), session: session)
        while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
        #expect(pushes.savedBookmarks == [20])
        #expect((try player.call(.getStatus) as SnapbackV1.StatusReply).store?.error.isEmpty == true)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @discardableResult
    private func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// What the players sent and what the daemon acknowledged, per bookmark key.
private final class Ledger: @unchecked Sendable {
    private let lock = NSLock()
    /// Values sent per key, in order (each a content time larger than the last).
    private var sent: [String: [Double]] = [:]
    /// The last acknowledged value per key.
    private var acknowledged: [String: Double] = [:]
    private var acknowledgedCount = 0
    private var sentCount = 0
    private var keysByRound: [Int: [String]] = [:]

    func sending(_ key: String, _ value: Double, round: Int) {
        lock.lock()
        defer { lock.unlock() }
        if sent[key] == nil { keysByRound[round, default: []].append(key) }
        sent[key, default: []].append(value)
        sentCount += 1
    }

    func acknowledged(_ key: String, _ value: Double) {
        lock.lock()
        defer { lock.unlock() }
        acknowledged[key] = value
        acknowledgedCount += 1
    }

    var bookmarkKeys: Int {
        lock.lock()
        defer { lock.unlock() }
        return sent.count
    }

    func keys(round: Int?) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        guard let round else { return Array(sent.keys) }
        return keysByRound[round] ?? []
    }

    var summary: (acknowledged: Int, bookmarks: Int, sent: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (acknowledgedCount, acknowledged.count, sentCount)
    }

    /// Reads every key back; returns what was lost (an acknowledged value missing or replaced by one
    /// that was never sent or is older).
    func verify(_ daemon: DaemonHarness, keys: [String]) throws -> [String] {
        guard !keys.isEmpty else { return [] }
        let client = try daemon.player("verifier")
        var lost: [String] = []
        for key in keys {
            lock.lock()
            let acked = acknowledged[key]
            let values = sent[key] ?? []
            lock.unlock()
            var stored: Double?
            do {
                let bookmark: Bookmark = try client.call(.getBookmark(profile: "kill", contentId: key))
                stored = bookmark.contentTime
            } catch {
                guard error.code == .notFound else { throw error }
            }
            guard let acked else { continue }  // never acknowledged: anything goes
            if let stored, stored >= acked, values.contains(stored) { continue }
            lost.append("\(key): acknowledged \(acked), stored \(stored.map { "\($0)" } ?? "nothing")")
        }
        return lost
    }
}

private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// One player: sessions of its own content ids, each saving increasing positions (play, pause, wait
/// for BookmarkSaved), until the daemon dies under it.
private final class PlayerThread: @unchecked Sendable {
    let socketPath: String
    let round: Int
    let player: Int
    let ledger: Ledger
    let stop: StopFlag
    private let done = DispatchSemaphore(value: 0)

    init(socketPath: String, round: Int, player: Int, ledger: Ledger, stop: StopFlag) {
        self.socketPath = socketPath
        self.round = round
        self.player = player
        self.ledger = ledger
        self.stop = stop
    }

    func start() {
        let thread = Thread { [self] in
            try? play()
            done.signal()
        }
        thread.start()
    }

    func join() { done.wait() }

    private func play() throws {
        let client = try SnapbackClient(socketPath: socketPath, clientName: "kill-test-\(player)", timeout: .seconds(3))
        var n = 0
        while !stop.isSet {
            let key = "r\(round)-p\(player)-s\(n)"
            n += 1
            let open = OpenSessionRequest(
                streamId: "stream-\(key)", contentId: key, profile: "kill", kind: .onDemand, breaks: [],
                contentDuration: 100_000, preset: .snapback)
            let session = try client.openSession(open).sessionId
            // 25 saves per content id; past 9,000 ids (the store keeps 10,000) the last one goes on.
            var step = 0
            while step < 25 || (ledger.bookmarkKeys >= 9_000 && !stop.isSet) {
                step += 1
                let t = Double(step * 10) + Double(player) / 100
                try client.send(.playheadReported(streamTime: t, rate: 1, playing: true), session: session)
                ledger.sending(key, t, round: round)
                var pushes = try client.send(.paused(streamTime: t), session: session)
                while !pushes.contains(where: { if case .bookmarkSaved(let c, _, _) = $0.kind { c == t } else { false } }) {
                    pushes.append(try client.nextPush(timeout: .seconds(3)))
                }
                ledger.acknowledged(key, t)
            }
            try client.closeSession(session)
        }
    }
}
