// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// The load of `snapback-bench daemon --load`, run by the bench as a separate process (`snapback-bench load-generator`):
/// opens `--connections` connections with `--sessions` sessions each (as ``SessionMemoryBench`` opens
/// them), then, until SIGTERM, sends each session's playhead report `--hz` times a second, the
/// connections' turns spread evenly over the period, each connection's reports in one write. Before a
/// connection's next write it reads the answers to the last one without waiting: one still missing then
/// was answered later than the next report was due (`late`). Fd 3 is a socket to the bench: it writes
/// `ready` there once the sessions are open. The bench then writes one byte per command: `p` pauses the
/// load (the answers still due are read, then `paused` is written back and nothing is sent, its sessions
/// staying open), `r` resumes it on a fresh schedule (a pause is never counted as lateness), anything else
/// or the socket's end stops it (a signal could be blocked by whatever started the bench); it then writes
/// `done sent=N answered=N errors=N late=N`.
struct BenchLoadGenerator: ParsableCommand {
    static let commandName = "load-generator"
    static let configuration = CommandConfiguration(
        commandName: commandName, abstract: "Internal command of 'snapback-bench daemon --load': the load.",
        shouldDisplay: false)

    @Option(name: .long) var socket: String
    @Option(name: .long) var connections: Int
    @Option(name: .long) var sessions: Int
    @Option(name: .long) var hz: Int

    func validate() throws {
        try checkNonEmpty(socket, "--socket")
        try checkRange(connections, "--connections", 1...10_000)
        try checkRange(sessions, "--sessions", 1...64)
        try checkRange(hz, "--hz", 1...100)
    }

    /// One player connection: its socket, its sessions, and what is outstanding.
    struct Player {
        var client: SnapbackClient
        var sessions: [UInt64]
        var outstanding = 0
    }

    func run() throws {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        var players: [Player] = []
        for c in 0..<connections {
            let client = try connect(socket, clientName: "snapback-bench-load")
            var ids: [UInt64] = []
            for s in 0..<sessions {
                ids.append(try client.openSession(SessionMemoryBench.request(c * sessions + s)).sessionId)
            }
            _ = client.takePushes()
            guard fcntl(client.socket.fd, F_SETFL, fcntl(client.socket.fd, F_GETFL) | O_NONBLOCK) == 0 else {
                throw CommandError("fcntl O_NONBLOCK: \(String(cString: strerror(errno)))")
            }
            players.append(Player(client: client, sessions: ids))
        }
        Output.write("ready\n", to: 3)

        let period = 1_000_000_000 / UInt64(hz)
        let start = monotonicNanoseconds()
        var scheduleStart = start
        var sent = 0
        var answered = 0
        var errors = 0
        var late = 0
        var callId: UInt32 = 1
        var frames: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        var tick: UInt64 = 0
        var stopping = false
        turns: while !stopping {
            for c in players.indices {
                switch Self.benchCommand(waiting: false) {
                case .stop: stopping = true
                case .pause:
                    drainOutstanding(&players, buffer, answered: &answered, errors: &errors)
                    Output.write("paused\n", to: 3)
                    var next = Self.benchCommand(waiting: true)
                    while next == .pause { next = Self.benchCommand(waiting: true) }
                    if next == .stop {
                        stopping = true
                    } else {
                        scheduleStart = monotonicNanoseconds()
                        tick = 0
                        continue turns
                    }
                case .resume, nil: break
                }
                if stopping { break }
                let due = scheduleStart + tick * period + UInt64(c) * period / UInt64(players.count)
                sleepUntil(due)
                let fd = players[c].client.socket.fd
                let (replies, failures) = drain(fd, buffer)
                answered += replies
                errors += failures
                players[c].outstanding -= replies + failures
                late += players[c].outstanding
                // The playhead moves with the wall clock, inside the content before the first mid-roll.
                let position = 60 + Double(monotonicNanoseconds() - start) / 1e9
                frames.removeAll(keepingCapacity: true)
                for session in players[c].sessions {
                    let body = WireRequest.event(
                        sessionId: session,
                        .playheadReported(streamTime: position, rate: 1, playing: true)
                    ).encoded()
                    frames +=
                        FrameHeader.request(
                            callId: callId, method: WireMethod.reportPlayhead.rawValue,
                            length: UInt32(body.count)
                        ).encoded + body
                    callId = callId == UInt32.max ? 1 : callId + 1
                }
                if writeAll(fd, frames) {
                    sent += players[c].sessions.count
                    players[c].outstanding += players[c].sessions.count
                } else {
                    errors += players[c].sessions.count
                }
            }
            tick += 1
        }
        drainOutstanding(&players, buffer, answered: &answered, errors: &errors)
        for player in players { player.client.close() }
        Output.write("done sent=\(sent) answered=\(answered) errors=\(errors) late=\(late)\n", to: 3)
    }

