// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTestSupport
import SnapbackWire
import Testing

/// Runs the real `snapbackd` binary on a socket in a fresh temporary directory: spawn, connect,
/// expect, terminate (dbus-broker's util-broker in spirit).
///
/// The binary is `$SNAPBACKD_BIN`, else `.build/debug/snapbackd` under the package root. The daemon's
/// stderr is captured to a file (``stderrLines``). The child is killed with SIGKILL when the harness
/// is released while it still runs — which is what happens when a test fails or throws before
/// ``terminate(signal:)`` — and the directory is removed.
final class DaemonHarness {
    /// How the daemon ended.
    enum Termination: Equatable, CustomStringConvertible {
        case exit(Int32)
        case signal(Int32)
        case stillRunning

        var description: String {
            switch self {
            case .exit(let code): "exit(\(code))"
            case .signal(let signal): "signal(\(signal))"
            case .stillRunning: "still running"
            }
        }
    }

    static var binaryPath: String {
        if let path = ProcessInfo.processInfo.environment["SNAPBACKD_BIN"], !path.isEmpty {
            return path
        }
        // Tests/SnapbackDaemonTests/Support/DaemonHarness.swift → package root.
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        return root.appendingPathComponent(".build/debug/snapbackd").path
    }

    let directory: URL
    let socketPath: String
    let stateDirectory: String
    let stderrPath: String
    let stdoutPath: String
    private let process = Process()

    /// Starts `snapbackd --socket DIR/snapbackd.sock --state-dir DIR/state --log-level debug` plus
    /// `arguments` (later options win), and waits until the socket accepts a connection.
    ///
    /// - Parameters:
    ///   - socketPath: overrides the socket path (relative to the temporary directory if not absolute).
    ///   - waitUntilReady: false for runs expected to fail at start-up.
    ///   - environment: variables added to the daemon's environment.
    ///   - socketActivated: run it under `systemd-socket-activate -l SOCKET` (which passes the
    ///     listening socket as LISTEN_FDS=1 the way systemd does, and execs the daemon at the first
    ///     connection: the readiness probe). `environment` then goes through its `-E` options, since it
    ///     passes on little else.
    ///   - socketActivationArguments: more `systemd-socket-activate` options (another `--listen`).
    ///   - stderrPipe: the daemon's stderr goes to this pipe instead of the file (``stderrText`` then
    ///     reads nothing: the test reads the pipe, or not).
    ///   - launcher: a program and its arguments that exec the daemon (`prlimit --nofile=N:N --`), so
    ///     the daemon keeps the launcher's pid.
    init(
        arguments: [String] = [],
        socketPath: String? = nil,
        in existingDirectory: URL? = nil,
        waitUntilReady: Bool = true,
        environment: [String: String] = [:],
        socketActivated: Bool = false,
        socketActivationArguments: [String] = [],
        launcher: [String] = [],
        stderrPipe: Pipe? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        directory = try existingDirectory ?? Self.makeTemporaryDirectory()
        if let socketPath {
            self.socketPath = socketPath.hasPrefix("/") ? socketPath : directory.appendingPathComponent(socketPath).path
        } else {
            self.socketPath = directory.appendingPathComponent("snapbackd.sock").path
        }
        stateDirectory = directory.appendingPathComponent("state").path
        let suffix = existingDirectory == nil ? "" : "-\(UUID().uuidString.prefix(8))"
        stderrPath = directory.appendingPathComponent("stderr\(suffix).log").path
        stdoutPath = directory.appendingPathComponent("stdout\(suffix).log").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)

