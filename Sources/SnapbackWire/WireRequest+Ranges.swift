// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline

/// Every number of a request checked against its range (`Limits`, documented in PROTOCOL.md "Ranges")
/// where it enters the daemon, and refused with INVALID_ARGUMENT naming the proto field. The timeline
/// checks again, but a player should hear which field of its request was wrong, in the field's own name.
extension WireRequest {
    func checkRanges() throws(WireError) {
        switch self {
        case .event(_, let event):
            try Self.checkRanges(event)
        case .openSession(let open):
            try Self.checkRanges(open)
        case .contentTimeForStreamTime(let m):
            try Self.check(m.streamTime, Limits.position, "stream_time")
        case .breakAt(let m):
            try Self.check(m.streamTime, Limits.position, "stream_time")
        case .streamTimeForContentTime(let m):
            try Self.check(m.contentTime, Limits.position, "content_time")
        case .hello, .getStatus, .listSessions, .getSession, .watchDecisions, .getMetrics, .closeSession, .getSessionState,
            .getBookmark,
            .listBookmarks, .deleteBookmark,
            .clearBookmarks, .watchChanges, .merge:
            // No numbers, or none that can go wrong: page_size is capped by the server; a merge's records
            // are checked as they are decoded (`SyncMerge`).
            return
        }
    }

    static func checkRanges(_ event: TimelineEvent) throws(WireError) {
        switch event {
        case .playheadReported(let t, let rate, _):
            try check(t, Limits.position, "stream_time")
            try check(rate, Limits.rate, "rate")
        case .seekStarted(let from):
            try check(from, Limits.position, "from_stream_time")
        case .seekEnded(let from, let to):
            try check(from, Limits.position, "from_stream_time")
            try check(to, Limits.position, "to_stream_time")
        case .adStarted(_, let index, let t), .adEnded(_, let index, let t):
            try check(index, Limits.adIndex, "index")
            if let t { try check(t, Limits.position, "stream_time") }
        case .adBreakStarted(_, let t), .adBreakEnded(_, let t):
            if let t { try check(t, Limits.position, "stream_time") }
        case .trickPlayStarted(let t, let rate):
            try check(t, Limits.position, "stream_time")
            try check(rate, Limits.rate, "rate")
        case .trickPlayEnded(let t), .paused(let t):
            try check(t, Limits.position, "stream_time")
        case .breaksChanged(.breaks(let breaks)):
            try checkRanges(breaks)
        case .breaksChanged(.midrollTimes(let times)):
            if times.count > Limits.adRulesMidrolls {
                throw .tooLarge("midroll_times: \(times.count) times, above \(Limits.adRulesMidrolls)")
            }
            for (i, t) in times.enumerated() { try check(t, Limits.position, "midroll_times[\(i)]") }
        case .contentCompleted, .closed, .playerDisconnected, .timerFired:
            return
        }
    }

    static func checkRanges(_ open: OpenSessionRequest) throws(WireError) {
        try checkRanges(open.breaks)
        if let d = open.contentDuration { try check(d, Limits.duration, "content_duration") }
        if let t = open.resume.resumeContentTime { try check(t, Limits.position, "resume.resume_content_time") }
        if let t = open.resume.resumeStreamTime { try check(t, Limits.position, "resume.resume_stream_time") }
        if let rules = open.adRules {
            for (i, t) in rules.midrollTimes.enumerated() {
                try check(t, Limits.position, "ad_rules.midroll_times[\(i)]")
            }
            try check(rules.midrollEvery, Limits.duration, "ad_rules.midroll_every")
            try check(rules.breakDuration, Limits.duration, "ad_rules.break_duration")
        }
        try checkRanges(open.overrides)
    }

    /// Every overridden number within its field's range (`AdPolicy.fields`).
    static func checkRanges(_ overrides: PolicyOverrides) throws(WireError) {
        for field in overrides.fields {
            switch field.kind {
            case .seconds(let k, let limit):
                try check(overrides.values[keyPath: k], limit, "policy_overrides.\(field.protoName)")
            case .count(let k, let range, _):
                try check(overrides.values[keyPath: k], range, "policy_overrides.\(field.protoName)")
            case .flag, .choice:
                continue
            }
        }
    }

    static func checkRanges(_ breaks: [AdBreak]) throws(WireError) {
        for (i, b) in breaks.enumerated() {
            try check(b.start, Limits.position, "breaks[\(i)].start")
            try check(b.duration, Limits.duration, "breaks[\(i)].duration")
            for (j, d) in b.adDurations.enumerated() {
                try check(d, Limits.duration, "breaks[\(i)].ad_durations[\(j)]")
            }
            if let o = b.contentResumeOffset { try check(o, Limits.contentResumeOffset, "breaks[\(i)].content_resume_offset") }
        }
    }

    @inline(__always)
    static func check(_ value: Double, _ limit: Limit, _ field: @autoclosure () -> String) throws(WireError) {
        guard limit.contains(value) else { throw .invalidArgument("\(field()) must be \(limit.text) (got \(value))") }
    }

    static func check(_ value: Int, _ range: ClosedRange<Int>, _ field: String) throws(WireError) {
        guard range.contains(value) else {
            throw .invalidArgument("\(field) must be from \(range.lowerBound) to \(range.upperBound) (got \(value))")
        }
    }
}
