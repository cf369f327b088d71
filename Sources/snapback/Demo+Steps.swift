// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackCommandLine
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire

extension Demo {
    // MARK: Steps

    /// Sends one event, prints it and the pushes it caused; returns them.
    @discardableResult
    func send(_ event: TimelineEvent, _ session: UInt64, _ layout: TimelineLayout, note text: String? = nil) throws
        -> [WirePushMessage]
    {
        var line = describe(event)
        if let t = streamTime(of: event), layout.breakContaining(t) == nil {
            line += "  [content \(clock(layout.contentTime(forStreamTime: t)))]"
        }
        if let text { line += "  — \(text)" }
        sent(line)
        let pushes: [WirePushMessage]
        do {
            pushes = try client.send(event, session: session)
        } catch {
            throw CommandError("\(describe(event)) failed: \(error)")
        }
        settle()
        received(pushes, session: session)
        return pushes
    }

    func streamTime(of event: TimelineEvent) -> Double? {
        switch event {
        case .playheadReported(let t, _, _), .paused(let t): return t
        default: return nil
        }
    }

    func sent(_ line: String) {
        self.line("→ \(line)", kind: "sent")
    }

    /// Lets the daemon's log lines about an exchange (shown alongside by scripts/demo.sh) come out before
    /// the answers are printed.
    func settle() {
        if pace > 0 { usleep(pace) }
    }

    func note(_ text: String) { line("   \(text)", kind: "note") }

    /// One line of the story: printed, or with --json kept as a step of `kind` (the push's fields too).
    func line(_ text: String, kind: String = "text", push: WirePushMessage? = nil) {
        guard json else { return say(text) }
        if text.isEmpty { return }
        var members: JSON.Members = ["kind": .string(kind), "text": .string(text)]
        if let push { members.pairs.append(("push", .message(push.proto))) }
        steps.append(.object(members))
    }

    /// The --json document: the server, the steps, the checks, and whether the story completed.
    func document(error: (any Error)?) -> JSON {
        var members: JSON.Members = [
            "socket": .string(socketPath), "contentId": .string(contentId), "profile": .string(profile),
            "server": hello.map { .message($0) } ?? .null, "steps": .array(steps), "checks": .array(checks.map { .string($0) }),
            "ok": .bool(error == nil)
        ]
        if let error { members.pairs.append(("error", .string("\(error)"))) }
        return .object(members)
    }

    func received(_ pushes: [WirePushMessage], session: UInt64) {
        for push in pushes {
            let expected = (lastSeq[session] ?? 0) + 1
            lastSeq[session] = push.seq
            line(
                "← \(describe(push))" + (push.seq == expected ? "" : "   (seq gap: expected #\(expected))"), kind: "push",
                push: push)
        }
    }

    /// Finds the expected push among `pushes`, else waits up to 2 s for more (a bookmark is pushed once
    /// the store has committed it, which may be after the event's reply).
    @discardableResult
    func expect(
        _ pushes: inout [WirePushMessage], _ session: UInt64, _ what: String,
        _ matches: (WirePushMessage) -> Bool
    ) throws -> WirePushMessage {
        if let found = pushes.first(where: { $0.sessionId == session && matches($0) }) { return found }
        while true {
            let push: WirePushMessage
            do {
                push = try client.nextPush(timeout: .seconds(2))
            } catch {
                throw CommandError("expected push did not arrive: \(what) (\(error))")
            }
            received([push], session: push.sessionId)
            pushes.append(push)
            if push.sessionId == session && matches(push) { return push }
        }
    }

    /// The daemon remembers watched breaks per content: a rerun against the same daemon finds mid1
    /// watched and would not snap back. Say so instead of failing obscurely.
    func checkFresh(_ session: UInt64, break id: String) throws {
        let state: SessionStateReply = try client.call(.getSessionState(sessionId: session))
        if state.breaks.first(where: { $0.id == id })?.watched == true {
            _ = try? client.closeSession(session)
            throw CommandError(
                "break \(id) of \"\(contentId)\" is already watched in this daemon (an earlier run): "
                    + "use --content OTHER-ID, or a fresh daemon (scripts/demo.sh)")
        }
    }

    func printLayout(_ name: String, _ layout: TimelineLayout, contentDuration: Double) {
        let streamEnd = contentDuration + layout.breaks.reduce(0) { $0 + $1.duration }
        line(
            "\(name) of \"\(contentId)\": \(clock(contentDuration)) of content, \(clock(streamEnd)) with its ads", kind: "layout")
        line("   " + padRight("break", 7) + padRight("stream time", 15) + padRight("length", 8) + "at content", kind: "layout")
        for b in layout.breaks {
            line(
                "   " + padRight(b.id, 7) + padRight("\(clock(b.start))–\(clock(b.end))", 15)
                    + padRight("\(Seconds(b.duration)) s", 8) + clock(layout.contentTime(forStreamTime: b.start))
                    + (b.watched ? "   (watched already)" : ""), kind: "layout")
        }
    }
}
