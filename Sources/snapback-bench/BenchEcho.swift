// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import CLinux
import Glibc
import SnapbackCLI
import SnapbackCommandLine
import SnapbackWire

/// The hot loop both sides share, so the client's own work is identical: patch the call id, one `send`,
/// then `recv` until the RESPONSE with that call id is complete (headers parsed in place, no allocation).
final class PingPong {
    static let firstCallId: UInt32 = 0x10000
    static let capacity = 1 << 16

    let fd: Int32
    private let request: UnsafeMutableRawBufferPointer
    private let buffer: UnsafeMutableRawPointer
    private var callId = PingPong.firstCallId
    private(set) var roundTrips = 0
    /// Bytes received in the last round trip, and where its RESPONSE frame starts.
    private var lastCount = 0
    private(set) var lastReplyOffset = 0

    init(fd: Int32, request: [UInt8]) {
        self.fd = fd
        self.request = .allocate(byteCount: request.count, alignment: 8)
        self.request.copyBytes(from: request)
        buffer = .allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        request.deallocate()
        buffer.deallocate()
    }

    var lastResponse: [UInt8] {
        Array(UnsafeRawBufferPointer(start: buffer, count: lastCount))
    }

    /// `count` round trips; durations in nanoseconds go to `samples` when given.
    func run(_ count: Int, samples: UnsafeMutableBufferPointer<UInt64>?) throws {
        for i in 0..<count {
            callId &+= 1
            if callId == 0 { callId = Self.firstCallId }
            request.storeBytes(of: callId.bigEndian, toByteOffset: 4, as: UInt32.self)
            let start = monotonicNanoseconds()
            let sent = Glibc.send(fd, request.baseAddress, request.count, Int32(MSG_NOSIGNAL))
            guard sent == request.count else {
                throw CommandError("send: \(sent < 0 ? String(cString: strerror(errno)) : "short write")")
            }
            try receiveReply()
            let end = monotonicNanoseconds()
            samples?[i] = end &- start
        }
        roundTrips += count
    }

    /// Reads until the RESPONSE to `callId` is complete; exactly one PUSH must come before it.
    @inline(__always)
    private func receiveReply() throws {
        var have = 0
        var offset = 0
        var pushes = 0
        while true {
            let n = recv(fd, buffer + have, Self.capacity - have, 0)
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                throw CommandError(n == 0 ? "the peer closed the connection" : "recv: \(String(cString: strerror(errno)))")
            }
            have += n
            while have - offset >= FrameHeader.size {
                let length = Int(UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                guard have - offset >= FrameHeader.size + length else { break }
                let type = buffer.load(fromByteOffset: offset + 8, as: UInt8.self)
                if type == FrameType.push.rawValue {
                    pushes += 1
                } else if type == FrameType.response.rawValue,
                    UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)) == callId
                {
                    let status = buffer.load(fromByteOffset: offset + 9, as: UInt8.self)
                    guard status == 0, pushes == 1, offset + FrameHeader.size + length == have else {
                        throw CommandError(
                            "unexpected answer to SeekEnded: status \(status), \(pushes) pushes, "
                                + "\(have - offset - FrameHeader.size - length) extra bytes")
                    }
                    lastCount = have
                    lastReplyOffset = offset
                    return
                }
                offset += FrameHeader.size + length
            }
            if have == Self.capacity { throw CommandError("answer longer than \(Self.capacity) bytes") }
        }
    }
}

/// The floors' peer, run by the bench as a separate process (`snapback-bench echo-peer`): on fd 3, reads
/// requests of a fixed size and answers each with the canned bytes snapbackd sent (its reply's call id
/// patched), in one write. No decoding: only the kernel's cost of the same exchange. `--mode blocking`
/// waits in `recv`; `--mode epoll` waits in `epoll_wait` on a non-blocking socket and reads once per
/// wake-up, as libuv does, so the difference is what an event loop costs.
struct BenchEchoServer: ParsableCommand {
    static let commandName = "echo-peer"
    static let configuration = CommandConfiguration(
        commandName: commandName, abstract: "Internal command of 'snapback-bench daemon': the raw ping-pong peer.",
        shouldDisplay: false)

    @Option(name: .long) var mode: String
    @Option(name: .customLong("request-size")) var requestSize: Int
    @Option(name: .long, help: "The canned answer, in hex.") var response: String
    @Option(name: .customLong("reply-offset")) var replyOffset: Int

    func validate() throws {
        guard mode == "blocking" || mode == "epoll" else { throw ValidationError("--mode: blocking or epoll") }
        guard requestSize >= FrameHeader.size else { throw ValidationError("--request-size: at least a frame header") }
        guard let bytes = unhex(response), !bytes.isEmpty else { throw ValidationError("--response: hex bytes") }
        guard replyOffset >= 0, replyOffset + FrameHeader.size <= bytes.count else {
            throw ValidationError("--reply-offset: a frame header within --response")
        }
    }

    func run() throws {
        let status = serve(mode: mode, size: requestSize, response: unhex(response)!, replyOffset: replyOffset)
        if status != ExitCode.ok { throw ArgumentParser.ExitCode(status) }
    }

