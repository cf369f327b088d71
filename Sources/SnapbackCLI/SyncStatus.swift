// SPDX-License-Identifier: Apache-2.0
/// The sync agent's status file (`snapback-sync(8)`, default `/run/snapback-sync/status`): `key = value`
/// lines, written whole and renamed into place by the agent, read by `snapback status`.
public struct SyncStatus: Equatable, Sendable {
    public enum State: String, Sendable, CaseIterable {
        /// Connected to NATS and to snapbackd, exchanging.
        case connected
        /// Started, or trying NATS again after it was lost (changes wait in the outbox).
        case connecting
        /// NATS has not been reachable for a while; changes wait in the outbox.
        case offline
        /// Something needs an operator: snapbackd unreachable or refusing the agent, a bucket refused.
        case error
    }

    public var state: State
    /// Changes of this box waiting to go out.
    public var outbox: Int
    /// Values of the bucket the agent did not take since it started (each logged once, with its key and why).
    public var skipped: Int
    /// Unix seconds of the last change sent to or merged from the bucket; 0: none yet.
    public var lastExchange: Double
    public var lastError: String
    public var household: String
    public var deviceId: String
    /// The NATS server the agent is connected to, or the configured ones.
    public var server: String
    /// Unix seconds when the agent wrote the file.
    public var updated: Double
    public var pid: Int32

    public init(
        state: State, outbox: Int = 0, skipped: Int = 0, lastExchange: Double = 0, lastError: String = "", household: String = "",
        deviceId: String = "", server: String = "", updated: Double = 0, pid: Int32 = 0
    ) {
        self.state = state
        self.outbox = outbox
        self.skipped = skipped
        self.lastExchange = lastExchange
        self.lastError = lastError
        self.household = household
        self.deviceId = deviceId
        self.server = server
        self.updated = updated
        self.pid = pid
    }

    /// The file's text. Values are one line each (line breaks in an error become spaces).
    public func rendered() -> String {
        func line(_ key: String, _ value: String) -> String {
            let flat = String(value.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
            return "\(key) = \(flat)\n"
        }
        return line("state", state.rawValue) + line("outbox", "\(outbox)") + line("skipped", "\(skipped)")
            + line("last-exchange", seconds(lastExchange))
            + line("last-error", lastError) + line("household", household) + line("device-id", deviceId)
            + line("server", server) + line("updated", seconds(updated)) + line("pid", "\(pid)")
    }

    /// Reads a status file's text; nil when it has no known state (another file, or a torn one).
    /// Unknown keys are skipped (a later agent may write more); numbers out of range read as 0.
    public static func parse(_ text: String) -> SyncStatus? {
        var status = SyncStatus(state: .error)
        var sawState = false
        for rawLine in text.split(separator: "\n") {
            guard let equals = rawLine.firstIndex(of: "=") else { continue }
            let key = rawLine[..<equals].trimmingSpaces
            let value = String(rawLine[rawLine.index(after: equals)...].trimmingSpaces)
            switch key {
            case "state":
                guard let state = State(rawValue: value) else { return nil }
                status.state = state
                sawState = true
            case "outbox": status.outbox = Int(value).map { max(0, $0) } ?? 0
            case "skipped": status.skipped = Int(value).map { max(0, $0) } ?? 0
            case "last-exchange": status.lastExchange = time(value)
            case "last-error": status.lastError = value
            case "household": status.household = value
            case "device-id": status.deviceId = value
            case "server": status.server = value
            case "updated": status.updated = time(value)
            case "pid": status.pid = Int32(value).map { max(0, $0) } ?? 0
            default: continue
            }
        }
        return sawState ? status : nil
    }

    private static func time(_ text: String) -> Double {
        guard let value = Double(text), value.isFinite, value >= 0, value < 253_402_300_800 else { return 0 }
        return value
    }

    private func seconds(_ value: Double) -> String {
        let milliseconds = value.isFinite && value >= 0 && value < 253_402_300_800 ? Int64(value * 1000) : 0
        return "\(milliseconds / 1000).\(String(String(milliseconds % 1000 + 1000).dropFirst()))"
    }

    /// The part `snapback status` prints: "connected to nats://… (household A), outbox 0, last exchange 3 s ago".
    public func summary(now: Double) -> String {
        var text = state.rawValue
        if !server.isEmpty { text += state == .connected ? " to \(server)" : " (\(server))" }
        if !household.isEmpty { text += ", household \(household)" }
        text += ", outbox \(outbox)"
        if skipped > 0 { text += ", \(skipped) bucket value(s) skipped" }
        if lastExchange > 0 {
            let ago = min(max(0, now - lastExchange), 1e12)
            text += ", last exchange \(ago.isFinite ? Int(ago.rounded(.down)) : 0) s ago"
        } else {
            text += ", no exchange yet"
        }
        return text
    }
}

extension SyncStatus {
    /// The agent's status as `snapback status --json` prints it; `nil`: no agent ("not running").
    public static func json(_ status: SyncStatus?) -> JSON {
        guard let status else { return .object(["state": .string("not running")]) }
        return .object([
            "state": .string(status.state.rawValue), "outbox": .uint(UInt64(status.outbox)),
            "skipped": .uint(UInt64(status.skipped)),
            "last_exchange": status.lastExchange > 0 ? .number(status.lastExchange) : .null,
            "last_error": .string(status.lastError), "household": .string(status.household),
            "device_id": .string(status.deviceId), "server": .string(status.server), "updated": .number(status.updated)
        ])
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return text
    }
}
