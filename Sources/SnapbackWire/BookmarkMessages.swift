// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.Bookmark`: the store's bookmark, as Bookmarks/Get and List reply with it.
extension Bookmark: ProtoMapped {
    init(proto p: SnapbackV1.Bookmark) {
        self.init(
            profile: p.profile, contentId: p.contentId, contentTime: p.contentTime, streamTime: p.streamTime,
            streamId: p.streamId, updatedAt: p.updatedAt, finished: p.finished)
    }

    var proto: SnapbackV1.Bookmark {
        SnapbackV1.Bookmark(
            contentId: contentId, profile: profile, contentTime: contentTime, streamTime: streamTime, streamId: streamId,
            updatedAt: updatedAt, finished: finished)
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

extension ListBookmarksReply: ProtoMapped {
    init(proto p: SnapbackV1.ListBookmarksReply) {
        self.init(bookmarks: p.bookmarks.map(Bookmark.init(proto:)), nextPageToken: p.nextPageToken)
    }

    var proto: SnapbackV1.ListBookmarksReply {
        SnapbackV1.ListBookmarksReply(bookmarks: bookmarks.map(\.proto), nextPageToken: nextPageToken)
    }
}

/// `snapback.v1.DeleteBookmarkReply`.
public struct DeleteBookmarkReply: Sendable, Equatable {
    /// Whether a bookmark existed and was deleted.
    public var deleted: Bool
    public init(deleted: Bool) { self.deleted = deleted }
}

extension DeleteBookmarkReply: ProtoMapped {
    init(proto p: SnapbackV1.DeleteBookmarkReply) { deleted = p.deleted }
    var proto: SnapbackV1.DeleteBookmarkReply { SnapbackV1.DeleteBookmarkReply(deleted: deleted) }
}

/// `snapback.v1.ClearBookmarksReply`.
public struct ClearBookmarksReply: Sendable, Equatable {
    /// How many bookmarks were deleted.
    public var deleted: UInt32
    public init(deleted: UInt32) { self.deleted = deleted }
}

extension ClearBookmarksReply: ProtoMapped {
    init(proto p: SnapbackV1.ClearBookmarksReply) { deleted = p.deleted }
    var proto: SnapbackV1.ClearBookmarksReply { SnapbackV1.ClearBookmarksReply(deleted: deleted) }
}