    func serve(mode: String, size: Int, response: [UInt8], replyOffset: Int) -> Int32 {
        let commandName = Self.commandName
        let fd: Int32 = 3
        var poller: Epoll?
        if mode == "epoll" {
            guard let p = Epoll(watching: fd), fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
                warn("snapback-bench \(commandName): epoll set-up failed: \(String(cString: strerror(errno)))")
                return ExitCode.failure
            }
            poller = p
        }
        let capacity = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        let answer = UnsafeMutableRawBufferPointer.allocate(byteCount: response.count, alignment: 16)
        answer.copyBytes(from: response)
        var have = 0
        while true {
            if let poller, !poller.wait() { return ExitCode.failure }
            let n = recv(fd, buffer + have, capacity - have, 0)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { return n == 0 ? ExitCode.ok : ExitCode.failure }
            have += n
            var offset = 0
            while have - offset >= size {
                // The reply echoes the request's call id.
                (answer.baseAddress! + replyOffset + 4).copyMemory(from: buffer + offset + 4, byteCount: 4)
                var written = 0
                while written < answer.count {
                    let w = Glibc.send(fd, answer.baseAddress! + written, answer.count - written, Int32(MSG_NOSIGNAL))
                    if w < 0 && errno == EINTR { continue }
                    if w <= 0 { return ExitCode.failure }
                    written += w
                }
                offset += size
            }
            if offset > 0 {
                if have > offset { memmove(buffer, buffer + offset, have - offset) }
                have -= offset
            }
        }
    }
}

/// An echo peer: a `snapback-bench echo-peer` process (or snapback-uv-echo, its libuv twin in C) on one end of
/// a socketpair, pinned, warmed up and checked to answer with the same number of bytes as snapbackd.
struct EchoPeer {
    var name: String
    var pid: pid_t
    var fd: Int32
    var loop: PingPong

    /// What answers: `snapback-bench echo-peer --mode blocking|epoll`, or the snapback-uv-echo executable.
    enum Server {
        case blocking, epoll
        case libuv(path: String)
    }

    static func start(
        _ name: String, server: Server, request: [UInt8], response: [UInt8], replyOffset: Int,
        cpu: Int?, warmup: Int, selfPath: String
    ) throws -> EchoPeer {
        let canned = ["--request-size", String(request.count), "--response", hex(response), "--reply-offset", String(replyOffset)]
        let me = selfPath.isEmpty ? "/proc/self/exe" : selfPath
        let (pid, fd) =
            switch server {
            case .blocking: try Processes.spawnWithSocket(me, [BenchEchoServer.commandName, "--mode", "blocking"] + canned)
            case .epoll: try Processes.spawnWithSocket(me, [BenchEchoServer.commandName, "--mode", "epoll"] + canned)
            case .libuv(let path): try Processes.spawnWithSocket(path, canned)
            }
        let peer = EchoPeer(name: name, pid: pid, fd: fd, loop: PingPong(fd: fd, request: request))
        if let cpu { _ = Processes.pinAllThreads(of: pid, cpu: cpu) }
        do {
            try setReceiveTimeout(peer.fd)
            try peer.loop.run(max(warmup, 1), samples: nil)
        } catch {
            peer.stop()
            throw error
        }
        guard peer.loop.lastResponse.count == response.count else {
            peer.stop()
            throw CommandError("the \(name) peer answered \(peer.loop.lastResponse.count) bytes instead of \(response.count)")
        }
        return peer
    }

    /// Closes the socket (the peer exits on end of file) and reaps the process.
    func stop() {
        Glibc.close(fd)
        _ = Processes.wait(pid, seconds: 2)
        BenchCleanup.forget(pid)
    }
}

/// A 10 s receive timeout: a bench whose peer stopped answering fails instead of hanging.
func setReceiveTimeout(_ fd: Int32) throws {
    var value = timeval(tv_sec: 10, tv_usec: 0)
    guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
        throw CommandError("setsockopt SO_RCVTIMEO: \(String(cString: strerror(errno)))")
    }
}

/// One row of the benches' "p50 µs   p99 µs" tables: the name, then both figures in microseconds.
func percentileRow(_ name: String, _ p50: Double, _ p99: Double) -> String {
    padRight(name, 12) + padLeft(fixed(p50, 1), 8) + padLeft(fixed(p99, 1), 9)
}

/// p50 and p99 of durations in nanoseconds, in microseconds (sorts `samples` in place).
func percentiles(_ samples: UnsafeMutableBufferPointer<UInt64>) -> (p50: Double, p99: Double) {
    var samples = samples
    samples.sort()
    let n = samples.count
    guard n > 0 else { return (.nan, .nan) }
    return (Double(samples[n / 2]) / 1000, Double(samples[min(n - 1, n * 99 / 100)]) / 1000)
}

/// An epoll instance watching one socket (the C side: `CLinux`).
struct Epoll {
    private let epfd: Int32

    init?(watching fd: Int32) {
        epfd = snapback_epoll_watch(fd)
        guard epfd >= 0 else { return nil }
    }

    /// Waits until the socket is readable.
    func wait() -> Bool { snapback_epoll_wait_readable(epfd) == 1 }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(bytes.count * 2)
    for b in bytes {
        text.append(digits[Int(b >> 4)])
        text.append(digits[Int(b & 15)])
    }
    return text
}

func unhex(_ text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(chars.count / 2)
    var i = 0
    while i < chars.count {
        guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
        bytes.append(hi << 4 | lo)
        i += 2
    }
    return bytes
}

/// The median of a non-empty list.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let n = sorted.count
    guard n > 0 else { return .nan }
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
}
