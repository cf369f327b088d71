// SPDX-License-Identifier: Apache-2.0
/// Where a reason's words go. A reason is worded once, on this: into a String for the log, the CLI and
/// every push (`TimelineReason.description`), and, for the snapback's — the round trip's —, straight into
/// the frame of its seek push, which must not allocate (SnapbackWire's `ReasonWriter`).
public protocol ReasonText {
    /// A piece of the wording itself. Labelled, so that a literal cannot reach `put(_: String)` instead: a
    /// string literal prefers String, the default literal type, over an unlabelled StaticString overload.
    mutating func put(literal: StaticString)
    mutating func put(_ text: String)
    mutating func put(_ time: Seconds)
}

extension TimelineReason {
    /// The words of `.snapback`: "<seek|jump> FROM→TO skipped unwatched break ID at START".
    @inlinable @inline(__always)
    public static func writeSnapback<W: ReasonText>(
        jump: Bool, from: Double, to: Double, breakId: String, start: Double, into w: inout W
    ) {
        w.put(literal: jump ? "jump " : "seek ")
        w.put(Seconds(from))
        w.put(literal: "→")
        w.put(Seconds(to))
        w.put(literal: " skipped unwatched break ")
        w.put(breakId)
        w.put(literal: " at ")
        w.put(Seconds(start))
    }
}

/// A reason's words as a String.
struct StringReasonText: ReasonText {
    var text = ""
    mutating func put(literal: StaticString) { literal.withUTF8Buffer { text += String(decoding: $0, as: UTF8.self) } }
    mutating func put(_ text: String) { self.text += text }
    mutating func put(_ time: Seconds) { text += time.description }
}