    /// Reads what is there without waiting; counts the RESPONSE frames (status 0, or not) and skips the
    /// pushes. A frame cut by the end of the read is completed by the next one.
    private func drain(_ fd: Int32, _ buffer: UnsafeMutableRawPointer) -> (replies: Int, failures: Int) {
        var replies = 0
        var failures = 0
        var have = 0
        while true {
            let n = recv(fd, buffer + have, (1 << 16) - have, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                // EAGAIN with a partial frame: wait for the rest of it.
                if have == 0 || n == 0 { return (replies, failures) }
                usleep(100)
                continue
            }
            have += n
            var offset = 0
            while have - offset >= FrameHeader.size {
                let length = Int(UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                guard have - offset >= FrameHeader.size + length else { break }
                if buffer.load(fromByteOffset: offset + 8, as: UInt8.self) == FrameType.response.rawValue {
                    if buffer.load(fromByteOffset: offset + 9, as: UInt8.self) == 0 { replies += 1 } else { failures += 1 }
                }
                offset += FrameHeader.size + length
            }
            if offset > 0 {
                if have > offset { memmove(buffer, buffer + offset, have - offset) }
                have -= offset
            }
            if have == 0 && n < (1 << 16) { return (replies, failures) }
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let w = Glibc.send(fd, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
                if w < 0 && (errno == EINTR || errno == EAGAIN) {
                    let full = errno == EAGAIN
                    if Self.benchWantsStop() { return false }
                    if full { usleep(100) }
                    continue
                }
                if w <= 0 { return false }
                written += w
            }
            return true
        }
    }

    private func sleepUntil(_ nanoseconds: UInt64) {
        var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Reads the answers still due, up to a second for them.
    private func drainOutstanding(
        _ players: inout [Player], _ buffer: UnsafeMutableRawPointer, answered: inout Int, errors: inout Int
    ) {
        let deadline = monotonicNanoseconds() + 1_000_000_000
        while players.contains(where: { $0.outstanding > 0 }) && monotonicNanoseconds() < deadline {
            for c in players.indices where players[c].outstanding > 0 {
                let (replies, failures) = drain(players[c].client.socket.fd, buffer)
                answered += replies
                errors += failures
                players[c].outstanding -= replies + failures
            }
            usleep(1000)
        }
    }

    enum Command { case pause, resume, stop }

    /// Whether the bench's next command is to stop (looked at, not taken: a pause or resume waits for the
    /// loop).
    static func benchWantsStop() -> Bool {
        var byte: UInt8 = 0
        let n = recv(3, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if n == 1 { return byte != UInt8(ascii: "p") && byte != UInt8(ascii: "r") }
        return n == 0 || (errno != EAGAIN && errno != EINTR)
    }

    /// The bench's next command on fd 3 (see the type's comment); nil when it wrote none (only when not
    /// `waiting`).
    static func benchCommand(waiting: Bool) -> Command? {
        while true {
            var byte: UInt8 = 0
            let n = recv(3, &byte, 1, waiting ? 0 : Int32(MSG_DONTWAIT))
            if n == 1 {
                switch byte {
                case UInt8(ascii: "p"): return .pause
                case UInt8(ascii: "r"): return .resume
                default: return .stop
                }
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN && !waiting { return nil }
            return .stop
        }
    }
}
