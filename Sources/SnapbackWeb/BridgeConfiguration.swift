// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import SnapbackDaemon

/// What an app's entry may use beyond a player's methods (snapback-web.conf(5), `grants`).
public enum WebGrant: String, Sendable, CaseIterable {
    /// Control/WatchDecisions: every session's decisions, not only the page's.
    case watchDecisions = "watch-decisions"
    /// The Sync service (WatchChanges, Merge).
    case sync
    /// Control/ListSessions and GetSession over every session of the bridge's uid, and clearing or
    /// deleting bookmarks of the app's profiles.
    case admin
}

/// One web app allowed to connect: where its pages come from, the secret they present, and what it may do.
public struct WebApp: Sendable, Equatable {
    public var name: String
    /// Origins matched exactly (scheme, host and port as the browser serialises them); never `null`.
    public var origins: [String]
    public var token: [UInt8]
    /// The viewer profiles its sessions and bookmark calls may name; empty: only the default profile "".
    public var profiles: [String]
    public var grants: Set<WebGrant>
    /// Connections the app may hold at once.
    public var maxConnections: Int

    public init(
        name: String, origins: [String] = [], token: [UInt8] = [], profiles: [String] = [],
        grants: Set<WebGrant> = [], maxConnections: Int = 8
    ) {
        self.name = name
        self.origins = origins
        self.token = token
        self.profiles = profiles
        self.grants = grants
        self.maxConnections = maxConnections
    }
}

/// snapback-web's configuration (snapback-web.conf(5)).
public struct BridgeConfiguration: Sendable, Equatable {
    /// The TCP port on the loopback addresses.
    public var port: UInt16 = 9932
    /// Loopback addresses to listen on: 127.0.0.1 and ::1 (nothing else is accepted).
    public var listen: [String] = ["127.0.0.1", "::1"]
    /// snapbackd's socket.
    public var daemonSocket = "/run/snapback/snapbackd.sock"
    /// WebSocket connections at once, all apps together.
    public var maxConnections = 32
    /// Largest frame payload and largest (reassembled) message a page may send.
    public var maxFrameSize = 64 * 1024
    public var maxMessageSize = 256 * 1024
    /// Messages per second a connection may send on average, and the burst above it.
    public var messagesPerSecond = 50
    public var messageBurst = 100
    /// From accept to a complete upgrade request.
    public var handshakeTimeoutMilliseconds: UInt64 = 5000
    /// A connection silent this long is pinged, and closed if no pong comes within `pongTimeout`.
    public var pingIntervalMilliseconds: UInt64 = 30_000
    public var pongTimeoutMilliseconds: UInt64 = 10_000
    /// Output queued for a page beyond which it is closed (it is not reading).
    public var maxOutboundBytes = 1 << 20
    public var apps: [WebApp] = []

    public init() {}

    /// The `Host` values a request may carry: the bridge's own loopback names with its port (the port
    /// may be left out only when it is 80, as browsers do).
    public var hostNames: [String] {
        let names = ["127.0.0.1", "localhost", "[::1]"]
        return names.map { "\($0):\(port)" } + (port == 80 ? names : [])
    }
}

/// The `key = value` format of snapbackd.conf(5), with `[bridge]`, `[limits]` and one `[app NAME]`
/// section per app. Applied file by file: the main file, then its drop-ins (`NAME.conf` in the
/// directory `FILE.d`, in name order), so that an integrator registers an app with a file of its own.
public enum BridgeConfigurationFile {
    typealias Reason = ConfigurationFile.Reason
    typealias Apply = @Sendable (inout BridgeConfiguration, String) throws(Reason) -> Void
    typealias AppApply = @Sendable (inout WebApp, String) throws(Reason) -> Void

    static func duration(milliseconds range: ClosedRange<Double>) -> (String) throws(Reason) -> UInt64 {
        { text throws(Reason) in
            let seconds = try ConfigurationFile.duration(text)
            guard range.contains(seconds) else {
                throw Reason("'\(text)' is not in \(range.lowerBound)...\(range.upperBound) seconds")
            }
            return UInt64((seconds * 1000).rounded())
        }
    }

