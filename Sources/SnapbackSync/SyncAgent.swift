// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackTimeline
import SnapbackWire

/// The agent: snapbackd's changes out to the household's bucket, the bucket's changes in to snapbackd
/// (snapback-sync(8), docs/sync.md "The agent"). One thread, one loop, event-driven: it sleeps in one
/// poll of snapbackd's socket, the eventfd that libnats's callbacks and the watcher's pump write
/// (``Wakeup``), and the stop signals' signalfd, with a timeout only while a timer is set
/// (``AgentTimers``: none at idle). Each turn, after any of them:
///
/// 1. reads what snapbackd's `Sync/WatchChanges` stream has (without waiting), keeps this box's own
///    changes in the outbox and moves the cursor, in one committed transaction;
/// 2. notes what NATS's connection did (lost, back, an error the server sent);
/// 3. while NATS is connected, hands the bucket's requests to its worker (``KVWorker``, one job at a
///    time: a new watcher and the stream's check, or a batch of the outbox's entries to send with
///    compare-and-set, oldest first, as the publish rate allows), and takes the last job's result (the
///    entries the server acknowledged leave the outbox);
/// 4. takes what the bucket's watcher delivered and merges it into snapbackd in `Sync/Merge` batches;
/// 5. rewrites the status file if what it says changed.
///
/// snapbackd is a server to the agent like to any player: playback never waits for the agent. Either side
/// may be down; the agent retries both and keeps the outbox.
public final class SyncAgent {
    let configuration: SyncConfiguration
    let outbox: Outbox
    let nats: NatsKV
    let log: (String) -> Void
    /// What wakes the loop from libnats's threads, the watcher's pump and the bucket's worker.
    let wake: Wakeup
    /// The bucket's requests, off the loop.
    let kv: KVWorker
    private var timers = AgentTimers()

    private var local: SnapbackClient?
    private var deviceId: String?
    private var localRetryAt = ContinuousClock.now
    private var localBackoff: Duration = .milliseconds(500)
    private var localError: String?
    /// Set while snapbackd does not say which store its change numbers belong to: a store made afresh
    /// could not be told from the old one.
    private var storeUnknown: String?
    private var bucketError: String?
    /// The bucket's error is a request the server left unanswered (libnats's wait ran out): one that a
    /// connection found lost afterwards explains (a server that froze), which then leaves the agent
    /// connecting, not in error.
    private var bucketErrorTimedOut = false
    private var serverError: String?
    private var natsDownSince: ContinuousClock.Instant? = ContinuousClock.now
    private var lastExchange: Double = 0
    private var lastError = ""
    private var lastStatusText = ""
    /// Values of the bucket not taken (bad keys and values, stamps beyond the server's time), each logged once.
    private lazy var skips = SkipLog(log: log)
    /// This box's changes the Sync calls cannot carry (an id over 1 KiB), each logged once: they stay here.
    private lazy var unsynced = SkipLog(log: log)
    /// The changes up to this number are being read again for a repair (every record among them goes
    /// out, whichever box made it); nil: none under way.
    private var repairUntil: Int64?
    /// The highest revision of the bucket's stream saved in the outbox's state.
    private var savedRevision: UInt64 = 0
    /// Entries that may be sent now (``SyncConfiguration/publishRate`` a second, as many at most).
    private var publishTokens = 0.0
    private var publishRefilled = ContinuousClock.now
    /// After a publish or a watcher error, NATS is tried again from this time on.
    private var natsRetryAt = ContinuousClock.now
    /// The box's telemetry (`[telemetry]`); nil when disabled.
    let telemetry: TelemetryReporter?

    /// How long after NATS's last answer the status says offline rather than connecting, at most.
    static let offlineWithin: Duration = .seconds(30)
    /// How long the status says connecting once NATS is found lost: what is left of ``offlineWithin``
    /// once a server that stopped answering is found (``NatsKV/staleWithin``), so that offline is true
    /// within 30 s of the server's last answer however it was lost.
    static let connectingFor: Duration = offlineWithin - NatsKV.staleWithin

