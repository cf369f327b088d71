// SPDX-License-Identifier: Apache-2.0
import SnapbackDaemon
import SnapbackWeb
import SnapbackWire

/// A page's JSON-RPC, in Thunder's shape: `Snapback.1.<method>` calls, and `Snapback.1.register` /
/// `unregister` `{"event": E, "id": I}` for notifications, which then arrive as `"I.E"`.
///
/// Loop-confined; owned by its ``PageConnection``.
final class PageRPC {
    static let callsign = "Snapback.1."
    /// The events a page may register for.
    static let events: Set<String> = ["push"]
    /// Registrations a page may hold at once.
    static let maxRegistrations = 16

    private unowned let page: PageConnection
    let app: WebApp
    /// (event, id) pairs registered.
    private(set) var registrations: [(event: String, id: String)] = []

    init(page: PageConnection, app: WebApp) {
        self.page = page
        self.app = app
    }

    func received(_ text: [UInt8]) {
        switch JSONRPC.parseRequest(text) {
        case .failure(let failure):
            page.sendText(JSONRPC.error(id: failure.id, code: failure.code.rawValue, message: failure.message))
        case .success(let request):
            handle(request)
        }
    }

    private func handle(_ request: JSONRPC.Request) {
        func answer(_ result: Result<[UInt8], JSONRPC.Failure>) {
            guard let id = request.id else { return }  // a notification is not answered
            switch result {
            case .success(let json): page.sendText(JSONRPC.result(id: id, json: json))
            case .failure(let failure):
                page.sendText(JSONRPC.error(id: id, code: failure.code.rawValue, message: failure.message))
            }
        }
        guard request.method.hasPrefix(Self.callsign) else {
            answer(
                .failure(
                    .init(
                        code: .methodNotFound, message: "unknown method \(request.method) (this bridge serves \(Self.callsign)*)")
                ))
            return
        }
        switch request.method.dropFirst(Self.callsign.count) {
        case "register": answer(register(request.params, add: true))
        case "unregister": answer(register(request.params, add: false))
        default:
            answer(.failure(.init(code: .methodNotFound, message: "unknown method \(request.method)")))
        }
    }

    /// `register` / `unregister` `{"event": "push", "id": "player"}` → `null` (Thunder answers `0`
    /// in older versions; null is what its JSON-RPC layer sends now).
    private func register(_ params: [UInt8]?, add: Bool) -> Result<[UInt8], JSONRPC.Failure> {
        func invalid(_ message: String) -> Result<[UInt8], JSONRPC.Failure> {
            .failure(.init(code: .invalidParams, message: message))
        }
        guard let params else { return invalid("params {\"event\", \"id\"} are required") }
        var reader = JSONReader(bytes: params, maxDepth: 4)
        guard case .object(let members, _)? = reader.readDocument() else { return invalid("params must be an object") }
        let event = members.first { $0.0 == "event" }?.1.stringValue
        let id = members.first { $0.0 == "id" }?.1.stringValue
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

    /// A reply from snapbackd. The page makes no daemon call the bridge could answer yet, so one is
    /// unexpected: it is logged.
    func daemonResponse(_ header: FrameHeader, body: [UInt8]) {
        page.logger.debug("page \(page.id): unexpected reply from snapbackd (call \(header.callId))")
    }

    func daemonPush(_ header: FrameHeader, body: [UInt8]) {
        page.logger.debug("page \(page.id): unexpected push from snapbackd (method \(header.method))")
    }

    func close() {
        registrations = []
    }
}
