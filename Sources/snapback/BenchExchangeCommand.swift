import Glibc
import SnapbackClient

/// `snapback __bench-exchange`: the bench's SeekEnded → snapback push + EventReply round trip, a fixed
/// number of times, against a daemon someone else started — for `make check-budget`, which runs snapbackd
/// under callgrind twice with different counts and takes the difference, so that everything but the
/// round trips (start-up, Hello, OpenSession, closing) cancels out. The exchange is the bench's own
/// (`Bench.openSnapbackSession`, `PingPong`): every answer is checked to be one push and a reply with
/// status 0. No clock, no figures: the daemon's instructions are what is measured, not time.
enum BenchExchangeCommand {
    static let commandName = "__bench-exchange"

    static let usage = """
        Usage: snapback \(commandName) --socket PATH --round-trips N

        Internal command of make check-budget: opens the bench's session on a running snapbackd, checks
        its snapback push, makes N SeekEnded → snapback round trips, closes the session, prints one line
        and waits until the daemon closes the connection (stop it with SIGTERM).
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--socket", "--round-trips"])
        if a.wantsHelp {
            say(usage)
            return ExitCode.ok
        }
        try a.expectPositionals(atMost: 0)
        guard a.value("--socket") != nil else { throw UsageError("--socket is needed") }
        let socket = try a.string("--socket", default: "")
        let roundTrips = try a.integer("--round-trips", default: 0, in: 1...10_000_000)
        let client = try connect(socket, clientName: "snapback-check-budget")
        defer { client.close() }
        let (session, request, _) = try Bench.openSnapbackSession(client)
        try Bench.setReceiveTimeout(client.socket.fd)
        let exchange = PingPong(fd: client.socket.fd, request: request)
        try exchange.run(roundTrips, samples: nil)
        _ = try client.closeSession(session)
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
        return ExitCode.ok
    }
}
