// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackEmbedded
import SnapbackStore
import SnapbackTimeline
import SnapbackWire

/// The real service — request dispatch, Hello gating, limits, sessions, actions, timers, store
/// acknowledgements, push sequence numbers — driven in process by bytes from the fuzzer, through
/// ``EmbeddedPeer``s, a ``ManualClock`` and a ``MemoryViewerStateStore``. After every step it checks
/// what the players received, and traps (so libFuzzer reports it) when an invariant breaks:
/// - every RESPONSE carries a status the protocol documents, with a `Status` body when it is not OK;
/// - every PUSH decodes, and a session's pushes are numbered 1, 2, 3… without a gap; so are the
///   decisions of a WatchDecisions stream (PUSH frames with that method, a `Decision` body);
/// - every seek a push commands lies within [0, the session's stream end].
///
/// The input is a program of one-byte opcodes with their operands; see `step`. Peer 0 connects and says
/// Hello before the program starts, so most inputs reach the sessions.
public struct DaemonReplay {
    public private(set) var steps = 0
    public private(set) var responses = 0
    public private(set) var pushes = 0
    public private(set) var sessionsOpened = 0

    /// The statuses PROTOCOL.md says the daemon answers.
    static let documented: Set<StatusCode> = [
        .ok, .invalidArgument, .notFound, .permissionDenied, .resourceExhausted,
        .failedPrecondition, .unimplemented, .unavailable
    ]
    public static let methods = WireMethod.allCases

    // Monotonic time apart from the wall clock, as on a box: a duration read from the wrong one shows.
    private let clock = ManualClock(at: 1_800_000_000, monotonic: 1_000)
    private let store = MemoryViewerStateStore()
    private let service: TimelineService
    /// Decodes the requests of 32 bytes and more when time passes or the store commits, as the daemon's
    /// worker thread does whenever it gets to them: the requests behind them wait meanwhile.
    private let decoder = ManualRequestDecoder()
    private let logger = Logger(level: .error)
    private var peers: [EmbeddedPeer] = []
    private var nextPeerId: UInt64 = 1
    private var lastSeq: [UInt64: UInt64] = [:]
    /// The last decision seq of each peer's watch stream, by peer id.
    private var lastDecision: [UInt64: UInt64] = [:]
    private var input: Reader

    public init(_ data: UnsafeRawBufferPointer) {
        var configuration = DaemonConfiguration()
        configuration.maxSessionsPerConnection = 8
        configuration.maxConnections = 6
        configuration.maxFrameSize = 64 * 1024
        service = TimelineService(clock: clock, logger: logger, configuration: configuration, store: store)
        service.requestDecoder = decoder
        service.offThreadDecodeBytes = 32
        input = Reader(data)
    }

    /// Runs a program, then checks that nothing kept the service alive: every peer is gone, so a
    /// service that outlives its replay is held by a reference cycle (a leak in the daemon too).
    public static func run(_ data: UnsafeRawBufferPointer) {
        weak var service: TimelineService?
        do {
            var replay = DaemonReplay(data)
            service = replay.service
            replay.run()
        }
        if service != nil { fatalError("the service outlived its replay: a reference cycle keeps it alive") }
    }

    public mutating func run() {
        connect(uid: 0)
        if let first = peers.first {
            first.receive(
                .request(callId: 1, method: WireMethod.hello.rawValue),
                body: SnapbackV1.HelloRequest(protocolVersion: WireProtocol.version, clientName: "fuzz").encoded())
            check()
        }
        while !input.isAtEnd, steps < 10_000 {
            step()
            check()
        }
        // As the daemon stops: sessions closed, writes committed, then the connections go.
        service.shutdown()
        store.completeWrites()
        for peer in peers { peer.disconnect() }
        check()
    }

    private mutating func step() {
        steps += 1
        let op = input.byte()
        switch op % 8 {
        case 0:
            // A peer connects: root, or a uid the allow-list refuses.
            connect(uid: input.byte() & 1 == 0 ? 0 : 4242)
        case 1:
            // Raw bytes, in any split: framing errors, partial headers, oversized lengths.
            let peer = pick()
            let bytes = input.bytes(Int(input.byte()))
            peer?.receive(bytes)
        case 2:
            // A well-framed request for a known method: the body is the fuzzer's.
            let method = Self.methods[Int(input.byte()) % Self.methods.count]
            let callId = UInt32(input.byte()) + 1
            let length = Int(input.byte()) << 8 | Int(input.byte())
            let peer = pick()
            let body = input.bytes(length)
            peer?.receive(.request(callId: callId, method: method.rawValue), body: body)
        case 3:
            // Time passes; due timers fire (break ends, periodic bookmarks, the memory trim), and every
            // request being decoded is. Or the wall clock is stepped (NTP, an operator) by up to ±21 hours,
            // or 56 years either way.
            let b = input.byte()
            if b == 254 {
                let s = input.byte()
                clock.stepWall(by: s == 0 ? -1.77e9 : s == 255 ? 1.77e9 : (Double(s) - 128) * 600)
            } else {
                clock.advance(by: b == 255 ? 86_400 : Double(b) * 0.5)
            }
            decoder.runAll()
        case 4:
            pick()?.disconnect()
        case 5:
            // The store commits what was written so far; one request is decoded.
            store.completeWrites()
            decoder.runNext()
        case 6:
            // The player reads its output; a draining peer then closes.
            if let peer = pick() {
                take(peer)
                peer.completeDrain()
            }
        default:
            // The disk fills, fails, or recovers.
            switch input.byte() % 3 {
            case 0: store.failWrites = nil
            case 1: store.failWrites = .full("fuzz")
            default: store.failWrites = .unavailable("fuzz")
            }
        }
    }

