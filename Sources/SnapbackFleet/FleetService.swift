// SPDX-License-Identifier: Apache-2.0
import CSnapbackFetch
import Glibc
import SnapbackConfigFile
import SnapbackStore
import SnapbackSync

/// snapback-fleet's loop (snapback-fleet(8), docs/telemetry.md "The fleet side"), one thread:
///
/// 1. fetch a batch of reports from the durable consumer (the server holds the pull until reports come,
///    or until the next write of every total is due: no other wake-up);
/// 2. check each (``FleetReport``: a malformed one is logged, acked and dropped);
/// 3. apply the batch and move the consumer's position in ONE SQLite transaction (``FleetStore``);
/// 4. write the changed totals to the metrics store (its import API, through libcurl), then ack the batch.
///
/// A report's effect is in the fleet's database before its ack: a crash before the ack delivers it
/// again, and it is then a duplicate (its seq is the box's last applied). A total the store did not take
/// stays marked changed, and goes with the next write.
public final class FleetService {
    let configuration: FleetConfiguration
    let store: FleetStore
    let consumer: FleetConsumer
    let log: (String) -> Void
    private var nextFullExport: ContinuousClock.Instant
    private var lastProblem = ""
    /// Reports applied, reset, duplicate and dropped since the start.
    public private(set) var counts: Counts = (0, 0, 0, 0)

    public init(configuration: FleetConfiguration, log: @escaping (String) -> Void) throws(AgentError) {
        self.configuration = configuration
        self.log = log
        let directory = String(
            configuration.database.split(separator: "/", omittingEmptySubsequences: false).dropLast()
                .joined(separator: "/"))
        if !directory.isEmpty { try makeDirectory(directory) }
        do {
            store = try FleetStore(path: configuration.database, maxBoxes: configuration.maxBoxes)
        } catch {
            throw AgentError(description: "database \(configuration.database): \(error)")
        }
        let password = try configuration.passwordFile.map { (file) throws(AgentError) in try readPasswordFile(file) }
        do {
            consumer = try FleetConsumer(configuration: configuration, password: password)
        } catch {
            throw AgentError(description: "nats: \(error)")
        }
        nextFullExport = .now
    }

    /// Ends the loop from another thread (the signal thread): the fetch under way returns.
    public func stop() { consumer.close() }

