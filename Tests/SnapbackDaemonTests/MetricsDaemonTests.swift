// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackDaemon
import SnapbackTimeline
import SnapbackWire
import Testing

/// The daemon's counters through the real binary and socket (Control/GetMetrics): a scripted story,
/// each counter asserted; a clean restart keeps them all, a SIGKILL counts an unclean start; a peer that
/// is not an admin is refused.
@Suite(.serialized) struct MetricsDaemonTests {
    static let config = """
        [access]
        allow-users = *
        [metrics]
        flush-interval = 1s
        """

    static func daemon(in directory: URL) throws -> DaemonHarness {
        let path = directory.appendingPathComponent("snapbackd.conf").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return try DaemonHarness(arguments: ["--config", path], in: directory)
    }

    /// Counter values by sample: "family{label=value,...}".
    static func values(_ reply: SnapbackV1.MetricsReply) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for family in reply.families where MetricType(proto: family.type) == .counter {
            for sample in family.series {
                let labels = sample.labels.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
                out[family.name + (labels.isEmpty ? "" : "{\(labels)}")] = sample.value
            }
        }
        return out
    }

    @Test func aScriptedStoryIsCountedKeptAcrossACleanRestartAndAKill() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let first = try Self.daemon(in: directory)
        let player = try first.player()
        let breaks = [AdBreak(id: "b0", start: 0, duration: 30), AdBreak(id: "b1", start: 600, duration: 60)]
        // A session from the start: the pre-roll b0 plays and is watched.
        let movie = try player.openSession(Streams.seed(contentId: "movie", breaks: breaks)).sessionId
        try player.send(.adBreakStarted(breakId: "b0"), session: movie)
        try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: movie)
        _ = try player.send(.adBreakEnded(breakId: "b0"), session: movie)
        // A seek over the unwatched b1: snapped back to it.
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: movie)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: movie).seeks.map(\.1) == [.snapback])
        try player.send(.adBreakStarted(breakId: "b1"), session: movie)
        try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: movie)
        // A seek out of the unwatched break while it plays: refused, back into it.
        #expect(try player.send(.seekEnded(from: 630, to: 1000), session: movie).seeks.map(\.1) == [.seekRefusedDuringAd])
        try player.send(.playheadReported(streamTime: 640, rate: 1, playing: true), session: movie)
        // b1 played and watched: back to where the viewer wanted to go, and a bookmark saved.
        var pushes = try player.send(.adBreakEnded(breakId: "b1"), session: movie)
        while pushes.savedBookmarks.isEmpty || pushes.watchedBreaks.count < 1 {
            pushes.append(try player.nextPush(timeout: .seconds(5)))
        }
        #expect(pushes.seeks.map(\.1) == [.resumeAfterSnapback])
        try player.send(.playheadReported(streamTime: 900, rate: 1, playing: true), session: movie)
        try player.closeSession(movie)

        // The same content again, resumed at its bookmark (the pre-roll, watched, is not played again).
        let again = try player.openSession(Streams.seed(contentId: "movie", useBookmark: true, breaks: breaks))
        #expect(again.resumedFromBookmark)
        // A seek back into b1, watched: the session skips it, to its end (and keeps the settled position).
        try player.send(.playheadReported(streamTime: 1000, rate: 1, playing: true), session: again.sessionId)
        let skip = try player.send(.seekEnded(from: 1000, to: 620), session: again.sessionId)
        #expect(skip.contains { if case .breakSkipped("b1", .watched) = $0.kind { true } else { false } }, "\(skip)")
        #expect(skip.seeks.map(\.1) == [.skipWatchedBreak])
        // Another content, closed while its break plays.
        let other = try player.openSession(Streams.seed(contentId: "other", breaks: [])).sessionId
        _ = other
        let live = try player.openSession(Streams.seed(contentId: "third")).sessionId
        try player.send(.playheadReported(streamTime: 590, rate: 1, playing: true), session: live)
        try player.send(.adBreakStarted(breakId: "b1"), session: live)
        try player.send(.playheadReported(streamTime: 605, rate: 1, playing: true), session: live)
        try player.closeSession(live)
        // A bad request: a session that is not there.
        #expect(throws: SnapbackClientError.self) {
            let _: SnapbackV1.SessionInfo = try player.call(.getSession(SnapbackV1.GetSessionRequest(sessionId: 999)))
        }

        let reply: SnapbackV1.MetricsReply = try player.call(.getMetrics)
        let counted = Self.values(reply)
        let expected: [String: UInt64] = [
            "snapbackd_seeks_commanded{reason=snapback,preset=snapback}": 1,
            "snapbackd_seeks_commanded{reason=seek-refused-during-ad,preset=snapback}": 1,
            "snapbackd_seeks_commanded{reason=resume-after-snapback,preset=snapback}": 1,
            "snapbackd_seeks_commanded{reason=resume-from-bookmark,preset=snapback}": 1,
            "snapbackd_seeks_refused{move=seek}": 1,
            // Both ended by the player's ad-break-ended; watched at their end (the snapback preset).
            "snapbackd_breaks_played{reason=ad-break-ended,position=pre,preset=snapback}": 1,
            "snapbackd_breaks_played{reason=ad-break-ended,position=mid,preset=snapback}": 1,
            "snapbackd_breaks_watched{reason=on-end,position=pre,preset=snapback}": 1,
            "snapbackd_breaks_watched{reason=on-end,position=mid,preset=snapback}": 1,
            "snapbackd_seeks_commanded{reason=skip-watched-break,preset=snapback}": 1,
            "snapbackd_breaks_skipped{reason=watched,position=mid,preset=snapback}": 1,
            "snapbackd_bookmarks_saved{trigger=snapback-return}": 1,
            "snapbackd_bookmarks_saved{trigger=closed}": 1,
            "snapbackd_bookmarks_saved{trigger=seek}": 1,
            "snapbackd_bookmarks_resumed": 1,
            "snapbackd_sessions_opened{kind=on-demand,preset=snapback}": 4,
            "snapbackd_sessions_closed{by=player}": 2,
            "snapbackd_sessions_closed_in_break{by=player}": 1,
            "snapbackd_replies{code=NOT_FOUND}": 1,
            "snapbackd_starts": 1
        ]
        for (series, value) in expected { #expect(counted[series] == value, "\(series): \(counted.filter { $0.value > 0 })") }
        let nonZero = counted.filter { $0.value > 0 && !$0.key.hasPrefix("snapbackd_replies{code=OK}") }
        let unexpected = nonZero.filter { expected[$0.key] == nil && !$0.key.hasPrefix("snapbackd_store_commits") }
        #expect(unexpected.isEmpty, "counted beyond the story: \(unexpected)")
        #expect(counted["snapbackd_replies{code=OK}"].map { $0 > 20 } == true)
        #expect(counted["snapbackd_store_commits"].map { $0 > 0 } == true)
        #expect(reply.starts == 1 && reply.uncleanStarts == 0 && reply.flushInterval == 1)
        #expect(reply.startId.count == 32 && reply.bootId.count == 36, "\(reply.startId) \(reply.bootId)")
        let handling = reply.families.first { $0.name == "snapbackd_event_handling_seconds" }?.series.first
        #expect((handling?.count ?? 0) > 0 && handling?.bucketCounts.last == handling?.count)

        // A clean stop: nothing lost. The sessions still open close for the shutdown.
        first.terminate()
        #expect(first.waitForExit() == .exit(0))
        let second = try Self.daemon(in: directory)
        let after: SnapbackV1.MetricsReply = try second.player().call(.getMetrics)
        let kept = Self.values(after)
        for (series, value) in expected where !series.hasPrefix("snapbackd_starts") && !series.contains("by=") {
            #expect(kept[series] == value, "\(series) after a clean restart")
        }
        #expect(kept["snapbackd_sessions_closed{by=shutdown}"] == 2)
        #expect(kept["snapbackd_starts"] == 2 && kept["snapbackd_unclean_starts"] == 0)
        #expect(after.startId != reply.startId && after.bootId == reply.bootId)
        #expect(after.countingSince == reply.countingSince)
        #expect((kept["snapbackd_replies{code=OK}"] ?? 0) > (counted["snapbackd_replies{code=OK}"] ?? 0))

        // Killed more than the flush interval after its last count: nothing lost, an unclean start counted.
        Thread.sleep(forTimeInterval: 1.5)
        second.terminate(signal: SIGKILL)
        #expect(second.waitForExit() == .signal(SIGKILL))
        let third = try Self.daemon(in: directory)
        let killed = Self.values(try third.player().call(.getMetrics, as: SnapbackV1.MetricsReply.self))
        #expect(killed["snapbackd_starts"] == 3 && killed["snapbackd_unclean_starts"] == 1)
        #expect(killed["snapbackd_seeks_commanded{reason=snapback,preset=snapback}"] == 1)
        #expect(killed["snapbackd_sessions_closed{by=shutdown}"] == 2)
        #expect(third.waitForLog(containing: "did not stop cleanly"))
        third.terminate()
        #expect(third.waitForExit() == .exit(0))
    }

    /// Under IMA's preset a break counts as watched as it begins; a pre-roll the playhead plays through
    /// (no ad events) ends by the playhead: both counted by that reason, position and preset.
    @Test func anImaPrerollPlayedThroughIsCountedByItsReasonsAndPreset() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let daemon = try Self.daemon(in: directory)
        let player = try daemon.player()
        var request = Streams.seed(contentId: "ima", breaks: [AdBreak(id: "b0", start: 0, duration: 30)])
        request.requestedPreset = .ima
        let session = try player.openSession(request).sessionId
        for t in [1.0, 20, 31] {
            try player.send(.playheadReported(streamTime: t, rate: 1, playing: true), session: session)
        }
        let counted = Self.values(try player.call(.getMetrics, as: SnapbackV1.MetricsReply.self))
        let breaks = counted.filter {
            $0.value > 0 && ($0.key.hasPrefix("snapbackd_breaks_played") || $0.key.hasPrefix("snapbackd_breaks_watched"))
        }
        #expect(
            breaks == [
                "snapbackd_breaks_watched{reason=on-begin,position=pre,preset=ima}": 1,
                "snapbackd_breaks_played{reason=playhead-reached-end,position=pre,preset=ima}": 1
            ], "\(counted.filter { $0.value > 0 })")
        #expect(counted["snapbackd_sessions_opened{kind=on-demand,preset=ima}"] == 1)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
    }

    /// Not root, not in an admin group: PERMISSION_DENIED, as for WatchDecisions.
    @Test func aPeerThatIsNotAnAdminIsRefused() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let daemon = try Self.daemon(in: directory)
        let answer = try AccessControlTests.connect(to: daemon.socketPath, then: WireMethod.getMetrics.rawValue)
        #expect(answer == "call=2 status=\(AccessControlTests.permissionDenied) open", "\(answer)")
        // Root is an admin: served.
        let reply: SnapbackV1.MetricsReply = try daemon.player().call(.getMetrics)
        #expect(Self.values(reply)["snapbackd_replies{code=PERMISSION_DENIED}"] == 1)
    }
}
