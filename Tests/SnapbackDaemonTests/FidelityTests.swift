// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// Issue #11 through the daemon: the BreakSkipped push, the per-break state of GetSessionState, an ad
/// event's position and the racing AdBreakEnded. In process (EmbeddedDaemon), and once through the real
/// socket.
@Suite struct FidelityTests {
    static let twoBreaks = [AdBreak(id: "b1", start: 600, duration: 60), AdBreak(id: "b2", start: 1000, duration: 60)]

    static func skipped(_ pushes: [WirePushMessage]) -> [String] {
        pushes.compactMap { if case .breakSkipped(let id, let why) = $0.kind { "\(id) \(why?.rawValue ?? "?")" } else { nil } }
    }

    @Test func trickPlayOverTwoBreaksPushesBreakSkippedAndTheStateShowsIt() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "fid", breaks: Self.twoBreaks)).sessionId
        _ = try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        _ = try player.send(.trickPlayStarted(streamTime: 300, rate: 8), session: session)
        let ended = try player.send(.trickPlayEnded(streamTime: 1400), session: session)
        #expect(Self.skipped(ended) == ["b1 trick-play"])
        // The skip is pushed before the seek to the break that plays.
        let skipIndex = ended.firstIndex { if case .breakSkipped = $0.kind { true } else { false } }
        let seekIndex = ended.firstIndex { if case .seek = $0.kind { true } else { false } }
        #expect(skipIndex != nil && seekIndex != nil && skipIndex! < seekIndex!)
        #expect(ended.seeks.first?.0 == 1000)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.breakStates.map(\.breakId) == ["b1", "b2"])
        #expect(state.breakStates.map(\.skipped) == [.trickPlay, nil])
        #expect(state.breakStates.map(\.position) == [.midroll, .midroll])
    }

    /// androidx/media #1538: the playhead left the break through its end (watched), then the SDK's
    /// AdBreakEnded arrives: OK, nothing pushed. An ad event's position is a playhead report.
    @Test func aRacingAdBreakEndedIsAnsweredOKWithoutASecondEffect() throws {
        let daemon = EmbeddedDaemon()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "race")).sessionId
        _ = try player.send(.playheadReported(streamTime: 590, rate: 1, playing: true), session: session)
        daemon.advance(by: 10)
        _ = try player.send(.adBreakStarted(breakId: "b1", streamTime: 600), session: session)
        var state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.currentBreakId == "b1")
        daemon.advance(by: 60)
        _ = try player.send(.playheadReported(streamTime: 660.5, rate: 1, playing: true), session: session)
        daemon.advance(by: 0.1)
        _ = player.takePushes()
        let late = try player.send(.adBreakEnded(breakId: "b1"), session: session)
        #expect(late.isEmpty)
        state = try player.call(.getSessionState(sessionId: session))
        #expect(state.breakStates.first?.watched == true)
        // What contradicts the session is still refused.
        #expect(throws: SnapbackClientError.self) {
            _ = try player.send(.adBreakEnded(breakId: "b2"), session: session)
        }
    }

    /// Issue #25 through the real socket: under the tvsdk preset trick play over b1 and b2 tells both,
    /// b2 too though it then plays (TVSDK's AD_BREAK_SKIPPED before each break passed), then seeks to b2.
    /// The override on the wire does the same for another preset, and a rewind tells the breaks in the
    /// order it met them.
    @Test func tvsdkTellsEveryBreakTrickPlayPassedThroughTheSocket() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        var open = Streams.seed(contentId: "tvsdk-trick", breaks: Self.twoBreaks)
        open.requestedPreset = .tvsdk
        let session = try player.openSession(open).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.trickPlayStarted(streamTime: 300, rate: 8), session: session)
        let ended = try player.send(.trickPlayEnded(streamTime: 1400), session: session)
        #expect(Self.skipped(ended) == ["b1 trick-play", "b2 trick-play"])
        let lastSkip = ended.lastIndex { if case .breakSkipped = $0.kind { true } else { false } }
        let seekIndex = ended.firstIndex { if case .seek = $0.kind { true } else { false } }
        #expect(lastSkip != nil && seekIndex != nil && lastSkip! < seekIndex!)
        #expect(ended.seekTargets == [1000])

        var overrides = PolicyOverrides()
        overrides.trickPlaySkippedBreaks = .everyPassed
        let rewinding = try player.openSession(
            Streams.seed(contentId: "told-rewind", breaks: Self.twoBreaks, overrides: overrides)
        ).sessionId
        try player.send(.playheadReported(streamTime: 1400, rate: 1, playing: true), session: rewinding)
        try player.send(.trickPlayStarted(streamTime: 1400, rate: -8), session: rewinding)
        let rewound = try player.send(.trickPlayEnded(streamTime: 300), session: rewinding)
        #expect(Self.skipped(rewound) == ["b2 trick-play", "b1 trick-play"])
        #expect(rewound.seekTargets == [])
    }

    @Test func throughTheSocket() throws {
        let daemon = try DaemonHarness()
        let player = try daemon.player()
        let session = try player.openSession(Streams.seed(contentId: "fid-socket", breaks: Self.twoBreaks)).sessionId
        try player.send(.playheadReported(streamTime: 300, rate: 1, playing: true), session: session)
        try player.send(.trickPlayStarted(streamTime: 300, rate: 8), session: session)
        let ended = try player.send(.trickPlayEnded(streamTime: 1400), session: session)
        #expect(Self.skipped(ended) == ["b1 trick-play"])
        #expect(ended.seekTargets == [1000])
        try player.send(.adBreakStarted(breakId: "b2", streamTime: 1000), session: session)
        try player.send(.playheadReported(streamTime: 1060.5, rate: 1, playing: true), session: session)
        // The SDK's end arrives after the playhead left the break: OK.
        try player.send(.adBreakEnded(breakId: "b2", streamTime: 1061), session: session)
        let state: SessionStateReply = try player.call(.getSessionState(sessionId: session))
        #expect(state.breakStates.map(\.skipped) == [.trickPlay, nil])
        #expect(state.breakStates.map(\.watched) == [false, true])
    }
}
