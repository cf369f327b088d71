/// Why the timeline took a decision, in a few words a log or a CLI can show:
/// "seek 300→900 skipped unwatched break b1 at 600".
///
/// Worded only when read: the seek path keeps the snapback's numbers and writes the words straight into
/// the push (`write(to:)`), without building a String per snapback. Written like a string everywhere
/// else (`reason: "paused at \(t)"`). Two reasons are equal when they read the same.
public struct TimelineReason: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    enum Storage: Sendable {
        case text(String)
        /// "<seek|jump> FROM→TO skipped unwatched break ID at START"
        case snapback(jump: Bool, from: Double, to: Double, breakId: String, start: Double)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    public init(_ text: String) { storage = .text(text) }
    public init(stringLiteral value: String) { storage = .text(value) }
    public init(stringInterpolation: DefaultStringInterpolation) { storage = .text(String(stringInterpolation: stringInterpolation)) }

    /// The snapback's reason.
    public static func snapback(jump: Bool, from: Double, to: Double, breakId: String, start: Double) -> TimelineReason {
        TimelineReason(.snapback(jump: jump, from: from, to: to, breakId: breakId, start: start))
    }

    public var isEmpty: Bool {
        if case .text(let t) = storage { return t.isEmpty }
        return false
    }

    public var description: String {
        switch storage {
        case .text(let t): return t
        case .snapback:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(64)
            write(to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Appends the reason as UTF-8.
    public func write(to bytes: inout [UInt8]) {
        switch storage {
        case .text(var t):
            t.withUTF8 { bytes.append(contentsOf: $0) }
        case .snapback(let jump, let from, let to, let breakId, let start):
            append(jump ? "jump " : "seek ", to: &bytes)
            Seconds(from).append(to: &bytes)
            append("→", to: &bytes)
            Seconds(to).append(to: &bytes)
            append(" skipped unwatched break ", to: &bytes)
            var id = breakId
            id.withUTF8 { bytes.append(contentsOf: $0) }
            append(" at ", to: &bytes)
            Seconds(start).append(to: &bytes)
        }
    }

    @inline(__always)
    private func append(_ s: StaticString, to bytes: inout [UInt8]) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public static func == (a: TimelineReason, b: TimelineReason) -> Bool { a.description == b.description }
}
