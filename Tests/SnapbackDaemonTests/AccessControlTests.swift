// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// The allow-list and the limits, through the real binary. The tests run as root, so a peer under
/// another uid is a Python client started by `setpriv` as nobody (65534).
@Suite struct AccessControlTests {
    static let permissionDenied: UInt8 = 7
    static let resourceExhausted: UInt8 = 8

    /// A daemon with `config` as its whole configuration file.
    static func daemon(_ config: String) throws -> DaemonHarness {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory)
        // The readiness probe is a connection too: let it be gone before counting.
        #expect(daemon.waitForLog(containing: "connection 1 (pid"))
        return daemon
    }

    /// Connects as `uid`/`gid` with `groups` as supplementary groups (setpriv + Debian's python3),
    /// sends Hello, and tells what came back: "call=N status=S", then "closed" or "open". With `then`, a
    /// request of that method with an empty body follows the Hello's answer, and its answer is told instead.
    static func connect(
        to socketPath: String, uid: UInt32 = 65534, gid: UInt32 = 65534, groups: [UInt32] = [], then method: UInt16? = nil
    ) throws -> String {
        // The socket is 0660 root:root: let the kernel pass anyone, so that snapbackd decides.
        chmod(socketPath, 0o666)
        chmod((socketPath as NSString).deletingLastPathComponent, 0o755)
        let client = """
            import socket, struct, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(sys.argv[1])
            body = b"\\x08\\x01\\x12\\x06nobody"
            try:
                s.sendall(struct.pack(">IIBBH", len(body), 1, 1, 0, 0) + body)
            except OSError:
                pass  # a refusal may come before the request is written: read it

            def read(n):
                data = b""
                while len(data) < n:
                    chunk = s.recv(n - len(data))
                    if not chunk:
                        raise EOFError
                    data += chunk
                return data
            length, call, ftype, status, method = struct.unpack(">IIBBH", read(12))
            read(length)
            if len(sys.argv) > 2:
                s.sendall(struct.pack(">IIBBH", 0, 2, 1, 0, int(sys.argv[2])))
                length, call, ftype, status, method = struct.unpack(">IIBBH", read(12))
                read(length)
            print("call=%d status=%d" % (call, status), end=" ")
            s.settimeout(0.3)
            try:
                print("closed" if s.recv(1) == b"" else "data")
            except socket.timeout:
                print("open")
            except ConnectionResetError:
                print("closed")
            """
        let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=\(groups.map(String.init).joined(separator: ","))"
        let run = try runToEnd(
            "/usr/bin/setpriv",
            ["--reuid=\(uid)", "--regid=\(gid)", groupOption, "/usr/bin/python3", "-c", client, socketPath]
                + (method.map { ["\($0)"] } ?? []))
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aPeerUnderAnotherUidIsRefusedWithPermissionDeniedAndOneLogLine() throws {
        // The defaults: root and the socket's group (here root's).
        let daemon = try Self.daemon("")
        #expect(try Self.connect(to: daemon.socketPath) == "call=0 status=\(Self.permissionDenied) closed")
        #expect(daemon.waitForLog(containing: "refused"))
        let lines = daemon.stderrLines.filter { $0.contains("uid 65534") && !$0.hasPrefix("<7>") }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("<4>") == true)
        #expect(lines.first?.contains("refused, PERMISSION_DENIED: uid 65534 (gid 65534) is not allowed") == true)
        // Root still is.
        #expect(try daemon.player().hello.serverName == "snapbackd")
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    @Test func allowedUidsAndGroupsPrimaryOrSupplementaryAreServed() throws {
        let daemon = try Self.daemon("[access]\nallow-users = 0 4001\nallow-groups = 4242\n")
        #expect(try Self.connect(to: daemon.socketPath, uid: 4001, gid: 4001) == "call=1 status=0 open")
        #expect(try Self.connect(to: daemon.socketPath, uid: 4002, gid: 4242) == "call=1 status=0 open")
        #expect(try Self.connect(to: daemon.socketPath, uid: 4003, gid: 4003, groups: [17, 4242]) == "call=1 status=0 open")
        #expect(
            try Self.connect(to: daemon.socketPath, uid: 4004, gid: 4004, groups: [17])
                == "call=0 status=\(Self.permissionDenied) closed")
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func rootIsRefusedWhenTheAllowListLeavesItOut() throws {
        let daemon = try Self.daemon("[access]\nallow-users = 1234\nallow-groups =\n")
        // An unsolicited RESPONSE, call id 0, before any request; then the daemon hangs up.
        let raw = try daemon.connect()
        let frame = try raw.readFrame()
        #expect(frame.header.type == .response && frame.header.callId == 0 && frame.header.status == Self.permissionDenied)
        #expect(try WireStatus.decode(frame.body).message == "uid 0 (gid 0) is not allowed to use snapbackd")
        #expect(raw.waitForClose(timeout: .seconds(2)))
        // The client library reports it as the status.
        #expect(throws: SnapbackClientError.status(.permissionDenied, "uid 0 (gid 0) is not allowed to use snapbackd")) {
            try daemon.player()
        }
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func connectionsBeyondTheTotalLimitAreAnsweredResourceExhausted() throws {
        let daemon = try Self.daemon("[limits]\nmax-connections = 2\n")
        let first = try daemon.player("first")
        let second = try daemon.player("second")
        #expect(throws: SnapbackClientError.status(.resourceExhausted, "too many connections: the limit is 2")) {
            try daemon.player("third")
        }
        #expect(daemon.waitForLog(containing: "too many connections"))
        #expect(daemon.stderrLines.filter { $0.hasPrefix("<4>") && $0.contains("too many connections") }.count == 1)
        // A slot freed is a slot again.
        first.close()
        #expect(try retry { try daemon.player("fourth") } != nil)
        _ = second
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func connectionsBeyondThePerUidLimitAreAnsweredResourceExhausted() throws {
        let daemon = try Self.daemon("[limits]\nmax-connections-per-uid = 1\n[access]\nallow-users = 0 65534\n")
        let first = try daemon.player("root-1")
        #expect(throws: SnapbackClientError.status(.resourceExhausted, "too many connections from uid 0: the limit is 1")) {
            try daemon.player("root-2")
        }
        // Another uid has its own allowance.
        #expect(try Self.connect(to: daemon.socketPath) == "call=1 status=0 open")
        _ = first
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    @Test func sessionsBeyondThePerConnectionLimitAreAnsweredResourceExhausted() throws {
        let daemon = try Self.daemon("max-sessions-per-connection = 2\n")
        let player = try daemon.player()
        let a = try player.openSession(Streams.seed(contentId: "a")).sessionId
        _ = try player.openSession(Streams.seed(contentId: "b"))
        #expect(throws: SnapbackClientError.status(.resourceExhausted, "too many sessions on this connection: the limit is 2")) {
            try player.openSession(Streams.seed(contentId: "c"))
        }
        // The connection goes on; closing a session makes room; another connection has its own two.
        _ = try player.closeSession(a)
        _ = try player.openSession(Streams.seed(contentId: "c"))
        let other = try daemon.player("other")
        _ = try other.openSession(Streams.seed(contentId: "d"))
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// Retries `body` for up to 2 s (the daemon learns of a hang-up asynchronously).
    func retry<T>(_ body: () throws -> T) throws -> T? {
        let deadline = Date().addingTimeInterval(2)
        while true {
            do {
                return try body()
            } catch {
                if Date() > deadline { throw error }
                usleep(20_000)
            }
        }
    }
}
