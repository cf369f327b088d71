// SPDX-License-Identifier: Apache-2.0
import CLinux
import SnapbackClient
import SnapbackEmbedded
import SnapbackStore
import SnapbackTestSupport
import SnapbackTimeline
import SnapbackWire
import Testing

@testable import SnapbackDaemon

/// A month of a box's life in process: 30 simulated days of players coming and vanishing, on-demand and
/// live sessions, seeks, breaks, pauses, bookmarks past the store's 10,000, watched breaks expiring,
/// configuration reloads, a failing store now and then and a wall clock that boots at 1970 and is
/// stepped both ways. After every day, what the daemon holds is bounded by what is open now, and
/// nothing it acknowledged was lost.
///
/// Its heap check reads glibc's in-use bytes, which are the whole process's: `make test` runs it in a
/// process of its own (`swift test --filter MonthSoakTests`), since other suites' tests running beside it
/// in one process move that figure by megabytes. It compares floors (the least in-use bytes over several
/// days), which the day's own garbage does not move.
@Suite(.serialized) struct MonthSoakTests {
    @Test func aMonthOfABoxInAMinute() throws {
        let soak = MonthSoak(seed: 0x5EED_2026_0023)
        try soak.run(days: 30)
        let report = soak.report
        // The workload did what it is meant to: the cap was passed, breaks were watched and expired.
        #expect(report.bookmarksSaved > 12_000, "\(report)")
        #expect(report.sessionsOpened > 10_000, "\(report)")
        #expect(report.watchedExpired > 20, "\(report)")
        #expect(report.watchedKept > 20, "\(report)")
        #expect(report.vanished > 100, "\(report)")
        #expect(report.failedWrites > 0, "\(report)")
        #expect(report.steps >= 4, "\(report)")
        // The heap once the store is full (its 10,000 bookmarks are most of the daemon's memory): the
        // floor of days 22-29 against that of days 12-19, ten days and about 12,000 sessions apart. A
        // leak of 400 bytes per closed session fails it (tried: 15.2 MB allowed, 16.6 MB found).
        #expect(soak.fullOnDay.map { $0 < 12 } == true, "the store filled up on day \(soak.fullOnDay ?? -1)")
        let early = soak.heapByDay[12...19].min()!, late = soak.heapByDay[22...].min()!
        #expect(late <= early + 4 << 20, "heap floor days 12-19: \(early) B, days 22-29: \(late) B; \(soak.heapByDay)")
    }
}

final class MonthSoak {
    struct Report: CustomStringConvertible {
        var sessionsOpened = 0
        var bookmarksSaved = 0
        var watchedKept = 0
        var watchedExpired = 0
        var vanished = 0
        var failedWrites = 0
        var steps = 0
        var refused: [StatusCode: Int] = [:]
        var description: String {
            "sessions \(sessionsOpened), bookmarks acknowledged \(bookmarksSaved), watched kept/expired checks "
                + "\(watchedKept)/\(watchedExpired), players vanished \(vanished), store failure slots \(failedWrites), "
                + "clock steps \(steps), refused \(refused)"
        }
    }

    final class Session {
        let id: UInt64
        let contentId: String
        let profile: String
        let live: Bool
        var breaks: [AdBreak]
        let duration: Double?
        var position = 0.0
        var playing = false
        var at: Double
        /// Breaks whose watched mark the store did not keep (a session error said so).
        var notKept: Set<String> = []

        init(
            id: UInt64, contentId: String, profile: String, live: Bool, breaks: [AdBreak], duration: Double?, at: Double
        ) {
            self.id = id
            self.contentId = contentId
            self.profile = profile
            self.live = live
            self.breaks = breaks
            self.duration = duration
            self.at = at
        }

        var key: String { profile + "\u{0}" + contentId }
    }

    final class Player {
        let client: EmbeddedPlayer
        var sessions: [UInt64: Session] = [:]
        init(_ client: EmbeddedPlayer) { self.client = client }
    }

    struct Ack {
        var contentTime: Double
        var finished: Bool
        /// The store's saves committed when it was acknowledged: while fewer than its capacity follow,
        /// it cannot have been evicted.
        var savesAt: UInt64
        /// A later save may have been made that its player could not be told of (it vanished).
        var unsure = false
    }

