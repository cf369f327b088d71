import CSnapbackProto

/// `snapback.v1.Bookmark`. (Named apart from the store's own bookmark type.)
public struct WireBookmark: Sendable, Equatable {
    public var contentId: String
    public var profile: String
    /// Content time (ads excluded) to resume at.
    public var contentTime: Double
    /// Stream time the bookmark was taken at, in `streamId`.
    public var streamTime: Double
    public var streamId: String
    /// Wall time of the last update, unix seconds.
    public var updatedAt: Double
    public var finished: Bool

    public init(
        contentId: String, profile: String = "", contentTime: Double, streamTime: Double,
        streamId: String = "", updatedAt: Double = 0, finished: Bool = false
    ) {
        self.contentId = contentId
        self.profile = profile
        self.contentTime = contentTime
        self.streamTime = streamTime
        self.streamId = streamId
        self.updatedAt = updatedAt
        self.finished = finished
    }
}

extension WireBookmark: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.getBookmark.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            contentId: try m.string("content_id"), profile: try m.string("profile"),
            contentTime: m.double("content_time"), streamTime: m.double("stream_time"),
            streamId: try m.string("stream_id"), updatedAt: m.double("updated_at"), finished: m.bool("finished"))
    }

    func write(to m: ProtoBuilder) {
        m.set("content_id", contentId)
        m.set("profile", profile)
        m.set("content_time", contentTime)
        m.set("stream_time", streamTime)
        m.set("stream_id", streamId)
        m.set("updated_at", updatedAt)
        m.set("finished", finished)
    }

    @discardableResult public func encode(into out: inout [UInt8]) -> Int { encodeFields(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self { try decodeFields(body) }
}

/// `snapback.v1.ListBookmarksReply`: one page of a profile's bookmarks.
public struct ListBookmarksReply: Sendable, Equatable {
    public var bookmarks: [WireBookmark]
    /// "" on the last page.
    public var nextPageToken: String

    public init(bookmarks: [WireBookmark], nextPageToken: String = "") {
        self.bookmarks = bookmarks
        self.nextPageToken = nextPageToken
    }
}

extension ListBookmarksReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.listBookmarks.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(bookmarks: try m.messages("bookmarks"), nextPageToken: try m.string("next_page_token"))
    }

    func write(to m: ProtoBuilder) {
        m.set("bookmarks", bookmarks)
        m.set("next_page_token", nextPageToken)
    }

    @discardableResult public func encode(into out: inout [UInt8]) -> Int { encodeFields(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self { try decodeFields(body) }
}

/// `snapback.v1.DeleteBookmarkReply`.
public struct DeleteBookmarkReply: Sendable, Equatable {
    /// Whether a bookmark existed and was deleted.
    public var deleted: Bool
    public init(deleted: Bool) { self.deleted = deleted }
}

extension DeleteBookmarkReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.deleteBookmark.replyDescriptor }
    init(_ m: ProtoReader) { deleted = m.bool("deleted") }
    func write(to m: ProtoBuilder) { m.set("deleted", deleted) }
    @discardableResult public func encode(into out: inout [UInt8]) -> Int { encodeFields(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self { try decodeFields(body) }
}

/// `snapback.v1.ClearBookmarksReply`.
public struct ClearBookmarksReply: Sendable, Equatable {
    /// How many bookmarks were deleted.
    public var deleted: UInt32
    public init(deleted: UInt32) { self.deleted = deleted }
}

extension ClearBookmarksReply: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.clearBookmarks.replyDescriptor }
    init(_ m: ProtoReader) { deleted = m.uint32("deleted") }
    func write(to m: ProtoBuilder) { m.set("deleted", deleted) }
    @discardableResult public func encode(into out: inout [UInt8]) -> Int { encodeFields(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self { try decodeFields(body) }
}
