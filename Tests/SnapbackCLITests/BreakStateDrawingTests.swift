// SPDX-License-Identifier: Apache-2.0
import SnapbackCLI
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire
import Testing

/// Each break's state in `snapback session` (position, watched, exempt, why it was skipped), in the
/// drawing and in `--json`, and `watch`'s BREAK_SKIPPED decisions.
@Suite struct BreakStateDrawingTests {
    /// A pre-roll watched, a mid-roll a trick play went over, one a resume skipped (exempt), a
    /// post-roll not met yet; the playhead in content after the second mid-roll.
    static func info() -> SnapbackV1.SessionInfo {
        let breaks = [
            AdBreak(id: "pre", start: 0, duration: 10, watched: true), AdBreak(id: "m1", start: 40, duration: 10),
            AdBreak(id: "m2", start: 80, duration: 10), AdBreak(id: "post", start: 130, duration: 10)
        ]
        let states = [
            SessionStateReply.BreakState(breakId: "pre", position: .preroll, watched: true),
            SessionStateReply.BreakState(breakId: "m1", position: .midroll, watched: false, skipped: .trickPlay),
            SessionStateReply.BreakState(
                breakId: "m2", position: .midroll, watched: false, exempt: true,
                skipped: .resumePlan),
            SessionStateReply.BreakState(breakId: "post", position: .postroll, watched: false)
        ]
        let state = SessionStateReply(
            phase: .content, streamTime: 95, contentTime: 65, playing: true, rate: 1,
            breaks: breaks, breakStates: states)
        return SnapbackV1.SessionInfo(
            sessionId: 3, contentId: "movie", streamId: "s", profile: "", kind: SessionKind.onDemand.proto,
            policyPreset: "ima", clientName: "shell", peerUid: 1000, peerPid: 42,
            openedAt: 1_800_000_000, pushes: 4, breakCount: 4, state: state.proto, contentDuration: 100)
    }

    @Test func theTableGivesEachBreaksPositionAndState() {
        let lines = SessionDrawing.lines(Self.info(), width: 80)
        let text = lines.joined(separator: "\n")
        #expect(text.contains("BREAK  STREAM                CONTENT   LENGTH  ADS  POSITION   STATE"), "\(text)")
        #expect(text.contains("pre    0:00 → 0:10           0:00      0:10    -    pre-roll   watched"), "\(text)")
        #expect(text.contains("m1     0:40 → 0:50           0:30      0:10    -    mid-roll   not watched, skipped (trick-play)"))
        #expect(
            text.contains(
                "m2     1:20 → 1:30           1:00      0:10    -    mid-roll   not watched, exempt, skipped (resume-plan)"))
        #expect(text.contains("post   2:10 → 2:20           1:40      0:10    -    post-roll  not watched"))
        #expect(!text.contains("post-roll  not watched,"))
        #expect(text.contains("\(SessionDrawing.skippedCell) skipped or exempt"))
    }

    @Test func skippedBreaksHaveTheirOwnCellAndColour() throws {
        let lines = SessionDrawing.lines(Self.info(), width: 80)
        let stream = try SessionDrawingTests.bar(lines, "stream")
        func column(_ t: Double) -> Int { min(stream.count - 1, Int(t / 140 * Double(stream.count))) }
        #expect(stream[column(5)] == SessionDrawing.watchedCell)
        #expect(stream[column(45)] == SessionDrawing.skippedCell)
        #expect(stream[column(85)] == SessionDrawing.skippedCell)
        #expect(stream[column(135)] == SessionDrawing.unwatchedCell)
        let coloured = SessionDrawing.lines(Self.info(), width: 80, style: TerminalStyle(color: true)).joined(separator: "\n")
        #expect(coloured.contains("\u{1B}[31mskipped (trick-play)\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[31mexempt\u{1B}[0m"))
    }

    @Test func theJSONCarriesEachBreaksState() throws {
        // The canonical JSON of the GetSession reply: a field at its default (false, never skipped) is left out.
        let json = Self.info().jsonString
        #expect(
            json.contains(
                #""breakStates":[{"breakId":"pre","position":"BREAK_POSITION_PREROLL","watched":true},"#
                    + #"{"breakId":"m1","position":"BREAK_POSITION_MIDROLL","skipReason":"BREAK_SKIP_REASON_TRICK_PLAY"},"#
                    + #"{"breakId":"m2","position":"BREAK_POSITION_MIDROLL","exempt":true,"#
                    + #""skipReason":"BREAK_SKIP_REASON_RESUME_PLAN"},{"breakId":"post","position":"BREAK_POSITION_POSTROLL"}]"#),
            "\(json)")
        // A position or reason this version does not know is UNSPECIFIED: left out.
        let unknown = SessionStateReply.BreakState(breakId: "x", position: nil, watched: false)
        #expect(unknown.proto.jsonString == #"{"breakId":"x"}"#)
    }

    @Test func watchShowsABreakSkippedWithItsReason() {
        let decision = SnapbackV1.Decision(
            seq: 4, sessionId: 3, contentId: "movie", at: 1_800_000_000, kind: DecisionKind.breakSkipped.proto,
            reason: "break m1 not played: the cooldown after a break is running", breakId: "m1",
            skipReason: BreakSkipReason.cooldown.proto)
        #expect(
            SessionDrawing.line(decision)
                == "08:00:00 session 3 \"movie\" break m1 skipped (cooldown): break m1 not played: the cooldown after a break is running"
        )
        let json = decision.jsonString
        #expect(json.contains(#""kind":"DECISION_KIND_BREAK_SKIPPED""#) && json.contains(#""breakId":"m1""#), "\(json)")
        #expect(json.contains(#""skipReason":"BREAK_SKIP_REASON_COOLDOWN""#) && !json.contains("streamTime"), "\(json)")
    }
}
