// SPDX-License-Identifier: Apache-2.0
import SnapbackCues
import SnapbackDaemon
import SnapbackJSON
import SnapbackWeb
import SnapbackWire

/// A page's JSON-RPC, in Thunder's shape: `Snapback.1.<method>` calls, every method of the protocol by
/// its generated table (`everyProtoJSONMethod`), params and results in proto3's canonical JSON of its
/// messages, forwarded over the page's own snapbackd connection; and `Snapback.1.register` /
/// `unregister` `{"event": E, "id": I}` for notifications, which then arrive as `"I.E"`.
///
/// Loop-confined; owned by its ``PageConnection``.
final class PageRPC {
    static let callsign = "Snapback.1."
    /// The events a page may register for: its sessions' pushes, and the two streams a grant opens.
    static let events: Set<String> = ["push", "decision", "change"]
    /// Registrations a page may hold at once.
    static let maxRegistrations = 16
    /// Calls a page may have waiting for snapbackd at once: a page that sends faster than the daemon
    /// answers is told RESOURCE_EXHAUSTED, and its other calls go on.
    static let maxInFlight = 32
    /// Streams of each stream method (WatchDecisions, WatchChanges) a page may have, started or asked
    /// for: snapbackd's rule for a connection (a second one is FAILED_PRECONDITION), kept by the bridge
    /// itself so that its table of a page's streams is bounded by its own count, whatever snapbackd does.
    static let maxStreamsPerMethod = 1
    /// Manifest readers (`readCues`) a page may hold at once: a page reads its stream's playlist, and a
    /// few more at most (another rendition, a VMAP).
    static let maxReaders = 4
    /// `readCues` calls of a page waiting while one of its is read (they are read in order, one at a time).
    static let maxCueReadsWaiting = 4

    private unowned let page: PageConnection
    private var scope: PageScope
    /// (event, id) pairs registered.
    private(set) var registrations: [(event: String, id: String)] = []
    /// Calls sent to snapbackd by call id: the page's id for them (nil: a notification) and the request.
    private var pending: [UInt32: (id: [UInt8]?, method: ProtoJSONMethod, request: any ProtoJSONMessage)] = [:]
    /// The call ids of the page's WatchDecisions and WatchChanges streams, and their event names.
    private var streams: [UInt32: String] = [:]
    /// Bounds of a request's params: the message size the bridge takes, the protocol's nesting, and an
    /// OpenSession's breaks far above what snapbackd takes in one.
    private var limits: ProtoJSONLimits
    /// The page's manifest readers by name, each holding what its refreshes said (a live playlist's
    /// breaks that slid out of its window, the changes of the last one).
    private var readers: [(name: String, reader: CueReader)] = []
    /// Reads the manifests off the loop; while one of the page's is read, its readers are the job's.
    private let worker: LoopWorker
    private var readingCues = false
    private var cueReadsWaiting: [JSONRPC.Request] = []

    init(page: PageConnection, app: WebApp, maxMessageSize: Int, worker: LoopWorker) {
        self.page = page
        scope = PageScope(app: app)
        limits = Self.limits(maxMessageSize: maxMessageSize)
        self.worker = worker
    }

    var app: WebApp { scope.app }

    func apply(maxMessageSize: Int) {
        limits = Self.limits(maxMessageSize: maxMessageSize)
    }

    private static func limits(maxMessageSize: Int) -> ProtoJSONLimits {
        ProtoJSONLimits(maxBytes: maxMessageSize, maxDepth: 8, maxElements: 10_000)
    }

    func received(_ text: [UInt8]) {
        switch JSONRPC.parseRequest(text) {
        case .failure(let failure):
            page.sendText(JSONRPC.error(id: failure.id, code: failure.code.rawValue, message: failure.message))
        case .success(let request):
            handle(request)
        }
    }

    private func answer(_ id: [UInt8]?, _ result: Result<[UInt8], JSONRPC.Failure>) {
        guard let id else { return }  // a notification is not answered
        switch result {
        case .success(let json): page.sendText(JSONRPC.result(id: id, json: json))
        case .failure(let failure):
            page.sendText(JSONRPC.error(id: id, code: failure.code.rawValue, message: failure.message))
        }
    }