    let daemon: EmbeddedDaemon
    var rng: SplitMix64
    var players: [Player] = []
    var watcher: EmbeddedPlayer?
    var report = Report()
    /// glibc's heap in use at the end of each day.
    var heapByDay: [Int] = []
    /// The first day the store held its 10,000 bookmarks.
    var fullOnDay: Int?
    var acked: [String: Ack] = [:]
    /// The last keys acknowledged, in order: what a DeleteBookmark picks from.
    var recentKeys: [String] = []
    /// When each (content, break) was last marked watched and kept, in monotonic time: between `lo` and
    /// `hi` (a mark made by a timer is seen after the clock's step that fired it).
    var watched: [String: [String: (lo: Double, hi: Double)]] = [:]
    /// The largest step back of the wall clock by less than a day: a watched break may be kept that much
    /// longer than the retention (its row is within the range of the clock after the step).
    var backSlack = 0.0
    var configuration = DaemonConfiguration()
    let day = 86_400.0
    let retention = 86_400.0

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        configuration.bookmarkInterval = 300
        configuration.access.users = [0, 1000, 1001]
        // Booted at 1970, before NTP: 20 s since boot.
        let config = configuration
        daemon = EmbeddedDaemon(clock: ManualClock(at: 100, monotonic: 20)) { $0 = config }
    }

    var now: Double { daemon.clock.monotonicTime }

    func run(days: Int) throws {
        for d in 0..<days {
            for slot in 0..<48 {
                try slotOfTheDay(day: d, slot: slot)
            }
            try checkBounds(day: d)
        }
    }

    // MARK: The day

    func slotOfTheDay(day d: Int, slot: Int) throws {
        // The store fails now and then, for half an hour.
        daemon.store.failWrites = rng.chance(0.03) ? .full("disk full (soak)") : nil
        if daemon.store.failWrites != nil { report.failedWrites += 1 }
        clockEvents(day: d, slot: slot)
        if slot == 20 && rng.chance(0.5) { reload() }
        if rng.chance(0.2) { watcherComesOrGoes() }
        // Night: little happens.
        let busy = (12..<46).contains(slot)
        for _ in 0..<Int.random(in: busy ? 20...40 : 0...4, using: &rng) {
            try action()
        }
        // The rest of the half hour, in steps: timers fire (break ends, periodic bookmarks).
        var left = 1800.0
        while left > 0 {
            let step = min(left, Double.random(in: 1...600, using: &rng))
            daemon.advance(by: step)
            left -= step
            try collectTimerPushes(since: now - step)
        }
        _ = try watcher?.takeDecisions()
    }

    func clockEvents(day d: Int, slot: Int) {
        let clock = daemon.clock
        if d == 0 && slot == 2 {
            clock.setWall(to: 1_790_000_000)  // NTP at last
            report.steps += 1
        } else if d == 12 && slot == 30 {
            clock.stepWall(by: -ClockStepTests.years56)  // a bad time source
            report.steps += 1
        } else if d == 12 && slot == 32 {
            clock.stepWall(by: ClockStepTests.years56)  // NTP puts it right
            report.steps += 1
        } else if rng.chance(0.01) {
            let step = Double.random(in: -600...600, using: &rng)
            clock.stepWall(by: step)
            if step < 0 { backSlack = max(backSlack, -step) }
            report.steps += 1
        }
    }

    func reload() {
        configuration.bookmarkInterval = rng.pick([240.0, 300, 360])
        configuration.maxSessionsPerConnection = rng.pick([6, 8, 64])
        daemon.service.apply(configuration)
    }

    func watcherComesOrGoes() {
        if let watcher {
            watcher.peer.disconnect()
            self.watcher = nil
        } else if let w = try? daemon.player("watcher") {
            try? w.watchDecisions()
            watcher = w
        }
    }

    func action() throws {
        let roll = Double.random(in: 0..<1, using: &rng)
        if players.isEmpty || (roll < 0.06 && players.count < 30) {
            let uid = rng.pick([0, 1000, 1001] as [UInt32])
            players.append(Player(try daemon.player("player-\(players.count)", uid: uid)))
            return
        }
        let p = Int.random(in: 0..<players.count, using: &rng)
        let player = players[p]
        switch roll {
        case ..<0.09:
            vanish(p)
        case ..<0.10:
            for id in player.sessions.keys.sorted() { try close(player, id) }
            vanish(p)
        case ..<0.28:
            try zap(player)
        case ..<0.42:
            if player.sessions.count < 5 { try open(player) }
        case ..<0.50:
            if let s = pickSession(player) { try close(player, s.id) }
        default:
            guard let s = pickSession(player) else { return try open(player) }
            try sessionEvent(player, s, Double.random(in: 0..<1, using: &rng))
        }
    }

    /// In id order: dictionaries' order changes from run to run, and the month must replay from its seed.
    func pickSession(_ player: Player) -> Session? {
        player.sessions.isEmpty ? nil : player.sessions[rng.pick(player.sessions.keys.sorted())]
    }

    func vanish(_ p: Int) {
        let player = players.remove(at: p)
        // Their final bookmarks are saved, and nobody is told.
        for s in player.sessions.values { acked[s.key]?.unsure = true }
        player.client.peer.disconnect()
        report.vanished += 1
    }

    // MARK: Sessions

    /// Breaks of a content: the same every time it is opened (watched state is by break id).
    func layout(_ contentId: String) -> (breaks: [AdBreak], duration: Double) {
        var g = SplitMix64(seed: fnv(contentId))
        let duration = Double(Int.random(in: 20...120, using: &g)) * 60
        var breaks: [AdBreak] = []
        if g.chance(0.5) { breaks.append(AdBreak(id: "pre", start: 0, duration: 30)) }
        var t = 0.0
        var content = Double.random(in: 400...900, using: &g)
        while content < duration - 120 {
            let d = rng2(&g, [30.0, 60, 90])
            breaks.append(AdBreak(id: "m\(breaks.count)", start: content + t, duration: d))
            t += d
            content += Double.random(in: 600...1500, using: &g)
        }
        return (breaks, duration)
    }

    func rng2(_ g: inout SplitMix64, _ xs: [Double]) -> Double { xs[Int(g.next() % UInt64(xs.count))] }

    func fnv(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    func open(_ player: Player) throws {
        let live = rng.chance(0.15)
        let contentId =
            live
            ? "channel-\(Int.random(in: 0..<8, using: &rng))"
            : rng.chance(0.6)
                ? "pop-\(Int.random(in: 0..<60, using: &rng))" : "tail-\(rng.next() % 1_000_000)"
        let profile = rng.pick(["", "anna", "ben"])
        try open(player, contentId: contentId, profile: profile, live: live)
    }

    @discardableResult
    func open(_ player: Player, contentId: String, profile: String, live: Bool) throws -> Session? {
        var breaks: [AdBreak]
        var duration: Double?
        if live {
            let start = Double(Int.random(in: 100...600, using: &rng))
            breaks = [AdBreak(id: "live-0", start: start, duration: 60)]
        } else {
            (breaks, duration) = layout(contentId)
        }
        var overrides = PolicyOverrides()
        if rng.chance(0.3) { overrides.cooldown = rng.pick([60.0, 300]) }
        let request = OpenSessionRequest(
            streamId: "stream-\(contentId)", contentId: contentId, profile: profile, kind: live ? .live : .onDemand,
            breaks: breaks, contentDuration: duration, preset: .snapback, overrides: overrides,
            resume: SnapbackV1.ResumeOptions(useBookmark: !live && rng.chance(0.5)))
        guard let reply = try refusable({ try player.client.openSession(request) }) else { return nil }
        report.sessionsOpened += 1
        let s = Session(
            id: reply.sessionId, contentId: contentId, profile: profile, live: live, breaks: breaks, duration: duration,
            at: now)
        s.position = reply.startStreamTime ?? 0
        player.sessions[s.id] = s
        if !live { checkWatched(s) }
        try handle(player.client.takePushes(), player)
        try settle(player, s)
        return s
    }

    /// A viewer zapping through the catalogue: open, watch a little, close, a few times (a bookmark
    /// each: the store passes its cap within the first ten days).
    func zap(_ player: Player) throws {
        for _ in 0..<Int.random(in: 3...8, using: &rng) {
            let contentId = "tail-\(rng.next() % 1_000_000)"
            guard let s = try open(player, contentId: contentId, profile: rng.pick(["", "anna", "ben"]), live: false)
            else { return }
            try event(player, s, .playheadReported(streamTime: s.position + 5, rate: 1, playing: true))
            if player.sessions[s.id] != nil { try close(player, s.id) }
        }
    }

    func close(_ player: Player, _ id: UInt64) throws {
        guard player.sessions[id] != nil else { return }
        let pushes = try refusable { try player.client.closeSession(id) } ?? []
        try handle(pushes + player.client.takePushes(), player)
        player.sessions[id] = nil
    }

    /// Where a playing session is now.
    func advance(_ s: Session) {
        if s.playing { s.position += now - s.at }
        if let d = s.duration { s.position = min(s.position, d) }
        s.at = now
    }

    func sessionEvent(_ player: Player, _ s: Session, _ roll: Double) throws {
        advance(s)
        switch roll {
        case ..<0.45:
            s.playing = true
            try event(player, s, .playheadReported(streamTime: s.position, rate: 1, playing: true))
        case ..<0.65:
            let to = max(0, s.position + Double.random(in: -900...2400, using: &rng))
            let target = s.duration.map { min(to, $0 - 1) } ?? to
            try event(player, s, .seekStarted(from: s.position))
            let from = s.position
            s.position = target
            try event(player, s, .seekEnded(from: from, to: target))
        case ..<0.80:
            s.playing = false
            try event(player, s, .paused(streamTime: s.position))
        case ..<0.85:
            if let id = breakAt(s, s.position)?.id { try event(player, s, .adBreakEnded(breakId: id)) }
        case ..<0.88:
            if !s.live, rng.chance(0.5) { try event(player, s, .contentCompleted) }
        case ..<0.92:
            if s.live {
                let last = s.breaks.last.map { $0.end } ?? s.position
                s.breaks.append(AdBreak(id: "live-\(s.breaks.count)", start: max(last, s.position) + 300, duration: 60))
                try event(player, s, .breaksUpdated(s.breaks))
            }
        case ..<0.95:
            _ = try refusable { try player.client.call(.getSessionState(sessionId: s.id), as: SessionStateReply.self) }
            _ = try refusable { try player.client.call(.listSessions(), as: SnapbackV1.ListSessionsReply.self) }
        case ..<0.98:
            let list = try refusable {
                try player.client.call(
                    .listBookmarks(profile: s.profile, pageSize: 20, pageToken: ""), as: SnapbackV1.ListBookmarksReply.self)
            }
            if let token = list?.nextPageToken, !token.isEmpty {
                _ = try refusable {
                    try player.client.call(
                        .listBookmarks(profile: s.profile, pageSize: 20, pageToken: token), as: SnapbackV1.ListBookmarksReply.self
                    )
                }
            }
        default:
            // Forget a recently saved bookmark (not one an open session is saving).
            let key = recentKeys.isEmpty ? nil : rng.pick(recentKeys)
            if let key, acked[key] != nil, let cut = key.firstIndex(of: "\u{0}") {
                let profile = String(key[..<cut]), contentId = String(key[key.index(after: cut)...])
                guard !players.contains(where: { $0.sessions.values.contains { $0.key == key } }) else { return }
                let reply = try refusable {
                    try player.client.call(
                        .deleteBookmark(profile: profile, contentId: contentId), as: SnapbackV1.DeleteBookmarkReply.self)
                }
                if reply != nil { acked[key] = nil }
            }
        }
        try settle(player, s)
    }

    func event(_ player: Player, _ s: Session, _ event: TimelineEvent) throws {
        let pushes = try refusable { try player.client.send(event, session: s.id) } ?? []
        try handle(pushes + player.client.takePushes(), player)
    }

    func breakAt(_ s: Session, _ t: Double) -> AdBreak? {
        s.breaks.first { $0.start <= t && t < $0.end }
    }

    /// A player sent into a break (a snapback, a resume, playback reaching it) plays it to its end.
    func settle(_ player: Player, _ s: Session) throws {
        for _ in 0..<4 {
            guard player.sessions[s.id] != nil, let b = breakAt(s, s.position) else { return }
            try event(player, s, .adBreakStarted(breakId: b.id))
            s.position = b.end
            s.playing = true
            s.at = now
            try event(player, s, .playheadReported(streamTime: b.end, rate: 1, playing: true))
        }
    }

    /// A call the daemon may refuse with a status (an event in the wrong state, a limit, a failing store):
    /// counted, not an error. Anything else (the connection closed under the player) is.
    func refusable<T>(_ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch let error as SnapbackClientError {
            guard case .status(let code, let message) = error else { throw error }
            guard code != .internalError && code != .unknown else {
                Issue.record("\(code): \(message)")
                return nil
            }
            report.refused[code, default: 0] += 1
            return nil
        }
    }

    // MARK: Pushes

    func collectTimerPushes(since: Double) throws {
        for player in players {
            try handle(player.client.nextPushes(), player, since: since)
        }
    }

    /// `since`: the earliest the pushes can have been decided (now, unless a timer's).
    func handle(_ pushes: [WirePushMessage], _ player: Player, since: Double? = nil) throws {
        for push in pushes {
            guard let s = player.sessions[push.sessionId] else { continue }
            switch push.kind {
            case .seek(let to, _):
                s.position = to
                s.at = now
            case .bookmarkSaved(let c, _, _):
                acked[s.key] = Ack(contentTime: c, finished: false, savesAt: daemon.store.savesCommitted)
                report.bookmarksSaved += 1
                recentKeys.append(s.key)
                if recentKeys.count > 64 { recentKeys.removeFirst() }
            case .bookmarkCleared:
                acked[s.key] = Ack(contentTime: 0, finished: true, savesAt: daemon.store.savesCommitted)
            case .breakWatched(let id):
                if s.notKept.remove(id) == nil, !s.live { watched[s.contentId, default: [:]][id] = (since ?? now, now) }
            case .sessionError(_, let message):
                if let range = message.range(of: "watched break "), let end = message.range(of: " not kept") {
                    s.notKept.insert(String(message[range.upperBound..<end.lowerBound]))
                }
            default:
                break
            }
        }
    }

    // MARK: Checks

    /// A break watched within the retention is watched again; one watched longer ago is not.
    func checkWatched(_ s: Session) {
        guard let timeline = daemon.service.timeline(ofSession: s.id) else { return }
        let marks = watched[s.contentId] ?? [:]
        for b in timeline.breaks {
            let mark = marks[b.id]
            if let mark, now - mark.lo < retention - 2 {
                #expect(b.watched, "\(s.contentId) \(b.id) watched \(now - mark.lo) s ago is not watched")
                report.watchedKept += 1
            } else if mark.map({ now - $0.hi > retention + 2 + backSlack }) ?? true {
                #expect(!b.watched, "\(s.contentId) \(b.id) watched \(mark.map { now - $0.hi } ?? -1) s ago is still watched")
                if mark != nil { report.watchedExpired += 1 }
            }
        }
    }

    func checkBounds(day d: Int) throws {
        try collectTimerPushes(since: now)
        let service = daemon.service
        let store = daemon.store
        let sessions = players.reduce(0) { $0 + $1.sessions.count }
        let connections = players.count + (watcher == nil ? 0 : 1)
        #expect(service.sessions.count == sessions, "day \(d)")
        #expect(service.connectionCount == connections, "day \(d)")
        #expect(service.connectionsByUid.values.reduce(0, +) == connections, "day \(d)")
        #expect(service.watchers.count == (watcher == nil ? 0 : 1), "day \(d)")
        for player in players {
            #expect(player.client.peer.serviceState?.sessionCount == player.sessions.count, "day \(d)")
            #expect(player.client.peer.sent.isEmpty, "day \(d)")
        }
        let breaks = players.flatMap(\.sessions.values).reduce(0) { $0 + (service.timeline(ofSession: $1.id)?.layout.count ?? 0) }
        #expect(service.breakCount == breaks, "day \(d)")
        // A break-end timer per session at most, the shared tick's and the heap trim's; a periodic
        // bookmark on the tick per session at most.
        #expect(daemon.clock.liveTimers <= sessions + 2, "day \(d): \(daemon.clock.liveTimers) timers, \(sessions) sessions")
        #expect(service.bookmarkTicks.dueCount <= sessions, "day \(d)")
        #expect(service.wallSteps.epochs.count <= WallClockSteps.maxEpochs)
        // The store: nothing queued, bookmarks within the cap, watched breaks of the last two days only.
        store.completeWrites()
        #expect(store.unfinishedWrites == 0, "day \(d)")
        #expect(store.bookmarkCount <= store.capacity, "day \(d)")
        #expect(store.saveOrderEntries <= 2 * store.bookmarkCount + 1, "day \(d)")
        let recent = watched.values.reduce(0) { $0 + $1.values.count { now - $0.hi < 2 * day } }
        #expect(store.watchedCount <= recent, "day \(d): \(store.watchedCount) watched rows, \(recent) marked in two days")
        // Nothing acknowledged lost: every bookmark pushed as saved reads back, unless as many later
        // saves as the cap have evicted it.
        for (key, ack) in acked where store.savesCommitted - ack.savesAt < UInt64(store.capacity) {
            let cut = key.firstIndex(of: "\u{0}")!
            let row = try store.bookmark(profile: String(key[..<cut]), contentId: String(key[key.index(after: cut)...]))
            #expect(row != nil, "day \(d): acknowledged bookmark \(key) lost")
            guard let row, !ack.unsure else { continue }
            #expect(row.finished == ack.finished, "day \(d): \(key)")
            if !ack.finished { #expect(row.contentTime == ack.contentTime, "day \(d): \(key) \(row.contentTime) \(ack)") }
        }
        // The model forgets what it can no longer check, so that it holds as little as the daemon: an
        // acknowledgement as many saves old as the cap, a watched mark older than two days.
        acked = acked.filter { store.savesCommitted - $0.value.savesAt < UInt64(store.capacity) }
        watched = watched.compactMapValues { marks in
            let kept = marks.filter { now - $0.value.hi < 2 * day }
            return kept.isEmpty ? nil : kept
        }
        if fullOnDay == nil, store.bookmarkCount == store.capacity { fullOnDay = d }
        heapByDay.append(snapback_heap_in_use())
    }
}
