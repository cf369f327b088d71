import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.Bookmark`: the store's bookmark, as Bookmarks/Get and List reply with it.
extension Bookmark: ProtoMessage {
    static var descriptor: ProtoDescriptor { WireMethod.getBookmark.replyDescriptor }

    init(_ m: ProtoReader) throws(WireError) {
        self.init(
            profile: try m.string("profile"), contentId: try m.string("content_id"),
            contentTime: m.double("content_time"), streamTime: m.double("stream_time"),
            streamId: try m.string("stream_id"), updatedAt: m.double("updated_at"), finished: m.bool("finished"))
    }

    func write(to m: ProtoBuilder) {
        m.set("profile", profile)
        m.set("content_id", contentId)
        m.set("content_time", contentTime)
        m.set("stream_time", streamTime)
        m.set("stream_id", streamId)
        m.set("updated_at", updatedAt)
        m.set("finished", finished)
    }

}

/// `snapback.v1.ListBookmarksReply`: one page of a profile's bookmarks.
public struct ListBookmarksReply: Sendable, Equatable {
    public var bookmarks: [Bookmark]
    /// "" on the last page.
    public var nextPageToken: String

    public init(bookmarks: [Bookmark], nextPageToken: String = "") {
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
}