    /// snapbackd's status (or the bridge's own refusal in its terms) as a JSON-RPC error: the code is the
    /// status code (1-16), the message its text, `data` `{"status": "NAME"}`.
    private func answer(_ id: [UInt8]?, status: WireStatus) {
        guard let id else { return }
        var data: [UInt8] = Array(#"{"status":"#.utf8)
        JSONRPC.appendString(status.code.name, to: &data)
        data.append(UInt8(ascii: "}"))
        page.sendText(JSONRPC.error(id: id, code: Int(status.code.rawValue), message: status.message, data: data))
    }

    private func handle(_ request: JSONRPC.Request) {
        guard request.method.hasPrefix(Self.callsign) else {
            answer(
                request.id,
                .failure(
                    .init(
                        code: .methodNotFound, message: "unknown method \(request.method) (this bridge serves \(Self.callsign)*)")
                ))
            return
        }
        let name = String(request.method.dropFirst(Self.callsign.count))
        switch name {
        case "register": answer(request.id, register(request.params, add: true))
        case "unregister": answer(request.id, register(request.params, add: false))
        case "readCues": readCues(request)
        default:
            guard let method = ProtoJSONMethod.byJSONName[name] else {
                answer(request.id, .failure(.init(code: .methodNotFound, message: "unknown method \(request.method)")))
                return
            }
            call(method, request)
        }
    }

    private func call(_ method: ProtoJSONMethod, _ request: JSONRPC.Request) {
        if let refusal = scope.refusal(of: method.method) {
            answer(request.id, status: refusal)
            return
        }
        if let params = request.params, params.first == UInt8(ascii: "[") {
            answer(
                request.id,
                .failure(.init(code: .invalidParams, message: "params are the request message as a JSON object, not an array")))
            return
        }
        let message: any (ProtoJSONMessage & WireMessage)
        do {
            message = try method.decodeRequest(request.params, limits: limits)
        } catch {
            answer(request.id, .failure(.init(code: .invalidParams, message: "\(method.request): \(error)")))
            return
        }
        if let refusal = scope.refusal(of: message) {
            answer(request.id, status: refusal)
            return
        }
        if method.stream != nil, streamCount(method.method) >= Self.maxStreamsPerMethod {
            answer(
                request.id,
                status: WireStatus(
                    code: .failedPrecondition,
                    message:
                        "this page has its \(method.method.methodName) stream already (one per page; it lasts as long as the page's connection)"
                ))
            return
        }
        guard pending.count < Self.maxInFlight else {
            answer(
                request.id,
                status: WireStatus(code: .resourceExhausted, message: "more than \(Self.maxInFlight) calls waiting for snapbackd")
            )
            return
        }
        guard let link = page.link, let callId = link.send(method: method.method.rawValue, body: message.encoded()) else {
            answer(request.id, status: WireStatus(code: .unavailable, message: "snapbackd is not reachable"))
            return
        }
        pending[callId] = (request.id, method, message)
    }

    /// The page's streams of `method`, started or waiting for snapbackd's answer.
    private func streamCount(_ method: WireMethod) -> Int {
        let event = Self.streamEvent(method)
        return streams.values.count { $0 == event } + pending.values.count { $0.method.method == method }
    }

    /// The event a stream's items are told as.
    private static func streamEvent(_ method: WireMethod) -> String { method == .watchDecisions ? "decision" : "change" }

    /// `register` / `unregister` `{"event": "push", "id": "player"}` → `null` (Thunder answers `0`
    /// in older versions; null is what its JSON-RPC layer sends now).
    private func register(_ params: [UInt8]?, add: Bool) -> Result<[UInt8], JSONRPC.Failure> {
        func invalid(_ message: String) -> Result<[UInt8], JSONRPC.Failure> {
            .failure(.init(code: .invalidParams, message: message))
        }
        guard let params else { return invalid("params {\"event\", \"id\"} are required") }
        var event: String?
        var id: String?
        do throws(ProtoJSONError) {
            var r = try ProtoJSONReader(params, limits: ProtoJSONLimits(maxBytes: params.count, maxDepth: 4))
            guard r.nextKind() == .object else { return invalid("params must be an object") }
            try r.beginObject()
            while let name = try r.nextKey() {
                let isString = r.nextKind() == .string
                switch name {
                case "event" where isString: event = try r.string()
                case "id" where isString: id = try r.string()
                default: _ = try r.skipValue()
                }
            }
        } catch {
            return invalid("params: \(error)")
        }
        guard let event, Self.events.contains(event) else {
            return invalid("event must be one of: \(Self.events.sorted().joined(separator: ", "))")
        }
        guard let id, !id.isEmpty, id.utf8.count <= 64, !id.contains(".") else {
            return invalid("id must be 1 to 64 characters without '.'")
        }
        let index = registrations.firstIndex { $0.event == event && $0.id == id }
        if add {
            if index == nil {
                guard registrations.count < Self.maxRegistrations else {
                    return invalid("at most \(Self.maxRegistrations) registrations")
                }
                registrations.append((event, id))
            }
        } else if let index {
            registrations.remove(at: index)
        }
        return .success(Array("null".utf8))
    }

    /// `readCues` `{"text": T, "reader": R, "format": F, "contentDuration": S, "reset": B}`: a manifest's
    /// text (a playlist, an MPD or a VMAP) read by libsnapback's break sources, the very readers every
    /// native player links, so that a page has no parser of its own: the result is `snapback cues
    /// --json`'s object for it (`session`: the breaks to open the session with or to send in
    /// UpdateBreaks). `reader` (default "main") names a reader the page keeps for the refreshes of one
    /// live manifest; `format` and `contentDuration` are taken when it is made, `reset` makes it anew.
    /// The bridge's own method: snapbackd reads no manifest.
    ///
    /// Read on the bridge's worker thread, not on the loop: the largest playlist the bounds admit takes
    /// tens of milliseconds to read and to write out, which every other page's calls would wait for. A
    /// page's reads go one at a time, in order; a few more wait, and beyond them RESOURCE_EXHAUSTED.
    private func readCues(_ request: JSONRPC.Request) {
        if readingCues {
            guard cueReadsWaiting.count < Self.maxCueReadsWaiting else {
                answer(
                    request.id,
                    status: WireStatus(
                        code: .resourceExhausted,
                        message: "more than \(Self.maxCueReadsWaiting) readCues waiting (a page's are read one at a time)"))
                return
            }
            cueReadsWaiting.append(request)
            return
        }
        readingCues = true
        let job = CueRead(params: request.params, readers: readers)
        readers = []
        let id = request.id
        let done: (CueRead) -> Void = { [weak self] read in self?.cuesRead(id, read) }
        let work: @Sendable () -> CueRead = {
            var read = job
            read.run()
            return read
        }
        if !worker.run(work, completion: done) { done(work()) }
    }

    private func cuesRead(_ id: [UInt8]?, _ read: CueRead) {
        readers = read.readers
        readingCues = false
        switch read.outcome {
        case .invalid(let message): answer(id, .failure(.init(code: .invalidParams, message: message)))
        case .refused(let status): answer(id, status: status)
        case .result(let json): answer(id, .success(json))
        }
        if !cueReadsWaiting.isEmpty { readCues(cueReadsWaiting.removeFirst()) }
    }

    /// A RESPONSE from snapbackd: the answer to the page's call with that call id.
    func daemonResponse(_ header: FrameHeader, body: [UInt8]) {
        guard let call = pending.removeValue(forKey: header.callId) else {
            page.logger.debug("page \(page.id): reply from snapbackd to no call of the page (call \(header.callId))")
            return
        }
        guard header.status == 0 else {
            let status =
                (try? WireStatus.decode(body))
                ?? WireStatus(code: StatusCode(rawValue: header.status) ?? .unknown, message: "")
            answer(call.id, status: status)
            return
        }
        let reply: (any ProtoJSONMessage)?
        do {
            reply = try call.method.decodeReply(body)
        } catch {
            answer(
                call.id,
                status: WireStatus(code: .internalError, message: "snapbackd's \(call.method.method.name) reply: \(error)"))
            return
        }
        if call.method.stream != nil {
            streams[header.callId] = Self.streamEvent(call.method.method)
        }
        let answered = scope.answered(call.request, reply: reply)
        answer(call.id, .success(Array((answered?.jsonString ?? "{}").utf8)))
    }

    /// A PUSH from snapbackd: a session's push (OpenSession's method), or an item of a granted stream,
    /// told to every registration for its event.
    func daemonPush(_ header: FrameHeader, body: [UInt8]) {
        let event: String
        let json: String
        do {
            if header.method == WireMethod.openSession.rawValue {
                let push = try WirePushMessage.decode(body)
                event = "push"
                json = push.proto.jsonString
            } else if let stream = streams[header.callId],
                let method = WireMethod(rawValue: header.method).flatMap({ m in everyProtoJSONMethod.first { $0.method == m } }),
                let item = try method.streamJSON(body)
            {
                event = stream
                json = item
            } else {
                page.logger.debug("page \(page.id): push from snapbackd on no stream of the page (method \(header.method))")
                return
            }
        } catch {
            page.logger.warning("page \(page.id): push from snapbackd that does not decode: \(error)")
            return
        }
        let params = Array(json.utf8)
        for registration in registrations where registration.event == event {
            page.sendText(JSONRPC.notification(method: "\(registration.id).\(event)", params: params))
        }
    }

    func close() {
        registrations = []
        readers = []
        pending = [:]
        streams = [:]
    }
}

/// A `readCues` call, done on the worker thread: its params read, its reader found among the page's or
/// made, the manifest read and the result written. The page's readers travel with it and come back with
/// its outcome: nothing else touches them meanwhile (the page's reads go one at a time), and a reader
/// (its `snapback_cues`) is used by one thread at a time, as the C requires.
private struct CueRead: @unchecked Sendable {
    enum Outcome {
        case invalid(String)
        case refused(WireStatus)
        case result([UInt8])
    }

