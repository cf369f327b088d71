// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import Synchronization

/// Where log lines go: stderr, written without ever making the writer wait.
///
/// Under systemd stderr is a journald stream socket; if journald stalls, a blocking write would stall
/// the loop and every player with it. So a line is written without blocking; what the descriptor does
/// not take waits in a bounded backlog (whole lines, and the rest of a line cut short, so records stay
/// whole), written when the descriptor can take it again — the loop polls it for that while there is a
/// backlog (``EventLoop``: a timer, not a poll, since `uv_poll_init` would set `O_NONBLOCK` on the
/// descriptor's shared description), and every later line tries first. A line that finds the backlog full is
/// dropped and counted; once the backlog is written, one line says how many were dropped, and
/// ``droppedTotal`` goes into the status reply.
///
/// How the descriptor is made non-blocking without touching anybody else: `O_NONBLOCK` belongs to the
/// open file description, which a terminal or a pipe on fd 2 shares with the shell or the other
/// processes writing to it (setting it would make their writes fail with EAGAIN). Instead:
/// - a socket (journald) gets `send` with `MSG_DONTWAIT`, per call;
/// - a pipe, FIFO or terminal is opened again through `/proc/self/fd/2`, which gives this process a
///   description of its own to make non-blocking; fd 2 itself is left as it is (the runtime's crash
///   messages still go there);
/// - a regular file is written as it is: the kernel never makes a file writer wait for a reader.
///
/// Thread-safe: the loop, the store's writer thread and the reload thread all log.
final class LogSink: Sendable {
    /// The daemon's stderr.
    static let standardError = LogSink(fd: STDERR_FILENO)

    /// Bytes of lines held while the descriptor does not take them.
    static let backlogLimit = 32 * 1024

    enum Mode: Sendable {
        /// `send(MSG_DONTWAIT)`.
        case socket
        /// A description of our own with `O_NONBLOCK`.
        case nonBlocking
        /// Plain writes (a regular file, or a descriptor that could not be made non-blocking).
        case plain
    }

    private struct State {
        var backlog: [UInt8] = []
        /// Lines dropped since the last report line.
        var unreported: UInt64 = 0
    }

    /// The descriptor written to: `fd`, or our own description of the same pipe or terminal.
    let fd: Int32
    let mode: Mode
    private let state = Mutex(State())
    private let dropped = Atomic<UInt64>(0)
    private let backlogged = Atomic<Bool>(false)

    init(fd original: Int32) {
        var status = stat()
        var own: Int32 = -1
        let kind = fstat(original, &status) == 0 ? status.st_mode & S_IFMT : 0
        if kind == S_IFIFO || kind == S_IFCHR {
            own = open("/proc/self/fd/\(original)", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        }
        if own >= 0 {
            fd = own
            mode = .nonBlocking
        } else {
            fd = original
            mode = kind == S_IFSOCK ? .socket : .plain
        }
    }

    /// Lines dropped since the daemon started.
    var droppedTotal: UInt64 { dropped.load(ordering: .relaxed) }

    /// Whether lines wait for the descriptor to take them (a relaxed load: the loop checks it every
    /// iteration).
    var hasBacklog: Bool { backlogged.load(ordering: .relaxed) }

    /// Writes one whole line (its newline included), or keeps it in the backlog, or drops it.
    func write(_ line: UnsafeRawBufferPointer) {
        state.withLock { state in
            flushLocked(&state)
            if state.backlog.isEmpty {
                let written = put(line)
                if written < 0 {
                    // Not EAGAIN: an error the line cannot wait out (EPIPE, EBADF, ENOSPC).
                    countDrop(&state)
                } else if written < line.count {
                    state.backlog.append(contentsOf: line[written...])
                }
            } else if state.backlog.count + line.count <= Self.backlogLimit {
                state.backlog.append(contentsOf: line)
            } else {
                countDrop(&state)
            }
            backlogged.store(!state.backlog.isEmpty, ordering: .relaxed)
        }
    }

    /// Writes what the backlog holds, as far as the descriptor takes it (the loop calls it when the
    /// descriptor is writable).
    func flush() {
        state.withLock { state in
            flushLocked(&state)
            backlogged.store(!state.backlog.isEmpty, ordering: .relaxed)
        }
    }

    /// At exit: waits up to `milliseconds` for the descriptor to take the backlog.
    func drain(milliseconds: Int32) {
        var remaining = milliseconds
        while hasBacklog && remaining > 0 {
            var request = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&request, 1, min(remaining, 100)) >= 0 || errno == EINTR else { return }
            remaining -= 100
            flush()
        }
    }

    private func countDrop(_ state: inout State) {
        state.unreported += 1
        dropped.add(1, ordering: .relaxed)
    }

    private func flushLocked(_ state: inout State) {
        if !state.backlog.isEmpty {
            let written = state.backlog.withUnsafeBytes { put($0) }
            if written < 0 {
                // The backlog can never be written: its lines are dropped.
                let lines = UInt64(state.backlog.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 })
                state.unreported += lines
                dropped.add(lines, ordering: .relaxed)
                state.backlog.removeAll()
                return
            }
            state.backlog.removeFirst(written)
            if !state.backlog.isEmpty { return }
        }
        guard state.unreported > 0 else { return }
        // Room again: say what was lost, once, before any newer line; what the descriptor does not take
        // of it waits in the backlog like any line. On an error the report is not counted as a dropped
        // line: the next line tries again.
        var report = "<4>\(state.unreported) log lines dropped: stderr did not take them (\(droppedTotal) since start)\n"
        let written = report.withUTF8 { put(UnsafeRawBufferPointer($0)) }
        guard written >= 0 else { return }
        state.unreported = 0
        if written < report.utf8.count {
            state.backlog.append(contentsOf: report.utf8.dropFirst(written))
        }
    }

    /// One non-blocking write: the bytes taken (0 when the descriptor is full), or -1 on another error.
    private func put(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        while true {
            let written: Int
            switch mode {
            case .socket:
                written = send(fd, base, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            case .nonBlocking, .plain:
                written = Glibc.write(fd, base, bytes.count)
            }
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            default: return -1
            }
        }
    }
}
