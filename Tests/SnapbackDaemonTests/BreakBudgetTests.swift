import SnapbackClient
import SnapbackDaemon
import SnapbackTimeline
import SnapbackWire
import Testing

/// Ad breaks cost the daemon about 150 bytes each, and one 1 MiB OpenSession carries 37,000 of them:
/// a daemon-wide bound (`max-breaks`) keeps a few connections from exhausting the box's memory.
/// In process, through the real service.
@Suite struct BreakBudgetTests {
    static func breaks(_ n: Int, from: Double = 100) -> [AdBreak] {
        (0..<n).map { AdBreak(id: "b\(Int(from))-\($0)", start: from + Double($0) * 100, duration: 30) }
    }

    func expectExhausted(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected RESOURCE_EXHAUSTED", sourceLocation: sourceLocation)
        } catch let error as SnapbackClientError {
            #expect(error.code == .resourceExhausted, "\(error)", sourceLocation: sourceLocation)
            #expect("\(error)".contains("limit of 100"), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func sessionsShareTheDaemonsBreakBudget() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaks = 100 }
        let a = try daemon.player()
        let b = try daemon.player()
        let first = try a.openSession(OpenSessionRequest(streamId: "a", contentId: "a", breaks: Self.breaks(60))).sessionId
        expectExhausted { _ = try b.openSession(OpenSessionRequest(streamId: "b", contentId: "b", breaks: Self.breaks(41))) }
        // Exactly up to the limit is fine.
        let second = try b.openSession(OpenSessionRequest(streamId: "b", contentId: "b", breaks: Self.breaks(40))).sessionId
        // Closing a session gives its breaks back.
        try a.closeSession(first)
        _ = try b.openSession(OpenSessionRequest(streamId: "c", contentId: "c", breaks: Self.breaks(60)))
        try b.closeSession(second)
    }

    @Test func adRulesBreaksCountOnceBuilt() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaks = 100 }
        let player = try daemon.player()
        // No breaks in the request, 200 once the rules are expanded.
        expectExhausted {
            _ = try player.openSession(
                OpenSessionRequest(
                    streamId: "r", contentId: "r", contentDuration: 12_000,
                    adRules: AdRules(midrollEvery: 60)))
        }
        _ = try player.openSession(
            OpenSessionRequest(
                streamId: "r", contentId: "r", contentDuration: 6000,
                adRules: AdRules(midrollEvery: 100)))
    }

    @Test func liveUpdatesAreHeldToTheBudgetAndAPlayerGoingAwayFreesIt() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaks = 100 }
        let player = try daemon.player()
        let live = try player.openSession(OpenSessionRequest(streamId: "l", contentId: "", kind: .live)).sessionId
        try player.send(.breaksUpdated(Self.breaks(90)), session: live)
        expectExhausted { try player.send(.breaksUpdated(Self.breaks(20, from: 100_000)), session: live) }
        try player.send(.breaksUpdated(Self.breaks(10, from: 100_000)), session: live)
        player.peer.disconnect()
        let next = try daemon.player()
        _ = try next.openSession(OpenSessionRequest(streamId: "n", contentId: "n", breaks: Self.breaks(100)))
    }
}
