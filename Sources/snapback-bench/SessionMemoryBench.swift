// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// `snapback-bench daemon --sessions N`: what one open session costs snapbackd in resident memory. The daemon's
/// RSS is read settled (unchanged for half a second) idle, with the connections open, with the sessions
/// open and after they closed; the sessions' share is the difference between the last two openings,
/// so the connections' buffers are counted apart.
struct SessionMemoryBench {
    let options: BenchOptions
    let out: BenchOutput
    let sessions: Int

    /// The session every bench player opens: on demand, 30 minutes, a pre-roll and two mid-rolls.
    static func request(_ i: Int) -> OpenSessionRequest {
        OpenSessionRequest(
            streamId: "stream-\(i)", contentId: "content-\(i)", profile: "bench",
            breaks: [
                AdBreak(id: "pre", start: 0, duration: 30), AdBreak(id: "mid1", start: 630, duration: 60),
                AdBreak(id: "mid2", start: 1590, duration: 45)
            ],
            contentDuration: 1800, preset: .snapback)
    }

    /// The configuration a bench with `connections` connections needs (one uid opens them all).
    static func configuration(connections: Int, sessions: Int) -> [String] {
        [
            "[limits]", "max-connections = \(connections + 16)", "max-connections-per-uid = \(connections + 16)",
            "max-breaks = \(max(200_000, sessions * 3))"
        ]
    }

    func run(in directory: String) throws -> JSON {
        let perConnection = options.sessionsPerConnection
        let connections = (sessions + perConnection - 1) / perConnection
        let daemon = try BenchDaemon(
            options.daemonPath, in: directory, name: "sessions",
            configuration: Self.configuration(connections: connections, sessions: sessions))
        let idle = daemon.settledRSS()
        var clients: [SnapbackClient] = []
        defer { for client in clients { client.close() } }
        for _ in 0..<connections { clients.append(try connect(daemon.socketPath, clientName: "snapback-bench-sessions")) }
        let withConnections = daemon.settledRSS()
        for i in 0..<sessions {
            _ = try clients[i / perConnection].openSession(Self.request(i))
        }
        let withSessions = daemon.settledRSS()
        for client in clients { client.close() }
        clients = []
        // The daemon gives the heap back a few seconds after a bulk close (MemoryReturn).
        usleep(3_000_000)
        let afterClose = daemon.settledRSS(quiet: 1, limit: 15)
        let stopped = daemon.stop()
        guard let idle, let withConnections, let withSessions, let afterClose else {
            throw CommandError("cannot read snapbackd's VmRSS")
        }
        let perSession = Double(withSessions - withConnections) * 1024 / Double(sessions)
        let perConnectionBytes = Double(withConnections - idle) * 1024 / Double(connections)
        out.line("snapback-bench daemon --sessions \(sessions): snapbackd's resident memory (VmRSS, settled)")
        out.line(
            "  method     \(sessions) sessions (3 breaks each) on \(connections) connection\(connections == 1 ? "" : "s") "
                + "of at most \(perConnection)")
        out.line("  idle                 \(idle) KiB")
        out.line("  connections open     \(withConnections) KiB  (\(fixed(perConnectionBytes, 0)) B per connection)")
        out.line("  sessions open        \(withSessions) KiB  (\(fixed(perSession, 0)) B per session)")
        out.line("  after closing        \(afterClose) KiB")
        out.line("snapbackd SIGTERM → \(stopped.text)")
        out.line("target: at most 2 KiB per session: \(perSession <= 2048 ? "met" : "missed")")
        out.line("bytes per session = \(fixed(perSession, 0))")
        if !stopped.clean { throw CommandError("snapbackd did not stop cleanly: \(stopped.text)") }
        return .object([
            "sessions": .uint(UInt64(sessions)), "connections": .uint(UInt64(connections)),
            "idle_rss_kib": .uint(UInt64(idle)), "connections_rss_kib": .uint(UInt64(withConnections)),
            "sessions_rss_kib": .uint(UInt64(withSessions)), "after_close_rss_kib": .uint(UInt64(afterClose)),
            "bytes_per_connection": .number(perConnectionBytes), "bytes_per_session": .number(perSession),
            "target_met": .bool(perSession <= 2048), "stopped": .string(stopped.text)
        ])
    }
}
