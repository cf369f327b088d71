// SPDX-License-Identifier: Apache-2.0
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// A Sync/WatchChanges subscriber: where its changes go and the last one sent.
final class ChangeWatcher: PushStream {
    static let method = WireMethod.watchChanges
    static let readerName = "change stream reader"
    let connection: any PeerPort
    let callId: UInt32
    /// The seq of the last change sent (or the one the agent resumed after).
    var after: Int64
    /// Continues a backlog on a later loop turn, or once the reader has taken some of its queue.
    var timer: (any ServiceTimer)?
    /// Monotonic time the reader's queue last shrank while it was behind (nil: not behind).
    var behindSince: Double?
    var lastQueued = 0

    init(connection: any PeerPort, callId: UInt32, after: Int64) {
        self.connection = connection
        self.callId = callId
        self.after = after
    }

    var dropNote: String { " (it resumes after change \(after))" }

    func unsubscribe(from service: TimelineService) { service.unsubscribe(self) }
}

extension TimelineService {
    /// Changes read from the store at a time, one page a loop turn: a page is read, encoded and queued in
    /// one go, and the loop turns between pages, serving the players. What a change costs (mostly SQLite's
    /// fetch of its row, then its encoding) does not depend on the page, so small pages cost a catch-up
    /// nothing and keep what it holds the loop for, each turn, small beside a player's round trip;
    /// `bench/loop_stall.py` measures a bystander player's latency during catch-ups.
    static let changePage = 8
    /// The pause between two pages of a catch-up, so that a catch-up takes at most a small share of the
    /// loop: 10,000 changes take 1,250 pauses, over a second and a quarter.
    static let changePagePause = 0.001
    /// Seconds a stream reader may stay behind (its queue over half the bound) without taking any of it
    /// before it is dropped: it resumes from the last change it applied when it reconnects.
    static let changeReaderStallSeconds = 5.0
    /// How soon a stream that is behind looks again whether its reader took some of its queue.
    static let changeRetrySeconds = 0.02

    var syncStore: (any SyncingStore)? { store as? any SyncingStore }

    /// The admin rule of WatchDecisions, for the calls of the sync agent.
    private func admitSync(_ header: FrameHeader, _ connection: any PeerPort, _ what: String) -> (any SyncingStore)? {
        guard admitAdmin(header, connection, what) else { return nil }
        guard let store = syncStore else {
            fail(connection, header, .failedPrecondition, "the \(store.kind) store keeps no sync state")
            return nil
        }
        return store
    }

    // MARK: Sync/WatchChanges

    func watchChanges(after: UInt64, _ header: FrameHeader, _ state: ConnectionState, _ connection: any PeerPort) {
        guard let store = admitSync(header, connection, "watch changes") else { return }
        guard state.changeWatcher == nil else {
            fail(connection, header, .failedPrecondition, "this connection already watches changes")
            return
        }
        guard let device = store.deviceId else {
            fail(connection, header, .unavailable, store.lastError ?? "the bookmark store is not open")
            return
        }
        let origin: (storeId: String, lastSeq: Int64)
        do {
            origin = try store.changeStreamOrigin()
        } catch {
            fail(connection, header, error.statusCode, error.description)
            return
        }
        let watcher = ChangeWatcher(connection: connection, callId: header.callId, after: Int64(clamping: after))
        watcher.timer = clock.makeTimer { [weak self, weak watcher] in
            guard let self, let watcher else { return }
            self.pumpChanges(watcher)
        }
        state.changeWatcher = watcher
        changeWatchers.append(watcher)
        if changeWatchers.count == 1 {
            store.onCommit = { [weak self] in self?.changesCommitted() }
        }
        logger.info(
            "connection \(connection.id): watching changes after \(after) (device \(device), store \(origin.storeId), last change \(origin.lastSeq))"
        )
        // The reply opens the stream: the backlog and every later change follow it as pushes.
        reply(
            connection, header,
            SnapbackV1.WatchChangesReply(
                deviceId: device.text, storeId: origin.storeId, lastSeq: UInt64(clamping: origin.lastSeq)))
        pumpChanges(watcher)
    }

    func unsubscribe(_ watcher: ChangeWatcher) {
        watcher.timer?.close()
        watcher.timer = nil
        changeWatchers.removeAll { $0 === watcher }
        watcher.connection.serviceState?.changeWatcher = nil
        if changeWatchers.isEmpty { syncStore?.onCommit = nil }
    }

