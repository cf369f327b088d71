import CSnapbackProto
import SnapbackTimeline

// The server side's reply encoders, one per reply message. Each appends the protobuf body to `out` (the
// daemon's per-connection output buffer, after the frame header it reserved) and returns its length.

extension WireReply {
    @discardableResult
    public static func encodeHelloReply(_ reply: HelloReply, into out: inout [UInt8]) -> Int {
        reply.encode(into: &out)
    }

    @discardableResult
    public static func encodeStatusReply(_ reply: StatusReply, into out: inout [UInt8]) -> Int {
        reply.encode(into: &out)
    }

    @discardableResult
    public static func encodeOpenSessionReply(_ reply: OpenSessionReply, into out: inout [UInt8]) -> Int {
        reply.encode(into: &out)
    }

    /// The most bytes an EventReply takes.
    public static let eventReplyBound = WireFastPath.eventReplyBound

    /// The reply to every event, written at the start of `buffer` (at least ``eventReplyBound`` bytes:
    /// a connection's outbound buffer). Returns its length.
    public static func encodeEventReply(lastPushSeq: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        WireFastPath.encodeEventReply(lastPushSeq: lastPushSeq, into: buffer)
    }

    /// The reply to every event: on the hot path, so no allocation beyond `out`'s growth.
    @discardableResult
    public static func encodeEventReply(lastPushSeq: UInt64, into out: inout [UInt8]) -> Int {
        WireFastPath.encodeEventReply(lastPushSeq: lastPushSeq, into: &out)
    }

    @discardableResult
    public static func encodeContentTimeReply(contentTime: Double, into out: inout [UInt8]) -> Int {
        ContentTimeReply(contentTime: contentTime).encode(into: &out)
    }

    @discardableResult
    public static func encodeStreamTimeReply(streamTime: Double, into out: inout [UInt8]) -> Int {
        StreamTimeReply(streamTime: streamTime).encode(into: &out)
    }

    @discardableResult
    public static func encodeBreakAtReply(previous: AdBreak?, next: AdBreak?, into out: inout [UInt8]) -> Int {
        BreakAtReply(previous: previous, next: next).encode(into: &out)
    }

    @discardableResult
    public static func encodeSessionStateReply(_ snapshot: TimelineSnapshot, into out: inout [UInt8]) -> Int {
        SessionStateReply(snapshot).encode(into: &out)
    }

    /// The reply to Bookmarks/Get.
    @discardableResult
    public static func encodeBookmark(_ bookmark: WireBookmark, into out: inout [UInt8]) -> Int {
        bookmark.encode(into: &out)
    }

    @discardableResult
    public static func encodeListBookmarksReply(
        _ bookmarks: [WireBookmark], nextPageToken: String,
        into out: inout [UInt8]
    ) -> Int {
        ListBookmarksReply(bookmarks: bookmarks, nextPageToken: nextPageToken).encode(into: &out)
    }

    @discardableResult
    public static func encodeDeleteBookmarkReply(deleted: Bool, into out: inout [UInt8]) -> Int {
        DeleteBookmarkReply(deleted: deleted).encode(into: &out)
    }

    @discardableResult
    public static func encodeClearBookmarksReply(deleted: UInt32, into out: inout [UInt8]) -> Int {
        ClearBookmarksReply(deleted: deleted).encode(into: &out)
    }
}
