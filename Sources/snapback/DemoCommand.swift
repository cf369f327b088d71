// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackTimeline
import SnapbackWire

/// `snapback demo`: a scripted player telling the seeds' story through the real socket — a seek from 5:00
/// to 15:00 over the unwatched break at 10:00 is snapped back to 10:00, the break plays, the daemon returns
/// the viewer to 15:00; a pause saves the bookmark as content time; the same content reopened with ads of
/// other lengths resumes at the same content point. Every push the story needs is checked: the demo is
/// also a smoke test (exit 1 when one does not arrive).
struct DemoCommand {
    static let command = Command(
        name: "demo",
        abstract: "A scripted player that tells the snapback and bookmark story through the socket.",
        discussion: """
            It prints every message it sends (→) and every push and reply it receives (←), with times as
            m:ss, and checks that each expected push arrives.

              1. Watching from 5:00, the viewer seeks to 15:00 over the unwatched break
                 at 10:00: snapped back to 10:00, the break plays, then the daemon sends
                 the viewer on to 15:00.
              2. The viewer pauses at 16:00: the bookmark is saved as content time (ads
                 excluded).
              3. The same content reopens in a stream whose ads have other lengths: the
                 daemon resumes at the same content time, at another stream time.

            With --json, one JSON document instead: the server's Hello, every step in order (kind sent,
            push with the push's fields, reply, note, act or layout, and its text), the checks that passed,
            and "ok" (false with "error" when a check failed; the exit status is then 1).

            Exit status: 0 when every expected push and reply arrived, 1 otherwise, 2 for a bad command line.
            """,
        parameters: SocketOption.parameters + [
            .option(
                "content", value: "id",
                help: """
                    Content id. The daemon remembers watched breaks per content for 24 h: use another id to rerun \
                    against the same daemon.
                    """, default: defaultContent),
            .option("profile", value: "name", help: "Viewer profile the bookmark belongs to.", default: defaultProfile),
            .option(
                "pace", value: "ms", help: "Pause between messages, so a daemon log shown alongside keeps up.", default: "0")
        ] + JSONOption.parameters,
        run: { try DemoCommand($0).run() })

    static let defaultContent = "big-buck-bunny"
    static let defaultProfile = "demo"

    let socket: SocketOption
    let content: String
    let profile: String
    let pace: Int
    let output: JSONOption

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        content = arguments.string("content") ?? Self.defaultContent
        profile = arguments.string("profile") ?? Self.defaultProfile
        pace = try arguments.value("pace") ?? 0
        output = JSONOption(arguments)
        try checkNonEmpty(content, "--content")
        try checkNonEmpty(profile, "--profile")
        try checkRange(pace, "--pace", 0...10_000)
    }

    func run() throws {
        let demo = Demo(
            socketPath: socket.path, contentId: content, profile: profile,
            paceMicroseconds: UInt32(pace * 1000), json: output.json)
        do {
            try demo.run()
            if output.json { say(demo.document(error: nil).rendered) }
        } catch {
            if output.json { say(demo.document(error: error).rendered) }
            throw error
        }
    }
}

/// The script. Stream A (first visit) and stream B (the return) carry the same content with ads of other
/// lengths; the mid-rolls sit at the same content positions (9:30 and 23:30).
final class Demo {
    let socketPath: String
    let contentId: String
    let profile: String
    let pace: UInt32
    var client: SnapbackClient!
    /// The last push seq seen per session, to check they come 1, 2, 3… without gaps.
    var lastSeq: [UInt64: UInt64] = [:]
    var checks: [String] = []
    /// With --json: the steps as they happened, printed as one document at the end instead of text.
    let json: Bool
    var steps: [JSON] = []
    var hello: SnapbackV1.HelloReply?

    static let contentDuration = 1800.0
    static let streamA = [
        AdBreak(id: "pre", start: 0, duration: 30, watched: true),
        AdBreak(id: "mid1", start: 600, duration: 60, adDurations: [30, 30]),
        AdBreak(id: "mid2", start: 1500, duration: 45)
    ]
    static let streamB = [
        AdBreak(id: "pre", start: 0, duration: 20),
        AdBreak(id: "mid1", start: 590, duration: 90, adDurations: [30, 30, 30]),
        AdBreak(id: "mid2", start: 1520, duration: 30)
    ]

    init(socketPath: String, contentId: String, profile: String, paceMicroseconds: UInt32, json: Bool = false) {
        self.json = json
        self.socketPath = socketPath
        self.contentId = contentId
        self.profile = profile
        self.pace = paceMicroseconds
    }