    static let bridgeKeys: [String: Apply] = [
        "port": { c, v throws(Reason) in c.port = UInt16(try ConfigurationFile.count(in: 1...65535)(v)) },
        "listen": { c, v throws(Reason) in
            let items = ConfigurationFile.listItems(v)
            guard !items.isEmpty else { throw Reason("at least one address") }
            for item in items where item != "127.0.0.1" && item != "::1" {
                throw Reason(
                    "'\(item)' is not a loopback address (127.0.0.1 or ::1): pages of other hosts must not reach snapbackd")
            }
            c.listen = items
        },
        "socket": { c, v throws(Reason) in
            guard v.hasPrefix("/") else { throw Reason("'\(v)' is not an absolute path") }
            c.daemonSocket = v
        }
    ]

    static let limitKeys: [String: Apply] = [
        "max-connections": { c, v throws(Reason) in c.maxConnections = try ConfigurationFile.count(in: 1...200)(v) },
        "max-frame-size": { c, v throws(Reason) in c.maxFrameSize = try ConfigurationFile.size(in: 125...(16 << 20))(v) },
        "max-message-size": { c, v throws(Reason) in c.maxMessageSize = try ConfigurationFile.size(in: 125...(16 << 20))(v) },
        "messages-per-second": { c, v throws(Reason) in c.messagesPerSecond = try ConfigurationFile.count(in: 1...100_000)(v) },
        "message-burst": { c, v throws(Reason) in c.messageBurst = try ConfigurationFile.count(in: 1...1_000_000)(v) },
        "handshake-timeout": { c, v throws(Reason) in c.handshakeTimeoutMilliseconds = try duration(milliseconds: 0.1...300)(v) },
        "ping-interval": { c, v throws(Reason) in c.pingIntervalMilliseconds = try duration(milliseconds: 0.1...86_400)(v) },
        "pong-timeout": { c, v throws(Reason) in c.pongTimeoutMilliseconds = try duration(milliseconds: 0.1...3600)(v) },
        "max-outbound": { c, v throws(Reason) in c.maxOutboundBytes = try ConfigurationFile.size(in: 4096...(1 << 30))(v) }
    ]

    static let appKeys: [String: AppApply] = [
        "origin": { a, v throws(Reason) in
            for origin in ConfigurationFile.listItems(v) {
                guard origin != "null" else { throw Reason("'null' is every sandboxed and file:// page: never an app's origin") }
                guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.dropFirst(8).contains("/") else {
                    throw Reason("'\(origin)' is not an origin (scheme://host[:port], no path)")
                }
                a.origins.append(origin)
            }
        },
        "token": { a, v throws(Reason) in
            guard v.utf8.count >= 16, v.utf8.count <= 256,
                v.utf8.allSatisfy({ isTokenByte($0) })
            else {
                throw Reason("a token is 16 to 256 characters of A-Z a-z 0-9 - _ . ~ (URL- and header-safe)")
            }
            a.token = Array(v.utf8)
        },
        "profiles": { a, v throws(Reason) in a.profiles = ConfigurationFile.listItems(v) },
        "grants": { a, v throws(Reason) in
            var grants: Set<WebGrant> = []
            for item in ConfigurationFile.listItems(v) {
                guard let grant = WebGrant(rawValue: item) else {
                    throw Reason("unknown grant '\(item)' (grants: \(WebGrant.allCases.map(\.rawValue).joined(separator: " ")))")
                }
                grants.insert(grant)
            }
            a.grants = grants
        },
        "max-connections": { a, v throws(Reason) in a.maxConnections = try ConfigurationFile.count(in: 1...200)(v) }
    ]