    /// The store committed a batch: every stream sends what it has not sent yet.
    private func changesCommitted() {
        for watcher in changeWatchers where !(watcher.timer?.isActive ?? false) { pumpChanges(watcher) }
    }

    /// Sends `watcher` the changes after the last it was sent, a page a loop turn. A reader that has half
    /// its bound (`max-watch-queue-bytes`, as WatchDecisions) queued is waited for, never blocked on; one
    /// that takes nothing of it for ``changeReaderStallSeconds`` is dropped, as is one whose next change
    /// would pass the bound (`pushOrDrop(_:on:)`). The store keeps what it was not sent: it resumes.
    func pumpChanges(_ watcher: ChangeWatcher) {
        guard let store = syncStore else { return }
        let connection = watcher.connection
        guard connection.canSend else {
            unsubscribe(watcher)
            return
        }
        let queued = connection.queuedOutboundBytes
        if queued > configuration.maxWatchQueueBytes / 2 {
            let now = clock.monotonic()
            // Behind since now unless it was already, and took none of its queue since.
            let since = watcher.behindSince.flatMap { queued < watcher.lastQueued ? nil : $0 } ?? now
            watcher.behindSince = since
            watcher.lastQueued = queued
            if now - since >= Self.changeReaderStallSeconds {
                dropReader(watcher, "\(queued) bytes queued and none taken for \(Self.changeReaderStallSeconds) s")
            } else {
                watcher.timer?.start(afterSeconds: Self.changeRetrySeconds)
            }
            return
        }
        watcher.behindSince = nil
        let page: [SyncChange]
        do {
            page = try store.changes(after: watcher.after, limit: Self.changePage)
        } catch {
            // The store says why in its own log line and status; the next commit tries again.
            logger.warning("connection \(connection.id): changes after \(watcher.after) not read: \(error)")
            return
        }
        for change in page {
            scratch.removeAll(keepingCapacity: true)
            change.encode(into: &scratch)
            guard pushOrDrop(scratch, on: watcher) else { return }
            watcher.after = change.seq
        }
        // A full page: there may be more, read a little later.
        if page.count == Self.changePage { watcher.timer?.start(afterSeconds: Self.changePagePause) }
    }

    // MARK: Sync/Merge

    /// Applies the records in the store's writer, with the saves of the same loop turn, and answers once
    /// every one is committed; a store error answers the whole call with it (records already committed
    /// stay: each is a merge under the rule, which a retry applies again as a no-op).
    func merge(_ merge: SyncMerge, _ header: FrameHeader, _ connection: any PeerPort) {
        guard let store = admitSync(header, connection, "merge records") else { return }
        let tally = MergeTally(records: merge.records.count, watched: merge.watched.count)
        let finish = { [weak self] in
            guard let self else { return }
            if let failure = tally.failure {
                self.fail(connection, header, failure.statusCode, failure.description)
            } else {
                self.reply(
                    connection, header,
                    SnapbackV1.MergeReply(recordsChanged: tally.recordsChanged, watchedChanged: tally.watchedChanged))
            }
        }
        guard tally.remaining > 0 else {
            finish()
            return
        }
        for (i, record) in merge.records.enumerated() {
            store.merge(record) { result in
                switch result {
                case .success(let changed): tally.recordsChanged[i] = changed
                case .failure(let error): tally.failure = tally.failure ?? error
                }
                if tally.done() { finish() }
            }
        }
        for (i, breaks) in merge.watched.enumerated() {
            store.mergeWatched(breaks) { result in
                switch result {
                case .success(let changed): tally.watchedChanged[i] = changed
                case .failure(let error): tally.failure = tally.failure ?? error
                }
                if tally.done() { finish() }
            }
        }
    }
}

/// The outcome of one Merge call's records as their commits complete.
private final class MergeTally {
    var recordsChanged: [Bool]
    var watchedChanged: [Bool]
    var failure: StoreError?
    private(set) var remaining: Int

    init(records: Int, watched: Int) {
        recordsChanged = Array(repeating: false, count: records)
        watchedChanged = Array(repeating: false, count: watched)
        remaining = records + watched
    }

    /// Counts one completion; true for the last.
    func done() -> Bool {
        remaining -= 1
        return remaining == 0
    }
}
