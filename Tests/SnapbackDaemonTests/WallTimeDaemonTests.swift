// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackStore

/// Wall time and monotonic time through the real daemon and socket: what goes out as a wall time is
/// one, and bookmarks are ordered by their saves (a database of the previous schema, ordered by its
/// times, carried over). Stepping the machine's clock is out of a test's reach; ClockStepTests steps
/// a manual clock under the same service in process.
@Suite(.serialized) struct WallTimeDaemonTests {
    @Test func wallTimesGoOutAsWallTimesAndBookmarksListInSaveOrder() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        do {
            // Schema 2, whose rows were ordered by their times; one is dated far in the future.
            let db = try SQLiteSchema.openWriter(
                path: state + "/snapback.db", busyTimeout: 1000, maxPageCount: nil, migrateTo: 2)
            try db.execute(
                """
                INSERT INTO bookmarks(profile, content_id, content_time, stream_time, stream_id, updated_at)
                VALUES ('', 'from-the-future', 10, 10, 's', 4000000000), ('', 'old', 20, 20, 's', 1000000000);
                """)
        }
        let daemon = try DaemonHarness(in: directory)
        let player = try daemon.player()
        let wall = Date().timeIntervalSince1970

        let status: SnapbackV1.StatusReply = try player.call(.getStatus)
        #expect(status.uptime >= 0 && status.uptime < 60, "uptime \(status.uptime)")

        // A bookmark saved now: its time is the wall clock's; it lists first.
        let session = try player.openSession(Streams.seed(contentId: "new", breaks: [])).sessionId
        try player.send(.playheadReported(streamTime: 50, rate: 1, playing: true), session: session)
        var pushes = try player.send(.paused(streamTime: 50), session: session)
        while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
        let list: SnapbackV1.ListBookmarksReply = try player.call(.listBookmarks(profile: "", pageSize: 2, pageToken: ""))
        #expect(list.bookmarks.map(\.contentId) == ["new", "from-the-future"])
        #expect(list.bookmarks.first.map { abs($0.updatedAt - wall) < 60 } == true, "\(list.bookmarks)")
        let rest: SnapbackV1.ListBookmarksReply = try player.call(
            .listBookmarks(profile: "", pageSize: 2, pageToken: list.nextPageToken))
        #expect(rest.bookmarks.map(\.contentId) == ["old"])
        #expect(rest.nextPageToken == "")

        // A cooldown's end and a session's opening time on the wire: wall times.
        var overrides = PolicyOverrides()
        overrides.cooldown = 120
        let seed = try player.openSession(Streams.seed(contentId: "movie", overrides: overrides)).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: seed)
        #expect(try player.send(.seekEnded(from: 300, to: 900), session: seed).seekTargets == [600])
        try player.send(.adBreakStarted(breakId: "b1"), session: seed)
        try player.send(.playheadReported(streamTime: 630, rate: 1, playing: true), session: seed)
        try player.send(.adBreakEnded(breakId: "b1"), session: seed)
        let state1: SessionStateReply = try player.call(.getSessionState(sessionId: seed))
        #expect(state1.cooldownUntil.map { abs($0 - (wall + 120)) < 60 } == true, "\(state1.cooldownUntil ?? 0)")
        let info: SnapbackV1.SessionInfo = try player.call(.getSession(sessionId: seed))
        #expect(abs(info.openedAt - wall) < 60, "\(info.openedAt)")

        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }

    /// libfaketime, which tests and operators preload to set a box's wall clock off, moves an absolute
    /// timerfd deadline by its offset even on CLOCK_MONOTONIC: armed that way, the daemon's timers, ten
    /// minutes behind, fired ten minutes late. A break's end still comes after the break's second.
    @Test func timersRunOnTimeWithTheWallClockSetOffByLibfaketime() throws {
        let found = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
            .map { $0 + "/faketime/libfaketime.so.1" }
            .first { FileManager.default.fileExists(atPath: $0) }
        let library = try #require(found, "libfaketime is not installed (make deps installs faketime)")
        // Through sh's exec, as Tests/sync does: spawned straight with libfaketime preloaded, the daemon did
        // not see its arguments.
        let daemon = try DaemonHarness(
            environment: ["LD_PRELOAD": library, "FAKETIME": "-10m", "FAKETIME_DONT_FAKE_MONOTONIC": "1"],
            launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\""])
        let player = try daemon.player()
        let wall = Date().timeIntervalSince1970
        let breaks = [AdBreak(id: "short", start: 10, duration: 1)]
        let session = try player.openSession(Streams.seed(contentId: "faked", breaks: breaks)).sessionId
        // The daemon's wall clock is ten minutes behind: a bookmark's time says so.
        var pushes = try player.send(.paused(streamTime: 5), session: session)
        while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
        let bookmark: Bookmark = try player.call(.getBookmark(profile: "", contentId: "faked"))
        #expect(abs(wall - 600 - bookmark.updatedAt) < 60, "saved at \(bookmark.updatedAt), now \(wall)")
        // Into the one-second break, then no report: its end timer marks it watched once the break's end
        // and the grace for a late report have passed (about 5 s), not ten minutes later.
        try player.send(.playheadReported(streamTime: 10, rate: 1, playing: true), session: session)
        let started = Date()
        var watched = false
        while !watched {
            if case .breakWatched(let id) = try player.nextPush(timeout: .seconds(60)).kind { watched = id == "short" }
        }
        #expect(Date().timeIntervalSince(started) < 30)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        #expect(daemon.errorLines == [])
    }
}
