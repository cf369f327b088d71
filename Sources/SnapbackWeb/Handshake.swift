// SPDX-License-Identifier: Apache-2.0
/// What the bridge answers a request head: an upgrade to a WebSocket for an app, or a plain response
/// (the health check, snapback.js, a refusal) after which the connection closes.
///
/// Every request must name the bridge itself in `Host` (a page whose name was rebound to 127.0.0.1 sends
/// its own name). A WebSocket upgrade (RFC 6455 §4.2.1) on `/jsonrpc` must also come from an origin that
/// an app lists, exactly, and present that app's token, in the `token` query parameter or as a
/// `Sec-WebSocket-Protocol` entry `snapback.token.<token>`; the JSON-RPC sub-protocol
/// `snapback.v1.json` is chosen when the page offers sub-protocols. Tokens are compared in constant time,
/// against every app's, whatever the first match.
public enum Handshake {
    public static let path = "/jsonrpc"
    public static let subprotocol = "snapback.v1.json"
    public static let tokenProtocolPrefix = "snapback.token."
    /// RFC 6455 §1.3.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    public enum Decision: Equatable {
        /// Upgrade: write `response`, then speak WebSocket for the app at `appIndex`.
        case upgrade(appIndex: Int, response: [UInt8])
        /// Write `response` and close; `refusal` says why when the request was refused (for the log).
        case respond(response: [UInt8], refusal: String?)
    }

    /// A file the bridge serves as is (snapback.js).
    public struct StaticFile: Sendable {
        public var contentType: String
        public var body: [UInt8]
        public init(contentType: String, body: [UInt8]) {
            self.contentType = contentType
            self.body = body
        }
    }

    public static func decide(_ head: HTTPRequestHead, configuration: BridgeConfiguration, files: [String: StaticFile] = [:])
        -> Decision
    {
        let (host, duplicateHost) = head.single("host")
        guard let host, !duplicateHost else { return refuse(400, "exactly one Host header is required") }
        guard configuration.hostNames.contains(host.lowercased()) else {
            return refuse(
                403,
                "Host '\(printable(host))' is not this bridge (it answers to \(configuration.hostNames.joined(separator: ", ")))")
        }
        if !head.values("content-length").allSatisfy({ $0 == "0" }) || !head.values("transfer-encoding").isEmpty {
            return refuse(400, "a request body is not accepted")
        }
        let (origin, duplicateOrigin) = head.single("origin")
        if duplicateOrigin { return refuse(400, "more than one Origin header") }
        let path = head.path
        if path == "/health" { return health(head, origin: origin, configuration: configuration) }
        if let file = files[String(path)] {
            guard head.method == "GET" || head.method == "HEAD" else {
                return refuse(405, "\(path) is read with GET", allow: "GET, HEAD")
            }
            var headers = [
                ("Content-Type", file.contentType), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff")
            ]
            // A module script from another origin is fetched in CORS mode.
            if let origin, configuration.apps.contains(where: { $0.origins.contains(origin) }) {
                headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
            }
            return .respond(
                response: response(200, headers: headers, body: head.method == "HEAD" ? [] : file.body, length: file.body.count),
                refusal: nil)
        }
        guard path == Self.path else {
            return refuse(404, "nothing at \(printable(String(path))) (the JSON-RPC WebSocket is \(Self.path))")
        }
        guard head.method == "GET" else { return refuse(405, "\(Self.path) is a WebSocket: GET with Upgrade", allow: "GET") }
        guard hasToken(head.values("upgrade"), "websocket"), hasToken(head.values("connection"), "upgrade") else {
            return .respond(
                response: response(
                    426, headers: [("Upgrade", "websocket"), ("Connection", "Upgrade")],
                    body: Array("\(Self.path) is a WebSocket (Upgrade: websocket)\n".utf8)),
                refusal: "not a WebSocket upgrade")
        }
        guard head.values("sec-websocket-version") == ["13"] else {
            return .respond(
                response: response(
                    426, headers: [("Sec-WebSocket-Version", "13")], body: Array("WebSocket version 13 only\n".utf8)),
                refusal: "WebSocket version \(printable(head.values("sec-websocket-version").joined(separator: ",")))")
        }
        let keys = head.values("sec-websocket-key")
        guard keys.count == 1, let key = keys.first, Base64.decode(Substring(key).utf8)?.count == 16 else {
            return refuse(400, "Sec-WebSocket-Key must be one base64 value of 16 bytes")
        }
        guard let origin else { return refuse(403, "no Origin: only pages of the configured apps may connect") }
        guard origin != "null" else { return refuse(403, "Origin 'null' (a file:// or sandboxed page) is never allowed") }
        guard let originApp = configuration.apps.firstIndex(where: { $0.origins.contains(origin) }) else {
            return refuse(403, "origin \(printable(origin)) is not a configured app")
        }
        // Sub-protocols: the JSON-RPC one, and at most one token entry.
        let offered = head.values("sec-websocket-protocol").flatMap { $0.split(separator: ",") }.map { $0.trimmingBlanks() }
        var presented: [[UInt8]] = []
        for item in offered where item.hasPrefix(Self.tokenProtocolPrefix) {
            presented.append(Array(item.utf8.dropFirst(Self.tokenProtocolPrefix.utf8.count)))
        }
        if let query = head.queryParameter("token") { presented.append(query) }
        guard presented.count == 1, let token = presented.first else {
            return refuse(
                403,
                presented.isEmpty
                    ? "no token (?token= or a \(Self.tokenProtocolPrefix)<token> sub-protocol)" : "more than one token")
        }
        let others = offered.filter { !$0.hasPrefix(Self.tokenProtocolPrefix) }
        if !offered.isEmpty && !others.contains(Self.subprotocol) {
            return refuse(400, "sub-protocols offered without \(Self.subprotocol)")
        }
        var tokenApp = -1
        for (index, app) in configuration.apps.enumerated() where constantTimeEqual(app.token, token) {
            tokenApp = index
        }
        guard tokenApp == originApp else { return refuse(403, "wrong token for origin \(printable(origin))") }
        let accept = Base64.encode(SHA1.digest(Array((key + acceptGUID).utf8)))
        var headers = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept)]
        if !offered.isEmpty { headers.append(("Sec-WebSocket-Protocol", Self.subprotocol)) }
        return .upgrade(appIndex: originApp, response: response(101, headers: headers, body: nil))
    }

    /// The CORS health check a page fetches to have the browser ask for the loopback permission (Chrome's
    /// Local Network Access) before it opens the WebSocket; its preflight is answered too.
    static func health(_ head: HTTPRequestHead, origin: String?, configuration: BridgeConfiguration) -> Decision {
        var headers: [(String, String)] = [("Cache-Control", "no-store"), ("Vary", "Origin")]
        if let origin, configuration.apps.contains(where: { $0.origins.contains(origin) }) {
            headers += [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Private-Network", "true")]
        }
        switch head.method {
        case "GET", "HEAD":
            let body = Array("{\"status\":\"ok\"}\n".utf8)
            return .respond(
                response: response(
                    200, headers: headers + [("Content-Type", "application/json")], body: head.method == "HEAD" ? [] : body,
                    length: body.count),
                refusal: nil)
        case "OPTIONS":
            return .respond(
                response: response(
                    204, headers: headers + [("Access-Control-Allow-Methods", "GET"), ("Access-Control-Max-Age", "600")],
                    body: nil),
                refusal: nil)
        default:
            return refuse(405, "/health is read with GET", allow: "GET, HEAD, OPTIONS")
        }
    }

    static func refuse(_ status: Int, _ reason: String, allow: String? = nil) -> Decision {
        var headers = [("Content-Type", "text/plain; charset=utf-8")]
        if let allow { headers.append(("Allow", allow)) }
        return .respond(response: response(status, headers: headers, body: Array((reason + "\n").utf8)), refusal: reason)
    }

    /// A response head, and its body unless nil (`length` when it differs from the body's, for HEAD).
    public static func response(_ status: Int, headers: [(String, String)], body: [UInt8]?, length: Int? = nil) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(statusText(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if status != 101 {
            text += "Content-Length: \(length ?? body?.count ?? 0)\r\nConnection: close\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + (body ?? [])
    }

    static func statusText(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }

    /// Whether a comma-separated header lists `token` (case-insensitively).
    static func hasToken(_ values: [String], _ token: String) -> Bool {
        values.contains { $0.split(separator: ",").contains { $0.trimmingBlanks().lowercased() == token } }
    }

    /// A peer's text for a log line or a reason: at most 100 characters (the head is ASCII already).
    static func printable(_ text: String) -> String {
        text.utf8.count <= 100 ? text : String(text.prefix(100)) + "…"
    }
}
