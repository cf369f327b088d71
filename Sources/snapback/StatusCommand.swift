// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire

/// `snapback status`: the daemon's Hello (version, limits, presets) and its counters.
struct StatusCommand {
    static let command = Command(
        name: "status",
        abstract: "The daemon's version, limits, policy presets and counters (Control/GetStatus).",
        parameters: SocketOption.parameters + JSONOption.parameters + [
            .option(
                "sync-status", value: "path",
                help: "The sync agent's status file (default: $SNAPBACK_SYNC_STATUS, else \(defaultSyncStatusPath)).",
                completion: .file)
        ],
        run: { try StatusCommand($0).run() })

    static let defaultSyncStatusPath = "/run/snapback-sync/status"

    let socket: SocketOption
    let output: JSONOption
    let syncStatus: String?

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        output = JSONOption(arguments)
        syncStatus = arguments.string("sync-status")
    }

    /// The household sync agent's status, when its status file is there (snapback-sync(8)); nil when the
    /// agent does not run (no file, or the file of an agent that is gone).
    func syncAgentStatus() -> SyncStatus? {
        var path = Self.defaultSyncStatusPath
        if let env = getenv("SNAPBACK_SYNC_STATUS"), env.pointee != 0 { path = String(cString: env) }
        if let syncStatus { path = syncStatus }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0, let status = SyncStatus.parse(String(decoding: bytes[..<count], as: UTF8.self)) else {
            return nil
        }
        // An agent that was killed leaves its file behind (outside systemd's runtime directory).
        if status.pid > 0, kill(status.pid, 0) != 0, errno == ESRCH { return nil }
        return status
    }

    func run() throws {
        let path = socket.path
        let client = try connect(path, clientName: "snapback-status")
        defer { client.close() }
        let status: SnapbackV1.StatusReply = try client.call(.getStatus)
        let hello = client.hello
        if output.json {
            say(
                JSON.object([
                    "socket": .string(path), "hello": .message(hello), "status": .message(status),
                    "sync": SyncStatus.json(syncAgentStatus())
                ]).rendered)
            return
        }
        let presets = hello.policyPresets.map { $0 == hello.defaultPolicyPreset ? "\($0) (default)" : $0 }
        say("\(hello.serverName) \(status.serverVersion) on \(path), protocol \(status.protocolVersion)")
        row("uptime", clock(status.uptime.rounded(.down)))
        row("connections", "\(status.connections) (this one included)")
        row("sessions", "\(status.sessions)")
        row("requests", "\(status.requests)")
        row("pushes", "\(status.pushes)")
        let storeStatus = status.store ?? SnapbackV1.StoreStatus()
        var store = storeStatus.kind.isEmpty ? "-" : storeStatus.kind
        if !storeStatus.path.isEmpty { store += ", \(storeStatus.path)" }
        if storeStatus.bookmarks > 0 { store += ", \(storeStatus.bookmarks) bookmarks" }
        row("store", store)
        if !storeStatus.error.isEmpty { row("store error", storeStatus.error) }
        row("log dropped", "\(status.logLinesDropped) lines (stderr did not take them)")
        row("max frame", "\(hello.maxFrameSize) bytes")
        row("max queued", "\(hello.maxOutboundQueueBytes) bytes per connection")
        row("max breaks", "\(hello.maxBreaksPerSession) per session")
        row("presets", presets.joined(separator: ", "))
        if let sync = syncAgentStatus() {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            row("sync", sync.summary(now: Double(now.tv_sec)))
            if !sync.lastError.isEmpty { row("sync error", sync.lastError) }
        } else {
            row("sync", "not running")
        }
    }

    private func row(_ name: String, _ value: String) {
        say("  " + padRight(name, 13) + value)
    }
}

/// `snapback bookmarks list|get|delete|clear`: the Bookmarks service for operators.
enum BookmarksCommand {
    static let command = Command(
        name: "bookmarks",
        abstract: "List, show, delete or clear the bookmarks of a viewer profile.",
        discussion: """
            The bookmarks snapbackd keeps per viewer profile and content: where to resume, as content time
            (ads excluded), with the stream time and stream it was taken in.
            """,
        subcommands: [List.command, Get.command, Delete.command, Clear.command],
        // `snapback bookmarks` alone: a bad command line, as it always was.
        missing: "list, get, delete or clear is needed")

    /// The options every bookmarks command takes.
    struct Common {
        static let parameters: [Parameter] =
            [.option("profile", value: "p", help: "Viewer profile (default: the default profile, \"\").")]
            + SocketOption.parameters

        let profile: String
        let socket: SocketOption

        init(_ arguments: ParsedArguments) throws {
            profile = arguments.string("profile") ?? ""
            socket = try SocketOption(arguments)
        }

        var profileName: String { profile.isEmpty ? "the default profile" : "profile \"\(profile)\"" }

        func connect() throws -> SnapbackClient {
            try SnapbackCommandLine.connect(socket.path, clientName: "snapback-bookmarks")
        }
    }

    struct List {
        static let command = Command(
            name: "list", abstract: "Every bookmark of the profile, most recently saved first.",
            parameters: Common.parameters + JSONOption.parameters, run: { try List($0).run() })

        let common: Common
        let output: JSONOption

        init(_ arguments: ParsedArguments) throws {
            common = try Common(arguments)
            output = JSONOption(arguments)
        }

