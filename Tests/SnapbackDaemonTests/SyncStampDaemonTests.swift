// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackClient
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

/// What household sync will carry, written by the real daemon through the players' protocol: a save is
/// stamped with the box's device id and its wall time, a delete leaves a tombstone, both in the change
/// sequence in the order they happened (docs/sync.md).
@Suite(.serialized) struct SyncStampDaemonTests {
    @Test func savesAndDeletesThroughTheDaemonAreStampedInTheChangeSequence() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        let started = wallClockNow()
        let daemon = try DaemonHarness(in: directory)
        let player = try daemon.player()
        for (contentId, at) in [("film", 120.0), ("movie", 300.0)] {
            let session = try player.openSession(Streams.seed(contentId: contentId, breaks: [])).sessionId
            try player.send(.playheadReported(streamTime: at, rate: 1, playing: true), session: session)
            var pushes = try player.send(.paused(streamTime: at), session: session)
            while pushes.savedBookmarks.isEmpty { pushes.append(try player.nextPush(timeout: .seconds(5))) }
            // Closed (its last bookmark saved, queued before the delete below): the shutdown saves nothing.
            _ = try player.closeSession(session)
        }
        let deleted: SnapbackV1.DeleteBookmarkReply = try player.call(.deleteBookmark(profile: "", contentId: "film"))
        #expect(deleted.deleted)
        daemon.terminate()
        #expect(daemon.waitForExit() == .exit(0))
        let finished = wallClockNow()

        let store = SQLiteViewerStateStore(directory: daemon.stateDirectory, post: { _ in })
        defer { store.close() }
        let device = try #require(store.deviceId)
        let movie = try #require(try store.syncRecord(profile: "", contentId: "movie"))
        #expect(movie.value.bookmark?.contentTime == 300)
        #expect(movie.origin == device)
        #expect(
            (SyncStamp.milliseconds(ofSeconds: started)...SyncStamp.milliseconds(ofSeconds: finished) + 1)
                .contains(movie.stamp.physical), "\(movie.stamp)")
        let film = try #require(try store.syncRecord(profile: "", contentId: "film"))
        #expect(film.value == .tombstone(.deleted))
        #expect(film.stamp > movie.stamp)
        // The change sequence: the movie's bookmark, then the film's tombstone (its bookmark is gone).
        let changes = try store.changes(after: 0, limit: 10)
        #expect(changes.map(\.change) == [.record(movie), .record(film)])
        #expect(daemon.errorLines == [])
    }
}
