// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc
import SnapbackSync

/// A report as the stream delivered it: its bytes, its stream sequence, and the message to ack.
public struct FleetMessage {
    public var bytes: [UInt8]
    public var streamSeq: UInt64
    public var subject: String
    let message: OpaquePointer

    /// Tells the stream this report's effect is written (it is not delivered again).
    public func ack() { _ = natsMsg_Ack(message, nil) }
}

/// snapback-fleet's side of NATS (libnats 3.4): the connection (retried for ever in the library's own
/// threads, like the agent's), the telemetry stream (created with the agent's limits when missing) and
/// a durable pull consumer with explicit acks. Used from one thread; ``close()`` may be called from the
/// signal thread to end a fetch under way.
public final class FleetConsumer {
    private var connection: OpaquePointer?
    private var jetStream: OpaquePointer?
    private var subscription: OpaquePointer?
    private let configuration: FleetConfiguration
    /// Messages fetched and not yet destroyed (after their ack).
    private var held: [OpaquePointer] = []

    /// How long an unacked report waits before the stream delivers it again: more than a batch takes.
    public static let ackWaitSeconds: Int64 = 60

    /// `password`: the password of `configuration.user` (read from its `password-file`).
    public init(configuration: FleetConfiguration, password: String? = nil) throws(NatsError) {
        self.configuration = configuration
        let options = try natsOptions(
            servers: configuration.servers, name: "snapback-fleet \(configuration.consumer)",
            credentialsFile: configuration.credentialsFile, user: configuration.user, password: password)
        defer { natsOptions_Destroy(options) }
        func check(_ status: natsStatus, _ what: String) throws(NatsError) {
            guard status == NATS_OK else { throw NatsError(status, what) }
        }
        if configuration.servers.contains(where: { $0.hasPrefix("tls://") }) {
            try check(natsOptions_SetSecure(options, true), "tls")
        }
        try check(natsOptions_SetTimeout(options, 5000), "timeout")
        try check(natsOptions_SetMaxReconnect(options, -1), "max reconnect")
        try check(natsOptions_SetReconnectWait(options, 2000), "reconnect wait")
        try check(natsOptions_SetRetryOnFailedConnect(options, true, nil, nil), "retry")
        let status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, connection != nil else {
            throw NatsError(status, "connect")
        }
        var jsOptions = jsOptions()
        try check(jsOptions_Init(&jsOptions), "jetstream options")
        jsOptions.Wait = 5000
        try check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "jetstream")
    }

    deinit {
        for message in held { natsMsg_Destroy(message) }
        // Destroyed without unsubscribing: the durable consumer stays on the server, at its position.
        if let subscription { natsSubscription_Destroy(subscription) }
        if let jetStream { jsCtx_Destroy(jetStream) }
        if let connection { natsConnection_Destroy(connection) }
    }

    /// Closes the connection: a fetch under way returns at once (from the signal thread).
    public func close() {
        if let connection { natsConnection_Close(connection) }
    }

    public var isClosed: Bool { connection.map { natsConnection_IsClosed($0) } ?? true }

    /// Binds the stream and the durable consumer (creating either when missing).
    private func subscribe() throws(NatsError) -> OpaquePointer {
        if let subscription { return subscription }
        try ensureTelemetryStream(jetStream, name: configuration.stream, replicas: configuration.replicas)
        var subOptions = jsSubOptions()
        jsSubOptions_Init(&subOptions)
        var code = jsErrCode(0)
        var made: OpaquePointer?
        let status = configuration.stream.withCString { stream in
            configuration.consumer.withCString { durable in
                subOptions.Stream = stream
                subOptions.Config.Durable = durable
                subOptions.Config.AckPolicy = js_AckExplicit
                subOptions.Config.DeliverPolicy = js_DeliverAll
                subOptions.Config.AckWait = Self.ackWaitSeconds * 1_000_000_000
                subOptions.Config.MaxAckPending = Int64(configuration.batch * 4)
                return js_PullSubscribe(
                    &made, jetStream, TelemetryConfiguration.subjectPrefix + "*", durable, nil, &subOptions, &code)
            }
        }
        guard status == NATS_OK, let made else { throw NatsError(status, "consumer \(configuration.consumer)") }
        subscription = made
        return made
    }

    /// Waits up to `timeout` for reports, at most `configuration.batch` of them: the server holds the pull
    /// request until reports come or it expires (no wake-up in between). Empty when none came.
    public func fetch(timeout: Duration) throws(NatsError) -> [FleetMessage] {
        releaseHeld()
        let subscription = try subscribe()
        var list = natsMsgList()
        var code = jsErrCode(0)
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        let status = natsSubscription_Fetch(&list, subscription, Int32(configuration.batch), milliseconds, &code)
        if status == NATS_TIMEOUT { return [] }
        guard status == NATS_OK else {
            // Bound again at the next fetch (the consumer may have been deleted, the stream made again).
            if status != NATS_CONNECTION_CLOSED {
                natsSubscription_Destroy(subscription)
                self.subscription = nil
            }
            throw NatsError(status, "fetch")
        }
        var messages: [FleetMessage] = []
        for i in 0..<Int(list.Count) {
            guard let message = list.Msgs[i] else { continue }
            list.Msgs[i] = nil
            held.append(message)
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            var streamSeq: UInt64 = 0
            if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                streamSeq = meta.pointee.Sequence.Stream
                jsMsgMetaData_Destroy(meta)
            }
            let count = Int(natsMsg_GetDataLength(message))
            let bytes: [UInt8] =
                natsMsg_GetData(message).map { data in
                    data.withMemoryRebound(to: UInt8.self, capacity: count) {
                        Array(UnsafeBufferPointer(start: $0, count: count))
                    }
                } ?? []
            let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
            messages.append(FleetMessage(bytes: bytes, streamSeq: streamSeq, subject: subject, message: message))
        }
        natsMsgList_Destroy(&list)
        return messages
    }

    private func releaseHeld() {
        for message in held { natsMsg_Destroy(message) }
        held = []
    }
}
