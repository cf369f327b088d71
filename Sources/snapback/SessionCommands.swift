// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire

/// `snapback sessions`: the daemon's open sessions (Control/ListSessions).
struct SessionsCommand {
    static let command = Command(
        name: "sessions",
        abstract: "The daemon's open sessions (Control/ListSessions).",
        discussion: """
            One line per session: content, kind, preset, phase, playhead (stream and content time), breaks,
            and the player that opened it. Root and the members of snapbackd's admin-groups see every
            session; anyone else sees the sessions its own uid opened.
            """,
        parameters: SocketOption.parameters + JSONOption.parameters,
        run: { try SessionsCommand($0).run() })

    let socket: SocketOption
    let output: JSONOption

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        output = JSONOption(arguments)
    }

    func run() throws {
        let client = try connect(socket.path, clientName: "snapback-sessions")
        defer { client.close() }
        // Every page: the daemon answers a thousand sessions at a time.
        var sessions: [SnapbackV1.SessionInfo] = []
        var token = ""
        repeat {
            let reply: SnapbackV1.ListSessionsReply = try client.call(.listSessions(pageSize: 1000, pageToken: token))
            sessions += reply.sessions
            token = reply.nextPageToken
        } while !token.isEmpty
        if output.json {
            say(JSON.object(["sessions": .array(sessions.map { .message($0) })]).rendered)
            return
        }
        for line in SessionDrawing.table(sessions) { say(line) }
    }
}

/// `snapback session ID`: one session drawn as a timeline (Control/GetSession).
struct SessionCommand {
    static let command = Command(
        name: "session",
        abstract: "One session drawn as a timeline: breaks, playhead, pending return (Control/GetSession).",
        discussion: """
            The stream is drawn as a bar with its breaks (█ not watched, ▒ watched, ░ skipped or exempt \
            and not watched), the playhead (●) and the return the daemon will make after the current break \
            (◆); under it the same timeline in content time, ads removed, with a tick (┊) where each break \
            sits. Then every break with its stream and content times, length, ads, position (pre-roll, \
            mid-roll, post-roll) and state: watched or not, exempt (seeks are no longer held to it), \
            skipped with why (trick-play, resume-plan, cooldown, exempt, watched, disabled), playing, and \
            the return that follows it. --json carries them as state.break_states. Colour when stdout is \
            a terminal (not with NO_COLOR set), plain text otherwise.
            """,
        parameters: SocketOption.parameters + JSONOption.parameters + [
            sessionID, .option("width", value: "n", help: "Columns to draw in (default: the terminal's, else 80).")
        ],
        run: { try SessionCommand($0).run() })

    /// `<id>`, of session and convert.
    static let sessionID = Parameter.positional("id", help: "The session id (see snapback sessions).")

    let socket: SocketOption
    let output: JSONOption
    let id: UInt64
    let width: Int?

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        output = JSONOption(arguments)
        id = try arguments.value("id") ?? 0
        width = try arguments.value("width")
        if let width { try checkRange(width, "--width", 40...1000) }
    }

    func run() throws {
        let info = try fetchSession(id, socket: socket.path, clientName: "snapback-session")
        if output.json {
            say(info.jsonString)
            return
        }
        let style = TerminalStyle(color: Terminal.wantsColor)
        for line in SessionDrawing.lines(info, width: width ?? Terminal.columns, style: style) { say(line) }
    }
}

/// `snapback convert ID --stream T | --content T`.
struct ConvertCommand {
    static let command = Command(
        name: "convert",
        abstract: "Stream time ↔ content time for a session.",
        discussion: """
            Converts with the session's breaks as GetSession reports them, by the daemon's own conversion \
            code (a stream time inside a break is the content time where the break sits). Times are \
            seconds or m:ss / h:mm:ss, with fractions: 960, 16:00, 1:02:03.5.
            """,
        parameters: SocketOption.parameters + JSONOption.parameters + [
            SessionCommand.sessionID,
            .option("stream", value: "time", help: "A stream time (ads included) to convert to content time."),
            .option("content", value: "time", help: "A content time (ads excluded) to convert to stream time.")
        ],
        run: { try ConvertCommand($0).run() })

