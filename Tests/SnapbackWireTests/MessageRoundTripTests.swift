// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire
import Testing

// Fixtures shared by the wire tests.

let sampleBreaks: [AdBreak] = [
    AdBreak(id: "pre", start: 0, duration: 30, adDurations: [15, 15], watched: true),
    AdBreak(id: "b1", start: 630, duration: 60.5, adDurations: [], watched: false, contentResumeOffset: 0),
    AdBreak(id: "brk-é", start: 1290.25, duration: 45, adDurations: [10, 20, 15], contentResumeOffset: 45)
]

var everyOverride: PolicyOverrides {
    var o = PolicyOverrides()
    o.skippedBreakChoice = .first
    o.seekGate = .allBreaksBeforeTarget
    o.enforceBackwardSeeks = true
    o.returnToTarget = .never
    o.landingInUnwatchedBreak = .adStart
    o.skipWatchedBreakOnLanding = false
    o.watchedWhen = .never
    o.refuseSeeksDuringUnwatchedBreak = false
    o.watchedBreakOnPlayback = .skip
    o.snapbackLandingOffset = 0.1
    o.cooldown = 0  // present with the zero value: still an override
    o.trickPlayAsSeek = false
    o.resumeBreaks = .prerollAndLastBefore
    o.prerollDisabled = true
    o.midrollsDisabled = true
    o.liveSnapback = true
    o.liveBookmarks = true
    o.maxSnapbacksPerBreak = 7
    o.coverageTolerance = 0.5
    o.bookmarkInterval = 0
    o.finishedMargin = 12.5
    return o
}

let fullOpenSession = OpenSessionRequest(
    streamId: "https://cdn.example/master.m3u8", contentId: "movie-42", profile: "kids", kind: .onDemand,
    breaks: sampleBreaks, contentDuration: 5400, preset: .tvsdk, overrides: everyOverride,
    resume: SnapbackV1.ResumeOptions(useBookmark: true, resumeContentTime: 0, resumeStreamTime: 0), adRules: nil)

let adRulesOpenSession = OpenSessionRequest(
    streamId: "s", contentId: "c", kind: .live, contentDuration: nil, preset: nil,
    resume: SnapbackV1.ResumeOptions(useBookmark: true),
    adRules: AdRules(preroll: false, midrollTimes: [600, 1200.5], midrollEvery: 1800, postroll: true, breakDuration: 0))

let everyRequest: [WireRequest] = [
    .hello(SnapbackV1.HelloRequest(protocolVersion: 1, clientName: "test-client")),
    .hello(SnapbackV1.HelloRequest(protocolVersion: 0, clientName: "")),
    .getStatus,
    .openSession(fullOpenSession),
    .openSession(adRulesOpenSession),
    .openSession(OpenSessionRequest(streamId: "", contentId: "")),
    .event(sessionId: 1, .playheadReported(streamTime: 12.75, rate: 1, playing: true)),
    .event(sessionId: 2, .playheadReported(streamTime: 0, rate: 0, playing: false)),
    .event(sessionId: 3, .seekStarted(from: 300)),
    .event(sessionId: 4, .seekEnded(from: 300, to: 900)),
    .event(sessionId: UInt64.max, .seekEnded(from: 0, to: 0)),
    .event(sessionId: 5, .adBreakStarted(breakId: "b1")),
    .event(sessionId: 5, .adBreakEnded(breakId: "b1")),
    .event(sessionId: 5, .adStarted(breakId: "b1", index: 0)),
    .event(sessionId: 5, .adEnded(breakId: "b1", index: 3)),
    .event(sessionId: 6, .trickPlayStarted(streamTime: 100, rate: -8)),
    .event(sessionId: 6, .trickPlayEnded(streamTime: 40)),
    .event(sessionId: 7, .contentCompleted),
    .event(sessionId: 8, .breaksUpdated(sampleBreaks)),
    .event(sessionId: 8, .breaksUpdated([])),
    .event(sessionId: 8, .midrollsScheduled([600, 1200.5])),
    .event(sessionId: 9, .paused(streamTime: 77.5)),
    .closeSession(sessionId: 10),
    .contentTimeForStreamTime(sessionId: 11, streamTime: 700),
    .streamTimeForContentTime(sessionId: 11, contentTime: 600),
    .breakAt(sessionId: 11, streamTime: 650),
    .getSessionState(sessionId: 12),
    .getSessionState(sessionId: 12, firstBreak: 1000, maxBreaks: 10),
    .listSessions(),
    .listSessions(pageSize: 50, pageToken: "1234"),
    .getSession(sessionId: 12),
    .watchDecisions(sessionId: 0, contentId: ""),
    .watchDecisions(sessionId: 7, contentId: "movie-42"),
    .getMetrics,
    .getBookmark(profile: "", contentId: "movie-42"),
    .listBookmarks(profile: "kids", pageSize: 50, pageToken: "tok"),
    .listBookmarks(profile: "", pageSize: 0, pageToken: ""),
    .deleteBookmark(profile: "kids", contentId: "movie-42"),
    .clearBookmarks(profile: "kids")
]

