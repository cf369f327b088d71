// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// Who is counting: this run's identity, reported with the counters so that a reader (the agent, the
/// fleet) recognises a restart (a new start id) and a reboot (a new boot id).
struct MetricsIdentity {
    /// 128 bits from getrandom(2) (libuv's uv_random, synchronous), as 32 hex digits.
    let startId: String
    /// /proc/sys/kernel/random/boot_id; "" when it cannot be read.
    let bootId: String
    /// Wall time this run started.
    let startTime: Double

    static func make(startTime: Double) -> MetricsIdentity {
        MetricsIdentity(startId: randomHex(bytes: 16), bootId: readBootId(), startTime: startTime)
    }

    static func randomHex(bytes count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        // No loop and no callback: uv_random fills the buffer before it returns (getrandom(2), which
        // blocks only until the kernel's pool is first seeded at boot).
        _ = bytes.withUnsafeMutableBytes { uv_random(nil, nil, $0.baseAddress, $0.count, 0, nil) }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// The kernel's id of this boot (36 characters); "" when it is not there (not Linux, no /proc).
    static func readBootId() -> String {
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return "" }
        // Only what a boot id is made of: a line ends it, and nothing else from the file goes out.
        let id = buffer[..<n].prefix { $0 != UInt8(ascii: "\n") }
        guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == UInt8(ascii: "-") })
        else { return "" }
        return String(decoding: id, as: UTF8.self)
    }
}

extension TimelineService {
    // MARK: Start and stop

    /// At start: the counters the last run wrote are taken in and this start counted. When the running
    /// marker was still set (the last run did not stop cleanly), the start is also counted as unclean and
    /// written at once: a daemon that crashes soon after each start is seen. Otherwise the start is written
    /// with the next write, `metricsFlushInterval` from now at the latest: a first write costs the idle
    /// daemon 120 KiB of resident memory (its transaction on the writer thread), which a box that has
    /// counted nothing else need not pay at boot. A kill before it loses that start, and sets the
    /// marker, which the next start counts.
    func startCounting() {
        let stored = store.storedMetrics()
        metrics.load(stored.values)
        metricsSince = stored.since ?? identity.startTime
        storeCountsBase = StoreWriteCounts(
            commits: metrics.value(.storeCommits), failures: metrics.value(.storeFailures))
        metrics.count(.starts)
        let unclean = store.markRunning()
        metrics.onDirty = { [unowned self] in self.countersChanged() }
        if unclean {
            metrics.count(.uncleanStarts)
            logger.notice("the previous run of snapbackd did not stop cleanly (counted in snapbackd_unclean_starts)")
            writeCounters()
        } else {
            countersChanged()
        }
    }

    /// At the first count after a write: the one write timer is armed, `metricsFlushInterval` from now.
    /// Nothing else arms it, so a daemon that counts nothing never wakes for its counters.
    private func countersChanged() {
        let timer =
            metricsTimer
            ?? clock.makeTimer { [unowned self] in
                self.writeCounters()
            }
        metricsTimer = timer
        if !timer.isActive { timer.start(afterSeconds: configuration.metricsFlushInterval) }
    }

    /// Writes every counter through the store's queue.
    func writeCounters(finally: Bool = false) {
        _ = metrics.takeDirty()
        pullStoreCounts()
        // The clean stop's write is the last transaction of this run: counted in the commits it writes.
        if finally { metrics.set(.storeCommits, to: metrics.value(.storeCommits) &+ 1) }
        store.saveMetrics(
            StoredMetrics(
                values: Dictionary(uniqueKeysWithValues: zip(DaemonMetrics.slotKeys, metrics.values())),
                since: metricsSince))
    }

    /// The clean stop's write, queued before the store is closed (which commits it), so nothing counted
    /// is lost; the running marker is cleared once the store has closed (`clearRunning`).
    func stopCounting() {
        metricsTimer?.close()
        metricsTimer = nil
        metrics.onDirty = nil
        writeCounters(finally: true)
    }

