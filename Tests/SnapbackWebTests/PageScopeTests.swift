// SPDX-License-Identifier: Apache-2.0
import SnapbackJSON
import SnapbackWeb
import SnapbackWire
import Testing

@Suite struct PageScopeTests {
    @Test func everyMethodOfTheProtocolHasItsRowOnce() {
        #expect(everyProtoJSONMethod.count == WireMethod.allCases.count)
        #expect(Set(everyProtoJSONMethod.map(\.method)) == Set(WireMethod.allCases))
        #expect(ProtoJSONMethod.byJSONName["seekEnded"]?.method == .seekEnded)
        #expect(ProtoJSONMethod.byJSONName["getBookmark"]?.method == .getBookmark)
        // A stream's RESPONSE: WatchChangesReply; WatchDecisions' is empty.
        #expect(ProtoJSONMethod.byJSONName["watchDecisions"]?.reply == nil)
        #expect(ProtoJSONMethod.byJSONName["watchChanges"]?.stream != nil)
    }

    @Test func grantsOpenTheOperatorsAndTheSyncAgentsMethods() {
        let player = PageScope(app: WebApp(name: "guide", profiles: ["alice"]))
        let ops = PageScope(app: WebApp(name: "ops", grants: [.admin, .watchDecisions]))
        for method in [
            WireMethod.getStatus, .getMetrics, .deleteBookmark, .clearBookmarks, .watchDecisions, .watchChanges, .merge
        ] {
            #expect(player.refusal(of: method)?.code == .permissionDenied, "\(method)")
        }
        #expect(player.refusal(of: .hello)?.code == .failedPrecondition)
        for method in [WireMethod.openSession, .seekEnded, .listSessions, .getSession, .getBookmark, .listBookmarks] {
            #expect(player.refusal(of: method) == nil, "\(method)")
        }
        #expect(ops.refusal(of: .watchDecisions) == nil && ops.refusal(of: .getStatus) == nil)
        #expect(ops.refusal(of: .merge)?.code == .permissionDenied)
    }

    @Test func profilesAreTheAppsOnlyAndTheDefaultWhenItListsNone() {
        let guide = PageScope(app: WebApp(name: "guide", profiles: ["alice", "bob"]))
        let plain = PageScope(app: WebApp(name: "plain"))
        var request = SnapbackV1.ListBookmarksRequest()
        request.profile = "alice"
        #expect(guide.refusal(of: request) == nil)
        request.profile = ""
        #expect(guide.refusal(of: request)?.code == .permissionDenied)
        #expect(plain.refusal(of: request) == nil)
        request.profile = "alice"
        #expect(plain.refusal(of: request)?.code == .permissionDenied)
    }

    @Test func aPageSeesOnlyTheSessionsItOpened() {
        var scope = PageScope(app: WebApp(name: "guide"))
        let open = SnapbackV1.OpenSessionRequest()
        var opened = SnapbackV1.OpenSessionReply()
        opened.sessionId = 7
        _ = scope.answered(open, reply: opened)
        var get = SnapbackV1.GetSessionRequest()
        get.sessionId = 8
        #expect(scope.refusal(of: get)?.code == .notFound)
        get.sessionId = 7
        #expect(scope.refusal(of: get) == nil)

        var list = SnapbackV1.ListSessionsReply()
        for id in [UInt64(6), 7, 8] {
            var info = SnapbackV1.SessionInfo()
            info.sessionId = id
            list.sessions.append(info)
        }
        let shown = scope.answered(SnapbackV1.ListSessionsRequest(), reply: list) as? SnapbackV1.ListSessionsReply
        #expect(shown?.sessions.map(\.sessionId) == [7])

        var close = SnapbackV1.CloseSessionRequest()
        close.sessionId = 7
        _ = scope.answered(close, reply: SnapbackV1.EventReply())
        #expect(scope.sessions.isEmpty)
    }
}