let sampleSessionState = SessionStateReply(
    phase: .inBreak, currentBreakId: "b1", streamTime: 640, contentTime: 600, playing: true, rate: 1,
    pendingReturn: 900, breaks: sampleBreaks, cooldownUntil: 1_700_000_000.5, lastBookmarkContentTime: 0,
    totalBreaks: 1200)

let bookmark = Bookmark(
    profile: "kids", contentId: "movie-42", contentTime: 870, streamTime: 960,
    streamId: "stream-1", updatedAt: 1_700_000_123.25, finished: false)

func roundTrip<M: WireMessage & Equatable>(_ message: M) throws -> M {
    try M.decode(message.encoded())
}

@Suite("Requests round-trip")
struct MessageRequestRoundTripTests {
    @Test(arguments: everyRequest)
    func roundTrips(_ request: WireRequest) throws {
        let body = request.encoded()
        let decoded = try WireRequest.decode(method: request.method, body: body)
        #expect(decoded == request)
    }

    @Test func operatorMessagesRoundTrip() throws {
        let state = SessionStateReply(
            phase: .inBreak, currentBreakId: "b1", streamTime: 610, contentTime: 600,
            playing: true, rate: 1, pendingReturn: 900,
            breaks: [AdBreak(id: "b1", start: 600, duration: 30, watched: true)])
        let info = SnapbackV1.SessionInfo(
            sessionId: 3, contentId: "movie", streamId: "s", profile: "kids", kind: SessionKind.live.proto,
            policyPreset: "ima", clientName: "shell", peerUid: 1000, peerPid: 42, openedAt: 1.8e9,
            pushes: 4, breakCount: 1, state: state.proto, contentDuration: 1800)
        let decoded = try SnapbackV1.SessionInfo.decode(info.encoded())
        #expect(decoded == info)
        #expect(SessionStateReply(proto: try #require(decoded.state)) == state)
        let list = SnapbackV1.ListSessionsReply(sessions: [info, info], nextPageToken: "17")
        #expect(try SnapbackV1.ListSessionsReply.decode(list.encoded()) == list)
        #expect(try SnapbackV1.ListSessionsReply.decode([]) == SnapbackV1.ListSessionsReply(sessions: []))
        // Each kind of decision from the action it stands for, and back from its bytes.
        let actions: [(TimelineAction.Kind, DecisionKind)] = [
            (.seek(to: 600, reason: .snapback), .seek), (.breakWatched(breakId: "b1"), .breakWatched),
            (.breakCompleted(breakId: "b1"), .breakCompleted), (.playBreak(breakId: "b1"), .playBreak),
            (.allAdsCompleted, .allAdsCompleted),
            (.saveBookmark(contentTime: 570, streamTime: 600, trigger: .paused), .saveBookmark),
            (.clearBookmark, .clearBookmark), (.breakSkipped(breakId: "b1", why: .cooldown), .breakSkipped)
        ]
        #expect(Set(actions.map(\.1.rawValue)) == Set(DecisionKind.allCases.map(\.rawValue)))
        for (action, kind) in actions {
            let reason = TimelineReason.snapback(jump: false, from: 300, to: 900, breakId: "b1", start: 600)
            let decision = try #require(
                SnapbackV1.Decision(
                    TimelineAction(action, reason: reason), sessionId: 3, contentId: "movie", streamId: "s", profile: "kids",
                    at: 1.8e9))
            #expect(DecisionKind(proto: decision.kind) == kind && decision.reason == reason.description)
            #expect(try SnapbackV1.Decision.decode(decision.encoded()) == decision)
        }
        let seek = SnapbackV1.Decision(
            TimelineAction(.seek(to: 600, reason: .snapback), reason: .periodicBookmark), sessionId: 3,
            contentId: "movie", streamId: "s", profile: "kids", at: 1.8e9)
        #expect(seek?.streamTime == 600 && SeekReason(proto: seek!.seekReason) == .snapback && seek?.breakId == "")
        // Timers are not decisions.
        let timer = TimelineAction(.scheduleTimer(.bookmark, deadline: 5), reason: .periodicBookmark)
        #expect(SnapbackV1.Decision(timer, sessionId: 1, contentId: "", streamId: "", profile: "", at: 0) == nil)
    }

    @Test func encodeIntoAppendsAfterExistingBytes() throws {
        var out: [UInt8] = [0xAA, 0xBB]
        let request = WireRequest.event(sessionId: 4, .seekEnded(from: 300, to: 900))
        let n = request.encode(into: &out)
        #expect(out.count == 2 + n)
        #expect(Array(out.prefix(2)) == [0xAA, 0xBB])
        #expect(try WireRequest.decode(method: .seekEnded, body: Array(out.dropFirst(2))) == request)
    }

    @Test func closedEventTravelsAsCloseSession() throws {
        let request = WireRequest.event(sessionId: 3, .closed)
        #expect(request.method == .closeSession)
        #expect(try WireRequest.decode(method: .closeSession, body: request.encoded()) == .closeSession(sessionId: 3))
    }

    @Test func sessionIdOfSessionRequests() {
        #expect(WireRequest.event(sessionId: 4, .contentCompleted).sessionId == 4)
        #expect(WireRequest.getSessionState(sessionId: 9).sessionId == 9)
        #expect(WireRequest.getStatus.sessionId == nil)
    }

    @Test func emptyDefaultsEncodeToNothing() {
        #expect(WireRequest.getStatus.encoded().isEmpty)
        #expect(WireRequest.event(sessionId: 0, .seekStarted(from: 0)).encoded().isEmpty)
    }
}

