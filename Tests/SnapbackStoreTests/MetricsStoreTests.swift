// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackTimeline
import Testing

@testable import SnapbackStore

/// The daemon's counters in the SQLite store: written through the queue, read back at the next open
/// with their start; UInt64s whole (SQLite's integers are signed). The running marker beside the database.
@Suite struct MetricsStoreTests {
    @Test func countersSurviveAReopen() throws {
        let f = try StoreFixture()
        #expect(f.store.storedMetrics() == StoredMetrics())
        let written = StoredMetrics(
            values: ["snapbackd_starts_total": 3, "snapbackd_replies_total{code=\"OK\"}": UInt64.max], since: 1_700_000_000.25)
        f.store.saveMetrics(written)
        // A write nobody waits for: the next one's completion says both are committed.
        let saved = f.save(Bookmark(profile: "", contentId: "c", contentTime: 1, streamTime: 1, streamId: "s", updatedAt: 1))
        #expect((try? saved.get()) != nil)
        f.reopen()
        #expect(f.store.storedMetrics() == written)
        var stopped = written
        stopped.values["snapbackd_starts_total"] = 4
        f.store.saveMetrics(stopped)
        f.close()
        f.reopen()
        #expect(f.store.storedMetrics() == stopped)
        #expect(f.store.writeCounts.failures == 0)
    }

    /// The marker: set at start, found set by a start after a run that did not clear it.
    @Test func theRunningMarkerTellsAnUncleanStop() throws {
        let f = try StoreFixture()
        #expect(f.store.markRunning() == false)
        f.reopen()
        #expect(f.store.markRunning() == true, "a run that was not stopped cleanly")
        f.store.clearRunning()
        f.reopen()
        #expect(f.store.markRunning() == false)
        #expect(FileManager.default.fileExists(atPath: f.path + ".running"))
    }

    @Test func aSchema4DatabaseGainsTheCountersTable() throws {
        let f = try StoreFixture(open: false)
        let db = try SQLiteSchema.openWriter(path: f.path, busyTimeout: 1000, maxPageCount: nil, migrateTo: 4)
        try db.execute("INSERT INTO device_state VALUES ('last_break_completed_at', 5)")
        f.reopen()
        #expect(f.store.storedMetrics() == StoredMetrics())
        #expect(f.store.lastBreakCompletedAt() == 5)
        withExtendedLifetime(db) {}
    }
}