    public init(configuration: SyncConfiguration, log: @escaping (String) -> Void) throws(AgentError) {
        self.configuration = configuration
        self.log = log
        try makeDirectory(configuration.stateDirectory)
        do {
            outbox = try Outbox(path: configuration.stateDirectory + "/outbox.db")
            if try outbox.bind(to: configuration.bucket + "." + configuration.household) {
                log(
                    "snapback-sync: household or bucket changed since the last run: the outbox starts afresh, and this box's records are sent again"
                )
            }
        } catch {
            throw AgentError(description: "outbox: \(error)")
        }
        let password = try configuration.passwordFile.map { (file) throws(AgentError) in try readPasswordFile(file) }
        wake = try Wakeup()
        kv = try KVWorker(wake: wake)
        do {
            nats = try NatsKV(configuration: configuration, password: password, wake: wake)
        } catch {
            throw AgentError(description: "nats: \(error)")
        }
        do {
            repairUntil = try outbox.repairUntil()
            savedRevision = UInt64(clamping: try outbox.state("stream_seen") ?? 0)
        } catch {
            throw AgentError(description: "outbox: \(error)")
        }
        nats.highestRevision = savedRevision
        publishTokens = Double(configuration.publishRate)
        telemetry =
            configuration.telemetry.enabled
            ? try TelemetryReporter(configuration: configuration, log: log, wake: wake, now: .now) : nil
    }