    let socket: SocketOption
    let output: JSONOption
    let id: UInt64
    let stream: String?
    let content: String?

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        output = JSONOption(arguments)
        id = try arguments.value("id") ?? 0
        stream = arguments.string("stream")
        content = arguments.string("content")
        guard (stream == nil) != (content == nil) else { throw UsageError("give one of --stream and --content") }
        for (name, text) in [("--stream", stream), ("--content", content)] {
            if let text, parseTime(text) == nil {
                throw UsageError("\(name): '\(text)' is not a time (seconds, m:ss or h:mm:ss)")
            }
        }
    }

    func run() throws {
        let info = try fetchSession(id, socket: socket.path, clientName: "snapback-convert")
        let layout: TimelineLayout
        do {
            layout = try TimelineLayout(breaks: info.state?.breaks ?? [])
        } catch {
            throw CommandError("session \(id): its breaks do not form a timeline: \(error)")
        }
        let streamTime: Double
        let contentTime: Double
        if let stream {
            streamTime = parseTime(stream)!
            contentTime = layout.contentTime(forStreamTime: streamTime)
        } else {
            contentTime = parseTime(content!)!
            streamTime = layout.streamTime(forContentTime: contentTime)
        }
        let inBreak = layout.breakContaining(streamTime)
        if output.json {
            say(
                JSON.object([
                    "sessionId": .string(String(id)), "streamTime": .number(streamTime),
                    "contentTime": .number(contentTime), "inBreak": inBreak.map { .string($0.id) } ?? .null
                ]).rendered)
            return
        }
        say(
            "session \(id): stream \(clock(streamTime)) = content \(clock(contentTime))"
                + (inBreak.map { " (inside break \($0.id), which sits at content \(clock(contentTime)))" } ?? ""))
    }
}

/// `snapback watch`: the daemon's decisions as they are made (Control/WatchDecisions).
struct WatchCommand {
    static let command = Command(
        name: "watch",
        abstract: "A live stream of the daemon's decisions with their reasons (Control/WatchDecisions).",
        discussion: """
            Every decision of every session — or of one session or content — as the daemon makes it: \
            seeks with their reason (a snapback, the return after the break, a resume, a skip), breaks \
            watched and completed, breaks skipped with why ("break b1 skipped (trick-play)"), bookmarks \
            saved: "why did it snap me back?". One line per decision, \
            or one JSON object per line with --json. Runs until interrupted, the daemon goes away, or \
            --count decisions arrived.

            Root and the members of snapbackd's admin-groups only. A watcher that does not keep up is \
            dropped by the daemon (exit 1), never slowing the players.
            """,
        parameters: SocketOption.parameters + [
            .flag("json", help: "One JSON object per decision, one per line (JSON lines)."),
            .option("session", value: "id", help: "Only this session's decisions."),
            .option("content", value: "content-id", help: "Only decisions of sessions playing this content."),
            .option("count", value: "n", help: "Stop after this many decisions.")
        ],
        run: { try WatchCommand($0).run() })

    let socket: SocketOption
    let json: Bool
    let session: UInt64?
    let content: String?
    let count: Int?

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        json = arguments.flag("json")
        session = try arguments.value("session")
        content = arguments.string("content")
        count = try arguments.value("count")
        if let content { try checkNonEmpty(content, "--content") }
        if session == 0 { throw UsageError("--session: session ids start at 1") }
        if let count { try checkRange(count, "--count", 1...Int.max) }
    }

    func run() throws {
        let client = try connect(socket.path, clientName: "snapback-watch")
        defer { client.close() }
        try client.watchDecisions(sessionId: session ?? 0, contentId: content ?? "")
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            let next = Result { () throws(SnapbackClientError) -> SnapbackV1.Decision in try client.nextDecision(timeout: nil) }
            if case .failure(.socket(.closedByPeer)) = next {
                throw CommandError("snapbackd closed the connection (stopping, or it dropped this watcher for not keeping up)")
            }
            let decision = try next.get()
            say(json ? decision.jsonString : SessionDrawing.line(decision))
            seen += 1
        }
    }
}

/// GetSession, with NOT_FOUND worded for the operator.
func fetchSession(_ id: UInt64, socket: String, clientName: String) throws -> SnapbackV1.SessionInfo {
    let client = try connect(socket, clientName: clientName)
    defer { client.close() }
    let reply = Result { () throws(SnapbackClientError) -> SnapbackV1.SessionInfo in try client.call(.getSession(sessionId: id)) }
    if case .failure(let error) = reply, error.code == .notFound {
        throw CommandError("no open session \(id) that you may see (snapback sessions lists them)")
    }
    return try reply.get()
}

/// What stdout is.
enum Terminal {
    /// Colour when stdout is a terminal, unless NO_COLOR is set or TERM is dumb.
    static var wantsColor: Bool {
        guard isatty(STDOUT_FILENO) == 1 else { return false }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return true
    }

    /// The terminal's width, else $COLUMNS, else 80.
    static var columns: Int {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 40 {
            return Int(size.ws_col)
        }
        if let env = getenv("COLUMNS"), let n = Int(String(cString: env)), n >= 40 { return n }
        return 80
    }
}
