// SPDX-License-Identifier: Apache-2.0
import CLinux
import CNats
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackWire

/// The box's telemetry (docs/telemetry.md): at each report interval, jittered ±10 %, it reads snapbackd's
/// counters (`Control/GetMetrics`, as an admin client: the agent's user is in snapbackd's admin groups),
/// writes them as a node_exporter textfile when one is configured, and publishes a ``TelemetryReport``
/// to the stream over the agent's NATS connection. One deadline (``AgentTimers/Timer/telemetry``) and,
/// while a report waits for NATS, nothing else: the connection coming back wakes the loop.
///
/// A publish never blocks the loop: the report is handed to libnats (`js_PublishAsync`) and the stream's
/// answer comes back to the loop (``NatsEvents``: a failure writes the loop's eventfd, an ack waits for its
/// next turn, having nothing to be done); bookmarks, the textfile and snapbackd's
/// changes go on meanwhile. One report is in flight at a time. It waits for its answer until the next
/// report is made (then it is taken back and the newer one goes instead), or until the connection is
/// lost (then it goes again, with the same message id, once NATS is back): no timer of its own.
///
/// Offline, only the latest report is kept: the counters are cumulative, so a newer report carries all
/// an older one did. Each report has the next `seq` of this box and the message id `<box_id>-<seq>`, so a
/// re-publish is deduplicated by the stream, and by snapback-fleet (a seq at or below the last it
/// applied). Report numbers are reserved in blocks (``seqBlock``) in the state directory, the bound
/// written durably before the first report of a block leaves: a number is never used twice, a restart
/// skips what its block had left (the fleet needs them to grow, not to be consecutive), and a report
/// costs no fsync.
final class TelemetryReporter {
    let telemetry: TelemetryConfiguration
    let socket: String
    let replicas: Int
    let boxId: String
    private let seqPath: String
    private let log: (String) -> Void
    private(set) var seq: UInt64
    /// The highest report number reserved in the state directory (`telemetry-seq`).
    private var reserved: UInt64
    /// snapbackd's connection, kept from one report to the next (snapbackd never closes an idle one): a
    /// report is one round trip, not a connection and a Hello more.
    private var client: SnapbackClient?
    /// When the next report is made.
    private(set) var due: ContinuousClock.Instant
    /// The latest report the stream has not stored yet.
    private(set) var pending: (seq: UInt64, bytes: [UInt8])?
    /// The message id of the publish handed to libnats and not answered yet.
    private(set) var inFlight: String?
    /// After a failed publish while connected, the next attempt.
    private var retryAt: ContinuousClock.Instant?
    private var retryBackoff: Duration = .seconds(2)
    private var lastProblem = ""
    /// The stream could not be looked up or made (``take(_:nats:now:)``): it is not tried again.
    private var streamNotOurs = false
    /// The stream's look-up is under way on ``worker``: the report waits for its answer.
    private var lookingUpStream = false
    /// Where the stream is looked up: telemetry's own thread (the bucket's jobs do not wait behind it).
    private let worker: KVWorker

    init(configuration: SyncConfiguration, log: @escaping (String) -> Void, wake: Wakeup, now: ContinuousClock.Instant)
        throws(AgentError)
    {
        telemetry = configuration.telemetry
        worker = try KVWorker(wake: wake, name: "snapback-telem")
        socket = configuration.socket
        replicas = configuration.replicas
        self.log = log
        let directory = configuration.stateDirectory
        boxId = try Self.boxId(path: directory + "/box-id", configured: configuration.telemetry.boxId, log: log)
        seqPath = directory + "/telemetry-seq"
        if let text = readFile(seqPath, limit: 64) {
            guard let value = UInt64(KeyValueText.firstLine(text)) else {
                throw AgentError(description: "\(seqPath): not a report number")
            }
            seq = value
        } else {
            seq = 0
        }
        reserved = seq
        // The first report soon after the start (a tenth of the interval at most, jittered too), then
        // one every interval.
        due = now + Self.jittered(.seconds(telemetry.interval)) / 10
    }

    /// The subject of this box's reports.
    var subject: String { TelemetryConfiguration.subjectPrefix + boxId }