    /// Runs until one of `stopSignals` arrives (blocked in every thread: they are read from a signalfd).
    public func run(stopSignals: sigset_t) throws(AgentError) {
        let signals = try StopSignals(stopSignals)
        if configuration.syncEnabled {
            log(
                "snapback-sync: household \(configuration.household), bucket \(configuration.bucket), servers \(configuration.serversShown)"
            )
        } else {
            log("snapback-sync: no household: telemetry only, servers \(configuration.serversShown)")
        }
        if let telemetry {
            log(
                "snapback-sync: telemetry: box \(telemetry.boxId), a report every \(configuration.telemetry.interval) s (±10 %) to stream \(configuration.telemetry.stream)"
            )
        }
        while true {
            turn()
            timers = timers(now: .now)
            var fds = [
                pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
            ]
            if let local { fds.append(pollfd(fd: local.socket.fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timers.pollTimeout(now: .now))
            if ready < 0, errno != EINTR { throw AgentError(description: "poll: \(String(cString: strerror(errno)))") }
            if fds[1].revents != 0, signals.received() { break }
            if fds[0].revents != 0 { wake.drain() }
        }
        // A bucket request under way is abandoned, not waited for: what it sent leaves the outbox only
        // with its result, which is not taken now.
        kv.stop()
        telemetry?.stop()
        writeStatus(force: true)
    }

    /// When the loop must turn again without an event: each timer that something waits for, none at idle.
    private func timers(now: ContinuousClock.Instant) -> AgentTimers {
        var next = AgentTimers()
        next.again = timers.again
        if configuration.syncEnabled, local == nil { next[.snapbackd] = localRetryAt }
        if let telemetry { next[.telemetry] = telemetry.deadline(connected: nats.isConnected) }
        if natsRetryAt > now { next[.nats] = natsRetryAt }
        if let since = natsDownSince, now - since < Self.connectingFor { next[.offline] = since + Self.connectingFor }
        if nats.isConnected, publishTokens < 1, (try? outbox.count()) ?? 0 > 0 {
            next[.publish] = publishRefilled + .seconds((1 - publishTokens) / Double(configuration.publishRate))
        }
        return next
    }

    /// One turn of the loop.
    private func turn() {
        let now = ContinuousClock.now
        timers.again = false
        for result in kv.takeResults() { result() }
        for error in nats.events.take() {
            lastError = "nats server: \(error)"
            // The server's permissions refuse this device something: an operator must look (state error
            // until a call goes through). A refusal of telemetry's subjects is telemetry's (it logs it,
            // once while it lasts), not the household sync's state.
            if error.contains("Permissions Violation"), let telemetry, telemetry.refers(to: error) {
                telemetry.refused(error, nats: nats, now: now)
                continue
            }
            log("snapback-sync: nats server: \(error)")
            if error.contains("Permissions Violation") { serverError = lastError }
        }
        if configuration.syncEnabled, local == nil, now >= localRetryAt { connectLocal() }
        readLocal()
        let connected = nats.isConnected
        if connected {
            natsDownSince = nil
        } else {
            if natsDownSince == nil {
                // The watcher stays until the connection is back (a reconnection makes a new one):
                // closing it now would wait for a server that does not answer to delete its consumer,
                // and the status would say connected meanwhile.
                natsDownSince = now
                log("snapback-sync: not connected to NATS; changes wait in the outbox")
                // A bucket request under way when the server froze timed out before the connection was
                // found lost (its keep-alives take up to 20 s, a request 5 s): the connection's going, not
                // the bucket's error.
                if bucketErrorTimedOut {
                    bucketError = nil
                    bucketErrorTimedOut = false
                }
            }
            let why = nats.connectionError
            if !why.isEmpty, lastError != "nats: \(why)" {
                lastError = "nats: \(why)"
                log("snapback-sync: \(lastError)")
            }
        }
        if configuration.syncEnabled, connected, now >= natsRetryAt, !kv.busy {
            // The watcher first (once a connection, or after a failure), then the outbox's batches.
            if local != nil, nats.needsWatcher { watch() } else { publish() }
        }
        if configuration.syncEnabled, connected, now >= natsRetryAt { readRemote() }
        telemetry?.turn(now: .now, nats: nats)
        writeStatus(force: false)
    }

    // MARK: snapbackd

    private func connectLocal(again: Bool = false) {
        do {
            let client = try SnapbackClient(
                socketPath: configuration.socket, clientName: "snapback-sync", timeout: .seconds(15))
            let cursor = try outbox.cursor()
            let reply = try client.watchChanges(after: UInt64(clamping: cursor))
            if let configured = configuration.deviceId, configured != reply.deviceId {
                client.close()
                failLocal(
                    "device-id \(configured) in the configuration, but snapbackd signs this box's changes as \(reply.deviceId)",
                    retry: .seconds(30))
                return
            }
            // Change numbers are the store's Int64 sequence: a larger one from a peer is clamped, not trapped on.
            let lastSeq = Int64(clamping: reply.lastSeq)
            if let why = Self.restartReason(
                cursor: cursor, known: try outbox.store(), storeId: reply.storeId, lastSeq: lastSeq)
            {
                try outbox.restart(store: Outbox.storeDigest(reply.storeId))
                if cursor > 0 {
                    // The stream already started after the old cursor: open it again from the start.
                    client.close()
                    log("snapback-sync: \(why): reading its changes from the start")
                    guard !again else {
                        failLocal("snapbackd's store changed again while its stream was opened", retry: nil)
                        return
                    }
                    connectLocal(again: true)
                    return
                }
            }
            if let until = repairUntil, until > lastSeq {
                // The store holds nothing after lastSeq yet: the repair ends with the change numbered so.
                try outbox.setState([("repair_until", lastSeq)])
                repairUntil = lastSeq
            }
            if reply.storeId.isEmpty {
                storeUnknown =
                    "snapbackd does not say which store its changes come from (an older snapbackd): changes of a store made afresh could be missed"
                if lastError != storeUnknown { log("snapback-sync: \(storeUnknown!)") }
                lastError = storeUnknown!
            } else {
                storeUnknown = nil
            }
            if deviceId != reply.deviceId { log("snapback-sync: snapbackd at \(configuration.socket), device \(reply.deviceId)") }
            local = client
            deviceId = reply.deviceId
            localError = nil
            localBackoff = .milliseconds(500)
            // The bucket's values are merged again over this connection: what arrived while snapbackd was
            // away is not lost, and what was merged before changes nothing.
            nats.closeWatcher()
        } catch let error as SnapbackClientError {
            let hint =
                error.code == .permissionDenied
                ? " (snapbackd serves the Sync calls to root and its admin groups: admin-groups in snapbackd.conf)" : ""
            failLocal("snapbackd at \(configuration.socket): \(error)\(hint)", retry: nil)
        } catch {
            failLocal("outbox: \(error)", retry: nil)
        }
    }

    /// Why the stream must be read from 0 rather than after `cursor`, given the store the outbox knows
    /// (`known`) and what snapbackd's reply says; nil when the cursor belongs to this store.
    static func restartReason(cursor: Int64, known: Int64?, storeId: String, lastSeq: Int64) -> String? {
        // A snapbackd that does not say: nothing to compare (the status says so).
        guard !storeId.isEmpty else { return nil }
        let digest = Outbox.storeDigest(storeId)
        guard let known else {
            // The first stream of this outbox; or an outbox filled before it kept the store, whose cursor
            // cannot be vouched for.
            return cursor > 0 ? "the outbox does not know which store its cursor \(cursor) was taken from" : "new outbox"
        }
        if known != digest { return "snapbackd's store is another one (store \(storeId)), made afresh since change \(cursor)" }
        if cursor > lastSeq {
            return
                "snapbackd's store holds changes up to \(lastSeq), before this agent's cursor \(cursor) (restored from an older copy?)"
        }
        return nil
    }

    private func failLocal(_ message: String, retry: Duration?) {
        local?.close()
        local = nil
        if localError != message { log("snapback-sync: \(message)") }
        localError = message
        lastError = message
        localRetryAt = ContinuousClock.now + (retry ?? localBackoff)
        localBackoff = min(localBackoff * 2, .seconds(10))
    }

    /// Takes the changes snapbackd has sent (at most 512 a turn, then the next turn comes at once) into
    /// the outbox, without waiting.
    private func readLocal() {
        guard let client = local, let deviceId else { return }
        var changes: [SyncChange] = []
        while changes.count < 512 {
            do {
                changes.append(try client.nextChange(timeout: .zero))
            } catch .socket(.timedOut) {
                break
            } catch {
                failLocal("snapbackd's change stream: \(error)", retry: nil)
                break
            }
        }
        if changes.count == 512 { timers.again = true }
        guard let last = changes.last else { return }
        var entries: [(key: String, value: [UInt8])] = []
        for change in changes {
            switch change.change {
            case .record(let record):
                // Records merged from other boxes keep their origin's stamp: they are not sent back, but
                // in a repair (the bucket lost them).
                guard record.stamp.device.text == deviceId || change.seq <= repairUntil ?? 0 else { continue }
                let key = KeyCodec.key(
                    household: configuration.household, .record(profile: record.profile, contentId: record.contentId))
                entries.append((key, KVValue.encode(record)))
            case .watched(let watched):
                let key = KeyCodec.key(household: configuration.household, .watched(contentId: watched.contentId))
                entries.append((key, KVValue.encode(watched)))
            case .unsyncable:
                unsynced.skip(
                    "change#\(change.seq)",
                    "snapbackd's change \(change.seq) has an id longer than \(SyncLimits.idBytes) bytes, the most the household's records carry: it stays on this box (snapbackd's log names it)"
                )
            }
        }
        let repairDone = repairUntil.map { last.seq >= $0 } ?? false
        do {
            try outbox.append(entries, cursor: last.seq, repairDone: repairDone, combine: Self.combine)
            if repairDone {
                repairUntil = nil
                log("snapback-sync: repair: every record this box holds is in the outbox (\(try outbox.count()) entries to send)")
            }
        } catch {
            // The cursor did not move: the same changes come again after the reconnect.
            failLocal("outbox: \(error)", retry: .seconds(5))
        }
    }

    /// A waiting entry and a new one of the same key: the new record, or the union of watched breaks.
    static func combine(_ waiting: [UInt8], _ new: [UInt8]) -> [UInt8] {
        guard let a = try? SyncMerge.decode(waiting), let b = try? SyncMerge.decode(new), a.records.isEmpty,
            b.records.isEmpty, let content = b.watched.first?.contentId,
            let union = KVValue.watched(waiting, contentId: content),
            let more = KVValue.watched(new, contentId: content)
        else { return new }
        return KVValue.encode(WatchedBreaks.merge(union, more))
    }

    private func merge(records: [SyncRecord], watched: [WatchedBreaks]) -> Bool {
        guard !records.isEmpty || !watched.isEmpty else { return true }
        guard let client = local else { return false }
        do {
            let _: SnapbackV1.MergeReply = try client.call(.merge(SyncMerge(records: records, watched: watched)))
            lastExchange = wallSeconds()
            // Changes the stream sent meanwhile were read with the reply and wait in the client, not in
            // the socket the poll watches: the next turn takes them at once.
            timers.again = true
            return true
        } catch {
            failLocal("merge into snapbackd: \(error)", retry: nil)
            return false
        }
    }

    // MARK: NATS

    /// A bucket request failed: an error of the bucket's (the status says error) unless the connection
    /// went, then tried again like any failed call.
    private func bucketFailed(_ error: NatsError) {
        if error.text.contains("bucket"), !error.isConnectionLoss, nats.isConnected {
            bucketError = error.text
            bucketErrorTimedOut = error.status == NATS_TIMEOUT
        }
        natsFailed(error)
    }

    private func natsFailed(_ error: NatsError) {
        let message = "nats: \(error)"
        if lastError != message { log("snapback-sync: \(message)") }
        lastError = message
        // Bound again at the next attempt: the bucket may be gone (the server lost its store) and be
        // made again, by this box or another.
        nats.forgetBucket()
        natsRetryAt = ContinuousClock.now + .seconds(2)
    }

    /// The most outbox entries sent in one batch (one job of the bucket's worker), and bucket entries
    /// taken in one turn: a long outbox or catch-up goes on over the next batches and turns. The loop reads
    /// snapbackd's change stream meanwhile (a reader that takes nothing for 5 s is dropped): a batch's
    /// round trips are the worker's.
    static let entriesPerTurn = 256

    /// What became of one outbox entry on the worker.
    enum Published {
        /// The bucket holds it, or something that wins over it (`revision`: the one written, if any).
        case done(revision: UInt64?)
        /// The bucket's record wins: the loop merges it into snapbackd, and the entry leaves the outbox
        /// once snapbackd took it.
        case mergeLocally(SyncRecord)
        /// Another box's writes came first 16 rounds in a row: tried again at the next batch.
        case conflicting
        case failed(NatsError)
    }

    /// Hands the outbox's oldest entries, as many as the publish rate allows (at most a batch), to the
    /// bucket's worker; their outcomes come back to ``published(_:_:)``.
    private func publish() {
        let now = ContinuousClock.now
        let rate = Double(configuration.publishRate)
        publishTokens = min(rate, publishTokens + (now - publishRefilled) / .seconds(1) * rate)
        publishRefilled = now
        guard publishTokens >= 1 else { return }
        let entries: [Outbox.Entry]
        do {
            entries = try outbox.first(min(Self.entriesPerTurn, Int(publishTokens)))
        } catch {
            lastError = "outbox: \(error)"
            return
        }
        if entries.isEmpty { return }
        publishTokens -= Double(entries.count)
        let nats = nats
        let household = configuration.household
        let device = deviceId
        kv.submit(
            { Self.publish(entries, nats: nats, household: household, deviceId: device) },
            then: { [weak self] in self?.published(entries, $0) })
    }

    /// On the loop: the entries the server acknowledged (or that lost to the bucket's record, merged
    /// into snapbackd) leave the outbox; the first failure stops the batch.
    private func published(_ entries: [Outbox.Entry], _ answer: (outcomes: [Published], skips: [SkipNote])) {
        for note in answer.skips { skips.skip(note.id, note.text) }
        var waiting = false
        for (entry, outcome) in zip(entries, answer.outcomes) {
            bucketError = nil
            switch outcome {
            case .done(let revision):
                if let revision { nats.highestRevision = max(nats.highestRevision, revision) }
            case .mergeLocally(let record):
                // snapbackd away: the entry waits; the rest of the batch was answered by the server.
                guard merge(records: [record], watched: []) else {
                    waiting = true
                    continue
                }
            case .conflicting:
                log("snapback-sync: \(entry.key): still conflicting after 16 rounds; tried again later")
                return
            case .failed(let error):
                bucketFailed(error)
                return
            }
            do {
                try outbox.remove(id: entry.id)
            } catch {
                lastError = "outbox: \(error)"
                return
            }
            lastExchange = wallSeconds()
            serverError = nil
        }
        // The next batch, at once (the outbox, the publish rate and NATS say whether there is one); not
        // while an entry waits for snapbackd: it would be read again at once, and again.
        if !waiting { timers.again = true }
    }

    /// A record or breaks of the bucket refused by the bound of its server time: logged once by the loop.
    struct SkipNote {
        var id: String
        var text: String
    }

    /// On the worker: publishes the entries in order, each until the bucket holds it or a record that
    /// wins over it; stops at the first failure or lasting conflict. The compare-and-set's decision is made
    /// here, between its read and its write: it needs only the entry, the bucket's value and the device
    /// id, all immutable, so a conflict's next round costs no trip through the loop (a batch of
    /// 256 entries 20 ms away takes two round trips an entry, not four and two loop wake-ups). The refusals
    /// of the bound come back as notes for the loop's log.
    static func publish(_ entries: [Outbox.Entry], nats: NatsKV, household: String, deviceId: String?) -> (
        outcomes: [Published], skips: [SkipNote]
    ) {
        var outcomes: [Published] = []
        var notes: [SkipNote] = []
        for entry in entries {
            let outcome: Published
            do {
                outcome = try publish(entry, nats: nats, household: household, deviceId: deviceId, notes: &notes)
            } catch {
                outcome = .failed(error)
            }
            outcomes.append(outcome)
            if case .conflicting = outcome { break }
            if case .failed = outcome { break }
        }
        return (outcomes, notes)
    }

    /// One entry: a conflict means another box wrote the key between the read and the write: read and
    /// decide again. Each round is a round trip; a key written by every box at once settles in a few.
    private static func publish(
        _ entry: Outbox.Entry, nats: NatsKV, household: String, deviceId: String?, notes: inout [SkipNote]
    ) throws(NatsError) -> Published {
        guard let kind = KeyCodec.kind(of: entry.key, household: household) else { return .done(revision: nil) }
        for _ in 0..<16 {
            let current = try nats.get(entry.key)
            let step: PublishStep
            switch kind {
            case .record:
                guard let mine = KVValue.record(entry.value, key: entry.key, household: household) else {
                    return .done(revision: nil)
                }
                // A record the bound refuses counts as none: this box's record replaces it.
                let remote: SyncRecord? = current.flatMap { c -> SyncRecord? in
                    KVValue.record(c.value, key: entry.key, household: household).flatMap { record -> SyncRecord? in
                        if let note = boundNote(
                            record, key: entry.key, revision: c.revision, created: c.created, deviceId: deviceId)
                        {
                            notes.append(note)
                            return nil
                        }
                        return record
                    }
                }
                step = .record(mine, remote: remote)
            case .watched:
                guard let mine = KVValue.watched(entry.value, key: entry.key, household: household) else {
                    return .done(revision: nil)
                }
                let remote: WatchedBreaks? = current.flatMap { c -> WatchedBreaks? in
                    KVValue.watched(c.value, key: entry.key, household: household).map { watched -> WatchedBreaks in
                        let (kept, note) = boundedNote(watched, key: entry.key, revision: c.revision, created: c.created)
                        if let note { notes.append(note) }
                        return kept
                    }
                }
                step = .watched(mine, remote: remote)
            }
            switch step {
            case .nothing:
                return .done(revision: nil)
            case .mergeLocally(let record):
                return .mergeLocally(record)
            case .write(let bytes):
                switch try nats.write(entry.key, bytes, expecting: current?.revision) {
                case .written(let revision): return .done(revision: revision)
                case .conflict: continue
                }
            }
        }
        return .conflicting
    }

    /// Hands the making of a new watcher, and the check of the bucket's stream it is made on, to the
    /// bucket's worker; the loop compares the stream (``checkStream(_:)``) when the answer comes back, and
    /// only then takes the watcher's entries.
    private func watch() {
        let nats = nats
        kv.submit(
            { () -> Result<(created: Int64, lastSeq: UInt64)?, NatsError> in
                do throws(NatsError) {
                    guard try nats.ensureWatcher() else { return .success(nil) }
                    return .success(try nats.streamIdentity())
                } catch {
                    return .failure(error)
                }
            },
            then: { [weak self] answer in self?.watched(answer) })
    }

    private func watched(_ answer: Result<(created: Int64, lastSeq: UInt64)?, NatsError>) {
        switch answer {
        case .success(let stream):
            bucketError = nil
            guard let stream else { return }
            do {
                try checkStream(stream)
                nats.watcherChecked()
            } catch {
                lastError = "outbox: \(error)"
                // Made again and checked again after the backoff.
                nats.closeWatcher()
                natsRetryAt = ContinuousClock.now + .seconds(2)
            }
        case .failure(let error):
            bucketFailed(error)
        }
        timers.again = true
    }

    /// Merges what the bucket's watcher delivered into snapbackd, in batches of at most 256 records and
    /// 256 breaks, at most four batches' worth a turn (the next turn comes at once for the rest).
    private func readRemote() {
        guard local != nil, let deviceId else { return }
        defer { saveRevision() }
        var records: [SyncRecord] = []
        var watched: [WatchedBreaks] = []
        let delivered: [KVEntry]
        do {
            let (entries, more) = try nats.entries(limit: Self.entriesPerTurn * 4)
            delivered = entries
            if more { timers.again = true }
        } catch {
            natsFailed(error)
            return
        }
        for entry in delivered {
            serverError = nil
            // A delete or purge marker holds no value (no agent writes one): nothing to merge.
            guard !entry.deleted else { continue }
            let household = configuration.household
            guard let kind = KeyCodec.kind(of: entry.key, household: household) else {
                let why = KeyCodec.problem(entry.key, household: household) ?? "not a key of this household"
                skips.skip(
                    "\(entry.key)#\(entry.revision)",
                    "\(entry.key) revision \(entry.revision): not a key the agent writes (\(why)); skipped")
                continue
            }
            switch kind {
            case .record:
                guard let record = KVValue.record(entry.value, key: entry.key, household: household) else {
                    skips.skip(
                        "\(entry.key)#\(entry.revision)",
                        "\(entry.key) revision \(entry.revision): not a record of its key (\(entry.value.count) bytes); skipped")
                    continue
                }
                guard withinBound(record, key: entry.key, revision: entry.revision, created: entry.created) else { continue }
                // This box's own record, back from the bucket: snapbackd has it (or something newer).
                if record.stamp.device.text == deviceId { continue }
                records.append(record)
            case .watched:
                guard let all = KVValue.watched(entry.value, key: entry.key, household: household) else {
                    skips.skip(
                        "\(entry.key)#\(entry.revision)",
                        "\(entry.key) revision \(entry.revision): not watched breaks of its content (\(entry.value.count) bytes); skipped"
                    )
                    continue
                }
                let contentId = all.contentId
                let breaks = bounded(all, key: entry.key, revision: entry.revision, created: entry.created)
                for (breakId, at) in breaks.watchedAt {
                    if let one = try? WatchedBreaks(contentId: contentId, watchedAt: [breakId: at]) { watched.append(one) }
                    if watched.count == SyncMerge.maxRecords {
                        guard merge(records: records, watched: watched) else { return }
                        records = []
                        watched = []
                    }
                }
            }
            if records.count == SyncMerge.maxRecords {
                guard merge(records: records, watched: watched) else { return }
                records = []
                watched = []
            }
        }
        if !records.isEmpty || !watched.isEmpty {
            _ = merge(records: records, watched: watched)
        }
    }

    /// Compares the bucket's stream with the one the agent last exchanged with (its creation time, and
    /// the highest revision seen): at every new watcher, so after every (re)connection. Another stream,
    /// or one whose last sequence is below what the agent saw, lost what it held: a repair sends every
    /// record this box holds (the publish rule writes only where the bucket lacks it or holds an older
    /// one). Never a periodic scan.
    private func checkStream(_ stream: (created: Int64, lastSeq: UInt64)) throws {
        let known = try outbox.state("stream_created")
        var why: String?
        if let known, known != stream.created {
            why =
                "the bucket's stream was created at \(stream.created / 1_000_000_000) s, not \(known / 1_000_000_000) s: it was made again"
        } else if known != nil, stream.lastSeq < nats.highestRevision {
            why =
                "the bucket's stream ends at revision \(stream.lastSeq), before revision \(nats.highestRevision) this agent saw: the server lost or rolled back its store"
        }
        if let why {
            log("snapback-sync: \(why); re-publishing what this box holds (at most \(configuration.publishRate) a second)")
            try outbox.startRepair()
            repairUntil = try outbox.repairUntil()
            // snapbackd's changes are read again from 0 (its stream opened again).
            local?.close()
            local = nil
            localRetryAt = ContinuousClock.now
        }
        if known == nil || why != nil {
            nats.highestRevision = stream.lastSeq
            savedRevision = stream.lastSeq
            try outbox.setState([("stream_created", stream.created), ("stream_seen", Int64(clamping: stream.lastSeq))])
        }
    }

    /// Keeps the highest revision seen in the outbox's state, once a turn it moved.
    private func saveRevision() {
        let seen = nats.highestRevision
        guard seen > savedRevision else { return }
        do {
            try outbox.setState([("stream_seen", Int64(clamping: seen))])
            savedRevision = seen
        } catch {
            lastError = "outbox: \(error)"
        }
    }

    /// Whether a record read from the bucket is within the bound of its message's server time
    /// (``ServerTimeBound``); one that is not is logged, naming its key and device, and refused.
    private func withinBound(_ record: SyncRecord, key: String, revision: UInt64, created: Int64) -> Bool {
        guard let note = Self.boundNote(record, key: key, revision: revision, created: created, deviceId: deviceId) else {
            return true
        }
        skips.skip(note.id, note.text)
        return false
    }

    /// What the log says of a record beyond the bound of its message's server time; nil for one within it.
    /// Pure: the bucket's worker calls it too.
    static func boundNote(_ record: SyncRecord, key: String, revision: UInt64, created: Int64, deviceId: String?)
        -> SkipNote?
    {
        guard let excess = ServerTimeBound.excess(physical: record.stamp.physical, serverNanoseconds: created) else {
            return nil
        }
        let own = record.stamp.device.text == deviceId ? " (this box's record: its clock is ahead)" : ""
        return SkipNote(
            id: "\(key)#\(revision)",
            text:
                "\(key) revision \(revision): stamp \(ServerTimeBound.shown(record.stamp)) by device \(record.stamp.device) is \(excess / 1000) s past the server's time of the message plus \(ServerTimeBound.maxAheadMilliseconds / 3_600_000) h\(own); refused"
        )
    }

    /// Watched breaks read from the bucket without those marked beyond the bound of the message's server
    /// time (each logged, naming the key).
    private func bounded(_ watched: WatchedBreaks, key: String, revision: UInt64, created: Int64) -> WatchedBreaks {
        let (kept, note) = Self.boundedNote(watched, key: key, revision: revision, created: created)
        if let note { skips.skip(note.id, note.text) }
        return kept
    }

    /// Watched breaks without those beyond the bound, and what the log says of those (nil: none). Pure.
    static func boundedNote(_ watched: WatchedBreaks, key: String, revision: UInt64, created: Int64) -> (
        WatchedBreaks, SkipNote?
    ) {
        let (kept, refused) = ServerTimeBound.split(watched, serverNanoseconds: created)
        guard !refused.isEmpty else { return (kept, nil) }
        return (
            kept,
            SkipNote(
                id: "\(key)#\(revision)",
                text:
                    "\(key) revision \(revision): break(s) \(refused.prefix(4).joined(separator: ", "))\(refused.count > 4 ? ", …" : "") watched past the server's time of the message plus \(ServerTimeBound.maxAheadMilliseconds / 3_600_000) h; refused"
            )
        )
    }

    // MARK: Status

    func currentStatus() -> SyncStatus {
        let state: SyncStatus.State
        if localError != nil || bucketError != nil || serverError != nil || storeUnknown != nil {
            state = .error
        } else if natsDownSince == nil, nats.isConnected {
            state = .connected
        } else if let since = natsDownSince, ContinuousClock.now - since >= Self.connectingFor {
            state = .offline
        } else {
            state = .connecting
        }
        let server = state == .connected ? SyncConfiguration.redacted(nats.connectedURL) : configuration.serversShown
        return SyncStatus(
            state: state, outbox: (try? outbox.count()) ?? 0, skipped: skips.count, unsynced: unsynced.count,
            lastExchange: lastExchange,
            lastError: localError ?? bucketError ?? serverError ?? storeUnknown ?? lastError, household: configuration.household,
            deviceId: deviceId ?? configuration.deviceId ?? "", server: server, updated: 0, pid: getpid())
    }

    /// Writes the status file when what it says changed (its `updated` time: when it last did),
    /// atomically: a reader sees the old file or the new one, never a part. Never on a timer of its own.
    private func writeStatus(force: Bool) {
        var status = currentStatus()
        let text = status.rendered()
        guard force || text != lastStatusText else { return }
        status.updated = wallSeconds()
        let path = configuration.statusFile
        let temporary = path + ".tmp"
        guard writeFile(temporary, status.rendered()), rename(temporary, path) == 0 else {
            if lastStatusText != "unwritable" { log("snapback-sync: cannot write the status file \(path)") }
            lastStatusText = "unwritable"
            return
        }
        lastStatusText = text
    }
}

/// Why the agent cannot start.
public struct AgentError: Error, CustomStringConvertible {
    public var description: String

    package init(description: String) { self.description = description }
}

func wallSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

package func makeDirectory(_ path: String) throws(AgentError) {
    var prefix = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        prefix += "/" + part
        if mkdir(prefix, 0o700) != 0, errno != EEXIST {
            throw AgentError(description: "\(prefix): \(String(cString: strerror(errno)))")
        }
    }
}

/// The file's bytes as text, up to `limit` bytes; nil if it cannot be read.
/// A `password-file`'s password: its first line (sync.conf's and fleet.conf's NATS user).
package func readPasswordFile(_ file: String) throws(AgentError) -> String {
    guard let text = readFile(file, limit: 4096) else { throw AgentError(description: "password-file \(file): cannot read it") }
    return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
}

public func readFile(_ path: String, limit: Int) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: limit)
    var count = 0
    while count < limit {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit - count) }
        if n < 0, errno == EINTR { continue }
        guard n >= 0 else { return nil }
        if n == 0 { break }
        count += n
    }
    return String(decoding: bytes[..<count], as: UTF8.self)
}

func writeFile(_ path: String, _ text: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    // Readable by every user (`snapback status`), whatever the service's umask.
    fchmod(fd, 0o644)
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { return false }
        offset += n
    }
    return true
}