    let params: [UInt8]?
    var readers: [(name: String, reader: CueReader)]
    var outcome = Outcome.invalid("")

    init(params: [UInt8]?, readers: [(name: String, reader: CueReader)]) {
        self.params = params
        self.readers = readers
    }

    mutating func run() {
        outcome = read()
    }

    private mutating func read() -> Outcome {
        guard let params else { return .invalid("params {\"text\"} are required") }
        var text: String?
        var name = "main"
        var format: CueReader.Format?
        var contentDuration = 0.0
        var reset = false
        do throws(ProtoJSONError) {
            var r = try ProtoJSONReader(params, limits: ProtoJSONLimits(maxBytes: params.count, maxDepth: 4))
            guard r.nextKind() == .object else { return .invalid("params must be an object") }
            try r.beginObject()
            while let key = try r.nextKey() {
                let kind = r.nextKind()
                switch key {
                case "text" where kind == .string: text = try r.string()
                case "reader" where kind == .string: name = try r.string() ?? ""
                case "format" where kind == .string:
                    let value = try r.string() ?? ""
                    guard let f = CueReader.Format(rawValue: value) else { return .invalid("format must be hls, dash or vmap") }
                    format = f
                case "contentDuration":
                    guard let d = try r.double(), d >= 0, d <= 1e10 else {
                        return .invalid("contentDuration must be seconds from 0 to 1e10")
                    }
                    contentDuration = d
                case "reset" where kind == .bool: reset = try r.bool() ?? false
                case "text", "reader", "format", "reset": return .invalid("\(key): wrong type")
                default: _ = try r.skipValue()
                }
            }
        } catch {
            return .invalid("params: \(error)")
        }
        guard let text else { return .invalid("text (the manifest) is required") }
        guard !name.isEmpty, name.utf8.count <= 64 else { return .invalid("reader must be 1 to 64 characters") }
        if reset { readers.removeAll { $0.name == name } }
        let reader: CueReader
        if let held = readers.first(where: { $0.name == name }) {
            reader = held.reader
        } else {
            guard readers.count < PageRPC.maxReaders else {
                return .refused(
                    WireStatus(code: .resourceExhausted, message: "at most \(PageRPC.maxReaders) manifest readers a page"))
            }
            guard let made = CueReader(format: format, contentDuration: contentDuration) else {
                return .refused(WireStatus(code: .resourceExhausted, message: "out of memory"))
            }
            reader = made
            readers.append((name, made))
        }
        if let refused = reader.update(Array(text.utf8)) {
            // A reader that never read a manifest holds nothing worth its slot.
            if reader.reads == 0 { readers.removeAll { $0.reader === reader } }
            return .refused(WireStatus(code: .invalidArgument, message: "manifest refused: \(refused)"))
        }
        return .result(Array(reader.json(name: name).utf8))
    }
}
