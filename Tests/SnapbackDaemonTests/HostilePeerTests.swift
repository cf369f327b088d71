// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// What an attacker or a buggy player tried, each answered to that client while the service keeps serving
/// everyone else; in process (the wire-level mutation test sends the same over the binary's socket). Each
/// test is a regression for one finding.
@Suite struct HostilePeerTests {
    /// The refusal for `body`, and then a bystander's seed story still answered correctly by the same daemon.
    func expectRefused(
        _ daemon: EmbeddedDaemon, _ field: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (EmbeddedPlayer) throws -> Void
    ) throws {
        let attacker = try daemon.player("attacker")
        do {
            try body(attacker)
            Issue.record("expected INVALID_ARGUMENT naming \(field), got OK", sourceLocation: sourceLocation)
        } catch let error as SnapbackClientError {
            #expect(error.code == .invalidArgument, "\(error)", sourceLocation: sourceLocation)
            #expect("\(error)".contains(field), "\(error)", sourceLocation: sourceLocation)
        }
        try expectServing(daemon, sourceLocation: sourceLocation)
        // The attacker's connection is not dropped for a bad request either.
        let _: SnapbackV1.StatusReply = try attacker.call(.getStatus)
    }

    func expectServing(_ daemon: EmbeddedDaemon, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bystander = try daemon.player("bystander")
        let session = try bystander.openSession(Streams.seed()).sessionId
        try bystander.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        let seek = try bystander.send(.seekEnded(from: 300, to: 900), session: session)
        #expect(seek.seekTargets == [600], sourceLocation: sourceLocation)
        try bystander.closeSession(session)
    }

    /// A stitched break of 1e300 s that the playhead then enters: the break-end timer's conversion to
    /// milliseconds trapped (SIGILL) and took every player down.
    @Test func aBreakOfAHugeDurationIsRefused() throws {
        let daemon = EmbeddedDaemon()
        try expectRefused(daemon, "breaks[0].duration") { attacker in
            let open = Streams.seed(breaks: [AdBreak(id: "b1", start: 600, duration: 1e300)])
            let session = try attacker.openSession(open).sessionId
            try attacker.send(.playheadReported(streamTime: 601, rate: 1, playing: true), session: session)
        }
        // The same on a live session's UpdateBreaks.
        try expectRefused(daemon, "breaks[0].duration") { attacker in
            let live = OpenSessionRequest(streamId: "live", contentId: "", kind: .live)
            let session = try attacker.openSession(live).sessionId
            try attacker.send(.breaksUpdated([AdBreak(id: "x", start: 60, duration: 1e300)]), session: session)
        }
    }

    /// Ad rules with a break duration of 1e300 and a pre-roll.
    @Test func adRulesWithAHugeBreakDurationAreRefused() throws {
        let daemon = EmbeddedDaemon()
        try expectRefused(daemon, "ad_rules.break_duration") { attacker in
            var open = Streams.seed(breaks: [])
            open.adRules = AdRules(preroll: true, midrollTimes: [600], breakDuration: 1e300)
            let session = try attacker.openSession(open).sessionId
            try attacker.send(.playheadReported(streamTime: 0, rate: 1, playing: true), session: session)
        }
    }

    /// A bookmark interval of 1e17 s, then a playing ReportPlayhead (the periodic bookmark timer).
    @Test func aHugeBookmarkIntervalIsRefused() throws {
        let daemon = EmbeddedDaemon()
        try expectRefused(daemon, "policy_overrides.bookmark_interval") { attacker in
            var overrides = PolicyOverrides()
            overrides.bookmarkInterval = 1e17
            let session = try attacker.openSession(Streams.seed(overrides: overrides)).sessionId
            try attacker.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: session)
        }
    }

    /// Events and queries with numbers out of range, each refused in the field's own name.
    @Test func eventNumbersOutOfRangeAreRefused() throws {
        let daemon = EmbeddedDaemon()
        let owner = try daemon.player("owner")
        let session = try owner.openSession(Streams.seed()).sessionId
        let cases: [(TimelineEvent, String)] = [
            (.playheadReported(streamTime: 1e300, rate: 1, playing: true), "stream_time"),
            (.playheadReported(streamTime: 10, rate: 1e300, playing: true), "rate"),
            (.seekEnded(from: 300, to: 1e17), "to_stream_time"),
            (.trickPlayStarted(streamTime: 10, rate: -1e9), "rate"),
            (.paused(streamTime: -1), "stream_time")
        ]
        for (event, field) in cases {
            do {
                try owner.send(event, session: session)
                Issue.record("\(event.name): expected INVALID_ARGUMENT")
            } catch {
                #expect(error.code == .invalidArgument && "\(error)".contains(field), "\(error)")
            }
        }
        // The session itself was not disturbed: the seed story still plays on it.
        try owner.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try owner.send(.seekEnded(from: 300, to: 900), session: session).seekTargets == [600])
        try expectServing(daemon)
    }

    /// A negative rate within range is playback backwards: accepted, and it projects no jump.
    @Test func aNegativeRateIsRewindAndAccepted() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed()).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        #expect(try player.send(.playheadReported(streamTime: 299, rate: -1, playing: true), session: session).isEmpty)
    }

    /// Content id bytes `ff fe` were stored, logged and listed as U+FFFD, so different byte strings shared
    /// one bookmark. proto3 forbids them: INVALID_ARGUMENT naming the field.
    @Test func invalidUTF8IsRefusedNamingTheField() throws {
        let daemon = EmbeddedDaemon()
        try expectRefused(daemon, "content_id: not valid UTF-8") { attacker in
            // GetBookmarkRequest{content_id: ff fe}
            _ = try attacker.rawCall(method: WireMethod.getBookmark.rawValue, body: [0x12, 0x02, 0xFF, 0xFE])
        }
        try expectRefused(daemon, "content_id: not valid UTF-8") { attacker in
            // OpenSessionRequest{stream_id: "s", content_id: ff fe}
            _ = try attacker.rawCall(
                method: WireMethod.openSession.rawValue,
                body: [0x0A, 0x01, 0x73, 0x12, 0x02, 0xFF, 0xFE])
        }
        // Nothing was stored under the repaired id.
        let player = try daemon.player()
        let list: SnapbackV1.ListBookmarksReply = try player.call(.listBookmarks(profile: "", pageSize: 0, pageToken: ""))
        #expect(!list.bookmarks.contains { $0.contentId.unicodeScalars.contains("\u{FFFD}") })
    }
}
