// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// ANSI colour, or none: `snapback session` colours when stdout is a terminal and prints plain text
/// otherwise (a pipe, a file, `NO_COLOR`).
public struct TerminalStyle: Sendable {
    public var color: Bool
    public init(color: Bool) { self.color = color }

    public static let plain = TerminalStyle(color: false)

    func paint(_ text: String, _ sgr: String) -> String {
        color ? "\u{1B}[\(sgr)m\(text)\u{1B}[0m" : text
    }

    func watched(_ text: String) -> String { paint(text, "32") }
    func unwatched(_ text: String) -> String { paint(text, "33") }
    func playhead(_ text: String) -> String { paint(text, "1;36") }
    func pending(_ text: String) -> String { paint(text, "35") }
    func skipped(_ text: String) -> String { paint(text, "31") }
    func dim(_ text: String) -> String { paint(text, "2") }
}

/// A session drawn for the terminal, as a pure function of what GetSession answered: the header, the
/// stream as a bar (breaks not watched █, watched ▒, skipped or exempt and not watched ░), the same
/// timeline in content time (ads removed, a tick where each break sits), the playhead and the pending
/// return with both of their times, and a table of the breaks with their position (pre-, mid-, post-roll)
/// and state. What a break's state can be is what the protocol carries: watched or not, exempt (seeks are
/// no longer held to it), why it was last skipped, which break is playing, and a cooldown that skips breaks.
public enum SessionDrawing {
    public static let unwatchedCell: Character = "█"
    public static let watchedCell: Character = "▒"
    public static let skippedCell: Character = "░"
    public static let contentCell: Character = "─"
    public static let playheadMark: Character = "●"
    public static let returnMark: Character = "◆"
    public static let breakTick: Character = "┊"

