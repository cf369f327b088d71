// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire
import Testing

/// The Sync service's admission in process (EmbeddedPeer, in-memory store): the admin rule of
/// WatchDecisions comes first, then a store that keeps no sync state is refused.
@Suite struct SyncServiceTests {
    typealias Box = WatchDecisionsServiceTests.Box

    static let record = try! SyncRecord(
        profile: "", contentId: "film",
        value: .tombstone(.deleted), stamp: SyncStamp(physical: 1, counter: 0, device: try! DeviceID("box-2")))

    @Test func nonAdminsAreRefusedBothCalls() throws {
        let box = Box { $0.access.adminGroups = [500] }
        let stranger = box.peer(uid: 1000, gid: 1000, groups: [44])
        for request in [WireRequest.watchChanges(after: 0), .merge(SyncMerge(records: [Self.record]))] {
            let refused = box.send(request, on: stranger, callId: 2)
            #expect(refused.count == 1)
            #expect(refused.first?.header.status == StatusCode.permissionDenied.rawValue, "\(request.method)")
        }
    }

    @Test func anAdminIsToldAStoreInMemoryDoesNotSync() throws {
        let box = Box { $0.access.adminGroups = [500] }
        let admin = box.peer(uid: 1002, gid: 500)
        for request in [WireRequest.watchChanges(after: 0), .merge(SyncMerge(records: [Self.record]))] {
            let refused = box.send(request, on: admin, callId: 2)
            #expect(refused.first?.header.status == StatusCode.failedPrecondition.rawValue, "\(request.method)")
        }
    }

    @Test func aMergeRoundTripsThroughTheWireMappingAndRefusesTooMany() throws {
        let watched = try WatchedBreaks(contentId: "film", watchedAt: ["b1": 5])
        let merge = SyncMerge(records: [Self.record], watched: [watched])
        #expect(try WireRequest.decode(method: .merge, body: merge.encoded()) == .merge(merge))
        let many = SyncMerge(records: Array(repeating: Self.record, count: SyncMerge.maxRecords + 1))
        #expect(throws: WireError.self) { try WireRequest.decode(method: .merge, body: many.encoded()) }
        let change = SyncChange(seq: 7, change: .record(Self.record))
        #expect(try SyncChange.decode(change.encoded()) == change)
    }
}