    /// `interval` ±10 %, from getrandom(2): a fleet's boxes started together drift apart.
    static func jittered(_ interval: Duration) -> Duration {
        interval * (0.9 + 0.2 * randomFraction())
    }

    static func randomFraction() -> Double {
        var bits: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &bits) { snapback_random($0.baseAddress, 8) }
        return Double(bits >> 11) / Double(1 << 53)
    }

    /// The box id: the configured one (`box-id`, kept at `path` too), else the one kept at `path`, made
    /// (128 bits from getrandom(2), 32 hex digits) when there is none. Pseudonymous: nothing of the box
    /// (serial, MAC) goes into it.
    static func boxId(path: String, configured: String? = nil, log: (String) -> Void = { _ in }) throws(AgentError)
        -> String
    {
        let kept = readFile(path, limit: 64).map { KeyValueText.firstLine($0) }
        if let configured {
            guard kept != configured else { return configured }
            guard writeFileAtomically(path, configured + "\n", mode: 0o600, durably: true) else {
                throw AgentError(description: "\(path): cannot write it")
            }
            // A new id is a new box to the fleet: its counts are all new there.
            if let kept { log("snapback-sync: telemetry: box id \(configured) from box-id replaces \(kept) (\(path))") }
            return configured
        }
        if let id = kept {
            guard isBoxId(id) else { throw AgentError(description: "\(path): not a box id (32 hex digits)") }
            return id
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard bytes.withUnsafeMutableBytes({ snapback_random($0.baseAddress, 16) }) == 0 else {
            throw AgentError(description: "getrandom: \(String(cString: strerror(errno)))")
        }
        let id = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        guard writeFileAtomically(path, id + "\n", mode: 0o600, durably: true) else {
            throw AgentError(description: "\(path): cannot write it")
        }
        return id
    }

    /// Report numbers reserved at a time: with a report every 5 min, one durable write in 3.5 days.
    static let seqBlock: UInt64 = 1024

    static func isBoxId(_ id: some StringProtocol) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Whether an error the server sent names telemetry's subjects (its reports', its stream's API).
    func refers(to error: String) -> Bool {
        error.contains(TelemetryConfiguration.subjectPrefix) || error.contains(".\(telemetry.stream)")
    }

    /// When the loop must turn for telemetry: the next report, or a publish's retry while connected. A
    /// publish in flight, or the stream's look-up, sets none: its answer wakes the loop.
    func deadline(connected: Bool) -> ContinuousClock.Instant {
        guard connected, pending != nil, inFlight == nil, !lookingUpStream, let retryAt else { return due }
        return min(due, retryAt)
    }

    /// Takes the stream's answers, makes the report when it is due, and publishes the pending one when
    /// NATS is connected and no publish is in flight.
    func turn(now: ContinuousClock.Instant, nats: NatsKV) {
        for result in worker.takeResults() { result() }
        for answer in nats.events.takeAnswers() { take(answer, nats: nats, now: now) }
        if inFlight != nil, !nats.isConnected {
            // Its ack, if the server sends one, went to a connection that is gone: sent again when NATS is back.
            nats.takeBackPublishes()
            inFlight = nil
        }
        if now >= due {
            due = now + Self.jittered(.seconds(telemetry.interval))
            if let waiting = inFlight {
                nats.takeBackPublishes()
                inFlight = nil
                problem("no answer from the stream to \(waiting) within an interval; the next report replaces it")
            }
            makeReport()
            retryAt = nil
        }
        guard pending != nil, inFlight == nil, !lookingUpStream, nats.isConnected, retryAt.map({ now >= $0 }) ?? true
        else { return }
        publish(nats: nats, now: now)
    }

    /// The server refused one of telemetry's subjects (an error it sent on the connection, naming it):
    /// the publish in flight gets no answer, so it is taken back now and tried again after the backoff.
    func refused(_ error: String, nats: NatsKV, now: ContinuousClock.Instant) {
        problem(
            "the NATS server refuses this box's report: \(error) (these credentials may not publish \(subject): box-id in [telemetry] must be the box id the server's permissions name for them)"
        )
        guard inFlight != nil else { return }
        nats.takeBackPublishes()
        inFlight = nil
        failed(now: now)
    }

    fileprivate func problem(_ text: String) {
        if text != lastProblem { log("snapback-sync: telemetry: \(text)") }
        lastProblem = text
    }

    private func makeReport() {
        let metrics: SnapbackV1.MetricsReply
        do {
            metrics = try readMetrics()
        } catch {
            let hint =
                error.code == .permissionDenied
                ? " (snapbackd serves GetMetrics to root and its admin groups: admin-groups in snapbackd.conf)" : ""
            problem("snapbackd at \(socket): \(error)\(hint); no report this interval")
            return
        }
        let time = wallSeconds()
        if let path = telemetry.textfile { writeTextfile(path, metrics) }
        seq += 1
        if seq > reserved {
            // Kept before the report leaves: a report number is never used twice for different counts.
            guard writeFileAtomically(seqPath, "\(seq + Self.seqBlock - 1)\n", mode: 0o600, durably: true) else {
                seq -= 1
                problem("cannot write \(seqPath); no report this interval")
                return
            }
            reserved = seq + Self.seqBlock - 1
        }
        let report = SnapbackV1.TelemetryReport(
            boxId: boxId, seq: seq, startId: metrics.startId, bootId: metrics.bootId, countingSince: metrics.countingSince,
            starts: metrics.starts, uncleanStarts: metrics.uncleanStarts, flushInterval: metrics.flushInterval,
            firmware: telemetry.firmware, model: telemetry.model, region: telemetry.region, time: time,
            families: Self.wireFamilies(metrics.families))
        // The latest only: it supersedes any report still waiting.
        pending = (seq, report.encoded())
    }

    /// GetMetrics over the kept connection; over a new one when there is none, or the kept one failed
    /// (snapbackd restarted since).
    private func readMetrics() throws(SnapbackClientError) -> SnapbackV1.MetricsReply {
        if let client {
            do {
                return try client.call(.getMetrics, as: SnapbackV1.MetricsReply.self)
            } catch {
                client.close()
                self.client = nil
            }
        }
        let fresh = try SnapbackClient(socketPath: socket, clientName: "snapback-sync telemetry", timeout: .seconds(5))
        do {
            let reply = try fresh.call(.getMetrics, as: SnapbackV1.MetricsReply.self)
            client = fresh
            return reply
        } catch {
            fresh.close()
            throw error
        }
    }

    /// The families as a report carries them: each with its name and type only (its help and unit are
    /// the catalog's, the same in every report: snapback-fleet needs neither), and only its series that
    /// counted something — a counter above 0, a histogram with an observation. A series absent from a
    /// report is 0 since the report's `counting_since` (snapback-fleet reads it so), and a family left
    /// with none is left out. Most of the daemon's ~300 series are 0 on a box: they cost nothing on the
    /// wire until they count.
    static func wireFamilies(_ families: [SnapbackV1.MetricFamily]) -> [SnapbackV1.MetricFamily] {
        families.compactMap { family in
            let counted = family.series.filter { $0.value != 0 || $0.count != 0 }
            guard !counted.isEmpty else { return nil }
            return SnapbackV1.MetricFamily(name: family.name, type: family.type, series: counted)
        }
    }

    private func messageId(_ seq: UInt64) -> String { "\(boxId)-\(seq)" }

    /// Hands the pending report to libnats; the answer comes later (``take(_:nats:now:)``).
    private func publish(nats: NatsKV, now: ContinuousClock.Instant) {
        guard let (seq, bytes) = pending else { return }
        let id = messageId(seq)
        do {
            try nats.publishReportAsync(subject: subject, bytes, messageId: id)
            inFlight = id
        } catch {
            problem("\(error); report \(seq) kept for the next attempt")
            failed(now: now)
        }
    }

    /// The stream's answer to a publish. One for a publish taken back (answered meanwhile) is dropped.
    /// The stream is looked up only when no stream took the report (no responders): where the operator's
    /// stream lives in another account (imported as a service), the box may publish its reports and
    /// nothing more. That look-up (and the stream's creation when it is missing) waits for the server, up
    /// to libnats's JetStream wait, so it runs on telemetry's thread (``worker``) and the report waits
    /// for its answer; once it failed (a box whose permissions leave the stream's API to the operator: the
    /// request times out), it is not made again in this run, and a report no stream takes waits for the
    /// operator's stream.
    private func take(_ answer: PublishAnswer, nats: NatsKV, now: ContinuousClock.Instant) {
        guard answer.messageId == inFlight else { return }
        inFlight = nil
        switch answer.result {
        case .stored:
            // A duplicate (the stream held this id: a re-publish after a lost ack) is as good as stored.
            if let pending, messageId(pending.seq) == answer.messageId { self.pending = nil }
            retryAt = nil
            retryBackoff = .seconds(2)
            if !lastProblem.isEmpty { log("snapback-sync: telemetry: \(answer.messageId) stored by the stream") }
            lastProblem = ""
        case .failed(let status, _, _) where status == NATS_NO_RESPONDERS:
            guard !streamNotOurs else {
                problem(
                    "no stream takes \(subject) (the operator's stream \(telemetry.stream) is missing); report kept for the next attempt"
                )
                failed(now: now)
                return
            }
            lookingUpStream = true
            let (telemetry, replicas) = (telemetry, replicas)
            worker.submit(
                { () -> NatsError? in
                    do throws(NatsError) {
                        try nats.ensureTelemetryStream(telemetry, replicas: replicas)
                        return nil
                    } catch {
                        return error
                    }
                },
                then: { [weak self] error in self?.lookedUpStream(error, nats: nats) })
        case .failed(_, let code, let text):
            problem(
                "publish \(subject): \(text)\(code != 0 ? " (JetStream error \(code))" : ""); report kept for the next attempt")
            failed(now: now)
        }
    }

    /// Ends telemetry's thread, not waiting for a look-up under way.
    func stop() { worker.stop() }

    /// On the loop: the stream's look-up answered. Found or made, the report goes at once.
    private func lookedUpStream(_ error: NatsError?, nats: NatsKV) {
        lookingUpStream = false
        let now = ContinuousClock.now
        guard let error else {
            if nats.isConnected { publish(nats: nats, now: now) }
            return
        }
        // A connection lost meanwhile says nothing of the stream: looked up again once it is back.
        if nats.isConnected { streamNotOurs = true }
        problem("no stream takes \(subject), and \(error); report kept for the next attempt")
        failed(now: now)
    }

    /// The next attempt after a failure while connected: 2 s, doubling to 60 s.
    private func failed(now: ContinuousClock.Instant) {
        retryAt = now + retryBackoff
        retryBackoff = min(retryBackoff * 2, .seconds(60))
    }
}

