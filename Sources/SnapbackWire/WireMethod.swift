// SPDX-License-Identifier: Apache-2.0
/// The services of the snapback protocol, by the id that forms the high byte of a method id.
public enum WireService: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case control = 0
    case timeline = 1
    case bookmarks = 2
    case sync = 3

    /// The fully qualified service name: "snapback.v1.Timeline".
    public var name: String {
        switch self {
        case .control: return "snapback.v1.Control"
        case .timeline: return "snapback.v1.Timeline"
        case .bookmarks: return "snapback.v1.Bookmarks"
        case .sync: return "snapback.v1.Sync"
        }
    }

    public var description: String { name }
}

/// Every method of the protocol, by the id carried in the frame header's `method` field:
/// `service_id << 8 | method_index`, where `method_index` is the 0-based position of the rpc in its service
/// declaration in `proto/snapback/v1/*.proto`. `WireMethod(rawValue:)` returns nil for an id the server
/// does not know (answered UNIMPLEMENTED).
public enum WireMethod: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    // snapback.v1.Control (service 0)
    case hello = 0x0000
    case getStatus = 0x0001
    case listSessions = 0x0002
    case getSession = 0x0003
    case watchDecisions = 0x0004

    // snapback.v1.Timeline (service 1)
    case openSession = 0x0100
    case reportPlayhead = 0x0101
    case seekStarted = 0x0102
    case seekEnded = 0x0103
    case adBreakStarted = 0x0104
    case adBreakEnded = 0x0105
    case adStarted = 0x0106
    case adEnded = 0x0107
    case trickPlayStarted = 0x0108
    case trickPlayEnded = 0x0109
    case contentComplete = 0x010A
    case updateBreaks = 0x010B
    case pause = 0x010C
    case closeSession = 0x010D
    case contentTimeForStreamTime = 0x010E
    case streamTimeForContentTime = 0x010F
    case breakAt = 0x0110
    case getSessionState = 0x0111

    // snapback.v1.Bookmarks (service 2)
    case getBookmark = 0x0200
    case listBookmarks = 0x0201
    case deleteBookmark = 0x0202
    case clearBookmarks = 0x0203

    // snapback.v1.Sync (service 3)
    case watchChanges = 0x0300
    case merge = 0x0301

    /// The method with this index in this service, if there is one.
    public init?(service: WireService, index: UInt8) {
        self.init(rawValue: UInt16(service.rawValue) << 8 | UInt16(index))
    }

    public var service: WireService {
        // Every case's high byte is a service id: checked by the tests against the generated descriptors.
        WireService(rawValue: UInt8(truncatingIfNeeded: rawValue >> 8))!
    }

    /// The 0-based position of the rpc in its service.
    public var index: UInt8 { UInt8(truncatingIfNeeded: rawValue) }

    /// Whether the method is a session event (ReportPlayhead … CloseSession): it answers `EventReply`.
    public var isEvent: Bool { rawValue >= WireMethod.reportPlayhead.rawValue && rawValue <= WireMethod.closeSession.rawValue }

    /// The rpc's name in its service: "SeekEnded".
    public var methodName: String {
        switch self {
        case .hello: return "Hello"
        case .getStatus: return "GetStatus"
        case .listSessions: return "ListSessions"
        case .getSession: return "GetSession"
        case .watchDecisions: return "WatchDecisions"
        case .openSession: return "OpenSession"
        case .reportPlayhead: return "ReportPlayhead"
        case .seekStarted: return "SeekStarted"
        case .seekEnded: return "SeekEnded"
        case .adBreakStarted: return "AdBreakStarted"
        case .adBreakEnded: return "AdBreakEnded"
        case .adStarted: return "AdStarted"
        case .adEnded: return "AdEnded"
        case .trickPlayStarted: return "TrickPlayStarted"
        case .trickPlayEnded: return "TrickPlayEnded"
        case .contentComplete: return "ContentComplete"
        case .updateBreaks: return "UpdateBreaks"
        case .pause: return "Pause"
        case .closeSession: return "CloseSession"
        case .contentTimeForStreamTime: return "ContentTimeForStreamTime"
        case .streamTimeForContentTime: return "StreamTimeForContentTime"
        case .breakAt: return "BreakAt"
        case .getSessionState: return "GetSessionState"
        case .getBookmark: return "Get"
        case .listBookmarks: return "List"
        case .deleteBookmark: return "Delete"
        case .clearBookmarks: return "Clear"
        case .watchChanges: return "WatchChanges"
        case .merge: return "Merge"
        }
    }

    /// The fully qualified name, gRPC style: "snapback.v1.Timeline/SeekEnded".
    public var name: String { service.name + "/" + methodName }

    public var description: String { name }
}
