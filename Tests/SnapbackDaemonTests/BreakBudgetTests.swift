// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackDaemon
import SnapbackTimeline
import SnapbackWire
import Testing

/// Ad breaks cost the daemon about 150 bytes each: a daemon-wide bound (`max-breaks`) keeps a few
/// connections from exhausting the box's memory. Each also costs the event loop a quarter to a third of a
/// microsecond in every OpenSession, UpdateBreaks and GetSessionState of its session, while every other
/// player waits: a bound per session (`max-breaks-per-session`) keeps one request from holding the loop.
/// In process, through the real service.
@Suite struct BreakBudgetTests {
    static func breaks(_ n: Int, from: Double = 100) -> [AdBreak] {
        (0..<n).map { AdBreak(id: "b\(Int(from))-\($0)", start: from + Double($0) * 100, duration: 30) }
    }

    func expectExhausted(
        saying words: String = "limit of 100", _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try body()
            Issue.record("expected RESOURCE_EXHAUSTED", sourceLocation: sourceLocation)
        } catch let error as SnapbackClientError {
            #expect(error.code == .resourceExhausted, "\(error)", sourceLocation: sourceLocation)
            #expect("\(error)".contains(words), "\(error)", sourceLocation: sourceLocation)
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

    @Test func aSessionHoldsAtMostItsLimitHoweverItsBreaksCome() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaksPerSession = 50 }
        let player = try daemon.player()
        // Carried by the request: refused while it is decoded, before its breaks are read.
        expectExhausted(saying: "51 breaks, more than the 50 allowed") {
            _ = try player.openSession(OpenSessionRequest(streamId: "a", contentId: "a", breaks: Self.breaks(51)))
        }
        let full = try player.openSession(OpenSessionRequest(streamId: "a", contentId: "a", breaks: Self.breaks(50)))
        try player.closeSession(full.sessionId)
        // Built by ad rules: 60 mid-rolls.
        expectExhausted(saying: "would hold 61 ad breaks, more than the 50 allowed") {
            _ = try player.openSession(
                OpenSessionRequest(streamId: "r", contentId: "r", contentDuration: 3600, adRules: AdRules(midrollEvery: 60)))
        }
        // A live session growing: each UpdateBreaks carries the stream's list, which may drop old breaks
        // the session still holds.
        let live = try player.openSession(OpenSessionRequest(streamId: "l", contentId: "", kind: .live)).sessionId
        try player.send(.breaksUpdated(Self.breaks(40)), session: live)
        expectExhausted(saying: "would hold 60 ad breaks, more than the 50 allowed") {
            try player.send(.breaksUpdated(Self.breaks(20, from: 100_000)), session: live)
        }
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: live))
        #expect(state.breaks.count == 40)
        try player.send(.breaksUpdated(Self.breaks(30) + Self.breaks(10, from: 100_000)), session: live)
        let grown: SessionStateReply = try player.call(.getSessionState(sessionId: live))
        #expect(grown.breaks.count == 50)
    }

    @Test func helloTellsThePerSessionLimit() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaksPerSession = 77 }
        let peer = daemon.connect()
        let player = EmbeddedPlayer(peer: peer, store: daemon.store, clock: daemon.clock)
        let hello: SnapbackV1.HelloReply = try player.call(
            .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "limits")))
        #expect(hello.maxBreaksPerSession == 77)
        let defaults = EmbeddedDaemon()
        let other = EmbeddedPlayer(peer: defaults.connect(), store: defaults.store, clock: defaults.clock)
        let defaultHello: SnapbackV1.HelloReply = try other.call(
            .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "limits")))
        #expect(defaultHello.maxBreaksPerSession == 1000 && defaultHello.maxFrameSize == 262_144)
        #expect(defaultHello.protocolVersion == WireProtocol.version && defaultHello.serverName == "snapbackd")
        #expect(defaultHello.policyPresets == ["snapback", "ima", "tvsdk", "media3", "hlsjs"])
        #expect(defaultHello.defaultPolicyPreset == "snapback")
    }

    /// A session over a page's worth of breaks (the operator raised the limit) answers its state in pages:
    /// each costs its own breaks, and together they are the session's breaks, once each, in order.
    @Test func aLargeSessionsStateComesInPages() throws {
        let daemon = EmbeddedDaemon { $0.maxBreaksPerSession = 2500 }
        let player = try daemon.player()
        let breaks = Self.breaks(2500)
        let id = try player.openSession(OpenSessionRequest(streamId: "big", contentId: "big", breaks: breaks)).sessionId
        let first: SessionStateReply = try player.call(.getSessionState(sessionId: id))
        #expect(first.totalBreaks == 2500 && first.breaks.count == 1000 && first.breakStates.count == 1000)
        var ids: [String] = []
        var next: UInt32 = 0
        while true {
            let page: SessionStateReply = try player.call(.getSessionState(sessionId: id, firstBreak: next))
            #expect(page.totalBreaks == 2500)
            #expect(page.breaks.map(\.id) == page.breakStates.map(\.breakId))
            if page.breaks.isEmpty { break }
            ids += page.breaks.map(\.id)
            next += UInt32(page.breaks.count)
        }
        #expect(ids == breaks.map(\.id))
        let few: SessionStateReply = try player.call(.getSessionState(sessionId: id, firstBreak: 2495, maxBreaks: 3))
        #expect(few.breaks.map(\.id) == breaks[2495..<2498].map(\.id))
        let capped: SessionStateReply = try player.call(.getSessionState(sessionId: id, firstBreak: 10, maxBreaks: 5000))
        #expect(capped.breaks.count == 1000 && capped.breaks.first?.id == breaks[10].id)
        let past: SessionStateReply = try player.call(.getSessionState(sessionId: id, firstBreak: .max))
        #expect(past.breaks.isEmpty && past.totalBreaks == 2500)
        // GetSession's state holds the first page, ListSessions' none; both say how many there are.
        let info: SnapbackV1.SessionInfo = try player.call(.getSession(sessionId: id))
        #expect(info.breakCount == 2500 && info.state?.breaks.count == 1000 && info.state?.totalBreaks == 2500)
        let list: SnapbackV1.ListSessionsReply = try player.call(.listSessions())
        #expect(list.sessions.map { $0.state?.breaks.count } == [0] && list.sessions.map(\.breakCount) == [2500])
    }

    /// ListSessions answers a page at a time, in opening order, each session once however many there are,
    /// and only those the caller may see.
    @Test func sessionsAreListedInPages() throws {
        let daemon = EmbeddedDaemon {
            $0.maxSessionsPerConnection = 300
            $0.access.anyone = true
        }
        let player = try daemon.player()
        var opened: [UInt64] = []
        for i in 0..<250 {
            opened.append(try player.openSession(OpenSessionRequest(streamId: "s", contentId: "c\(i)")).sessionId)
        }
        for id in opened[100..<120] { try player.closeSession(id) }
        let stranger = EmbeddedPlayer(peer: daemon.connect(uid: 4242, gid: 4242), store: daemon.store, clock: daemon.clock)
        let _: SnapbackV1.HelloReply = try stranger.call(
            .hello(SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "stranger")))
        let own = try stranger.openSession(OpenSessionRequest(streamId: "t", contentId: "theirs")).sessionId
        let first: SnapbackV1.ListSessionsReply = try player.call(.listSessions())
        #expect(first.sessions.count == 100 && first.nextPageToken != "")
        var seen: [UInt64] = []
        var token = ""
        repeat {
            let page: SnapbackV1.ListSessionsReply = try player.call(.listSessions(pageSize: 64, pageToken: token))
            #expect(page.sessions.count <= 64)
            seen += page.sessions.map(\.sessionId)
            token = page.nextPageToken
        } while !token.isEmpty
        #expect(seen == Array(opened[..<100] + opened[120...]) + [own])
        let theirs: SnapbackV1.ListSessionsReply = try stranger.call(.listSessions(pageSize: 5000))
        #expect(theirs.sessions.map(\.sessionId) == [own] && theirs.nextPageToken == "")
        let refusal = #expect(throws: SnapbackClientError.self) {
            _ = try player.call(.listSessions(pageToken: "not-a-token"), as: SnapbackV1.ListSessionsReply.self)
        }
        #expect(refusal?.code == .invalidArgument)
    }
}