        func run() throws {
            let client = try common.connect()
            defer { client.close() }
            var all: [Bookmark] = []
            var token = ""
            repeat {
                let page: SnapbackV1.ListBookmarksReply = try client.call(
                    .listBookmarks(profile: common.profile, pageSize: 0, pageToken: token))
                all += page.bookmarks
                token = page.nextPageToken
            } while !token.isEmpty
            if output.json {
                say(JSON.object(["profile": .string(common.profile), "bookmarks": .array(all.map { .message($0) })]).rendered)
                return
            }
            if all.isEmpty {
                say("no bookmarks in \(common.profileName)")
                return
            }
            let idWidth = max(10, all.map(\.contentId.count).max() ?? 0) + 2
            say(
                padRight("CONTENT", idWidth) + padLeft("CONTENT TIME", 12) + padLeft("STREAM TIME", 13) + "  "
                    + padRight("UPDATED", 25) + "STREAM")
            for b in all {
                say(
                    padRight(b.contentId, idWidth) + padLeft(clock(b.contentTime), 12) + padLeft(clock(b.streamTime), 13)
                        + "  " + padRight(utcDate(b.updatedAt), 25) + b.streamId + (b.finished ? "  (finished)" : ""))
            }
            say("\(all.count) bookmark\(all.count == 1 ? "" : "s") in \(common.profileName)")
        }
    }

    /// What get and delete take: the profile and the socket, --json, and one content id.
    struct OneBookmark {
        static let parameters =
            Common.parameters + JSONOption.parameters + [.positional("content-id", help: "The content id.")]

        let common: Common
        let output: JSONOption
        let contentId: String

        init(_ arguments: ParsedArguments) throws {
            common = try Common(arguments)
            output = JSONOption(arguments)
            contentId = arguments.string("content-id") ?? ""
            try checkNonEmpty(contentId, "CONTENT_ID")
        }
    }

    struct Get {
        static let command = Command(
            name: "get", abstract: "One bookmark (exit 1 if there is none).", parameters: OneBookmark.parameters,
            run: { try Get(OneBookmark($0)).run() })

        let target: OneBookmark

        init(_ target: OneBookmark) { self.target = target }

        func run() throws {
            let (common, output, contentId) = (target.common, target.output, target.contentId)
            let client = try common.connect()
            defer { client.close() }
            guard let b = try BookmarksCommand.bookmark(client, profile: common.profile, contentId: contentId) else {
                throw CommandError("no bookmark for \"\(contentId)\" in \(common.profileName)")
            }
            if output.json {
                say(b.jsonString)
                return
            }
            say("content      \(b.contentId) (\(common.profileName))")
            say("resume at    content \(clock(b.contentTime)) (ads excluded)")
            say("taken at     stream \(clock(b.streamTime)) of \"\(b.streamId)\"")
            say("updated      \(utcDate(b.updatedAt))")
            if b.finished { say("finished     yes: the viewer reached the end; playback starts over") }
        }
    }

    struct Delete {
        static let command = Command(
            name: "delete", abstract: "Delete one bookmark.", parameters: OneBookmark.parameters,
            run: { try Delete(OneBookmark($0)).run() })

        let target: OneBookmark

        init(_ target: OneBookmark) { self.target = target }

        func run() throws {
            let (common, output, contentId) = (target.common, target.output, target.contentId)
            let client = try common.connect()
            defer { client.close() }
            let reply: SnapbackV1.DeleteBookmarkReply = try client.call(
                .deleteBookmark(profile: common.profile, contentId: contentId))
            if output.json {
                say(
                    JSON.object([
                        "profile": .string(common.profile), "contentId": .string(contentId),
                        "deleted": .bool(reply.deleted)
                    ]).rendered)
                return
            }
            say(
                reply.deleted
                    ? "deleted the bookmark of \"\(contentId)\" in \(common.profileName)"
                    : "no bookmark for \"\(contentId)\" in \(common.profileName)")
        }
    }

    struct Clear {
        static let command = Command(
            name: "clear", abstract: "Delete every bookmark of the profile.",
            parameters: Common.parameters + JSONOption.parameters, run: { try Clear($0).run() })

        let common: Common
        let output: JSONOption

        init(_ arguments: ParsedArguments) throws {
            common = try Common(arguments)
            output = JSONOption(arguments)
        }

        func run() throws {
            let client = try common.connect()
            defer { client.close() }
            let reply: SnapbackV1.ClearBookmarksReply = try client.call(.clearBookmarks(profile: common.profile))
            if output.json {
                say(JSON.object(["profile": .string(common.profile), "deleted": .number(Double(reply.deleted))]).rendered)
                return
            }
            say("deleted \(reply.deleted) bookmark\(reply.deleted == 1 ? "" : "s") in \(common.profileName)")
        }
    }

    /// The bookmark, or nil when the daemon has none (NOT_FOUND).
    private static func bookmark(_ client: SnapbackClient, profile: String, contentId: String) throws -> Bookmark? {
        let result: Result<Bookmark, SnapbackClientError> = Result { () throws(SnapbackClientError) -> Bookmark in
            try client.call(.getBookmark(profile: profile, contentId: contentId))
        }
        switch result {
        case .success(let b): return b
        case .failure(let error) where error.code == .notFound: return nil
        case .failure(let error): throw error
        }
    }
}
