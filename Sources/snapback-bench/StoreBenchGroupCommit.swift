// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackCommandLine
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// `snapback-bench store`, phase 3: what the periodic bookmarks of many playing sessions cost the
/// flash — commits (each one fdatasync of the WAL) and bytes written per minute — with group commit
/// and, in the same run, without it (each save its own transaction, each session on its own timer).
///
/// In process: the daemon's real service (``TimelineService``) and the real SQLite store, on a
/// temporary directory, driven by ``EmbeddedPeer``s and a ``ManualClock``, so that a minute of
/// playback takes as long as its commits do, and the figures are per minute exactly. The clock moves
/// in 100 ms steps and each step waits for the store to commit what it was given, as the loop turns
/// of the daemon do. Bytes come from `/proc/self/io` (the writer thread's writes are the process's).
enum GroupCommitBench {
    struct Figures {
        var saves = 0
        var commits = 0
        /// Bytes passed to write calls (`wchar`) and bytes that reached the block layer (`write_bytes`;
        /// 0 on tmpfs).
        var written: UInt64 = 0
        var deviceWritten: UInt64 = 0
    }

    static let interval: Double = 30

    /// One minute of `sessions` sessions playing, after each started at a scattered moment of one
    /// interval. `grouped` false: the baseline.
    static func run(sessions: Int, grouped: Bool) throws -> Figures {
        let directory = try Processes.makeTemporaryDirectory("snapback-bench-group-commit")
        defer { Processes.removeTree(directory) }
        let loop = PostedClosures()
        var storeConfiguration = SQLiteViewerStateStore.Configuration()
        if !grouped { storeConfiguration.maxBatch = 1 }
        let store = SQLiteViewerStateStore(directory: directory, configuration: storeConfiguration, post: loop.post)
        defer { store.close() }
        let clock = ManualClock(at: wallClockNow())
        var configuration = DaemonConfiguration()
        configuration.bookmarkInterval = interval
        configuration.maxConnections = max(configuration.maxConnections, sessions)
        configuration.maxConnectionsPerUid = max(configuration.maxConnectionsPerUid, sessions)
        let service = TimelineService(
            clock: clock, logger: Logger(level: .error), configuration: configuration,
            store: store, bookmarkTick: grouped ? 5 : 0)
        defer { service.shutdown() }

        var peers: [EmbeddedPeer] = []
        for i in 0..<sessions {
            let peer = EmbeddedPeer(id: UInt64(i + 1), handler: service, logger: Logger(level: .error))
            peer.connect()
            try call(peer, 1, .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "bench-store")))
            let opened = try call(
                peer, 2,
                .openSession(
                    OpenSessionRequest(
                        streamId: "group-\(i)", contentId: "group-\(i)", profile: "bench", contentDuration: 1_000_000)))
            let session = try SnapbackV1.OpenSessionReply.decode(opened).sessionId
            try call(peer, 3, .event(sessionId: session, .playheadReported(streamTime: 0, rate: 1, playing: true)))
            peers.append(peer)
            clock.advance(by: interval / Double(sessions))
            try settle(store, loop)
        }
        _ = peers.map { $0.takeSent() }

        let before = (io: ProcessIO.read(), commits: store.commits)
        var figures = Figures()
        for _ in 0..<600 {
            clock.advance(by: 0.1)
            try settle(store, loop)
            for peer in peers {
                for frame in peer.takeSent() where frame.header.type == .push {
                    switch try WirePushMessage.decode(frame.body).kind {
                    case .bookmarkSaved(_, _, .periodic): figures.saves += 1
                    case .sessionError(let code, let message): throw CommandError("session error \(code.name): \(message)")
                    default: continue
                    }
                }
            }
        }
        let after = ProcessIO.read()
        figures.commits = store.commits - before.commits
        figures.written = after.wchar &- before.io.wchar
        figures.deviceWritten = after.writeBytes &- before.io.writeBytes
        return figures
    }

    /// One request through the service; the reply's body, or the call's status as an error.
    @discardableResult
    private static func call(_ peer: EmbeddedPeer, _ callId: UInt32, _ request: WireRequest) throws -> [UInt8] {
        peer.receive(.request(callId: callId, method: request.method.rawValue), body: request.encoded())
        guard let reply = peer.takeSent().last(where: { $0.header.type == .response && $0.header.callId == callId }) else {
            throw CommandError("no reply to \(request.method)")
        }
        guard reply.header.status == StatusCode.ok.rawValue else { throw CommandError("\(try WireStatus.decode(reply.body))") }
        return reply.body
    }

    /// Runs the store's posted closures until every write made so far has completed.
    private static func settle(_ store: SQLiteViewerStateStore, _ loop: PostedClosures) throws {
        while store.unfinishedWrites > 0 {
            guard loop.runPosted(timeoutSeconds: 30) else { throw CommandError("the store did not commit within 30 s") }
        }
        loop.runReady()
    }

    static func report(sessions: Int) throws {
        let alone = try run(sessions: sessions, grouped: false)
        let grouped = try run(sessions: sessions, grouped: true)
        say("")
        say(
            "3. periodic bookmarks, \(sessions) sessions playing for a minute (interval \(Int(interval)) s; in process, "
                + "virtual clock, real SQLite store):")
        say(
            "   " + padRight("case", 38) + padLeft("saves", 7) + padLeft("commits", 9) + padLeft("KiB written", 13)
                + padLeft("B/save", 9) + padLeft("KiB device", 12))
        for (name, f) in [("a. each save its own commit", alone), ("b. group commit, 5 s shared tick", grouped)] {
            say(
                "   " + padRight(name, 38) + padLeft("\(f.saves)", 7) + padLeft("\(f.commits)", 9)
                    + padLeft(fixed(Double(f.written) / 1024, 1), 13) + padLeft("\(f.written / UInt64(max(f.saves, 1)))", 9)
                    + padLeft(fixed(Double(f.deviceWritten) / 1024, 1), 12))
        }
        say("ratio commits (fdatasyncs) per minute a/b = \(fixed(Double(alone.commits) / Double(max(grouped.commits, 1)), 1))")
        say("ratio bytes written per minute a/b = \(fixed(Double(alone.written) / Double(max(grouped.written, 1)), 1))")
    }
}