    private mutating func connect(uid: UInt32) {
        guard peers.count < 8 else { return }
        let peer = EmbeddedPeer(
            id: nextPeerId, peer: PeerCredentials(pid: 1, uid: uid, gid: uid),
            handler: service, logger: logger, maxFrameSize: 64 * 1024, maxOutboundBytes: 256 * 1024)
        nextPeerId += 1
        peers.append(peer)
        peer.connect()
    }

    private mutating func pick() -> EmbeddedPeer? {
        guard !peers.isEmpty else { return nil }
        return peers[Int(input.byte()) % peers.count]
    }

    private mutating func check() {
        for peer in peers { take(peer) }
        peers.removeAll { !$0.canSend && $0.sent.isEmpty }
    }

    /// Reads what `peer` was sent and checks it.
    private mutating func take(_ peer: EmbeddedPeer) {
        for frame in peer.takeSent() {
            switch frame.header.type {
            case .response:
                responses += 1
                guard let code = StatusCode(rawValue: frame.header.status), Self.documented.contains(code) else {
                    fatalError("undocumented status \(frame.header.status) for method \(frame.header.method)")
                }
                if code != .ok {
                    guard let status = try? WireStatus.decode(frame.body), status.code == code else {
                        fatalError("a \(code) response without its Status body")
                    }
                } else if frame.header.method == WireMethod.openSession.rawValue,
                    let reply = try? SnapbackV1.OpenSessionReply.decode(frame.body)
                {
                    sessionsOpened += 1
                    lastSeq[reply.sessionId] = reply.lastPushSeq
                }
            case .push where frame.header.method == WireMethod.watchDecisions.rawValue:
                pushes += 1
                guard let decision = try? SnapbackV1.Decision.decode(frame.body) else {
                    fatalError("a decision that does not decode")
                }
                let expected = (lastDecision[peer.id] ?? 0) + 1
                guard decision.seq == expected else {
                    fatalError("peer \(peer.id): decision seq \(decision.seq), expected \(expected)")
                }
                lastDecision[peer.id] = decision.seq
            case .push:
                pushes += 1
                guard let push = try? WirePushMessage.decode(frame.body) else { fatalError("a push that does not decode") }
                let expected = (lastSeq[push.sessionId] ?? 0) + 1
                guard push.seq == expected else {
                    fatalError("session \(push.sessionId): push seq \(push.seq), expected \(expected)")
                }
                lastSeq[push.sessionId] = push.seq
                if case .seek(let t, _) = push.kind {
                    // Without a content duration the stream ends where positions do, plus its ads.
                    let timeline = service.timeline(ofSession: push.sessionId)
                    let end =
                        timeline?.streamEnd
                        ?? Limits.position.range.upperBound + (timeline?.layout.totalAdTime ?? Limits.duration.range.upperBound)
                    guard t >= 0, t <= end + 0.001 else {
                        fatalError("session \(push.sessionId): seek to \(t) outside [0, \(end)]")
                    }
                }
            case .request:
                fatalError("the service sent a REQUEST")
            }
        }
    }
}

/// The fuzz input, read a byte at a time; past its end it reads zeros.
struct Reader {
    private let data: UnsafeRawBufferPointer
    private var offset = 0
    init(_ data: UnsafeRawBufferPointer) { self.data = data }
    var isAtEnd: Bool { offset >= data.count }

    mutating func byte() -> UInt8 {
        guard offset < data.count else { return 0 }
        defer { offset += 1 }
        return data[offset]
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let n = min(count, data.count - offset)
        guard n > 0 else { return [] }
        defer { offset += n }
        return Array(UnsafeRawBufferPointer(rebasing: data[offset..<(offset + n)]))
    }
}

/// Writes a ``DaemonReplay`` program: the seeds of the corpus are written with it, so the fuzzer starts
/// from inputs that open sessions and play them.
public struct DaemonProgram {
    public private(set) var bytes: [UInt8] = []
    public init() {}

    public mutating func connect(refused: Bool = false) { bytes += [0, refused ? 1 : 0] }

    public mutating func send(_ request: WireRequest, peer: UInt8 = 0, callId: UInt8 = 1) {
        let body = request.encoded()
        precondition(body.count <= 0xFFFF, "a program's request body is at most 65535 bytes")
        let method = UInt8(DaemonReplay.methods.firstIndex(of: request.method)!)
        bytes += [2, method, callId &- 1, UInt8(body.count >> 8), UInt8(body.count & 0xFF), peer] + body
    }

    public mutating func raw(_ data: [UInt8], peer: UInt8 = 0) {
        bytes += [1, peer, UInt8(min(data.count, 255))] + data.prefix(255)
    }

    /// Half-seconds (255 = a day; 254 is not time passing: see `stepWall`).
    public mutating func advance(halfSeconds: UInt8) { bytes += [3, halfSeconds] }
    /// The wall clock stepped: by (operand − 128) × 600 s, or 56 years back (0) or forward (255).
    public mutating func stepWall(_ operand: UInt8) { bytes += [3, 254, operand] }
    public mutating func disconnect(peer: UInt8) { bytes += [4, peer] }
    public mutating func commitWrites() { bytes += [5] }
    public mutating func read(peer: UInt8) { bytes += [6, peer] }
    /// 0 healthy, 1 full, 2 failing.
    public mutating func disk(_ state: UInt8) { bytes += [7, state] }
}
