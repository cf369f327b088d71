// SPDX-License-Identifier: Apache-2.0
import CLibUV
import SnapbackTimeline

/// Every open session, by id. A session enters with `insert` when it opens and leaves only through
/// `TimelineService.close(_:_:at:)`, whatever closed it.
struct SessionTable {
    private var entries: [UInt64: SessionEntry] = [:]
    private var lastId: UInt64 = 0

    var count: Int { entries.count }

    subscript(id: UInt64) -> SessionEntry? { entries[id] }

    /// Ids grow and are never reused while the daemon runs.
    mutating func makeId() -> UInt64 {
        lastId += 1
        return lastId
    }

    mutating func insert(_ entry: SessionEntry) {
        entries[entry.id] = entry
    }

    mutating func remove(_ id: UInt64) {
        entries[id] = nil
        // A table that held thousands keeps their buckets once emptied; let it go with them.
        if entries.isEmpty { entries = [:] }
    }

    /// In opening order.
    var ids: [UInt64] { entries.keys.sorted() }

    /// The `limit` smallest ids above `after` whose session passes `include`, in order, and whether more
    /// follow: one pass over the table, sorting only what is kept.
    func ids(after: UInt64, limit: Int, where include: (SessionEntry) -> Bool) -> (ids: [UInt64], more: Bool) {
        var kept: [UInt64] = []
        var more = false
        for (id, entry) in entries where id > after && include(entry) {
            kept.append(id)
            // Past twice the page, keep the smallest `limit`: a bounded buffer, sorted now and then.
            if kept.count >= 2 * limit {
                kept.sort()
                kept.removeLast(kept.count - limit)
                more = true
            }
        }
        kept.sort()
        if kept.count > limit {
            kept.removeLast(kept.count - limit)
            more = true
        }
        return (kept, more)
    }
}

extension TimelineService {
    /// What closed a session: the timeline event it becomes and the words of the log line.
    enum CloseTrigger {
        /// CloseSession.
        case player
        /// The connection went away, cleanly or not; nothing can be pushed any more.
        case disconnected
        /// SIGTERM.
        case shutdown

        var event: TimelineEvent { self == .disconnected ? .playerDisconnected : .closed }

        /// As the counters label it.
        var cause: CloseCause {
            switch self {
            case .player: return .player
            case .disconnected: return .disconnected
            case .shutdown: return .shutdown
            }
        }

        var words: String {
            switch self {
            case .player: return "by the player"
            case .disconnected: return "player disconnected"
            case .shutdown: return "for shutdown"
            }
        }
    }

    /// The one way a session closes: the timeline's last actions (the final bookmark) are carried out,
    /// its timers closed, and it leaves the daemon's table and its connection's.
    func close(_ entry: SessionEntry, _ trigger: CloseTrigger, at now: Double) {
        metrics.count(.sessionsClosed, trigger.cause.metricIndex)
        if entry.timeline.phase == .inBreak { metrics.count(.sessionsClosedInBreak, trigger.cause.metricIndex) }
        let actions = (try? entry.timeline.handle(trigger.event, at: now)) ?? []
        execute(actions, for: entry, at: now)
        entry.closeTimers()
        breakCount -= entry.timeline.layout.count
        sessions.remove(entry.id)
        entry.connection?.serviceState?.removeSession(entry.id)
        if trigger == .disconnected { entry.connection = nil }
        logger.info("session \(entry.id) closed: \(trigger.words)")
        memory.sessionCountChanged(sessions.count)
    }
}

/// Gives the heap back to the system after many sessions closed.
///
/// Measured: 10,000 sessions opened and closed left the daemon at 26 MiB against 9.8 MiB idle, 14 MiB
/// of it glibc's heap — freed, but kept because live blocks sat above it. `malloc_trim` returned it
/// (12.7 MiB after). It walks the whole heap, so it runs once, a few seconds after a bulk close has
/// settled, and only when the sessions open fell to half of their high-water mark: never per session,
/// never on the per-message path.
final class MemoryReturn {
    private let clock: any ServiceClock
    private var timer: (any ServiceTimer)?
    /// The most sessions open at once since the heap was last trimmed.
    private var highWater = 0
    /// Below this many sessions at the high-water mark, what could be returned is not worth a walk.
    static let minimumHighWater = 256
    static let settleSeconds = 2.0

    init(clock: any ServiceClock) { self.clock = clock }

    /// After every open and every close, with the number of sessions now open.
    func sessionCountChanged(_ open: Int) {
        self.open = open
        highWater = max(highWater, open)
        guard highWater >= Self.minimumHighWater, open <= highWater / 2 else { return }
        let timer = self.timer ?? clock.makeTimer { [unowned self] in self.trim() }
        self.timer = timer
        // Restarted by every close of a burst: the walk happens once the burst is over.
        timer.start(afterSeconds: Self.settleSeconds)
    }

    private var open = 0

    private func trim() {
        malloc_trim(0)
        highWater = open
    }

    func close() {
        timer?.close()
        timer = nil
    }
}