    /// `width` is the whole line's; the bars take what the labels leave (at least 20 cells).
    public static func lines(_ info: SnapbackV1.SessionInfo, width: Int = 80, style: TerminalStyle = .plain) -> [String] {
        let state = SessionStateReply(proto: info.state ?? .init())
        let breaks = state.breaks
        let layout = try? TimelineLayout(breaks: breaks)
        let adTime = layout?.totalAdTime ?? breaks.reduce(0) { $0 + $1.duration }
        var end = max(breaks.last?.end ?? 0, state.streamTime, state.pendingReturn ?? 0)
        // Breaks that replace content add less than their duration to the stream.
        if let d = info.contentDuration { end = max(end, layout?.streamDuration(forContentDuration: d) ?? d + adTime) }
        if !(end > 0) { end = 1 }
        let contentEnd = max(info.contentDuration ?? (end - adTime), state.contentTime, 1)
        func content(_ t: Double) -> Double { layout?.contentTime(forStreamTime: t) ?? t }
        var breakStates: [String: SessionStateReply.BreakState] = [:]
        for b in state.breakStates { breakStates[b.breakId] = b }
        /// 1 not watched, 2 watched, 5 skipped or exempt and not watched.
        func kind(_ b: AdBreak) -> Int {
            let s = breakStates[b.id]
            if s?.watched ?? b.watched { return 2 }
            return s.map { $0.exempt || $0.skipped != nil } == true ? 5 : 1
        }

        var out: [String] = []
        out.append(
            "session \(info.sessionId) · content \"\(info.contentId)\" · stream \"\(info.streamId)\""
                + (info.profile.isEmpty ? "" : " · profile \"\(info.profile)\""))
        out.append(
            "\(SessionKind(proto: info.kind) == .live ? "live" : "on demand"), preset \(info.policyPreset) · client \"\(info.clientName)\" "
                + "(uid \(info.peerUid), pid \(info.peerPid)) · opened \(utcDate(info.openedAt)) · \(info.pushes) push"
                + (info.pushes == 1 ? "" : "es"))
        out.append(phaseLine(state))

        // The bars: a label column, then the cells, then the end time.
        let label = 10
        let endText = clock(end)
        let cells = max(20, width - label - 2 - endText.count - 1)
        func column(_ t: Double, of total: Double) -> Int {
            guard t.isFinite, total > 0 else { return 0 }
            return min(cells - 1, max(0, Int((t / total) * Double(cells))))
        }
        var stream = [Character](repeating: contentCell, count: cells)
        var streamKinds = [Int](repeating: 0, count: cells)  // 0 content, 1 unwatched, 2 watched, 3 playhead, 4 return
        for b in breaks {
            let first = column(b.start, of: end)
            let last = max(first, column(b.end, of: end) - (b.end >= end ? 0 : 1))
            let k = kind(b)
            for c in first...last {
                stream[c] = k == 2 ? watchedCell : k == 5 ? skippedCell : unwatchedCell
                streamKinds[c] = k
            }
        }
        var contentBar = [Character](repeating: contentCell, count: cells)
        var contentKinds = [Int](repeating: 0, count: cells)
        for b in breaks {
            let c = column(content(b.start), of: contentEnd)
            contentBar[c] = breakTick
            contentKinds[c] = kind(b)
        }
        if let t = state.pendingReturn {
            let c = column(t, of: end)
            stream[c] = returnMark
            streamKinds[c] = 4
        }
        let playheadColumn = column(state.streamTime, of: end)
        stream[playheadColumn] = playheadMark
        streamKinds[playheadColumn] = 3
        let contentColumn = column(state.contentTime, of: contentEnd)
        contentBar[contentColumn] = playheadMark
        contentKinds[contentColumn] = 3

        out.append(String(repeating: " ", count: label) + "0:00")
        out.append(padRight("stream", label) + "├" + paint(stream, streamKinds, style) + "┤ " + endText)
        out.append(padRight("content", label) + "├" + paint(contentBar, contentKinds, style) + "┤ " + clock(contentEnd))
        out.append(
            marker(
                playheadMark, at: playheadColumn, offset: label + 1, cells: cells,
                text: "playhead: stream \(clock(state.streamTime)) = content \(clock(state.contentTime))",
                style.playhead))
        if let t = state.pendingReturn {
            out.append(
                marker(
                    returnMark, at: column(t, of: end), offset: label + 1, cells: cells,
                    text:
                        "return after \(state.currentBreakId ?? "the break"): stream \(clock(t)) = content \(clock(content(t)))",
                    style.pending))
        }
        out.append(
            style.dim(
                "legend: \(unwatchedCell) break not watched  \(watchedCell) watched  \(skippedCell) skipped "
                    + "or exempt  \(breakTick) break (content time)  \(playheadMark) playhead  \(returnMark) pending return"))

        if let until = state.cooldownUntil {
            out.append("cooldown: breaks are skipped until \(utcDate(until))")
        }
        if let c = state.lastBookmarkContentTime {
            out.append("bookmark: content \(clock(c)) (the last one saved in this session)")
        }

        out.append("")
        if breaks.isEmpty {
            out.append(info.breakCount == 0 ? "no breaks" : "\(info.breakCount) breaks (not listed)")
            return out
        }
        let idWidth = max(5, breaks.map(\.id.count).max() ?? 0) + 2
        out.append(
            padRight("BREAK", idWidth) + padRight("STREAM", 22) + padRight("CONTENT", 10) + padRight("LENGTH", 8)
                + padRight("ADS", 5) + padRight("POSITION", 11) + "STATE")
        for b in breaks {
            let s = breakStates[b.id]
            var what = kind(b) == 2 ? style.watched("watched") : style.unwatched("not watched")
            if s?.exempt == true { what += ", " + style.skipped("exempt") }
            if let why = s?.skipped { what += ", " + style.skipped("skipped (\(why.rawValue))") }
            if state.currentBreakId == b.id { what += ", " + style.playhead("playing") }
            if let t = state.pendingReturn, state.currentBreakId == b.id { what += style.pending(", then back to \(clock(t))") }
            out.append(
                padRight(b.id, idWidth) + padRight("\(clock(b.start)) → \(clock(b.end))", 22)
                    + padRight(clock(content(b.start)), 10) + padRight(clock(b.duration), 8)
                    + padRight(b.adDurations.isEmpty ? "-" : "\(b.adDurations.count)", 5)
                    + padRight(s?.position.map(positionText) ?? "-", 11) + what)
        }
        return out
    }

    /// `pre-roll`, `mid-roll`, `post-roll`.
    public static func positionText(_ p: TimelineSnapshot.BreakPosition) -> String {
        switch p {
        case .preroll: return "pre-roll"
        case .midroll: return "mid-roll"
        case .postroll: return "post-roll"
        }
    }

    static func phaseLine(_ state: SessionStateReply) -> String {
        let motion = state.playing ? "playing" + (state.rate == 1 ? "" : " at \(fixed(state.rate, 2))×") : "not playing"
        switch state.phase {
        case .inBreak?: return "phase: in break \(state.currentBreakId ?? "?"), \(motion)"
        case .content?: return "phase: content, \(motion)"
        case .seeking?: return "phase: seeking"
        case .trickPlay?: return "phase: trick play at \(fixed(state.rate, 2))×"
        case .finished?: return "phase: finished"
        case .closed?: return "phase: closed"
        case nil: return "phase: unknown"
        }
    }

