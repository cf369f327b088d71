// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

// The operator's side of the Control service: ListSessions, GetSession and the WatchDecisions stream,
// whose messages are the generated `SnapbackV1.ListSessionsReply`, `SessionInfo` and `Decision`. Mapped
// by hand here, where a domain type is not the message's shape: the decision a timeline action stands
// for, and `DecisionKind`, the Swift twin of the proto's DecisionKind (`ProtoEnum`).

/// `snapback.v1.DecisionKind`: which action a decision was; the raw value is its kebab-case name.
public enum DecisionKind: String, Sendable, Equatable, CaseIterable {
    case seek, breakWatched = "break-watched", breakCompleted = "break-completed", playBreak = "play-break"
    case allAdsCompleted = "all-ads-completed", saveBookmark = "save-bookmark", clearBookmark = "clear-bookmark"
    case breakSkipped = "break-skipped"
}

extension SnapbackV1.Decision {
    /// The decision a timeline action stands for, its `seq` left 0; nil for the timers, which are the
    /// daemon's own business.
    public init?(
        _ action: TimelineAction, sessionId: UInt64, contentId: String, streamId: String, profile: String,
        at: Double
    ) {
        self.init(
            sessionId: sessionId, contentId: contentId, streamId: streamId, profile: profile, at: at,
            reason: action.reason.description)
        let kind: DecisionKind
        switch action.kind {
        case .seek(let to, let why):
            kind = .seek
            (streamTime, seekReason) = (to, why.proto)
        case .breakWatched(let id): (kind, breakId) = (.breakWatched, id)
        case .breakCompleted(let id): (kind, breakId) = (.breakCompleted, id)
        case .playBreak(let id): (kind, breakId) = (.playBreak, id)
        case .allAdsCompleted: kind = .allAdsCompleted
        case .saveBookmark(let c, let s, let trigger):
            kind = .saveBookmark
            (contentTime, streamTime, bookmarkTrigger) = (c, s, trigger.proto)
        case .clearBookmark: kind = .clearBookmark
        case .breakSkipped(let id, let why):
            kind = .breakSkipped
            (breakId, skipReason) = (id, why.proto)
        case .scheduleTimer, .cancelTimer, .noEffect:
            return nil
        }
        self.kind = kind.proto
    }
}
