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

    public init(contentId: String, profile: String = "", contentTime: Double, streamTime: Double,
                streamId: String = "", updatedAt: Double = 0, finished: Bool = false) {
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
    func proto(_ arena: CArena) -> Snapback__V1__Bookmark {
        var m = Snapback__V1__Bookmark()
        snapback__v1__bookmark__init(&m)
        m.content_id = arena.string(contentId)
        m.profile = arena.string(profile)
        m.content_time = contentTime
        m.stream_time = streamTime
        m.stream_id = arena.string(streamId)
        m.updated_at = updatedAt
        m.finished = ProtoC.cBool(finished)
        return m
    }

    init(proto m: Snapback__V1__Bookmark) throws(WireError) {
        self.init(contentId: try ProtoC.string(m.content_id, "content_id"), profile: try ProtoC.string(m.profile, "profile"),
                  contentTime: m.content_time, streamTime: m.stream_time, streamId: try ProtoC.string(m.stream_id, "stream_id"),
                  updatedAt: m.updated_at, finished: ProtoC.bool(m.finished))
    }

    @discardableResult
    public func encode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        var m = proto(arena)
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> WireBookmark {
        try ProtoC.unpack(body, "snapback.v1.Bookmark", snapback__v1__bookmark__unpack,
                          snapback__v1__bookmark__free_unpacked) { m throws(WireError) in
            try WireBookmark(proto: m.pointee)
        }
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
        let arena = CArena()
        var m = Snapback__V1__ListBookmarksReply()
        snapback__v1__list_bookmarks_reply__init(&m)
        if !bookmarks.isEmpty {
            let items = arena.allocate(Snapback__V1__Bookmark.self, count: bookmarks.count)
            let pointers = arena.allocate(UnsafeMutablePointer<Snapback__V1__Bookmark>?.self, count: bookmarks.count)
            for (i, b) in bookmarks.enumerated() {
                (items + i).initialize(to: b.proto(arena))
                (pointers + i).initialize(to: items + i)
            }
            m.n_bookmarks = bookmarks.count
            m.bookmarks = pointers
        }
        m.next_page_token = arena.string(nextPageToken)
        return withExtendedLifetime(arena) { ProtoC.append(&m, to: &out) }
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ListBookmarksReply {
        try ProtoC.unpack(body, "snapback.v1.ListBookmarksReply", snapback__v1__list_bookmarks_reply__unpack,
                          snapback__v1__list_bookmarks_reply__free_unpacked) { p throws(WireError) in
            let m = p.pointee
            var bookmarks: [WireBookmark] = []
            if let list = m.bookmarks {
                bookmarks.reserveCapacity(m.n_bookmarks)
                for i in 0..<m.n_bookmarks {
                    if let b = list[i] { bookmarks.append(try WireBookmark(proto: b.pointee)) }
                }
            }
            return ListBookmarksReply(bookmarks: bookmarks, nextPageToken: try ProtoC.string(m.next_page_token, "next_page_token"))
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
        var m = Snapback__V1__DeleteBookmarkReply()
        snapback__v1__delete_bookmark_reply__init(&m)
        m.deleted = ProtoC.cBool(deleted)
        return ProtoC.append(&m, to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> DeleteBookmarkReply {
        try ProtoC.unpack(body, "snapback.v1.DeleteBookmarkReply", snapback__v1__delete_bookmark_reply__unpack,
                          snapback__v1__delete_bookmark_reply__free_unpacked) { m throws(WireError) in
            DeleteBookmarkReply(deleted: ProtoC.bool(m.pointee.deleted))
        }
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
        var m = Snapback__V1__ClearBookmarksReply()
        snapback__v1__clear_bookmarks_reply__init(&m)
        m.deleted = deleted
        return ProtoC.append(&m, to: &out)
    }

    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> ClearBookmarksReply {
        try ProtoC.unpack(body, "snapback.v1.ClearBookmarksReply", snapback__v1__clear_bookmarks_reply__unpack,
                          snapback__v1__clear_bookmarks_reply__free_unpacked) { m throws(WireError) in
            ClearBookmarksReply(deleted: m.pointee.deleted)
        }
    }
}
