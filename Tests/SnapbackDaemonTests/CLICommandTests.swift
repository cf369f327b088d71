// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// The `snapback` binary against a running daemon, every command in text and with `--json`. Deadlines
/// here are hang guards only; nothing is timed.
@Suite struct CLICommandTests {
    /// The operator's snapback, built beside the daemon under test.
    static var cli: String {
        URL(fileURLWithPath: DaemonHarness.binaryPath).deletingLastPathComponent().appendingPathComponent("snapback").path
    }

    /// Runs `snapback ARGS --socket SOCKET`.
    static func run(_ daemon: DaemonHarness, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try runToEnd(cli, arguments + ["--socket", daemon.socketPath])
    }

    /// `--json` output as one JSON object.
    static func json(_ daemon: DaemonHarness, _ arguments: [String]) throws -> [String: Any] {
        let (status, output) = try run(daemon, arguments + ["--json"])
        #expect(status == 0, "\(output)")
        #expect(output.hasSuffix("\n") && output.dropLast().split(separator: "\n").count == 1, "one line: \(output)")
        let object = try JSONSerialization.jsonObject(with: Data(output.utf8))
        return try #require(object as? [String: Any], "\(output)")
    }

    /// A player whose session sits in break b1 after a snapback from 5:00 over 10:00 to 15:00.
    static func snappedBack(_ daemon: DaemonHarness, content: String = "movie") throws -> (SnapbackClient, UInt64) {
        let player = try daemon.player("cli-test-player")
        let session = try player.openSession(Streams.seed(contentId: content, profile: "kids")).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.seekEnded(from: 300, to: 900), session: session)
        try player.send(.adBreakStarted(breakId: "b1"), session: session)
        try player.send(.playheadReported(streamTime: 615, rate: 1, playing: true), session: session)
        return (player, session)
    }

    @Test func statusInTextAndJSON() throws {
        let daemon = try DaemonHarness()
        let noAgent = ["--sync-status", daemon.directory.appendingPathComponent("no-status").path]
        let (status, text) = try Self.run(daemon, ["status"] + noAgent)
        #expect(status == 0, "\(text)")
        #expect(text.contains("snapbackd ") && text.contains("presets"), "\(text)")
        #expect(text.hasSuffix("  sync         not running\n"), "\(text)")
        let json = try Self.json(daemon, ["status"] + noAgent)
        #expect((json["sync"] as? [String: Any])?["state"] as? String == "not running")
        let hello = try #require(json["hello"] as? [String: Any])
        #expect(hello["serverName"] as? String == "snapbackd")
        #expect((json["status"] as? [String: Any])?["protocolVersion"] as? Int == 1)
    }

    /// `snapback metrics`: OpenMetrics text that Prometheus' own parser takes, with what the daemon
    /// counted; `--json` the reply.
    @Test func metricsAsOpenMetricsAndJSON() throws {
        let daemon = try DaemonHarness()
        let (player, _) = try Self.snappedBack(daemon)
        let (status, text) = try Self.run(daemon, ["metrics"])
        #expect(status == 0, "\(text)")
        #expect(text.hasSuffix("# EOF\n"), "\(text.suffix(200))")
        #expect(text.contains("\nsnapbackd_seeks_commanded_total{reason=\"snapback\",preset=\"snapback\"} 1\n"))
        #expect(text.contains("# TYPE snapbackd_loop_lag_seconds histogram\n# UNIT snapbackd_loop_lag_seconds seconds\n"))
        let parsed = try runToEnd(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys
                from prometheus_client.openmetrics.parser import text_string_to_metric_families
                families = list(text_string_to_metric_families(sys.argv[1]))
                snapbacks = [s.value for f in families for s in f.samples
                             if s.name == "snapbackd_seeks_commanded_total" and s.labels == {"reason": "snapback", "preset": "snapback"}]
                print(len(families), snapbacks)
                """,
                text
            ])
        #expect(parsed.status == 0 && parsed.output == "19 [1]\n", "\(parsed.output)")
        let json = try Self.json(daemon, ["metrics"])
        let families = try #require(json["families"] as? [[String: Any]])
        #expect(families.first?["name"] as? String == "snapbackd_seeks_commanded")
        #expect((json["startId"] as? String)?.count == 32)
        withExtendedLifetime(player) {}
    }

    @Test func bookmarksInTextAndJSON() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "m1", profile: "p")).sessionId
        try player.send(.playheadReported(streamTime: 120, rate: 1, playing: true), session: session)
        try player.send(.paused(streamTime: 120), session: session)
        _ = try player.closeSession(session)

        var (status, text) = try Self.run(daemon, ["bookmarks", "list", "--profile", "p"])
        #expect(status == 0 && text.contains("m1") && text.contains("1 bookmark in profile \"p\""), "\(text)")
        let list = try Self.json(daemon, ["bookmarks", "list", "--profile", "p"])
        let bookmarks = try #require(list["bookmarks"] as? [[String: Any]])
        #expect(bookmarks.count == 1 && bookmarks[0]["contentId"] as? String == "m1")
        #expect(bookmarks[0]["contentTime"] as? Double == 120)

        (status, text) = try Self.run(daemon, ["bookmarks", "get", "m1", "--profile", "p"])
        #expect(status == 0 && text.contains("resume at    content 2:00"), "\(text)")
        #expect(try Self.json(daemon, ["bookmarks", "get", "m1", "--profile", "p"])["streamId"] as? String == "stream-m1")
        (status, text) = try Self.run(daemon, ["bookmarks", "get", "nope", "--profile", "p"])
        #expect(status == 1 && text.contains("no bookmark for \"nope\""), "\(text)")

        #expect(try Self.json(daemon, ["bookmarks", "delete", "m1", "--profile", "p"])["deleted"] as? Bool == true)
        (status, text) = try Self.run(daemon, ["bookmarks", "delete", "m1", "--profile", "p"])
        #expect(status == 0 && text.contains("no bookmark for \"m1\""), "\(text)")
        #expect(try Self.json(daemon, ["bookmarks", "clear", "--profile", "p"])["deleted"] as? Int == 0)
        (status, text) = try Self.run(daemon, ["bookmarks", "clear", "--profile", "p"])
        #expect(status == 0 && text.contains("deleted 0 bookmarks"), "\(text)")
    }

    @Test func sessionsSessionAndConvertInTextAndJSON() throws {
        let daemon = try DaemonHarness()
        let (player, session) = try Self.snappedBack(daemon)
        defer { player.close() }

        var (status, text) = try Self.run(daemon, ["sessions"])
        #expect(status == 0, "\(text)")
        #expect(text.contains("movie") && text.contains("break b1") && text.contains("cli-test-player"), "\(text)")
        let sessions = try #require(try Self.json(daemon, ["sessions"])["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        #expect(sessions.first?["sessionId"] as? String == String(session) && sessions.first?["breakCount"] as? Int == 1)

        (status, text) = try Self.run(daemon, ["session", String(session), "--width", "100"])
        #expect(status == 0, "\(text)")
        // Not a terminal: plain text, no escape sequences.
        #expect(!text.contains("\u{1B}["), "\(text)")
        #expect(text.contains("phase: in break b1"), "\(text)")
        #expect(text.contains("playhead: stream 10:15 = content 10:00"), "\(text)")
        #expect(text.contains("return after b1: stream 15:00 = content 14:00"), "\(text)")
        #expect(text.contains("not watched, playing, then back to 15:00"), "\(text)")
        let info = try Self.json(daemon, ["session", String(session)])
        let state = try #require(info["state"] as? [String: Any])
        #expect(state["pendingReturn"] as? Double == 900 && state["currentBreakId"] as? String == "b1")
        // Not watched: false, a proto3 default, is left out.
        let firstBreak = try #require((state["breaks"] as? [[String: Any]])?.first)
        #expect(firstBreak["id"] as? String == "b1" && firstBreak["watched"] == nil)
        (status, text) = try Self.run(daemon, ["session", "99"])
        #expect(status == 1 && text.contains("no open session 99"), "\(text)")

        (status, text) = try Self.run(daemon, ["convert", String(session), "--stream", "16:00"])
        #expect(status == 0 && text.contains("stream 16:00 = content 15:00"), "\(text)")
        let back = try Self.json(daemon, ["convert", String(session), "--content", "15:00"])
        #expect(back["streamTime"] as? Double == 960 && back["contentTime"] as? Double == 900)
        (status, text) = try Self.run(daemon, ["convert", String(session), "--stream", "x"])
        #expect(status == 2 && text.contains("not a time"), "\(text)")
    }

    @Test func demoAndUsageErrors() throws {
        let daemon = try DaemonHarness()
        var (status, text) = try Self.run(daemon, ["demo"])
        #expect(status == 0 && text.contains("All expected pushes and replies arrived"), "\(text)")
        (status, text) = try runToEnd(Self.cli, ["no-such-command"])
        #expect(status == 2 && text.contains("Usage: snapback"), "\(text)")
        (status, text) = try runToEnd(Self.cli, [])
        #expect(status == 2 && text.contains("a command is needed"), "\(text)")
        (status, text) = try runToEnd(Self.cli, ["bookmarks"])
        #expect(status == 2 && text.contains("list, get, delete or clear is needed"), "\(text)")
        (status, text) = try runToEnd(Self.cli, ["--help"])
        #expect(status == 0 && text.contains("watch") && text.contains("sessions"), "\(text)")
        // The benchmarks are snapback-bench's: the operator's tool neither lists nor runs one.
        #expect(!text.contains("bench"), "\(text)")
        (status, text) = try runToEnd(Self.cli, ["bench"])
        #expect(status == 2, "\(text)")
        (status, text) = try runToEnd(Self.cli, ["--generate-completion-script", "bash"])
        #expect(status == 0 && text.contains("_snapback"), "\(text.prefix(200))")
    }

    /// Every command's help at the 80 columns of a pipe: an indented block of the discussion (a numbered
    /// list, a table of modes) is kept as written only when its lines fit; a longer one is broken by the
    /// argument parser, its tail at the left margin under an indented line.
    @Test func helpTextsFitEightyColumns() throws {
        let commands = [
            [], ["demo"], ["status"], ["sessions"], ["session"], ["convert"], ["watch"], ["bookmarks"], ["cues"],
            ["bookmarks", "list"], ["bookmarks", "get"], ["bookmarks", "delete"], ["bookmarks", "clear"]
        ].map { (Self.cli, $0) }
        let benchCommands = [[], ["daemon"], ["timeline"], ["store"]].map { (BenchCommandTests.benchPath, $0) }
        for (tool, command) in commands + benchCommands {
            let (status, text) = try runToEnd(tool, command + ["--help"])
            #expect(status == 0, "\(tool) \(command): \(text)")
            let discussion = text.split(separator: "\n", omittingEmptySubsequences: false)
                .prefix { !$0.hasPrefix("USAGE:") }
            for (above, line) in zip(discussion, discussion.dropFirst())
            where above.hasPrefix(" ") && !line.isEmpty && !line.hasPrefix(" ") {
                Issue.record("\(tool) \(command.joined(separator: " ")) --help breaks an indented line:\n\(above)\n\(line)")
            }
        }
    }

    /// Every command's help: its overview, its usage line from its own path, `help COMMAND…` the same text.
    @Test func helpOfEveryCommand() throws {
        let commands = [
            ["demo"], ["status"], ["sessions"], ["session"], ["convert"], ["watch"], ["bookmarks"], ["cues"], ["metrics"],
            ["bookmarks", "list"], ["bookmarks", "get"], ["bookmarks", "delete"], ["bookmarks", "clear"]
        ]
        for command in commands {
            let (status, text) = try runToEnd(Self.cli, command + ["--help"])
            #expect(status == 0 && text.hasPrefix("OVERVIEW: "), "\(command): \(text)")
            #expect(text.contains("\nUSAGE: snapback \(command.joined(separator: " "))"), "\(command): \(text)")
            #expect(text.contains("  -h, --help              Show help information.\n"), "\(command): \(text)")
            let (helpStatus, help) = try runToEnd(Self.cli, ["help"] + command)
            #expect(helpStatus == 0 && help == text, "help \(command): \(help)")
        }
        var (status, text) = try runToEnd(Self.cli, ["session", "1", "--width", "10"])
        #expect(status == 2 && text.contains("Error: --width: '10' is not a whole number in 40...1000"), "\(text)")
        #expect(text.contains("Usage: snapback session [--socket <path>] [--json] <id> [--width <n>]"), "\(text)")
        (status, text) = try runToEnd(Self.cli, ["status", "--socket", "/nonexistent/snapbackd.sock"])
        #expect(status == 1 && text.hasPrefix("snapback status: cannot talk to snapbackd on /nonexistent"), "\(text)")
    }

    /// The completion scripts load in their shells and offer the commands (the three shells are
    /// mk/packages.list's: `make deps` installs them).
    @Test func completionScriptsWork() throws {
        let commands = ["demo", "status", "sessions", "session", "convert", "watch", "bookmarks", "cues", "metrics"]
        var (status, text) = try runToEnd(
            "/bin/bash",
            [
                "-c",
                """
                source <("$0" --generate-completion-script bash) && complete -p snapback &&
                COMP_WORDS=(snapback ""); COMP_CWORD=1; _snapback; echo "commands: ${COMPREPLY[*]}"
                COMP_WORDS=(snapback bookmarks get --); COMP_CWORD=3; _snapback; echo "options: ${COMPREPLY[*]}"
                """,
                Self.cli
            ])
        #expect(status == 0 && text.contains("complete -o filenames -F _snapback snapback"), "\(text)")
        #expect(text.contains("commands: " + (commands + ["help"]).joined(separator: " ") + "\n"), "\(text)")
        #expect(text.contains("options: --profile --socket --json --help\n"), "\(text)")

        (status, text) = try runToEnd(Self.cli, ["--generate-completion-script", "zsh"])
        #expect(status == 0 && text.hasPrefix("#compdef snapback\n") && text.contains("_snapback_bookmarks_get()"))
        #expect(commands.allSatisfy { text.contains("        '\($0):") }, "\(text)")
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed (make deps)")
        do {
            // zsh runs the script (its functions defined, the root's called) and each command's function
            // hands _arguments its options and positionals: here _arguments and _describe print them.
            (status, text) = try runToEnd(
                "/usr/bin/zsh",
                [
                    "-f", "-c",
                    """
                    _arguments() { print -rl -- "$@" }; _describe() { print -rl -- "$@" }
                    source <("$0" --generate-completion-script zsh) && _snapback_session && _snapback_cues
                    """,
                    Self.cli
                ])
            #expect(status == 0 && text.hasPrefix("-C\n(-h --help)-h[Show help information.]\n"), "\(text)")
            #expect(text.contains("\n--socket[snapbackd's socket (default\\: $SNAPBACK_SOCKET"), "\(text)")
            #expect(text.contains("/snapbackd.sock).]:path:_files\n--json[Print one JSON document instead of text.]\n:id: \n"))
            #expect(
                text.contains("\n--format[The manifests' format (hls, dash or vmap); detected")
                    && text.contains(":(hls dash vmap)\n"))
            #expect(text.contains("\n*:manifest:_files\n"), "\(text)")
        }
        (status, text) = try runToEnd(Self.cli, ["--generate-completion-script", "fish"])
        #expect(status == 0 && commands.allSatisfy { text.contains(" -a \($0) -d ") }, "\(text)")
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/fish"), "fish is not installed (make deps)")
        do {
            (status, text) = try runToEnd(
                "/usr/bin/fish",
                [
                    "-c",
                    "$argv[1] --generate-completion-script fish | source; complete -C 'snapback '; complete -C 'snapback status --'",
                    Self.cli
                ])
            #expect(status == 0, "\(text)")
            let words = Set(text.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" })
            #expect(words.isSuperset(of: commands + ["help", "--socket", "--json", "--sync-status", "--help"]), "\(text)")
        }
    }

    /// `demo --json`: one document with every step; the pushes the story checks carry their fields. A
    /// second run on the same content fails (its break is watched): still one document, "ok" false.
    @Test func demoInJSON() throws {
        let daemon = try DaemonHarness()
        let json = try Self.json(daemon, ["demo", "--content", "json-demo"])
        #expect(json["ok"] as? Bool == true && json["contentId"] as? String == "json-demo")
        #expect((json["server"] as? [String: Any])?["serverName"] as? String == "snapbackd")
        let steps = try #require(json["steps"] as? [[String: Any]])
        let pushes = steps.compactMap { $0["kind"] as? String == "push" ? $0["push"] as? [String: Any] : nil }
        let seeks = pushes.compactMap { $0["seek"] as? [String: Any] }
        let snapback = try #require(seeks.first { $0["reason"] as? String == "SEEK_REASON_SNAPBACK" }, "\(pushes)")
        #expect(snapback["streamTime"] as? Double == 600)
        #expect(
            pushes.contains {
                let saved = $0["bookmarkSaved"] as? [String: Any]
                return saved?["contentTime"] as? Double == 870 && saved?["trigger"] as? String == "BOOKMARK_TRIGGER_PAUSED"
            })
        #expect(steps.contains { $0["kind"] as? String == "sent" && ($0["text"] as? String ?? "").contains("SeekEnded") })
        #expect((json["checks"] as? [String])?.count == 4)

        let (status, output) = try Self.run(daemon, ["demo", "--content", "json-demo", "--json"])
        #expect(status == 1, "\(output)")
        let failed = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8).prefix { $0 != 10 }) as? [String: Any])
        #expect(failed["ok"] as? Bool == false && (failed["error"] as? String ?? "").contains("already watched"), "\(failed)")
    }

    /// `snapback watch` as a child process, reading its stdout line by line.
    final class Watcher {
        let process = Process()
        let pipe = Pipe()
        var buffer = Data()

        init(_ daemon: DaemonHarness, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: CLICommandTests.cli)
            process.arguments = ["watch"] + arguments + ["--socket", daemon.socketPath]
            process.standardOutput = pipe
            process.standardError = FileHandle.standardError
            try process.run()
        }

        deinit {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }

        /// Every line until the process exits (it does after --count decisions).
        func linesToEnd() -> [String] {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
    }

    /// 100 players, each on its own connection, reporting playheads and pausing (each pause is a
    /// bookmark decision) for `rounds` rounds; every answer must come back OK.
    static func hundredPlayers(_ socketPath: String, rounds: Int) throws -> Int {
        var players: [(SnapbackClient, UInt64)] = []
        for i in 0..<100 {
            let p = try SnapbackClient(socketPath: socketPath, clientName: "other-\(i)")
            players.append((p, try p.openSession(Streams.seed(contentId: "other-\(i)")).sessionId))
        }
        var answered = 0
        for round in 0..<rounds {
            let t = Double(10 + round)
            for (p, s) in players {
                try p.send(.playheadReported(streamTime: t, rate: 1, playing: true), session: s)
                try p.send(.paused(streamTime: t), session: s)
                answered += 2
            }
        }
        for (p, _) in players { p.close() }
        return answered
    }

    @Test func watchSeesAnotherPlayersSnapbackWhileAHundredPlayersRun() throws {
        let daemon = try DaemonHarness()
        let json = try Watcher(daemon, ["--json", "--content", "target", "--count", "1"])
        let text = try Watcher(daemon, ["--content", "target", "--count", "1"])
        let everything = try Watcher(daemon, ["--json", "--count", "50"])
        // All three subscribed before anyone plays (a hang guard of 20 s, polled).
        var subscribed = 0
        for _ in 0..<400 {
            subscribed = daemon.stderrLines.filter { $0.contains("watching decisions") }.count
            if subscribed == 3 { break }
            usleep(50_000)
        }
        try #require(subscribed == 3)

        /// The other players' outcome, written by their thread before `done` is signalled.
        final class Outcome: @unchecked Sendable {
            var answered = 0
            var error: (any Error)?
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        let socketPath = daemon.socketPath
        Thread.detachNewThread {
            do { outcome.answered = try Self.hundredPlayers(socketPath, rounds: 3) } catch { outcome.error = error }
            outcome.done.signal()
        }
        let (player, session) = try Self.snappedBack(daemon, content: "target")
        defer { player.close() }
        #expect(outcome.done.wait(timeout: .now() + 120) == .success, "hang guard")
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        #expect(outcome.answered == 600)

        let line = try #require(json.linesToEnd().first)
        let decision = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(decision["sessionId"] as? String == String(session) && decision["contentId"] as? String == "target")
        #expect(
            decision["kind"] as? String == "DECISION_KIND_SEEK" && decision["seekReason"] as? String == "SEEK_REASON_SNAPBACK")
        #expect(decision["streamTime"] as? Double == 600 && decision["seq"] as? String == "1")
        #expect((decision["reason"] as? String)?.contains("b1") == true, "\(line)")
        let textLine = try #require(text.linesToEnd().first)
        #expect(textLine.contains("session \(session) \"target\" seek to 10:00 (snapback): "), "\(textLine)")
        // The unfiltered watcher: JSON lines, gapless, from the other players too.
        let all = try everything.linesToEnd().map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(all.count == 50)
        #expect(all.map { $0["seq"] as? String } == (1...50).map { String($0) })
        #expect(all.contains { ($0["contentId"] as? String)?.hasPrefix("other-") == true })
    }

    @Test func aWatcherThatStopsReadingIsDroppedWhileThePlayersAreAnswered() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let config = directory.appendingPathComponent("snapbackd.conf").path
        try "[limits]\nmax-watch-queue-bytes = 4K\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", config], in: directory)
        // Subscribes, then never reads: the kernel's socket buffer fills, then the daemon's queue.
        let stalled = try daemon.player("stalled-watcher")
        try stalled.watchDecisions()
        #expect(try Self.hundredPlayers(daemon.socketPath, rounds: 30) == 6000)
        #expect(daemon.waitForLog(containing: "watcher not reading", timeout: 30), "\(daemon.stderrLines.suffix(5))")
        // Every player call above returned OK (a failure throws); the daemon serves on.
        let after = try daemon.player("after")
        let _: SnapbackV1.StatusReply = try after.call(.getStatus)
        // The dropped watcher's connection is closed once its queue is out (or after 2 s): reading what is
        // left ends in end of file.
        var ended = false
        for _ in 0..<100_000 {
            do {
                _ = try stalled.nextDecision(timeout: .seconds(30))
            } catch {
                ended = error == .socket(.closedByPeer)
                break
            }
        }
        #expect(ended)
    }

    /// A trick play over b1 to b2: `watch` shows the BREAK_SKIPPED decision with its reason (text and
    /// JSON lines), and `session` each break's position and state (text and --json).
    @Test func skippedBreaksInWatchAndSession() throws {
        let daemon = try DaemonHarness()
        let json = try Watcher(daemon, ["--json", "--content", "skips", "--count", "2"])
        let text = try Watcher(daemon, ["--content", "skips", "--count", "2"])
        var subscribed = 0
        for _ in 0..<400 where subscribed < 2 {
            subscribed = daemon.stderrLines.filter { $0.contains("watching decisions") }.count
            usleep(50_000)
        }
        try #require(subscribed == 2)
        let player = try daemon.player("cli-test-player")
        defer { player.close() }
        let session = try player.openSession(Streams.seed(contentId: "skips", breaks: FidelityTests.twoBreaks)).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.trickPlayStarted(streamTime: 300, rate: 8), session: session)
        try player.send(.trickPlayEnded(streamTime: 1400), session: session)

        let decisions = try json.linesToEnd().map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(decisions.first?["kind"] as? String == "DECISION_KIND_BREAK_SKIPPED", "\(decisions)")
        #expect(
            decisions.first?["breakId"] as? String == "b1"
                && decisions.first?["skipReason"] as? String == "BREAK_SKIP_REASON_TRICK_PLAY")
        #expect(decisions.last?["kind"] as? String == "DECISION_KIND_SEEK" && decisions.last?["streamTime"] as? Double == 1000)
        let lines = text.linesToEnd()
        #expect(
            lines.first?.contains("session \(session) \"skips\" break b1 skipped (trick-play): break b1 not played") == true,
            "\(lines)")

        let (status, drawn) = try Self.run(daemon, ["session", String(session), "--width", "100"])
        #expect(status == 0, "\(drawn)")
        #expect(drawn.contains("POSITION   STATE"), "\(drawn)")
        #expect(drawn.contains("mid-roll   not watched, skipped (trick-play)"), "\(drawn)")
        #expect(drawn.contains("mid-roll   not watched, playing"), "\(drawn)")
        let state = try #require(try Self.json(daemon, ["session", String(session)])["state"] as? [String: Any])
        let breakStates = try #require(state["breakStates"] as? [[String: Any]])
        #expect(breakStates.map { $0["breakId"] as? String } == ["b1", "b2"])
        #expect(breakStates.map { $0["position"] as? String } == ["BREAK_POSITION_MIDROLL", "BREAK_POSITION_MIDROLL"])
        #expect(breakStates.map { $0["skipReason"] as? String } == ["BREAK_SKIP_REASON_TRICK_PLAY", nil])
        #expect(breakStates.map { $0["exempt"] as? Bool } == [nil, nil])
    }
}

/// Who may watch and whose sessions a peer sees, through the real binaries: `snapback` run as another
/// uid (setpriv) against a daemon that lets anyone connect.
@Suite struct CLIAccessTests {
    /// `snapback ARGS` as `uid`/`gid` (no supplementary groups).
    static func runAs(_ uid: UInt32, _ gid: UInt32, _ daemon: DaemonHarness, _ arguments: [String]) throws -> (
        status: Int32, output: String
    ) {
        try runToEnd(
            "/usr/bin/setpriv",
            ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", CLICommandTests.cli]
                + arguments + ["--socket", daemon.socketPath])
    }

    static func daemon(_ config: String) throws -> DaemonHarness {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonHarness(arguments: ["--config", path], in: directory)
        // The socket is 0660 root:root: let the kernel pass anyone, so that snapbackd decides.
        chmod(daemon.socketPath, 0o666)
        chmod(directory.path, 0o755)
        return daemon
    }

    @Test func anotherUidSeesOnlyItsOwnSessionsAndMayNotWatch() throws {
        let daemon = try Self.daemon("[access]\nallow-users = *\n")
        let (player, session) = try CLICommandTests.snappedBack(daemon)
        defer { player.close() }

        var (status, text) = try Self.runAs(65534, 65534, daemon, ["watch", "--count", "1"])
        #expect(status == 1 && text.contains("PERMISSION_DENIED") && text.contains("root and the admin groups only"), "\(text)")
        (status, text) = try Self.runAs(65534, 65534, daemon, ["sessions"])
        #expect(status == 0 && text.contains("no open sessions"), "\(text)")
        (status, text) = try Self.runAs(65534, 65534, daemon, ["session", String(session)])
        #expect(status == 1 && text.contains("no open session \(session)"), "\(text)")
        // Root sees it.
        (status, text) = try CLICommandTests.run(daemon, ["sessions"])
        #expect(status == 0 && text.contains("1 session"), "\(text)")
    }

    @Test func anAdminGroupMemberSeesEverySessionAndMayWatch() throws {
        let daemon = try Self.daemon("[access]\nallow-users = *\nadmin-groups = 4343\n")
        let (player, session) = try CLICommandTests.snappedBack(daemon)
        defer { player.close() }
        var (status, text) = try Self.runAs(4001, 4343, daemon, ["sessions", "--json"])
        #expect(status == 0 && text.contains("\"sessionId\":\"\(session)\""), "\(text)")
        // Subscribed (the daemon logs it) and then sees the next decision: the break's end timer is far
        // away, so another session's snapback makes one.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        watcher.arguments = [
            "--reuid=4001", "--regid=4343", "--clear-groups", CLICommandTests.cli, "watch", "--count", "1",
            "--socket", daemon.socketPath
        ]
        let pipe = Pipe()
        watcher.standardOutput = pipe
        try watcher.run()
        #expect(daemon.waitForLog(containing: "watching decisions", timeout: 20))
        let (other, _) = try CLICommandTests.snappedBack(daemon, content: "other")
        defer { other.close() }
        text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.waitUntilExit()
        status = watcher.terminationStatus
        #expect(status == 0 && text.contains("\"other\" seek to 10:00 (snapback)"), "\(text)")
    }
}
