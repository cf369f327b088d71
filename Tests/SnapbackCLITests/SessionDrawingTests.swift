// SPDX-License-Identifier: Apache-2.0
import SnapbackCLI
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire
import Testing

/// `snapback session`'s drawing, `sessions`' table and `watch`'s lines, as pure functions of replies.
@Suite struct SessionDrawingTests {
    /// 100 s of content with a watched pre-roll of 10 s and an unwatched 20 s break at stream 50, in
    /// that break with a return to stream 90 pending.
    static func info(phase: TimelineSnapshot.Phase = .inBreak, pending: Double? = 90) -> SnapbackV1.SessionInfo {
        let breaks = [
            AdBreak(id: "pre", start: 0, duration: 10, watched: true),
            AdBreak(id: "mid", start: 50, duration: 20, adDurations: [10, 10])
        ]
        let state = SessionStateReply(
            phase: phase, currentBreakId: phase == .inBreak ? "mid" : nil, streamTime: 55,
            contentTime: 40, playing: true, rate: 1, pendingReturn: pending, breaks: breaks)
        return SnapbackV1.SessionInfo(
            sessionId: 7, contentId: "movie", streamId: "s", profile: "kids", kind: SessionKind.onDemand.proto,
            policyPreset: "snapback", clientName: "shell", peerUid: 1000, peerPid: 42,
            openedAt: 1_800_000_000, pushes: 1, breakCount: 2, state: state.proto, contentDuration: 100)
    }

    /// The cells of the bar on the line starting with `label`, between its ├ and ┤.
    static func bar(_ lines: [String], _ label: String) throws -> [Character] {
        let line = try #require(lines.first { $0.hasPrefix(label) })
        let open = try #require(line.firstIndex(of: "├"))
        let close = try #require(line.firstIndex(of: "┤"))
        return Array(line[line.index(after: open)..<close])
    }

    @Test func theStreamBarPlacesBreaksPlayheadAndReturnByTime() throws {
        // width 42: 10 label columns, 2 bar ends, " 2:10" → 26 cells... at least 20: 130 s over the cells.
        let lines = SessionDrawing.lines(Self.info(), width: 80)
        let stream = try Self.bar(lines, "stream")
        let cells = stream.count
        func column(_ t: Double) -> Int { min(cells - 1, Int(t / 130 * Double(cells))) }
        #expect(stream[column(5)] == SessionDrawing.watchedCell)
        #expect(stream[column(60)] == SessionDrawing.unwatchedCell)
        #expect(stream[column(55)] == SessionDrawing.playheadMark)
        #expect(stream[column(90)] == SessionDrawing.returnMark)
        #expect(stream[column(30)] == SessionDrawing.contentCell)
        #expect(stream[column(120)] == SessionDrawing.contentCell)
        #expect(try #require(lines.first { $0.hasPrefix("stream") }).hasSuffix("┤ 2:10"))

        // Content time: ads removed, a tick where each break sits, the playhead at content 40 of 100.
        let content = try Self.bar(lines, "content")
        #expect(content.count == cells)
        func contentColumn(_ t: Double) -> Int { min(cells - 1, Int(t / 100 * Double(cells))) }
        #expect(content[contentColumn(0)] == SessionDrawing.breakTick)
        #expect(content[contentColumn(40)] == SessionDrawing.playheadMark)
        #expect(content.filter { $0 == SessionDrawing.breakTick }.count == 1)  // mid's tick is under the playhead
    }

    @Test func labelsGiveStreamAndContentTimesAndTheBreakTableTheirState() {
        let text = SessionDrawing.lines(Self.info(), width: 80).joined(separator: "\n")
        #expect(text.contains("session 7 · content \"movie\" · stream \"s\" · profile \"kids\""))
        #expect(text.contains("phase: in break mid, playing"))
        #expect(text.contains("● playhead: stream 0:55 = content 0:40"))
        #expect(text.contains("return after mid: stream 1:30 = content 1:00"))
        #expect(text.contains("pre    0:00 → 0:10           0:00      0:10    -    -          watched"))
        #expect(
            text.contains(
                "mid    0:50 → 1:10           0:40      0:20    2    -          not watched, playing, then back to 1:30"))
        #expect(!text.contains("\u{1B}["))
    }

    @Test func withoutAPendingReturnThereIsNoReturnMark() throws {
        let lines = SessionDrawing.lines(Self.info(phase: .content, pending: nil), width: 60)
        #expect(!(try Self.bar(lines, "stream")).contains(SessionDrawing.returnMark))
        #expect(!lines.contains { $0.contains("return after") })
        #expect(lines.contains("phase: content, playing"))
        // The drawing keeps to the width (the header, legend and table are text that may run longer).
        let drawn = lines.filter { $0.contains("├") || $0.contains(SessionDrawing.playheadMark) && !$0.hasPrefix("legend") }
        #expect(drawn.count == 3 && drawn.allSatisfy { $0.count <= 60 }, "\(drawn)")
    }

    @Test func colourOnlyWhenAsked() {
        let coloured = SessionDrawing.lines(Self.info(), width: 80, style: TerminalStyle(color: true)).joined(separator: "\n")
        #expect(coloured.contains("\u{1B}[32mwatched\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[33mnot watched\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[1;36m\(SessionDrawing.playheadMark)"))
        #expect(coloured.contains("\u{1B}[35m\(SessionDrawing.returnMark)"))
    }

    @Test func sessionsTableAndWatchLines() {
        let table = SessionDrawing.table([Self.info()])
        #expect(table.count == 3)
        #expect(table[1].hasPrefix("7     movie") && table[1].contains("break mid") && table[1].hasSuffix("shell    1000/42"))
        #expect(table.last == "1 session")
        #expect(SessionDrawing.table([]) == ["no open sessions"])

        let decision = SnapbackV1.Decision(
            seq: 1, sessionId: 7, contentId: "movie", at: 1_800_000_000, kind: DecisionKind.seek.proto,
            reason: "seek 300→900 skipped unwatched break b1 at 600", streamTime: 600,
            seekReason: SeekReason.snapback.proto)
        #expect(
            SessionDrawing.line(decision)
                == "08:00:00 session 7 \"movie\" seek to 10:00 (snapback): seek 300→900 skipped unwatched break b1 at 600")
        let json = decision.jsonString
        #expect(
            json.contains(#""kind":"DECISION_KIND_SEEK""#) && json.contains(#""seekReason":"SEEK_REASON_SNAPBACK""#)
                && json.contains(#""streamTime":600.0"#), "\(json)")
        #expect(!json.contains("breakId"), "\(json)")
    }

    @Test func timesParseAsClockPrintsThem() {
        #expect(parseTime("960") == 960)
        #expect(parseTime("7.5") == 7.5)
        #expect(parseTime("16:00") == 960)
        #expect(parseTime("1:02:03.5") == 3723.5)
        #expect(parseTime(clock(5025.25)).map { $0 == 5025.25 } == true)
        for bad in ["", "-1", "1:60", "a", "1::2", "1:2:3:4", "1e3", ":30"] {
            #expect(parseTime(bad) == nil, "\(bad)")
        }
    }
}
