// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Glibc
import SnapbackTimeline
import Testing

@testable import SnapbackSync

/// The durable outbox: entries and cursor committed together, oldest first, one entry per key (a newer
/// record replaces the waiting one, watched breaks join it), kept across a reopen, removed only by id.
@Suite struct OutboxTests {
    static func temporaryPath() -> String {
        var template = Array("/tmp/snapback-outbox-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return directory + "/outbox.db"
    }

    static func record(_ content: String, at time: Double, physical: Int64) throws -> SyncRecord {
        try SyncRecord(
            profile: "", contentId: content,
            value: .bookmark(SyncedBookmark(contentTime: time, streamId: "s", streamTime: time, finished: false, updatedAt: 1)),
            stamp: SyncStamp(physical: physical, counter: 0, device: try DeviceID("box-1")))
    }

    @Test func entriesGoOutOldestFirstAndANewerRecordReplacesTheWaitingOne() throws {
        let path = Self.temporaryPath()
        let outbox = try Outbox(path: path)
        #expect(try outbox.cursor() == 0)
        try outbox.append(
            [
                ("A.=.a", KVValue.encode(try Self.record("a", at: 1, physical: 1))),
                ("A.=.b", KVValue.encode(try Self.record("b", at: 2, physical: 2)))
            ],
            cursor: 7)
        try outbox.append([("A.=.c", KVValue.encode(try Self.record("c", at: 3, physical: 3)))], cursor: 9)
        #expect(try outbox.first(10).map(\.key) == ["A.=.a", "A.=.b", "A.=.c"])
        #expect(try outbox.cursor() == 9)
        // "a" again: its latest record, moved behind the others.
        let newer = try Self.record("a", at: 60, physical: 4)
        try outbox.append([("A.=.a", KVValue.encode(newer))], cursor: 12)
        let entries = try outbox.first(10)
        #expect(entries.map(\.key) == ["A.=.b", "A.=.c", "A.=.a"])
        #expect(KVValue.record(entries[2].value, profile: "", contentId: "a") == newer)
        #expect(try outbox.count() == 3)

        // Durable: another connection (a restarted agent) finds the same entries and cursor.
        let reopened = try Outbox(path: path)
        #expect(try reopened.first(10) == entries)
        #expect(try reopened.cursor() == 12)

        // An entry leaves by its id only: one replaced since it was read stays.
        let read = try reopened.first(1)[0]
        try reopened.append([(read.key, KVValue.encode(try Self.record("b", at: 70, physical: 5)))], cursor: 13)
        try reopened.remove(id: read.id)
        #expect(try reopened.first(10).map(\.key) == ["A.=.c", "A.=.a", "A.=.b"])
        try reopened.remove(id: try reopened.first(1)[0].id)
        #expect(try reopened.first(10).map(\.key) == ["A.=.a", "A.=.b"])
    }

    @Test func watchedBreaksJoinTheWaitingEntryOfTheirContent() throws {
        let outbox = try Outbox(path: Self.temporaryPath())
        let first = try WatchedBreaks(contentId: "m", watchedAt: ["b1": 10])
        let second = try WatchedBreaks(contentId: "m", watchedAt: ["b2": 20, "b1": 5])
        try outbox.append([("A.=watched.m", KVValue.encode(first))], cursor: 1, combine: SyncAgent.combine)
        try outbox.append([("A.=watched.m", KVValue.encode(second))], cursor: 2, combine: SyncAgent.combine)
        let entries = try outbox.first(10)
        #expect(entries.count == 1)
        #expect(KVValue.watched(entries[0].value, contentId: "m")?.watchedAt == ["b1": 10, "b2": 20])
    }

    @Test func aFailedAppendMovesNeitherEntriesNorCursor() throws {
        let path = Self.temporaryPath()
        let outbox = try Outbox(path: path)
        try outbox.append([("A.=.a", [1]), ("A.=.b", [2])], cursor: 6)
        // A trigger (made over a connection of the test's own) refuses one key: the append fails after it
        // deleted the waiting entry of "A.=.b", and the rollback keeps that entry and the cursor.
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        let trigger = "CREATE TRIGGER refuse BEFORE INSERT ON outbox WHEN NEW.key = 'A.=.b' BEGIN SELECT RAISE(ABORT, 'no'); END"
        #expect(sqlite3_exec(db, trigger, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
        #expect(throws: OutboxError.self) { try outbox.append([("A.=.c", [3]), ("A.=.b", [4])], cursor: 7) }
        #expect(try outbox.cursor() == 6)
        #expect(try outbox.first(10).map(\.key) == ["A.=.a", "A.=.b"])
        #expect(try outbox.first(10).map(\.value) == [[1], [2]])
    }

    @Test func anotherHouseholdOrBucketStartsTheOutboxAfresh() throws {
        let path = Self.temporaryPath()
        let outbox = try Outbox(path: path)
        #expect(try outbox.bind(to: "snapback.A") == false)  // a new outbox: nothing to drop
        try outbox.append([("A.=.a", [1])], cursor: 9)
        #expect(try Outbox(path: path).bind(to: "snapback.A") == false)
        #expect(try outbox.cursor() == 9 && outbox.count() == 1)
        #expect(try Outbox(path: path).bind(to: "snapback.B") == true)
        #expect(try outbox.cursor() == 0 && outbox.count() == 0)
        #expect(try Outbox(path: path).bind(to: "other.B") == true)
    }

    /// The outbox keeps the store its cursor belongs to; another store, or one holding fewer changes than
    /// the cursor, is read from 0 with the waiting entries kept.
    @Test func anotherStoreOrAnOlderCopyIsReadFromTheStart() throws {
        let path = Self.temporaryPath()
        let outbox = try Outbox(path: path)
        #expect(try outbox.store() == nil)
        // A new outbox takes the store it first hears of, from 0 (nothing to log).
        #expect(SyncAgent.restartReason(cursor: 0, known: nil, storeId: "aaaa", lastSeq: 5) == "new outbox")
        try outbox.restart(store: Outbox.storeDigest("aaaa"))
        try outbox.append([("A.=.a", [1])], cursor: 1041)
        let known = try outbox.store()
        #expect(known == Outbox.storeDigest("aaaa"))
        #expect(SyncAgent.restartReason(cursor: 1041, known: known, storeId: "aaaa", lastSeq: 1041) == nil)
        #expect(SyncAgent.restartReason(cursor: 1041, known: known, storeId: "aaaa", lastSeq: 2000) == nil)
        // A store made afresh, and a copy restored from before the cursor.
        #expect(SyncAgent.restartReason(cursor: 1041, known: known, storeId: "bbbb", lastSeq: 9000)?.contains("another") == true)
        #expect(SyncAgent.restartReason(cursor: 1041, known: known, storeId: "aaaa", lastSeq: 41)?.contains("older copy") == true)
        // An outbox filled before it kept the store: its cursor cannot be vouched for.
        #expect(SyncAgent.restartReason(cursor: 7, known: nil, storeId: "aaaa", lastSeq: 7) != nil)
        // A snapbackd that does not say: nothing to compare (the status says so instead).
        #expect(SyncAgent.restartReason(cursor: 7, known: known, storeId: "", lastSeq: 0) == nil)
        try outbox.restart(store: Outbox.storeDigest("bbbb"))
        let reopened = try Outbox(path: path)
        #expect(try reopened.cursor() == 0 && reopened.count() == 1 && reopened.store() == Outbox.storeDigest("bbbb"))
    }
}