@Suite("Replies round-trip")
struct MessageReplyRoundTripTests {
    @Test func helloReply() throws {
        let reply = SnapbackV1.HelloReply(serverVersion: "0.1.0")
        #expect(try roundTrip(reply) == reply)
        let custom = SnapbackV1.HelloReply(
            protocolVersion: 2, serverName: "x", serverVersion: "", maxFrameSize: 4096,
            maxOutboundQueueBytes: 1, policyPresets: [], defaultPolicyPreset: "ima",
            maxBreaksPerSession: 0)
        #expect(try roundTrip(custom) == custom)
    }

    @Test func statusReply() throws {
        let reply = SnapbackV1.StatusReply(
            uptime: 12.5, serverVersion: "0.1.0", connections: 3, sessions: 2, requests: 1000,
            pushes: 10,
            store: SnapbackV1.StoreStatus(
                kind: "sqlite", path: "/var/lib/snapback/db",
                bookmarks: 42, error: "disk I/O error"),
            logLinesDropped: 17)
        #expect(try roundTrip(reply) == reply)
        let bare = SnapbackV1.StatusReply(uptime: 0, serverVersion: "", connections: 0, sessions: 0)
        #expect(try roundTrip(bare) == bare)
    }

    @Test func openSessionReply() throws {
        let full = SnapbackV1.OpenSessionReply(
            sessionId: 7, startStreamTime: 0, breaksBeforeResume: ["pre", "b1"],
            policyPreset: "tvsdk", resumeContentTime: 870, resumedFromBookmark: true,
            lastPushSeq: 2)
        #expect(try roundTrip(full) == full)
        let bare = SnapbackV1.OpenSessionReply(sessionId: 1, policyPreset: "snapback")
        #expect(try roundTrip(bare) == bare)
        #expect(try roundTrip(bare).startStreamTime == nil)
    }

    @Test(arguments: [UInt64(0), 1, 300, UInt64.max])
    func eventReply(_ seq: UInt64) throws {
        var out: [UInt8] = []
        WireReply.encodeEventReply(lastPushSeq: seq, into: &out)
        #expect(try SnapbackV1.EventReply.decode(out) == SnapbackV1.EventReply(lastPushSeq: seq))
        #expect(try roundTrip(SnapbackV1.EventReply(lastPushSeq: seq)).lastPushSeq == seq)
    }

    @Test func timeQueries() throws {
        var out: [UInt8] = []
        SnapbackV1.ContentTimeReply(contentTime: 600.5).encode(into: &out)
        #expect(try SnapbackV1.ContentTimeReply.decode(out).contentTime == 600.5)
        out.removeAll()
        SnapbackV1.StreamTimeReply(streamTime: 690).encode(into: &out)
        #expect(try SnapbackV1.StreamTimeReply.decode(out).streamTime == 690)
    }

