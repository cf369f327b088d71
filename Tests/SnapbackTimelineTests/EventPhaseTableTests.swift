// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTimeline
import Testing

/// PROTOCOL.md's "Events by session phase" table, walked against the timeline: every cell is what the
/// timeline does with that event in that phase, so the document cannot drift from the code.
@Suite struct EventPhaseTableTests {
    /// The table's stream: b1 at 600–660 (two 30-second ads) in a 30-minute program.
    static let breaks = [AdBreak(id: "b1", start: 600, duration: 60, adDurations: [30, 30])]

    static let phases = ["content", "in break", "seeking", "trick play", "finished"]

    /// The session in `phase`, as the table's note describes it.
    static func session(in phase: String) throws -> TimelineSession {
        switch phase {
        case "content": return try Factory.playing(at: 300, breaks: breaks)
        case "in break":
            var s = try Factory.playing(at: 300, breaks: breaks)
            _ = try s.handle(.adBreakStarted(breakId: "b1"), at: 1010)
            return s
        case "seeking":
            var s = try Factory.playing(at: 300, breaks: breaks)
            _ = try s.handle(.seekStarted(from: 300), at: 1010)
            return s
        case "trick play":
            var s = try Factory.playing(at: 300, breaks: breaks)
            _ = try s.handle(.trickPlayStarted(streamTime: 300, rate: 8), at: 1010)
            return s
        default:
            var s = try Factory.playing(at: 1700, breaks: breaks)
            _ = try s.handle(.contentCompleted, at: 1010)
            return s
        }
    }

    /// Each row's event, by the name the table gives it.
    static let events: [(String, TimelineEvent)] = [
        ("ReportPlayhead", .playheadReported(streamTime: 310, rate: 1, playing: true)),
        ("SeekStarted", .seekStarted(from: 310)),
        ("SeekEnded", .seekEnded(from: 300, to: 400)),
        ("AdBreakStarted b1", .adBreakStarted(breakId: "b1")),
        ("AdBreakEnded b1", .adBreakEnded(breakId: "b1")),
        ("AdStarted b1 #0", .adStarted(breakId: "b1", index: 0)),
        ("AdEnded b1 #1", .adEnded(breakId: "b1", index: 1)),
        ("TrickPlayStarted", .trickPlayStarted(streamTime: 310, rate: 8)),
        ("TrickPlayEnded", .trickPlayEnded(streamTime: 400)),
        ("ContentComplete", .contentCompleted),
        ("UpdateBreaks", .breaksUpdated([])),
        ("Pause", .paused(streamTime: 310)),
        ("CloseSession", .closed)
    ]

    /// What the timeline does: `accepted`, `no-op` (OK, nothing changes), or the refusal's status.
    static func outcome(_ event: TimelineEvent, in phase: String) throws -> String {
        var s = try session(in: phase)
        let before = s.snapshot(at: 1020)
        do {
            let actions = try s.handle(event, at: 1020)
            let nothing = actions.allSatisfy { $0.kind == .noEffect }
            return nothing && s.snapshot(at: 1020) == before ? "no-op" : "accepted"
        } catch {
            switch error.category {
            case .failedPrecondition: return "FAILED_PRECONDITION"
            case .invalidArgument: return "INVALID_ARGUMENT"
            case .notFound: return "NOT_FOUND"
            case .resourceExhausted: return "RESOURCE_EXHAUSTED"
            }
        }
    }

    /// The table as PROTOCOL.md has it: event name → its cells, phase by phase.
    static func documented() throws -> [String: [String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        guard let start = text.range(of: "| event | content | in break | seeking | trick play | finished |") else { return [:] }
        var rows: [String: [String]] = [:]
        for line in text[start.upperBound...].split(separator: "\n").dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            // A cell's first word is its outcome; the words after it, for the reader, say why.
            rows[cells[0].replacingOccurrences(of: "`", with: "")] = cells.dropFirst().map {
                String($0.split(separator: " ").first ?? "").replacingOccurrences(of: "*", with: "")
            }
        }
        return rows
    }

    @Test func theDocumentedTableIsWhatTheTimelineDoes() throws {
        let table = try Self.documented()
        #expect(table.count == Self.events.count, "PROTOCOL.md's table has \(table.count) rows")
        for (name, event) in Self.events {
            let actual = try Self.phases.map { (p) throws in try Self.outcome(event, in: p) }
            #expect(table[name] == actual, "\(name): documented \(table[name] ?? []), the timeline does \(actual)")
        }
    }
}
