// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackCLI
import SnapbackClient
import SnapbackTimeline
import SnapbackWire

/// Connects and says Hello. With `retryFor`, a socket that does not exist yet or refuses (a daemon still
/// starting) is retried until then.
public func connect(_ path: String, clientName: String, retryFor seconds: Double = 0) throws -> SnapbackClient {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
    while true {
        do {
            return try SnapbackClient(socketPath: path, clientName: clientName)
        } catch {
            if case .socket(.system(let call, let code)) = error, call.hasPrefix("connect"),
                code == ENOENT || code == ECONNREFUSED, clock.now < deadline
            {
                usleep(20_000)
                continue
            }
            throw CommandError("cannot talk to snapbackd on \(path): \(error)")
        }
    }
}

extension SeekReason {
    var name: String { rawValue }
}

extension BookmarkTrigger {
    var name: String { rawValue }
}

/// A push in one line: `push #2 seek to 10:00 (snapback): seek 300→900 skipped unwatched break b1 at 600`.
public func describe(_ push: WirePushMessage) -> String {
    let what: String
    switch push.kind {
    case .seek(let to, let reason):
        what = "seek to \(clock(to)) (\(reason?.name ?? "unknown reason"))"
    case .breakWatched(let id):
        what = "break \(id) watched"
    case .bookmarkSaved(let contentTime, let streamTime, let trigger):
        what =
            "bookmark saved: content \(clock(contentTime)) = stream \(clock(streamTime)) (\(trigger?.name ?? "unknown trigger"))"
    case .bookmarkCleared:
        what = "bookmark cleared"
    case .playBreak(let id):
        what = "play break \(id)"
    case .breakSkipped(let id, let why):
        what = "break \(id) skipped (\(why?.rawValue ?? "unknown reason"))"
    case .allAdsCompleted:
        what = "all ads completed"
    case .sessionError(let code, let message):
        what = "session error \(code.name): \(message)"
    case .unknown:
        what = "(a push kind this client does not know)"
    }
    return "push #\(push.seq) \(what)" + (push.reason.isEmpty ? "" : ": \(push.reason)")
}

/// The position an ad event carries, as its description shows it.
private func at(_ t: Double?) -> String { t.map { " at \(clock($0))" } ?? "" }

/// An event as the player would name the call: `SeekEnded 5:00 → 15:00`.
public func describe(_ event: TimelineEvent) -> String {
    switch event {
    case .playheadReported(let t, let rate, let playing):
        return "ReportPlayhead \(clock(t)) \(playing ? "playing" : "not playing")" + (rate == 1 ? "" : " at \(rate)×")
    case .seekStarted(let from): return "SeekStarted \(clock(from))"
    case .seekEnded(let from, let to): return "SeekEnded \(clock(from)) → \(clock(to))"
    case .adBreakStarted(let id, let t): return "AdBreakStarted \(id)" + at(t)
    case .adBreakEnded(let id, let t): return "AdBreakEnded \(id)" + at(t)
    case .adStarted(let id, let index, let t): return "AdStarted \(id) #\(index)" + at(t)
    case .adEnded(let id, let index, let t): return "AdEnded \(id) #\(index)" + at(t)
    case .trickPlayStarted(let t, let rate): return "TrickPlayStarted \(clock(t)) at \(rate)×"
    case .trickPlayEnded(let t): return "TrickPlayEnded \(clock(t))"
    case .contentCompleted: return "ContentComplete"
    case .breaksChanged(.breaks(let breaks)): return "UpdateBreaks (\(breaks.count) breaks)"
    case .breaksChanged(.midrollTimes(let times)): return "UpdateBreaks (\(times.count) mid-roll times)"
    case .paused(let t): return "Pause \(clock(t))"
    case .closed: return "CloseSession"
    case .playerDisconnected: return "(disconnect)"
    case .timerFired(let timer): return "(timer \(timer.rawValue))"
    }
}

/// Equal to the millisecond.
public func same(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 0.001 }