    @Test(arguments: [
        SnapbackV1.BreakAtReply(previous: sampleBreaks[0], next: sampleBreaks[1]),
        SnapbackV1.BreakAtReply(previous: nil, next: sampleBreaks[2]),
        SnapbackV1.BreakAtReply(previous: sampleBreaks[2], next: nil),
        SnapbackV1.BreakAtReply(previous: nil, next: nil)
    ])
    func breakAt(_ reply: SnapbackV1.BreakAtReply) throws {
        var out: [UInt8] = []
        SnapbackV1.BreakAtReply(previous: reply.previous, next: reply.next).encode(into: &out)
        #expect(try SnapbackV1.BreakAtReply.decode(out) == reply)
    }

    @Test func sessionState() throws {
        #expect(try roundTrip(sampleSessionState) == sampleSessionState)
        let bare = SessionStateReply(phase: .content, streamTime: 0, contentTime: 0, playing: false, rate: 0)
        #expect(try roundTrip(bare) == bare)
        for phase in [TimelineSnapshot.Phase.content, .inBreak, .seeking, .trickPlay, .finished, .closed] {
            var s = bare
            s.phase = phase
            #expect(try roundTrip(s).phase == phase)
        }
    }

    @Test func bookmarks() throws {
        var out: [UInt8] = []
        bookmark.encode(into: &out)
        #expect(try Bookmark.decode(out) == bookmark)

        var finished = bookmark
        finished.finished = true
        finished.contentId = "other"
        out.removeAll()
        SnapbackV1.ListBookmarksReply(bookmarks: [bookmark, finished], nextPageToken: "next").encode(into: &out)
        #expect(
            try SnapbackV1.ListBookmarksReply.decode(out)
                == SnapbackV1.ListBookmarksReply(
                    bookmarks: [bookmark, finished],
                    nextPageToken: "next"))
        #expect(try roundTrip(SnapbackV1.ListBookmarksReply(bookmarks: [])) == SnapbackV1.ListBookmarksReply(bookmarks: []))

        out.removeAll()
        SnapbackV1.DeleteBookmarkReply(deleted: true).encode(into: &out)
        #expect(try SnapbackV1.DeleteBookmarkReply.decode(out).deleted)
        out.removeAll()
        SnapbackV1.ClearBookmarksReply(deleted: 12).encode(into: &out)
        #expect(try SnapbackV1.ClearBookmarksReply.decode(out).deleted == 12)
    }

    @Test(arguments: StatusCode.allCases)
    func status(_ code: StatusCode) throws {
        var out: [UInt8] = []
        WireReply.encodeStatus(code: code, message: "why \(code.name)", into: &out)
        #expect(try WireStatus.decode(out) == WireStatus(code: code, message: "why \(code.name)"))
    }

    @Test func statusWithUnknownCodeReadsAsUnknown() throws {
        // Status{code: 99, message: "x"}
        let body: [UInt8] = [0x08, 99, 0x12, 0x01, 0x78]
        #expect(try WireStatus.decode(body) == WireStatus(code: .unknown, message: "x"))
    }
}

let pushedActions: [TimelineAction] =
    [
        TimelineAction(
            .seek(to: 600, reason: .snapback), reason: .snapback(jump: false, from: 300, to: 900, breakId: "b1", start: 600)),
        TimelineAction(.seek(to: 0, reason: .resumeAfterSnapback), reason: .returnToTarget(breakId: "b1", target: 0)),
        TimelineAction(.breakWatched(breakId: "b1"), reason: .watchedOnEnd(breakId: "b1", .playheadReachedEnd(660))),
        TimelineAction(.playBreak(breakId: "mid-2"), reason: .breakPlays(.contentReached(1200), breakId: "mid-2")),
        TimelineAction(.allAdsCompleted, reason: .postrollCompleted(breakId: "postroll")),
        TimelineAction(
            .saveBookmark(contentTime: 870, streamTime: 960, trigger: .paused),
            reason: .bookmark(.paused(at: 960), contentTime: 870)),
        TimelineAction(.clearBookmark, reason: .finished(.contentComplete))
    ]
    + SeekReason.allCases.map {
        TimelineAction(.seek(to: 12.5, reason: $0), reason: .seekRefused(from: 1, to: 12.5, breakId: $0.rawValue))
    }
    + BookmarkTrigger.allCases.map {
        TimelineAction(
            .saveBookmark(contentTime: 1, streamTime: 2, trigger: $0), reason: .bookmark(.settled(.seek, at: 2), contentTime: 1))
    }