        let daemonArguments = ["--socket", self.socketPath, "--state-dir", stateDirectory, "--log-level", "debug"] + arguments
        if socketActivated {
            process.executableURL = URL(fileURLWithPath: Self.socketActivatePath)
            process.arguments =
                ["--listen=\(self.socketPath)"] + socketActivationArguments
                + environment.sorted { $0.key < $1.key }.map { "--setenv=\($0.key)=\($0.value)" }
                + [Self.binaryPath] + daemonArguments
        } else if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [Self.binaryPath] + daemonArguments
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binaryPath)
            process.arguments = daemonArguments
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardError = stderrPipe ?? FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        try process.run()

        if waitUntilReady {
            try waitUntilAccepting(sourceLocation: sourceLocation)
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Debian's systemd package installs it here.
    static let socketActivatePath = "/usr/bin/systemd-socket-activate"

    static func makeTemporaryDirectory() throws -> URL {
        // Short, because a socket path must fit in 108 bytes.
        let url = URL(fileURLWithPath: "/tmp").appendingPathComponent("snapbackd-test-\(UUID().uuidString.prefix(12))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    var pid: Int32 { process.processIdentifier }

    /// CPU time the daemon has used (user and system), in clock ticks, from `/proc/PID/stat`.
    var cpuTicks: Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm)": state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// The descriptors the daemon has open, from `/proc/PID/fd`.
    var openDescriptorCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
    var isRunning: Bool { process.isRunning }

    private func waitUntilAccepting(sourceLocation: SourceLocation) throws {
        let bound = TestTime.scaled(seconds: 10)
        let deadline = Date().addingTimeInterval(bound)
        while Date() < deadline {
            if let probe = try? FrameSocket(connectingTo: socketPath) {
                probe.close()
                return
            }
            guard process.isRunning else {
                let message = "snapbackd exited during start-up (\(termination)); stderr:\n\(stderrText)"
                Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
                throw HarnessError.notReady(message)
            }
            usleep(10_000)
        }
        throw HarnessError.notReady("socket \(socketPath) did not accept within \(bound) s; stderr:\n\(stderrText)")
    }

    enum HarnessError: Error, CustomStringConvertible {
        case notReady(String)
        var description: String {
            switch self {
            case .notReady(let message): message
            }
        }
    }

    /// A new client connection.
    func connect() throws -> FrameSocket {
        try FrameSocket(connectingTo: socketPath)
    }

    // MARK: Output

    var stderrText: String {
        (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
    }

    var stdoutText: String {
        (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
    }

    /// The daemon's log lines so far, priority prefixes included ("<6>...").
    var stderrLines: [String] {
        stderrText.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// Lines logged at error priority (`<3>`) or worse.
    var errorLines: [String] {
        stderrLines.filter { $0.hasPrefix("<0>") || $0.hasPrefix("<1>") || $0.hasPrefix("<2>") || $0.hasPrefix("<3>") }
    }

    /// Waits until a log line contains `text`.
    @discardableResult
    func waitForLog(containing text: String, timeout: TimeInterval = TestTime.scaled(seconds: 5)) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if stderrText.contains(text) { return true }
            usleep(10_000)
        } while Date() < deadline
        return stderrText.contains(text)
    }

    // MARK: Stopping

    func terminate(signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
    }

    /// Waits for the daemon to exit; kills it and reports `.stillRunning` after `timeout`.
    @discardableResult
    func waitForExit(timeout: TimeInterval = TestTime.scaled(seconds: 10)) -> Termination {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            usleep(5_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return .stillRunning
        }
        return termination
    }

    private var termination: Termination {
        if process.isRunning { return .stillRunning }
        switch process.terminationReason {
        case .exit: return .exit(process.terminationStatus)
        case .uncaughtSignal: return .signal(process.terminationStatus)
        @unknown default: return .exit(process.terminationStatus)
        }
    }

    // MARK: One-shot runs

    /// Runs snapbackd with exactly `arguments` to completion (for --help, bad options).
    static func run(_ arguments: [String], timeout: TimeInterval = TestTime.scaled(seconds: 10)) throws -> (
        termination: Termination, stdout: String, stderr: String
    ) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binaryPath)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let stdoutPath = directory.appendingPathComponent("stdout").path
        let stderrPath = directory.appendingPathComponent("stderr").path
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        let termination: Termination
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            termination = .stillRunning
        } else if process.terminationReason == .uncaughtSignal {
            termination = .signal(process.terminationStatus)
        } else {
            termination = .exit(process.terminationStatus)
        }
        return (
            termination,
            (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        )
    }
}

extension Tag {
    /// Needs the RPC service: answers a Control/Hello request (method 0x0000) with a RESPONSE frame and
    /// an oversized request with RESOURCE_EXHAUSTED.
    @Tag static var needsHello: Self
}

/// Raw frames for the daemon tests, protobuf bodies written by hand so the tests need no codec.
enum TestFrames {
    /// Control/Hello.
    static let helloMethod: UInt16 = 0x0000
    static let resourceExhausted: UInt8 = 8

    /// HelloRequest { protocol_version: 1, client_name: "daemon-tests" }. A second Hello on the same
    /// connection is still answered (FAILED_PRECONDITION), which is all the pipelining tests need.
    static let helloBody: [UInt8] = [0x08, 0x01, 0x12, 12] + Array("daemon-tests".utf8)

    static func hello(callId: UInt32) -> Frame {
        Frame(header: .request(callId: callId, method: helloMethod), body: helloBody)
    }
}

extension FrameSocket {
    /// Sends Control/Hello and returns the RESPONSE with the same call id (pushes are skipped).
    func hello(callId: UInt32, timeout: Duration = TestTime.scaled(.seconds(5))) throws -> Frame {
        try send(TestFrames.hello(callId: callId))
        while true {
            let frame = try readFrame(timeout: timeout)
            if frame.header.type == .response && frame.header.callId == callId {
                return frame
            }
        }
    }
}

/// Leaves a socket file nobody listens on, as a crashed daemon would.
func makeStaleSocket(at path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #expect(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    #expect(result == 0, "bind \(path): errno \(errno)")
}
