import Glibc
import SnapbackClient
import SnapbackWire

/// `snapback status`: the daemon's Hello (version, limits, presets) and its counters.
enum StatusCommand {
    static let usage = """
        Usage: snapback status [--socket PATH]

        Shows snapbackd's version, limits, policy presets and counters (Control/GetStatus).

        Options:
        \(socketOptionHelp)
          -h, --help        Show this help
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--socket"])
        if a.wantsHelp {
            say(usage)
            return ExitCode.ok
        }
        try a.expectPositionals(atMost: 0)
        let path = try socketPath(a)
        let client = try connect(path, clientName: "snapback-status")
        defer { client.close() }
        let status: StatusReply = try client.call(.getStatus)
        let hello = client.hello
        let presets = hello.policyPresets.map { $0 == hello.defaultPolicyPreset ? "\($0) (default)" : $0 }
        say("\(hello.serverName) \(status.serverVersion) on \(path), protocol \(status.protocolVersion)")
        row("uptime", clock(status.uptime.rounded(.down)))
        row("connections", "\(status.connections) (this one included)")
        row("sessions", "\(status.sessions)")
        row("requests", "\(status.requests)")
        row("pushes", "\(status.pushes)")
        var store = status.store.kind.isEmpty ? "-" : status.store.kind
        if !status.store.path.isEmpty { store += ", \(status.store.path)" }
        if status.store.bookmarks > 0 { store += ", \(status.store.bookmarks) bookmarks" }
        row("store", store)
        if !status.store.error.isEmpty { row("store error", status.store.error) }
        row("log dropped", "\(status.logLinesDropped) lines (stderr did not take them)")
        row("max frame", "\(hello.maxFrameSize) bytes")
        row("max queued", "\(hello.maxOutboundQueueBytes) bytes per connection")
        row("max breaks", "\(hello.maxBreaksPerSession) per session")
        row("presets", presets.joined(separator: ", "))
        return ExitCode.ok
    }

    private static func row(_ name: String, _ value: String) {
        say("  " + padRight(name, 13) + value)
    }
}

/// `snapback bookmarks list|get|delete|clear`: the Bookmarks service for operators.
enum BookmarksCommand {
    static let usage = """
        Usage: snapback bookmarks list   [--profile P] [--socket PATH]
               snapback bookmarks get    [--profile P] CONTENT_ID [--socket PATH]
               snapback bookmarks delete [--profile P] CONTENT_ID [--socket PATH]
               snapback bookmarks clear  [--profile P] [--socket PATH]

        The bookmarks snapbackd keeps per viewer profile and content: where to resume, as content time
        (ads excluded), with the stream time and stream it was taken in.

          list      Every bookmark of the profile, most recently updated first
          get       One bookmark (exit 1 if there is none)
          delete    Delete one bookmark
          clear     Delete every bookmark of the profile

        Options:
          --profile P       Viewer profile (default: the default profile, "")
        \(socketOptionHelp)
          -h, --help        Show this help
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, valueOptions: ["--socket", "--profile"])
        if a.wantsHelp {
            say(usage)
            return ExitCode.ok
        }
        guard let action = a.positionals.first else { throw UsageError("list, get, delete or clear is needed") }
        let profile = a.value("--profile") ?? ""
        let operands = Array(a.positionals.dropFirst())
        func contentId() throws(UsageError) -> String {
            guard operands.count == 1, !operands[0].isEmpty else {
                throw UsageError(operands.count > 1 ? "unexpected argument '\(operands[1])'" : "\(action) needs a CONTENT_ID")
            }
            return operands[0]
        }
        func noOperands() throws(UsageError) {
            if let extra = operands.first { throw UsageError("unexpected argument '\(extra)'") }
        }
        let profileName = profile.isEmpty ? "the default profile" : "profile \"\(profile)\""
        switch action {
        case "list":
            try noOperands()
            let client = try connect(try socketPath(a), clientName: "snapback-bookmarks")
            defer { client.close() }
            var all: [WireBookmark] = []
            var token = ""
            repeat {
                let page: ListBookmarksReply = try client.call(.listBookmarks(profile: profile, pageSize: 0, pageToken: token))
                all += page.bookmarks
                token = page.nextPageToken
            } while !token.isEmpty
            if all.isEmpty {
                say("no bookmarks in \(profileName)")
                return ExitCode.ok
            }
            let idWidth = max(10, all.map(\.contentId.count).max() ?? 0) + 2
            say(padRight("CONTENT", idWidth) + padLeft("CONTENT TIME", 12) + padLeft("STREAM TIME", 13) + "  "
                + padRight("UPDATED", 25) + "STREAM")
            for b in all {
                say(padRight(b.contentId, idWidth) + padLeft(clock(b.contentTime), 12) + padLeft(clock(b.streamTime), 13)
                    + "  " + padRight(utcDate(b.updatedAt), 25) + b.streamId + (b.finished ? "  (finished)" : ""))
            }
            say("\(all.count) bookmark\(all.count == 1 ? "" : "s") in \(profileName)")
        case "get":
            let id = try contentId()
            let client = try connect(try socketPath(a), clientName: "snapback-bookmarks")
            defer { client.close() }
            guard let b = try bookmark(client, profile: profile, contentId: id) else {
                throw CommandError("no bookmark for \"\(id)\" in \(profileName)")
            }
            say("content      \(b.contentId) (\(profileName))")
            say("resume at    content \(clock(b.contentTime)) (ads excluded)")
            say("taken at     stream \(clock(b.streamTime)) of \"\(b.streamId)\"")
            say("updated      \(utcDate(b.updatedAt))")
            if b.finished { say("finished     yes: the viewer reached the end; playback starts over") }
        case "delete":
            let id = try contentId()
            let client = try connect(try socketPath(a), clientName: "snapback-bookmarks")
            defer { client.close() }
            let reply: DeleteBookmarkReply = try client.call(.deleteBookmark(profile: profile, contentId: id))
            say(reply.deleted ? "deleted the bookmark of \"\(id)\" in \(profileName)" : "no bookmark for \"\(id)\" in \(profileName)")
        case "clear":
            try noOperands()
            let client = try connect(try socketPath(a), clientName: "snapback-bookmarks")
            defer { client.close() }
            let reply: ClearBookmarksReply = try client.call(.clearBookmarks(profile: profile))
            say("deleted \(reply.deleted) bookmark\(reply.deleted == 1 ? "" : "s") in \(profileName)")
        default:
            throw UsageError("unknown bookmarks command '\(action)' (list, get, delete, clear)")
        }
        return ExitCode.ok
    }

    /// The bookmark, or nil when the daemon has none (NOT_FOUND).
    private static func bookmark(_ client: SnapbackClient, profile: String, contentId: String) throws -> WireBookmark? {
        let result: Result<WireBookmark, SnapbackClientError> = Result { () throws(SnapbackClientError) -> WireBookmark in
            try client.call(.getBookmark(profile: profile, contentId: contentId))
        }
        switch result {
        case .success(let b): return b
        case .failure(let error) where error.code == .notFound: return nil
        case .failure(let error): throw error
        }
    }
}
