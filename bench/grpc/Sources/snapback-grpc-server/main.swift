// SPDX-License-Identifier: Apache-2.0
import Glibc
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SnapbackGRPCProto
import SnapbackTimeline
import Synchronization

// snapback-grpc-server SOCKET: the gRPC-Swift-2 server `make bench-grpc` measures beside snapbackd. It
// answers TimelineBench/SeekEnded as snapbackd answers SeekEnded on the bench's session: the same
// timeline (SnapbackTimeline, the snapback preset with seeks inside the unwatched break allowed and the
// loop guard at its limit, so that every SeekEnded 5:00 → 15:00 snaps back to 10:00), the push with its
// reason and the reply — here both in one unary answer, over HTTP/2 on a Unix socket.

/// The one session, as `snapback-bench daemon` opens it on snapbackd (`openSnapbackSession`).
func benchSession() throws -> TimelineSession {
    var policy = AdPolicy.snapback
    policy.refuseSeeksDuringUnwatchedBreak = false
    policy.maxSnapbacksPerBreak = Limits.snapbacksPerBreak.upperBound
    var session = try TimelineSession(SessionConfiguration(
        kind: .onDemand, contentDuration: 1800, breaks: [AdBreak(id: "b1", start: 600, duration: 30)], policy: policy))
    // Opened as snapbackd's OpenSession opens it: a session not opened refuses every event. No bookmark
    // and no pre-roll, so the opening decides nothing.
    var opening: [TimelineAction] = []
    session.opened(at: wallSeconds(), into: &opening)
    return session
}

/// The session's id, as snapbackd numbers the first session of a connection.
let benchSessionID: UInt64 = 1

func wallSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

extension Snapback_V1_SeekReason {
    init(_ reason: SeekReason) {
        switch reason {
        case .snapback: self = .snapback
        case .resumeAfterSnapback: self = .resumeAfterSnapback
        case .resumeFromBookmark: self = .resumeFromBookmark
        case .breakBeforeResume: self = .breakBeforeResume
        case .skipWatchedBreak: self = .skipWatchedBreak
        case .skipDuringCooldown: self = .skipDuringCooldown
        case .skipDisabledBreak: self = .skipDisabledBreak
        case .startOfBreak: self = .startOfBreak
        case .seekRefusedDuringAd: self = .seekRefusedDuringAd
        }
    }
}

/// The session and its push counter, behind a lock: gRPC-Swift runs handlers on the concurrency pool.
struct BenchState: ~Copyable {
    var session: TimelineSession
    var seq: UInt64 = 0
    var actions: [TimelineAction] = []
}

final class TimelineBenchService: Snapback_Bench_V1_TimelineBench.SimpleServiceProtocol {
    private let state: Mutex<BenchState>

    init() throws { state = Mutex(BenchState(session: try benchSession())) }

    func seekEnded(request: Snapback_V1_SeekEndedRequest, context: ServerContext) async throws
        -> Snapback_Bench_V1_SeekEndedAnswer
    {
        guard request.sessionID == benchSessionID else {
            throw RPCError(code: .notFound, message: "no session \(request.sessionID)")
        }
        let event = TimelineEvent.seekEnded(from: request.fromStreamTime, to: request.toStreamTime)
        let now = wallSeconds()
        return try state.withLock { state throws(RPCError) -> Snapback_Bench_V1_SeekEndedAnswer in
            state.actions.removeAll(keepingCapacity: true)
            do {
                try state.session.handle(event, at: now, into: &state.actions)
            } catch {
                throw RPCError(code: .invalidArgument, message: "\(error)")
            }
            var answer = Snapback_Bench_V1_SeekEndedAnswer()
            // Only seeks are pushed on this path (the snapback neither saves a bookmark nor marks a break).
            for action in state.actions {
                guard case .seek(let to, let reason) = action.kind else { continue }
                state.seq += 1
                var push = Snapback_V1_Push()
                push.sessionID = request.sessionID
                push.seq = state.seq
                push.reason = action.reason.description
                var seek = Snapback_V1_SeekCommand()
                seek.streamTime = to
                seek.reason = Snapback_V1_SeekReason(reason)
                push.seek = seek
                answer.pushes.append(push)
            }
            answer.reply.lastPushSeq = state.seq
            return answer
        }
    }
}

@main
struct Server {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 2 else {
            print("usage: snapback-grpc-server SOCKET")
            exit(2)
        }
        unlink(arguments[1])
        let server = GRPCServer(
            transport: .http2NIOPosix(address: .unixDomainSocket(path: arguments[1]), transportSecurity: .plaintext),
            services: [try TimelineBenchService()])
        // Runs until killed: the bench sends SIGTERM when it is done.
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await server.serve() }
            if let address = try await server.listeningAddress {
                print("snapback-grpc-server: listening on \(address)")
            }
        }
    }
}