/// The store's `post` for an in-process run: closures queued from the writer thread, run on the
/// bench's thread when it asks. `@unchecked Sendable`: both threads hold it, and `mutex` guards the
/// queue, which the compiler cannot see.
private final class PostedClosures: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let ready: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    private var queue: [@Sendable () -> Void] = []

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
    }

    deinit {
        pthread_cond_destroy(ready)
        ready.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    var post: SQLiteViewerStateStore.Post {
        { [self] body in
            pthread_mutex_lock(mutex)
            queue.append(body)
            pthread_cond_signal(ready)
            pthread_mutex_unlock(mutex)
        }
    }

    /// Waits for at least one posted closure (at most `timeoutSeconds`), runs what is queued; false on timeout.
    func runPosted(timeoutSeconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += timeoutSeconds
        pthread_mutex_lock(mutex)
        while queue.isEmpty {
            if pthread_cond_timedwait(ready, mutex, &deadline) == ETIMEDOUT { break }
        }
        let bodies = queue
        queue = []
        pthread_mutex_unlock(mutex)
        for body in bodies { body() }
        return !bodies.isEmpty
    }

    /// Runs what is queued now, without waiting (the releases the service's writes posted).
    func runReady() {
        pthread_mutex_lock(mutex)
        let bodies = queue
        queue = []
        pthread_mutex_unlock(mutex)
        for body in bodies { body() }
    }
}

/// `/proc/self/io`: what this process (all its threads) has written.
enum ProcessIO {
    static func read() -> (wchar: UInt64, writeBytes: UInt64) {
        guard let file = fopen("/proc/self/io", "r") else { return (0, 0) }
        defer { fclose(file) }
        var wchar: UInt64 = 0
        var writeBytes: UInt64 = 0
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let parts = text.split(separator: ":")
            guard parts.count == 2, let value = UInt64(String(parts[1].filter { $0.isASCII && $0.isNumber })) else { continue }
            if parts[0] == "wchar" { wchar = value }
            if parts[0] == "write_bytes" { writeBytes = value }
        }
        return (wchar, writeBytes)
    }
}
