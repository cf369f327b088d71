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

extension WireBookmark: WireMessage {
    func write(to m: ProtoBuilder) -> ProtoBuilder {
        m.set("content_id", contentId)
        m.set("profile", profile)
        m.set("content_time", contentTime)
        m.set("stream_time", streamTime)
        m.set("stream_id", streamId)
        m.set("updated_at", updatedAt)
        m.set("finished", finished)
        return m
    }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            contentId: try m.string("content_id"), profile: try m.string("profile"),
            contentTime: m.double("content_time"), streamTime: m.double("stream_time"),
            streamId: try m.string("stream_id"), updatedAt: m.double("updated_at"), finished: m.bool("finished"))
    }

    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        write(to: ProtoBuilder(WireMethod.getBookmark.replyDescriptor, arena: CArena())).append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WireBookmark {
        try ProtoC.read(body, WireMethod.getBookmark.replyDescriptor) { m throws(WireError) in try WireBookmark(m) }
    }
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

extension ListBookmarksReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let m = ProtoBuilder(WireMethod.listBookmarks.replyDescriptor, arena: CArena())
        m.set("bookmarks", bookmarks.map { $0.write(to: m.sub("bookmarks")) })
        m.set("next_page_token", nextPageToken)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ListBookmarksReply {
        try ProtoC.read(body, WireMethod.listBookmarks.replyDescriptor) { m throws(WireError) in
            ListBookmarksReply(
                bookmarks: try m.nestedList("bookmarks").map { (b) throws(WireError) in try WireBookmark(b) },
                nextPageToken: try m.string("next_page_token"))
        }
    }
}

/// `snapback.v1.DeleteBookmarkReply`.
public struct DeleteBookmarkReply: Sendable, Equatable {
    /// Whether a bookmark existed and was deleted.
    public var deleted: Bool
    public init(deleted: Bool) { self.deleted = deleted }
}

extension DeleteBookmarkReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let m = ProtoBuilder(WireMethod.deleteBookmark.replyDescriptor, arena: CArena())
        m.set("deleted", deleted)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> DeleteBookmarkReply {
        try ProtoC.read(body, WireMethod.deleteBookmark.replyDescriptor) { m in DeleteBookmarkReply(deleted: m.bool("deleted")) }
    }
}

/// `snapback.v1.ClearBookmarksReply`.
public struct ClearBookmarksReply: Sendable, Equatable {
    /// How many bookmarks were deleted.
    public var deleted: UInt32
    public init(deleted: UInt32) { self.deleted = deleted }
}

extension ClearBookmarksReply: WireMessage {
    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let m = ProtoBuilder(WireMethod.clearBookmarks.replyDescriptor, arena: CArena())
        m.set("deleted", deleted)
        return m.append(to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ClearBookmarksReply {
        try ProtoC.read(body, WireMethod.clearBookmarks.replyDescriptor) { m in ClearBookmarksReply(deleted: m.uint32("deleted"))
        }
    }
}