extension TelemetryReporter {
    /// The textfile for node_exporter's textfile collector, written atomically (a temporary file, rename):
    /// the collector reads the old file or the new one, never a part. Not fsynced: it is written again
    /// every interval, and a power cut costs at most the interval until the next.
    fileprivate func writeTextfile(_ path: String, _ metrics: SnapbackV1.MetricsReply) {
        guard writeFileAtomically(path, Self.textfile(metrics, telemetry), mode: 0o644, durably: false) else {
            problem("cannot write the textfile \(path)")
            return
        }
    }

    /// `snapback metrics`' text (the shared renderer), each series with the operator's labels that are
    /// set, first: the same series node_exporter and the fleet name.
    static func textfile(_ metrics: SnapbackV1.MetricsReply, _ telemetry: TelemetryConfiguration) -> String {
        let labels = [("firmware", telemetry.firmware), ("model", telemetry.model), ("region", telemetry.region)]
            .filter { !$0.1.isEmpty }.map { SnapbackV1.MetricLabel(name: $0.0, value: $0.1) }
        var labelled = metrics
        for f in labelled.families.indices {
            for s in labelled.families[f].series.indices {
                labelled.families[f].series[s].labels.insert(contentsOf: labels, at: 0)
            }
        }
        return OpenMetrics.render(labelled, format: .prometheus)
    }
}

enum KeyValueText {
    /// The text up to its first newline.
    static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}

/// Writes `text` to `path` atomically: a temporary file next to it, fsync when `durably`, rename.
func writeFileAtomically(_ path: String, _ text: String, mode: mode_t, durably: Bool) -> Bool {
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { return false }
    fchmod(fd, mode)
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else {
            close(fd)
            return false
        }
        offset += n
    }
    guard !durably || fsync(fd) == 0 else {
        close(fd)
        return false
    }
    guard close(fd) == 0 else { return false }
    return rename(temporary, path) == 0
}
