// SPDX-License-Identifier: Apache-2.0
/// A viewer's position in a program, saved as content time (ads excluded) so that a later session of the
/// same content — with ads of other lengths — resumes at the same point.
///
/// The store keeps it and the wire carries it (`snapback.v1.Bookmark`): one type here, where the values
/// every module shares live (`AdBreak`, `AdPolicy`), rather than one per module and a copy between them.
public struct Bookmark: Sendable, Equatable {
    /// Whose bookmark: a viewer profile on the box ("" for the default profile).
    public var profile: String
    public var contentId: String
    /// Content time, seconds.
    public var contentTime: Double
    /// The stream time it was taken at, and the stream it came from (for diagnostics only: stream times do
    /// not carry over between streams with other ad layouts).
    public var streamTime: Double
    public var streamId: String
    /// Wall time of the save, seconds since the epoch.
    public var updatedAt: Double
    /// The viewer reached the end: nothing to resume.
    public var finished: Bool

    public init(
        profile: String, contentId: String, contentTime: Double, streamTime: Double, streamId: String,
        updatedAt: Double, finished: Bool = false
    ) {
        self.profile = profile
        self.contentId = contentId
        self.contentTime = contentTime
        self.streamTime = streamTime
        self.streamId = streamId
        self.updatedAt = updatedAt
        self.finished = finished
    }
}