    func run() throws {
        line("snapback demo: a scripted player on \(socketPath)")
        client = try connect(socketPath, clientName: "snapback-demo", retryFor: 3)
        settle()
        let hello = client.hello
        self.hello = hello
        line(
            "connected to \(hello.serverName) \(hello.serverVersion) (protocol \(hello.protocolVersion); "
                + "presets \(hello.policyPresets.joined(separator: ", ")); default \(hello.defaultPolicyPreset))")
        let bookmark = try firstVisit()
        try secondVisit(bookmark: bookmark)
        line("")
        line("All expected pushes and replies arrived:")
        for check in checks { line("  ✓ \(check)") }
        client.close()
    }

    // MARK: Act 1: snapback, then the bookmark

    /// Returns the content time of the bookmark the pause saved.
    func firstVisit() throws -> Double {
        let layout = try TimelineLayout(breaks: Self.streamA)
        line("")
        line("── 1. Snapback: the viewer seeks past an unwatched break ──", kind: "act")
        printLayout("stream \"bbb-a\"", layout, contentDuration: Self.contentDuration)
        let open = OpenSessionRequest(
            streamId: "bbb-a", contentId: contentId, profile: profile, breaks: Self.streamA,
            contentDuration: Self.contentDuration, preset: .snapback)
        sent("OpenSession content \"\(contentId)\" profile \"\(profile)\" stream \"bbb-a\", 3 breaks, preset snapback")
        let reply = try client.openSession(open)
        settle()
        received(client.takePushes(), session: reply.sessionId)
        let session = reply.sessionId
        line(
            "← session \(session) opened, preset \(reply.policyPreset), "
                + (reply.startStreamTime.map { "start at \(clock($0))" } ?? "start at the beginning"), kind: "reply")
        try checkFresh(session, break: "mid1")

        try send(
            .playheadReported(streamTime: 300, rate: 1, playing: true), session, layout,
            note: "the viewer is watching at 5:00")
        try send(.seekStarted(from: 300), session, layout, note: "scrubbing…")
        var pushes = try send(
            .seekEnded(from: 300, to: 900), session, layout,
            note: "released at 15:00: the unwatched break mid1 at 10:00 lies in between")
        try expect(&pushes, session, "seek to 10:00 (snapback)") { push in
            if case .seek(let to, .snapback) = push.kind { return same(to, 600) }
            return false
        }
        note("snapped back to the start of mid1; the daemon will send the viewer on to 15:00 after it")
        checks.append("SeekEnded 5:00 → 15:00 over the unwatched break at 10:00 → seek to 10:00 (snapback)")

        try send(
            .playheadReported(streamTime: 600, rate: 1, playing: true), session, layout,
            note: "the player obeyed (a commanded seek is not reported as SeekEnded)")
        try send(.adBreakStarted(breakId: "mid1"), session, layout)
        try send(.playheadReported(streamTime: 630, rate: 1, playing: true), session, layout, note: "second ad")
        pushes = try send(.adBreakEnded(breakId: "mid1"), session, layout)
        try expect(&pushes, session, "break mid1 watched") { push in
            if case .breakWatched("mid1") = push.kind { return true }
            return false
        }
        try expect(&pushes, session, "seek to 15:00 (resume-after-snapback)") { push in
            if case .seek(let to, .resumeAfterSnapback) = push.kind { return same(to, 900) }
            return false
        }
        try expect(&pushes, session, "bookmark saved at content 13:30 (snapback-return)") { push in
            if case .bookmarkSaved(let c, let s, .snapbackReturn) = push.kind { return same(c, 810) && same(s, 900) }
            return false
        }
        note("mid1 played: the viewer is back at 15:00, where they wanted to go")
        checks.append("AdBreakEnded mid1 → break watched, seek to 15:00 (resume-after-snapback)")

        try send(.playheadReported(streamTime: 900, rate: 1, playing: true), session, layout, note: "at the seek target")
        try send(.playheadReported(streamTime: 930, rate: 1, playing: true), session, layout)
        try send(.playheadReported(streamTime: 960, rate: 1, playing: true), session, layout)
        pushes = try send(.paused(streamTime: 960), session, layout, note: "the viewer stops watching")
        let saved = try expect(&pushes, session, "bookmark saved at content 14:30 (paused)") { push in
            if case .bookmarkSaved(let c, let s, .paused) = push.kind { return same(c, 870) && same(s, 960) }
            return false
        }
        guard case .bookmarkSaved(let contentTime, let streamTime, _) = saved.kind else { return 0 }
        note(
            "stream \(clock(streamTime)) − 30 s pre-roll − 60 s mid1 = content \(clock(contentTime)): "
                + "the bookmark is content time, not stream time")
        checks.append("Pause 16:00 → bookmark saved as content 14:30 (stream 16:00 minus 1:30 of ads)")

        sent("CloseSession \(session)")
        let closing = try client.closeSession(session)
        settle()
        received(closing, session: session)
        line("← session \(session) closed" + (closing.isEmpty ? " (the bookmark is already up to date)" : ""), kind: "reply")

        sent("Bookmarks/Get profile \"\(profile)\" content \"\(contentId)\"")
        let stored: Bookmark = try client.call(.getBookmark(profile: profile, contentId: contentId))
        settle()
        line(
            "← bookmark: content \(clock(stored.contentTime)), taken at stream \(clock(stored.streamTime)) of \"\(stored.streamId)\"",
            kind: "reply")
        guard same(stored.contentTime, contentTime) else {
            throw CommandError("the stored bookmark is at content \(clock(stored.contentTime)), expected \(clock(contentTime))")
        }
        return contentTime
    }

