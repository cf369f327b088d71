// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine

/// `snapback-bench exchange`: the bench's SeekEnded → snapback push + EventReply round trip, a fixed
/// number of times, against a daemon someone else started — for `make check-budget`, which runs snapbackd
/// under callgrind twice with different counts and takes the difference, so that everything but the
/// round trips (start-up, Hello, OpenSession, closing) cancels out. The exchange is the bench's own
/// (`Bench.openSnapbackSession`, `PingPong`): every answer is checked to be one push and a reply with
/// status 0. No clock, no figures: the daemon's instructions are what is measured, not time.
struct BenchExchangeCommand: ParsableCommand {
    static let commandName = "exchange"
    static let configuration = CommandConfiguration(
        commandName: commandName,
        abstract: "Internal command of make check-budget.",
        discussion: prose(
            """
            Opens the bench's session on a running snapbackd, checks its snapback push, makes N SeekEnded →
            snapback round trips, closes the session, prints one line and waits until the daemon closes the
            connection (stop it with SIGTERM).
            """),
        shouldDisplay: false)

    @Option(name: .long, help: ArgumentHelp("snapbackd's socket.", valueName: "path")) var socket: String
    @Option(name: .customLong("round-trips"), help: ArgumentHelp("Round trips to make.", valueName: "n"))
    var roundTrips: Int

    func validate() throws {
        try checkNonEmpty(socket, "--socket")
        try checkRange(roundTrips, "--round-trips", 1...10_000_000)
    }

    func run() throws {
        let commandName = Self.commandName
        let probe = try SnapbackProbe(socket: socket, clientName: "snapback-check-budget")
        defer { probe.client.close() }
        let client = probe.client
        try probe.loop.run(roundTrips, samples: nil)
        _ = try client.closeSession(probe.session)
        // The connection stays open until the daemon closes it: SIGTERM (sent once this line is read) then
        // always finds one idle connection to drain. Closing it first would race with the signal, and the
        // daemon's two ways of stopping (with and without a connection left) differ by a few thousand
        // instructions.
        say("\(commandName): \(roundTrips) round trips; waiting for the daemon to close the connection")
        var byte: UInt8 = 0
        while true {
            let n = recv(client.socket.fd, &byte, 1, 0)
            if n == 0 { break }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { continue }  // SO_RCVTIMEO: keep waiting
            if n < 0 { throw CommandError("recv: \(String(cString: strerror(errno)))") }
            throw CommandError("unexpected bytes after the session was closed")
        }
    }
}
