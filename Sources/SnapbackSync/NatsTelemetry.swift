// SPDX-License-Identifier: Apache-2.0
import CNats
import Glibc

extension NatsKV {
    func ensureTelemetryStream(_ telemetry: TelemetryConfiguration, replicas: Int) throws(NatsError) {
        try SnapbackSync.ensureTelemetryStream(jetStream, name: telemetry.stream, replicas: replicas)
    }

    /// Publishes one report and waits for the stream's ack; true when the stream says it already held
    /// a message of that id (a re-publish within its duplicate window).
    func publishReport(subject: String, _ bytes: [UInt8], messageId: String) throws(NatsError) -> Bool {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        let status = messageId.withCString { id in
            options.MsgId = id
            options.MaxWait = 5000
            return bytes.withUnsafeBytes { raw in
                js_Publish(&ack, jetStream, subject, raw.baseAddress, Int32(clamping: raw.count), &options, &code)
            }
        }
        defer { if let ack { jsPubAck_Destroy(ack) } }
        guard status == NATS_OK, let ack else { throw NatsError(status, "publish \(subject)") }
        return ack.pointee.Duplicate
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