    /// The store's own counts since it opened, over what earlier runs counted.
    private func pullStoreCounts() {
        let counts = store.writeCounts
        metrics.set(.storeCommits, to: storeCountsBase.commits &+ counts.commits)
        metrics.set(.storeFailures, to: storeCountsBase.failures &+ counts.failures)
    }

    // MARK: Control/GetMetrics

    func getMetrics(_ header: FrameHeader, _ connection: any PeerPort) {
        guard admitAdmin(header, connection, "read the metrics") else { return }
        pullStoreCounts()
        let answer = SnapbackV1.MetricsReply(
            families: metrics.families(), startId: identity.startId, bootId: identity.bootId,
            startTime: identity.startTime, starts: metrics.value(.starts), uncleanStarts: metrics.value(.uncleanStarts),
            flushInterval: UInt32(configuration.metricsFlushInterval.rounded(.up)), countingSince: metricsSince)
        reply(connection, header, answer)
    }

    // MARK: Counting the timeline's actions

    /// Counts action `index` of `actions`, as `execute` carries it out. The timeline counts nothing
    /// itself: what it decided is in the action and its reason. Read in place (the array borrowed, the
    /// kind switched on where it is stored): taking the action out as a value would retain and release
    /// its reason's strings on every event.
    @inline(__always)
    func countAction(_ actions: borrowing [TimelineAction], at index: Int, for entry: SessionEntry) {
        switch actions[index].kind {
        case .seek(_, let why):
            metrics.count(.seeksCommanded, why.metricIndex &* Self.presets &+ entry.presetIndex)
            if why == .seekRefusedDuringAd {
                let move: RefusedMove
                if case .trickPlayRefused = actions[index].reason { move = .trickPlay } else { move = .seek }
                metrics.count(.seeksRefused, move.metricIndex)
            }
        case .breakCompleted(let id):
            // The timeline gives every breakCompleted action the reason of that name; a break whose
            // reason says nothing of how it ended is not counted under a made-up one.
            guard case .breakCompleted(let how) = actions[index].reason else {
                assertionFailure("breakCompleted with the reason \(actions[index].reason)")
                return
            }
            metrics.count(
                .breaksPlayed,
                (BreakEnding(how).metricIndex &* Self.positions &+ position(of: id, in: entry)) &* Self.presets
                    &+ entry.presetIndex)
        case .breakWatched(let id):
            guard let rule = WatchedRule.of(actions[index].reason) else {
                assertionFailure("breakWatched with the reason \(actions[index].reason)")
                return
            }
            metrics.count(
                .breaksWatched,
                (rule.metricIndex &* Self.positions &+ position(of: id, in: entry)) &* Self.presets &+ entry.presetIndex)
        case .breakSkipped(let id, let why):
            metrics.count(
                .breaksSkipped,
                (why.metricIndex &* Self.positions &+ position(of: id, in: entry)) &* Self.presets &+ entry.presetIndex)
        default:
            return
        }
    }

    // Once: `allCases` is an array made at each call.
    static let presets = AdPolicy.Preset.allCases.count
    static let positions = BreakPosition.allCases.count

    private func position(of breakId: String, in entry: SessionEntry) -> Int {
        (entry.timeline.position(ofBreak: breakId) ?? .midroll).metricIndex
    }

    /// A bookmark written: counted by its trigger ("finished" for the clear at the end) as the write is
    /// made, so that the final bookmarks of a clean stop, committed as the store closes, are in the
    /// counters written just before (a write that fails is in `snapbackd_store_failures`).
    func countBookmarkSaved(_ action: TimelineAction) {
        switch action.kind {
        case .saveBookmark(_, _, let trigger): metrics.count(.bookmarksSaved, trigger.metricIndex)
        case .clearBookmark: metrics.count(.bookmarksSaved, BookmarkTrigger.allCases.count)
        default: return
        }
    }
}
