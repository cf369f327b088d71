// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

/// The stream's answer to an asynchronous publish, copied out of libnats's memory on its thread.
struct PublishAnswer: Equatable, Sendable {
    /// The publish's message id (`Nats-Msg-Id`): which report it answers.
    var messageId: String
    enum Result: Equatable, Sendable {
        /// The stream holds it; `duplicate`: it already did (a message of that id within its window).
        case stored(duplicate: Bool)
        /// Refused or not taken: the library's status, JetStream's error code (0 when none) and words.
        case failed(status: natsStatus, code: Int, text: String)
    }
    var result: Result
}

/// libnats's `jsPubAckHandler`: called on the thread of the context's reply subscription for each
/// asynchronous publish, with the stream's ack or why there is none. It hands the answer to the loop
/// (``NatsEvents``, which writes the loop's eventfd) and frees the message, as the handler must.
let publishAnswered: jsPubAckHandler = { _, message, ack, failure, closure in
    defer { natsMsg_Destroy(message) }
    guard let events = NatsEvents.of(closure) else { return }
    var id: UnsafePointer<CChar>?
    let messageId =
        message.map { natsMsgHeader_Get($0, "Nats-Msg-Id", &id) == NATS_OK } == true ? id.map { String(cString: $0) } ?? "" : ""
    if let ack {
        events.answered(PublishAnswer(messageId: messageId, result: .stored(duplicate: ack.pointee.Duplicate)))
    } else {
        let status = failure?.pointee.Err ?? NATS_ERR
        let text = failure?.pointee.ErrText.map { String(cString: $0) } ?? String(cString: natsStatus_GetText(status))
        events.answered(
            PublishAnswer(
                messageId: messageId,
                result: .failed(status: status, code: Int(failure?.pointee.ErrCode.rawValue ?? 0), text: text)))
    }
}

extension NatsKV {
    /// On the worker.
    func ensureTelemetryStream(_ telemetry: TelemetryConfiguration, replicas: Int) throws(NatsError) {
        try SnapbackSync.ensureTelemetryStream(jetStream, name: telemetry.stream, replicas: replicas)
    }

    /// Publishes one report without waiting for the stream: the library copies it into the connection's
    /// buffer and returns; the ack (or why there is none) comes to ``publishAnswered`` on libnats's
    /// thread, which keeps it for the loop (``NatsEvents/answered(_:)``). No time limit is given to the library (its ack timer would wake the
    /// process once more for every report): the reporter waits until its next report is made, or the
    /// connection is lost, then takes the publish back (``takeBackPublishes()``).
    func publishReportAsync(subject: String, _ bytes: [UInt8], messageId: String) throws(NatsError) {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        let status = messageId.withCString { id in
            options.MsgId = id
            return bytes.withUnsafeBytes { raw in
                js_PublishAsync(jetStream, subject, raw.baseAddress, Int32(clamping: raw.count), &options)
            }
        }
        guard status == NATS_OK else { throw NatsError(status, "publish \(subject)") }
    }

    /// Takes back the asynchronous publishes the stream has not answered (their answers, if they come,
    /// are then dropped by the library); how many there were.
    @discardableResult
    func takeBackPublishes() -> Int {
        guard let jetStream else { return 0 }
        var list = natsMsgList()
        guard js_PublishAsyncGetPendingList(&list, jetStream) == NATS_OK else { return 0 }
        let count = Int(list.Count)
        natsMsgList_Destroy(&list)
        return count
    }
}

/// Binds the telemetry stream, or creates it with ``TelemetryConfiguration``'s limits when it does not
/// exist (created only then: on an existing stream, creating sends an update, which a box's permissions
/// should refuse). The agent and snapback-fleet both call it: either may start first.
package func ensureTelemetryStream(_ jetStream: OpaquePointer?, name stream: String, replicas: Int) throws(NatsError) {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var code = jsErrCode(0)
    var status = js_GetStreamInfo(&info, jetStream, stream, nil, &code)
    if let info { jsStreamInfo_Destroy(info) }
    if status == NATS_OK { return }
    guard status == NATS_NOT_FOUND else { throw NatsError(status, "stream \(stream)") }
    var config = jsStreamConfig()
    jsStreamConfig_Init(&config)
    let subject = strdup(TelemetryConfiguration.subjectPrefix + "*")
    defer { free(subject) }
    var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
    var made: UnsafeMutablePointer<jsStreamInfo>?
    status = stream.withCString { name in
        subjects.withUnsafeMutableBufferPointer { list in
            config.Name = name
            config.Subjects = list.baseAddress
            config.SubjectsLen = 1
            config.Storage = js_FileStorage
            config.Retention = js_LimitsPolicy
            config.Discard = js_DiscardOld
            config.MaxMsgsPerSubject = TelemetryConfiguration.maxMessagesPerBox
            config.MaxAge = TelemetryConfiguration.maxAgeSeconds * 1_000_000_000
            config.MaxBytes = TelemetryConfiguration.maxBytes
            config.MaxMsgSize = TelemetryConfiguration.maxReportBytes
            config.Duplicates = TelemetryConfiguration.duplicateWindowSeconds * 1_000_000_000
            config.Replicas = Int64(replicas)
            return js_AddStream(&made, jetStream, &config, nil, &code)
        }
    }
    if let made { jsStreamInfo_Destroy(made) }
    // Another box created it first.
    if status != NATS_OK, code == jsErrCode(10058) { return }
    guard status == NATS_OK else { throw NatsError(status, "create stream \(stream)") }
}
