// SPDX-License-Identifier: Apache-2.0
import SnapbackClient
import SnapbackTimeline
import SnapbackWire
import Testing

/// Player-side helpers for the RPC tests: a connected client and the seeds' stream.
extension DaemonHarness {
    /// A client that has done the Hello exchange.
    func player(_ name: String = "test-player") throws -> SnapbackClient {
        try SnapbackClient(socketPath: socketPath, clientName: name)
    }
}

enum Streams {
    /// A 30-minute program with one unwatched mid-roll of 60 s at stream 600 (the seeds' break at 10:00).
    static func seed(
        contentId: String = "seed", profile: String = "", useBookmark: Bool = false,
        breaks: [AdBreak] = [AdBreak(id: "b1", start: 600, duration: 60)],
        overrides: PolicyOverrides = PolicyOverrides()
    ) -> OpenSessionRequest {
        OpenSessionRequest(
            streamId: "stream-\(contentId)", contentId: contentId, profile: profile, kind: .onDemand,
            breaks: breaks, contentDuration: 1800, preset: .snapback, overrides: overrides,
            resume: SnapbackV1.ResumeOptions(useBookmark: useBookmark))
    }
}

extension Array where Element == WirePushMessage {
    var seeks: [(Double, SeekReason?)] {
        compactMap { if case .seek(let t, let r) = $0.kind { return (t, r) } else { return nil } }
    }
    var seekTargets: [Double] { seeks.map(\.0) }
    var savedBookmarks: [Double] {
        compactMap { if case .bookmarkSaved(let c, _, _) = $0.kind { return c } else { return nil } }
    }
    var watchedBreaks: [String] {
        compactMap { if case .breakWatched(let id) = $0.kind { return id } else { return nil } }
    }
}