    /// The characters of a token: RFC 3986's unreserved set, which needs no escaping in a query and
    /// is a valid `Sec-WebSocket-Protocol` token.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Applies `text` (the contents of `file`) over `configuration`.
    public static func parse(_ text: String, file: String, into configuration: inout BridgeConfiguration)
        throws(ConfigurationError)
    {
        enum Section { case bridge, limits, app(Int) }
        var section: Section?
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            func fail(_ reason: String) -> ConfigurationError { ConfigurationError(file: file, line: lineNumber, reason: reason) }
            var line = KeyValueFile.trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            line = KeyValueFile.withoutTrailingComment(line)
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw fail("a section header must end with ']'") }
                let words = ConfigurationFile.listItems(String(line.dropFirst().dropLast()))
                switch words.first {
                case "bridge" where words.count == 1: section = .bridge
                case "limits" where words.count == 1: section = .limits
                case "app" where words.count == 2:
                    let name = words[1]
                    guard name.utf8.allSatisfy({ isTokenByte($0) }), name.utf8.count <= 64 else {
                        throw fail("an app's name is up to 64 characters of A-Z a-z 0-9 - _ . ~")
                    }
                    if let index = configuration.apps.firstIndex(where: { $0.name == name }) {
                        section = .app(index)
                    } else {
                        configuration.apps.append(WebApp(name: name))
                        section = .app(configuration.apps.count - 1)
                    }
                default: throw fail("unknown section [\(words.joined(separator: " "))] (sections: [bridge] [limits] [app NAME])")
                }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail("expected 'key = value', a [section] header or a # comment")
            }
            let name = KeyValueFile.trimmed(line[..<equals])
            let value = KeyValueFile.trimmed(line[line.index(after: equals)...])
            guard let section else { throw fail("'\(name)' before any [section] header") }
            do throws(Reason) {
                switch section {
                case .bridge:
                    guard let apply = bridgeKeys[name] else {
                        throw Reason("unknown key in [bridge] (keys: \(bridgeKeys.keys.sorted().joined(separator: " ")))")
                    }
                    try apply(&configuration, value)
                case .limits:
                    guard let apply = limitKeys[name] else {
                        throw Reason("unknown key in [limits] (keys: \(limitKeys.keys.sorted().joined(separator: " ")))")
                    }
                    try apply(&configuration, value)
                case .app(let index):
                    guard let apply = appKeys[name] else {
                        throw Reason("unknown key in [app] (keys: \(appKeys.keys.sorted().joined(separator: " ")))")
                    }
                    try apply(&configuration.apps[index], value)
                }
            } catch {
                throw fail("\(name): \(error.text)")
            }
        }
    }

    /// Checks what no single line can: every app has an origin and a token, no two apps share a token
    /// (the token names the app) or an origin, and the message limit holds a frame.
    public static func validate(_ configuration: BridgeConfiguration, file: String) throws(ConfigurationError) {
        func fail(_ reason: String) -> ConfigurationError { ConfigurationError(file: file, line: nil, reason: reason) }
        for app in configuration.apps {
            guard !app.origins.isEmpty else { throw fail("[app \(app.name)] has no origin") }
            guard !app.token.isEmpty else { throw fail("[app \(app.name)] has no token") }
        }
        for (i, a) in configuration.apps.enumerated() {
            for b in configuration.apps[(i + 1)...] {
                if a.token == b.token { throw fail("[app \(a.name)] and [app \(b.name)] have the same token") }
                if let shared = a.origins.first(where: { b.origins.contains($0) }) {
                    throw fail("[app \(a.name)] and [app \(b.name)] both list the origin \(shared)")
                }
            }
        }
        if configuration.maxMessageSize < configuration.maxFrameSize {
            throw fail(
                "max-message-size (\(configuration.maxMessageSize)) is smaller than max-frame-size (\(configuration.maxFrameSize))"
            )
        }
    }

    /// The configuration as a file, tokens left out: what `--check-config` prints.
    public static func render(_ c: BridgeConfiguration) -> String {
        var text =
            "[bridge]\nport = \(c.port)\nlisten = \(c.listen.joined(separator: " "))\nsocket = \(c.daemonSocket)\n\n[limits]\n"
        text +=
            "max-connections = \(c.maxConnections)\nmax-frame-size = \(c.maxFrameSize)\nmax-message-size = \(c.maxMessageSize)\n"
        text += "messages-per-second = \(c.messagesPerSecond)\nmessage-burst = \(c.messageBurst)\n"
        text += "handshake-timeout = \(c.handshakeTimeoutMilliseconds)ms\nping-interval = \(c.pingIntervalMilliseconds)ms\n"
        text += "pong-timeout = \(c.pongTimeoutMilliseconds)ms\nmax-outbound = \(c.maxOutboundBytes)\n"
        for app in c.apps {
            text +=
                "\n[app \(app.name)]\norigin = \(app.origins.joined(separator: " "))\ntoken = (\(app.token.count) characters, not shown)\n"
            text +=
                "profiles = \(app.profiles.joined(separator: " "))\ngrants = \(app.grants.map(\.rawValue).sorted().joined(separator: " "))\n"
            text += "max-connections = \(app.maxConnections)\n"
        }
        return text
    }
}