    /// A thread of its own waits for one of `signals` (blocked in every thread) and then stops the loop.
    public func stopOnSignals(_ signals: sigset_t) {
        final class Context {
            let service: FleetService
            var signals: sigset_t
            init(_ service: FleetService, _ signals: sigset_t) {
                self.service = service
                self.signals = signals
            }
        }
        let context = Unmanaged.passRetained(Context(self, signals)).toOpaque()
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { raw in
                let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
                var received: Int32 = 0
                sigwait(&context.signals, &received)
                context.service.stop()
                return nil
            }, context)
        pthread_detach(thread)
    }

    public func run() {
        log(
            "snapback-fleet: stream \(configuration.stream), consumer \(configuration.consumer), database \(configuration.database), store \(configuration.importURL)"
        )
        var backoff: Duration = .milliseconds(500)
        while !consumer.isClosed {
            let now = ContinuousClock.now
            if now >= nextFullExport {
                export(changedOnly: false)
                nextFullExport = now + .seconds(configuration.exportInterval)
            }
            let messages: [FleetMessage]
            do {
                messages = try consumer.fetch(timeout: max(.milliseconds(1), ContinuousClock.now.duration(to: nextFullExport)))
                backoff = .milliseconds(500)
            } catch {
                if consumer.isClosed { break }
                problem("\(error)")
                sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(10))
                continue
            }
            if messages.isEmpty { continue }
            handle(messages)
        }
        log(
            "snapback-fleet: stopped: \(counts.applied) reports applied, \(counts.reset) after a store reset, \(counts.duplicate) duplicates, \(counts.dropped) dropped"
        )
    }

    private func problem(_ text: String) {
        if text != lastProblem { log("snapback-fleet: \(text)") }
        lastProblem = text
    }

    func handle(_ messages: [FleetMessage]) {
        do {
            try Self.apply(
                messages.lazy.map { ($0.bytes, $0.streamSeq, $0.subject) }, to: store, counts: &counts, log: log)
        } catch {
            // Not acked: the stream delivers the batch again after its ack wait.
            problem("database: \(error); the batch is delivered again")
            return
        }
        export(changedOnly: true)
        for message in messages { message.ack() }
    }

    /// Reports applied, reset, duplicate and dropped.
    public typealias Counts = (applied: Int, reset: Int, duplicate: Int, dropped: Int)

    /// A fetched batch's way into the database, the same for the service and `snapback-bench fleet`:
    /// each report (its bytes, stream sequence and subject) decoded and checked (``FleetReport``; a
    /// malformed one logged and counted as dropped), then the batch folded into the totals with the
    /// consumer's position in ONE transaction (``FleetStore/apply(_:)``). Throws when the transaction
    /// failed: nothing of the batch is applied then.
    package static func apply(
        _ delivered: some Sequence<(bytes: [UInt8], streamSeq: UInt64, subject: String)>, to store: FleetStore,
        counts: inout Counts, log: (String) -> Void
    ) throws(SQLiteError) {
        var batch: [(streamSeq: UInt64, report: FleetReport)] = []
        let position = store.position()
        for (bytes, streamSeq, subject) in delivered {
            // Applied already (its batch committed, its ack lost): the seq rule would skip it too.
            if streamSeq != 0, streamSeq <= position {
                counts.duplicate += 1
                continue
            }
            do {
                let report = try FleetReport.parse(bytes)
                // `snapback.telemetry.<box id>`, compared where the subject is (no string made a report).
                let prefix = TelemetryConfiguration.subjectPrefix.utf8
                guard subject.utf8.count == prefix.count + report.boxId.utf8.count,
                    subject.utf8.starts(with: prefix), subject.utf8.dropFirst(prefix.count).elementsEqual(report.boxId.utf8)
                else {
                    throw FleetReport.Rejection("its box_id is not its subject's")
                }
                batch.append((streamSeq, report))
            } catch {
                counts.dropped += 1
                log("snapback-fleet: report at stream sequence \(streamSeq) (\(subject)) dropped: \(error)")
            }
        }
        for (outcome, (streamSeq, report)) in zip(try store.apply(batch), batch) {
            switch outcome {
            case .applied: counts.applied += 1
            case .reset: counts.reset += 1
            case .duplicate: counts.duplicate += 1
            case .tooManyBoxes:
                counts.dropped += 1
                log(
                    "snapback-fleet: report at stream sequence \(streamSeq) (box \(report.boxId)) dropped: a new box, and \(store.maxBoxes) boxes known (max-boxes)"
                )
            case .tooManySeries:
                counts.dropped += 1
                let (series, labelSets, totals) = store.sizes
                log(
                    "snapback-fleet: report at stream sequence \(streamSeq) (box \(report.boxId)) dropped: it would make more than \(store.maxSeries) series, \(store.maxLabelSets) label sets or \(store.maxTotals) totals (\(series), \(labelSets) and \(totals) known)"
                )
            }
        }
    }

    /// Writes the totals (the changed ones, or every one) to the metrics store, stamped now.
    func export(changedOnly: Bool) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        let (text, count) = store.importText(changedOnly: changedOnly, milliseconds: milliseconds)
        guard count > 0 else { return }
        var error = [CChar](repeating: 0, count: 256)
        let status = text.withUnsafeBytes { body in
            snapback_post(
                configuration.importURL, "text/plain", body.baseAddress, body.count, 10_000, &error, error.count)
        }
        guard (200..<300).contains(status) else {
            let why =
                status == 0
                ? String(decoding: error.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                : "HTTP \(status)"
            problem("metrics store \(configuration.importURL): \(why); the totals go with the next write")
            return
        }
        store.markWritten()
        if !lastProblem.isEmpty {
            log("snapback-fleet: metrics store: \(count) totals written")
            lastProblem = ""
        }
    }

    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

/// Loads and checks a fleet.conf.
public func loadFleetConfiguration(_ path: String) throws(ConfigurationError) -> FleetConfiguration {
    guard let text = readFile(path, limit: 1 << 20) else {
        throw ConfigurationError(file: path, line: nil, reason: "cannot read it")
    }
    return try FleetConfiguration.parse(text, file: path)
}
