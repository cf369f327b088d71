// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// A server stream of one call on one connection (Control/WatchDecisions, Sync/WatchChanges). Its pushes
/// are queued only while the reader keeps its connection's queue within `max-watch-queue-bytes`; a reader
/// that does not is dropped — unsubscribed, and its connection closed once what is queued is written — so
/// that it costs the players nothing: it is never waited for, and its backlog is bounded.
protocol PushStream: AnyObject {
    var connection: any PeerPort { get }
    var callId: UInt32 { get }
    /// The stream's rpc: its pushes carry its id.
    static var method: WireMethod { get }
    /// What the log line of a drop calls the reader.
    static var readerName: String { get }
    /// What the log line of a drop adds about what the reader gets back when it comes back.
    var dropNote: String { get }
    /// Removes the stream from `service`'s subscribers.
    func unsubscribe(from service: TimelineService)
}

extension TimelineService {
    /// Queues `body` as a push of `stream`; drops the stream instead when its connection no longer sends
    /// or the push would take its queue past the bound. Returns whether the push was queued.
    func pushOrDrop(_ body: [UInt8], on stream: some PushStream) -> Bool {
        let connection = stream.connection
        let queued = connection.queuedOutboundBytes
        let bound = configuration.maxWatchQueueBytes
        guard connection.canSend, queued + FrameHeader.size + body.count <= bound else {
            dropReader(stream, "\(queued) bytes queued, limit \(bound)")
            return false
        }
        let method = type(of: stream).method
        connection.send(.push(callId: stream.callId, method: method.rawValue), body: body)
        return true
    }

    /// Unsubscribes `stream` and closes its connection once what is queued is written, saying `why`.
    func dropReader(_ stream: some PushStream, _ why: String) {
        stream.unsubscribe(from: self)
        let name = type(of: stream).readerName
        stream.connection.closeAfterFlush(reason: "\(name) not reading: \(why); dropped\(stream.dropNote)", level: .warning)
    }
}