    // MARK: Act 2: resume in a stream with other ad lengths

    func secondVisit(bookmark: Double) throws {
        let layout = try TimelineLayout(breaks: Self.streamB)
        let expectedStart = layout.streamTime(forContentTime: bookmark)
        line("")
        line("── 2. Bookmark: the viewer comes back; the new stream's ads have other lengths ──", kind: "act")
        printLayout("stream \"bbb-b\"", layout, contentDuration: Self.contentDuration)
        var overrides = PolicyOverrides()
        overrides.resumeBreaks = AdPolicy.ResumeBreaks.none
        let open = OpenSessionRequest(
            streamId: "bbb-b", contentId: contentId, profile: profile, breaks: Self.streamB,
            contentDuration: Self.contentDuration, preset: .snapback, overrides: overrides,
            resume: SnapbackV1.ResumeOptions(useBookmark: true))
        sent(
            "OpenSession content \"\(contentId)\" profile \"\(profile)\" stream \"bbb-b\", 3 breaks, preset snapback "
                + "with resume-breaks=none, resume from the bookmark")
        let reply = try client.openSession(open)
        settle()
        let session = reply.sessionId
        var pushes = client.takePushes()
        received(pushes, session: session)
        line(
            "← session \(session) opened, preset \(reply.policyPreset), "
                + (reply.resumedFromBookmark ? "resumed from the bookmark" : "NOT resumed from a bookmark")
                + (reply.resumeContentTime.map { " at content \(clock($0))" } ?? "")
                + (reply.startStreamTime.map { ", start at stream \(clock($0))" } ?? ""), kind: "reply")
        guard reply.resumedFromBookmark, let resumed = reply.resumeContentTime, same(resumed, bookmark) else {
            throw CommandError("expected the session to resume from the bookmark at content \(clock(bookmark))")
        }
        guard let start = reply.startStreamTime, same(start, expectedStart) else {
            throw CommandError("expected the session to start at stream \(clock(expectedStart))")
        }
        try expect(&pushes, session, "seek to \(clock(expectedStart)) (resume-from-bookmark)") { push in
            if case .seek(let to, .resumeFromBookmark) = push.kind { return same(to, expectedStart) }
            return false
        }
        note(
            "content \(clock(bookmark)) + 20 s pre-roll + 90 s mid1 = stream \(clock(expectedStart)) in this stream "
                + "(resume-breaks=none: no break replays before the resume point)")

        sent("ContentTimeForStreamTime \(clock(start))")
        let converted: SnapbackV1.ContentTimeReply = try client.call(
            .contentTimeForStreamTime(sessionId: session, streamTime: start))
        settle()
        let equal = same(converted.contentTime, bookmark)
        line("← content \(clock(converted.contentTime))", kind: "reply")
        note(
            "content \(clock(converted.contentTime)) \(equal ? "=" : "≠") the bookmark's content \(clock(bookmark)): "
                + "stream 16:00 before, stream \(clock(start)) now, the same point of the program")
        guard equal else { throw CommandError("the resume point is not the bookmark's content time") }
        checks.append(
            "reopened with other ad lengths → resumed at stream \(clock(start)) = content \(clock(bookmark)), "
                + "the bookmark's content time")

        try send(.playheadReported(streamTime: start, rate: 1, playing: true), session, layout, note: "playing again")
        try send(
            .paused(streamTime: start), session, layout,
            note: "stops again at once: the bookmark is unchanged, so nothing to save")
        sent("CloseSession \(session)")
        let closing = try client.closeSession(session)
        settle()
        received(closing, session: session)
        line("← session \(session) closed", kind: "reply")
    }
}