@Suite("Pushes round-trip")
struct MessagePushRoundTripTests {
    @Test(arguments: pushedActions)
    func everyPushedAction(_ action: TimelineAction) throws {
        #expect(WirePush.isPushed(action.kind))
        var out: [UInt8] = []
        #expect(WirePush.encodePush(sessionId: 3, seq: 17, action: action, into: &out))
        let push = try WirePushMessage.decode(out)
        #expect(push == WirePushMessage(sessionId: 3, seq: 17, action: action))
        #expect(push.reason == action.reason.description)
        // The client-side encoder produces the same bytes as the server's.
        #expect(WirePushMessage(sessionId: 3, seq: 17, action: action)!.encoded() == out)
    }

    @Test(arguments: [
        TimelineAction(.scheduleTimer(.bookmark, deadline: 30), reason: .periodicBookmark),
        TimelineAction(.cancelTimer(.breakEnd), reason: .timerCancelled(.breakCompleted))
    ])
    func timersAreNeverPushed(_ action: TimelineAction) {
        #expect(!WirePush.isPushed(action.kind))
        var out: [UInt8] = [1, 2, 3]
        #expect(!WirePush.encodePush(sessionId: 1, seq: 1, action: action, into: &out))
        #expect(out == [1, 2, 3])
        #expect(WirePushMessage(sessionId: 1, seq: 1, action: action) == nil)
    }

    @Test func sessionError() throws {
        var out: [UInt8] = []
        WirePush.encodePushSessionError(
            sessionId: 9, seq: 4, code: .unavailable, message: "store unavailable",
            into: &out)
        let push = try WirePushMessage.decode(out)
        #expect(
            push
                == WirePushMessage(
                    sessionId: 9, seq: 4, reason: "",
                    kind: .sessionError(code: .unavailable, message: "store unavailable")))
        #expect(try roundTrip(push) == push)
    }

    @Test func breakSkipped() throws {
        let action = TimelineAction(.breakSkipped(breakId: "b1", why: .trickPlay), reason: .notPlayed(.trickPlay, breakId: "b1"))
        var out: [UInt8] = []
        #expect(WirePush.encodePush(sessionId: 3, seq: 2, action: action, into: &out))
        let push = try WirePushMessage.decode(out)
        #expect(
            push
                == WirePushMessage(
                    sessionId: 3, seq: 2, reason: "break b1 not played: trick play went over it",
                    kind: .breakSkipped(breakId: "b1", reason: .trickPlay)))
        #expect(try roundTrip(push) == push)
        // A reason from a newer server reads as nil: Push{1, 1, break_skipped{"b", reason 42}}.
        let newer: [UInt8] = [0x08, 0x01, 0x10, 0x01, 0x5A, 0x05, 0x0A, 0x01, 0x62, 0x10, 42]
        #expect(try WirePushMessage.decode(newer).kind == .breakSkipped(breakId: "b", reason: nil))
    }

    @Test func noEffectIsNotPushed() {
        var out: [UInt8] = []
        #expect(
            !WirePush.encodePush(
                sessionId: 3, seq: 2, action: TimelineAction(.noEffect, reason: .confirms(.adBreakEnded, breakId: "b1")),
                into: &out))
        #expect(out.isEmpty)
    }

    @Test func pushWithoutKindReadsAsUnknown() throws {
        let push = WirePushMessage(sessionId: 1, seq: 2, reason: "r", kind: .unknown)
        #expect(try roundTrip(push) == push)
    }

    @Test func pushOfAKindFromANewerServerReadsAsUnknown() throws {
        // session_id 5, seq 6, then field 12 (a message kind this version lacks) holding field 1 = 1.
        let body: [UInt8] = [0x08, 0x05, 0x10, 0x06, 0x62, 0x02, 0x08, 0x01]
        #expect(try WirePushMessage.decode(body) == WirePushMessage(sessionId: 5, seq: 6, reason: "", kind: .unknown))
    }

    @Test func seekWithAReasonFromANewerServerStillSeeks() throws {
        // Push{session_id 1, seq 1, seek{stream_time 600, reason 42}}
        let body: [UInt8] = [0x08, 0x01, 0x10, 0x01, 0x22, 0x0B, 0x09, 0, 0, 0, 0, 0, 0xC0, 0x82, 0x40, 0x10, 42]
        #expect(try WirePushMessage.decode(body).kind == .seek(to: 600, reason: nil))
    }
}
