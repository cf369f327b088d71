// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import SnapbackWire

/// Feeds bytes as a peer would send them through everything that parses them — the server's frame
/// decoder, the protobuf-c request decoding, the timeline — with no I/O. The libFuzzer entry point
/// (`snapback-fuzz`) and the corpus replay test both call it; it must never trap, whatever the bytes.
///
/// The byte stream is read as frames. Each OpenSession opens a timeline (a session id is the index of
/// the open, from 1); events go to the session they name; queries run the conversions. Wall time
/// advances one second per frame.
public struct FuzzReplay {
    public private(set) var frames = 0
    public private(set) var sessionsOpened = 0
    public private(set) var errors = 0
    private var sessions: [TimelineSession] = []
    private var now = 1_000_000.0

    public init() {}

    public mutating func run(_ bytes: UnsafeRawBufferPointer, maxFrameSize: Int = 64 * 1024) {
        var decoder = FrameDecoder(side: .server, maxFrameSize: maxFrameSize)
        // Feed in uneven chunks, as sockets deliver them.
        var offset = 0
        var chunk = 1
        var failed = false
        while offset < bytes.count && !failed {
            let n = min(chunk, bytes.count - offset)
            chunk = chunk % 61 + 7
            decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])) { event in
                switch event {
                case .frame(let header, let body):
                    handle(header, body)
                case .oversized:
                    errors += 1
                case .protocolError:
                    errors += 1
                    failed = true
                }
            }
            offset += n
        }
    }

    private mutating func handle(_ header: FrameHeader, _ body: UnsafeRawBufferPointer) {
        frames += 1
        now += 1
        guard let method = WireMethod(rawValue: header.method) else { errors += 1; return }
        let request: WireRequest
        do {
            request = try WireRequest.decode(method: method, body: body)
        } catch {
            errors += 1
            return
        }
        switch request {
        case .openSession(let open):
            guard sessions.count < 64 else { return }
            do {
                var session = try TimelineSession(open.configuration(resumeContentTime: open.resume.resumeContentTime))
                var opening: [TimelineAction] = []
                session.opened(at: now, into: &opening)
                sessions.append(session)
                sessionsOpened += 1
            } catch {
                errors += 1
            }
        case .event(let id, let event):
            guard id >= 1, id <= UInt64(sessions.count) else { errors += 1; return }
            do {
                _ = try sessions[Int(id - 1)].handle(event, at: now)
            } catch {
                errors += 1
            }
            // Drive the timers too: the shell would fire them.
            for timer in TimelineTimer.allCases { _ = try? sessions[Int(id - 1)].handle(.timerFired(timer), at: now) }
        case .closeSession(let m):
            let id = m.sessionId
            guard id >= 1, id <= UInt64(sessions.count) else { errors += 1; return }
            _ = try? sessions[Int(id - 1)].handle(.closed, at: now)
        case .contentTimeForStreamTime(let m):
            convert(m.sessionId, m.streamTime)
        case .breakAt(let m):
            convert(m.sessionId, m.streamTime)
        case .streamTimeForContentTime(let m):
            guard m.sessionId >= 1, m.sessionId <= UInt64(sessions.count), m.contentTime.isFinite else { return }
            _ = sessions[Int(m.sessionId - 1)].layout.streamTime(forContentTime: m.contentTime)
        case .getSessionState(let m):
            guard m.sessionId >= 1, m.sessionId <= UInt64(sessions.count) else { return }
            let session = sessions[Int(m.sessionId - 1)]
            let window = SessionStateReply.page(from: m.firstBreak, count: m.maxBreaks)
            var out: [UInt8] = []
            _ = SessionStateReply(session.snapshot(at: now, breaks: window), totalBreaks: session.layout.count)
                .encode(into: &out)
        default:
            return
        }

        func convert(_ id: UInt64, _ t: Double) {
            guard id >= 1, id <= UInt64(sessions.count), t.isFinite else { return }
            let session = sessions[Int(id - 1)]
            _ = session.layout.contentTime(forStreamTime: t)
            _ = session.previousBreak(atOrBefore: t)
            _ = session.nextBreak(after: t)
        }
    }
}