    static func paint(_ cells: [Character], _ kinds: [Int], _ style: TerminalStyle) -> String {
        guard style.color else { return String(cells) }
        var out = ""
        var index = 0
        while index < cells.count {
            var next = index
            while next < cells.count && kinds[next] == kinds[index] { next += 1 }
            let run = String(cells[index..<next])
            switch kinds[index] {
            case 1: out += style.unwatched(run)
            case 2: out += style.watched(run)
            case 3: out += style.playhead(run)
            case 4: out += style.pending(run)
            case 5: out += style.skipped(run)
            default: out += style.dim(run)
            }
            index = next
        }
        return out
    }

    /// A mark under the bar at `column` with its text on its right, or on its left when it does not fit.
    static func marker(
        _ mark: Character, at column: Int, offset: Int, cells: Int, text: String,
        _ paint: (String) -> String
    ) -> String {
        if column + 2 + text.count <= cells + 2 {
            return String(repeating: " ", count: offset + column) + paint("\(mark) \(text)")
        }
        let start = max(0, offset + column - text.count - 1)
        return String(repeating: " ", count: start) + paint("\(text) \(mark)")
    }

    /// `sessions`: one line per session, no breaks.
    public static func table(_ sessions: [SnapbackV1.SessionInfo]) -> [String] {
        guard !sessions.isEmpty else { return ["no open sessions"] }
        let contentWidth = max(8, sessions.map(\.contentId.count).max() ?? 0) + 2
        let clientWidth = max(7, sessions.map(\.clientName.count).max() ?? 0) + 2
        var out = [
            padRight("ID", 6) + padRight("CONTENT", contentWidth) + padRight("KIND", 10) + padRight("PRESET", 9)
                + padRight("PHASE", 10) + padLeft("STREAM", 9) + padLeft("CONTENT", 9) + padLeft("BREAKS", 8) + "  "
                + padRight("CLIENT", clientWidth) + "UID/PID"
        ]
        for s in sessions {
            let state = SessionStateReply(proto: s.state ?? .init())
            let phase: String
            switch state.phase {
            case .inBreak?: phase = "break " + (state.currentBreakId ?? "")
            case .content?: phase = state.playing ? "playing" : "paused"
            case .seeking?: phase = "seeking"
            case .trickPlay?: phase = "trick"
            case .finished?: phase = "finished"
            case .closed?: phase = "closed"
            case nil: phase = "?"
            }
            out.append(
                padRight("\(s.sessionId)", 6) + padRight(s.contentId, contentWidth)
                    + padRight(SessionKind(proto: s.kind) == .live ? "live" : "on-demand", 10) + padRight(s.policyPreset, 9)
                    + padRight(phase, 10)
                    + padLeft(clock(state.streamTime), 9) + padLeft(clock(state.contentTime), 9)
                    + padLeft("\(s.breakCount)", 8) + "  " + padRight(s.clientName, clientWidth) + "\(s.peerUid)/\(s.peerPid)")
        }
        out.append("\(sessions.count) session\(sessions.count == 1 ? "" : "s")")
        return out
    }

    /// `watch`: one decision in one line: `14:12:10 session 3 "movie" seek → 10:00 (snapback): seek 300→900…`.
    public static func line(_ d: SnapbackV1.Decision) -> String {
        let what: String
        switch DecisionKind(proto: d.kind) {
        case .seek?: what = "seek to \(clock(d.streamTime)) (\(SeekReason(proto: d.seekReason)?.rawValue ?? "unknown reason"))"
        case .breakWatched?: what = "break \(d.breakId) watched"
        case .breakCompleted?: what = "break \(d.breakId) completed"
        case .playBreak?: what = "play break \(d.breakId)"
        case .allAdsCompleted?: what = "all ads completed"
        case .saveBookmark?:
            what =
                "save bookmark at content \(clock(d.contentTime)) (stream \(clock(d.streamTime)), "
                + "\(BookmarkTrigger(proto: d.bookmarkTrigger)?.rawValue ?? "unknown trigger"))"
        case .clearBookmark?: what = "clear bookmark"
        case .breakSkipped?:
            what = "break \(d.breakId) skipped (\(BreakSkipReason(proto: d.skipReason)?.rawValue ?? "unknown reason"))"
        case nil: what = "(a decision this client does not know)"
        }
        let time = utcDate(d.at).split(separator: " ").dropFirst().first.map(String.init) ?? "-"
        return "\(time) session \(d.sessionId) \"\(d.contentId)\" \(what)" + (d.reason.isEmpty ? "" : ": \(d.reason)")
    }
}
