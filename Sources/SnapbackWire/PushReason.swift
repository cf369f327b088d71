import SnapbackTimeline

/// A seek push's reason as the hand-written encoder writes it: the snapback's — the round trip's — worded
/// straight into the frame from its numbers and break id, without building a String; any other as its
/// text (`TimelineReason.description`, the same words).
enum PushReason {
    case text(String)
    /// "<seek|jump> FROM→TO skipped unwatched break ID at START"
    case snapback(jump: Bool, from: Double, to: Double, breakId: String, start: Double)

    init(_ reason: TimelineReason) {
        if case .snapback(let jump, let from, let to, let breakId, let start) = reason {
            self = .snapback(jump: jump, from: from, to: to, breakId: breakId, start: start)
        } else {
            self = .text(reason.description)
        }
    }

    var isEmpty: Bool {
        if case .text(let t) = self { return t.isEmpty }
        return false
    }

    /// At least as many bytes as the reason takes in UTF-8 (``write(into:)`` never writes more).
    var utf8CountBound: Int {
        switch self {
        case .text(let t): return t.utf8.count
        // The literals take 37 bytes and a time at most 25 (a sign, 15 digits, a point, 3 decimals, or
        // Swift's own form of a huge value): 160 leaves room.
        case .snapback(_, _, _, let breakId, _): return 160 + breakId.utf8.count
        }
    }

    /// Writes the reason as UTF-8 at the start of `buffer` (sized with ``utf8CountBound``); returns how
    /// many bytes it wrote.
    func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        switch self {
        case .text(var t):
            return t.withUTF8 { text in
                let n = min(text.count, buffer.count)
                if n > 0 { buffer.baseAddress!.copyMemory(from: text.baseAddress!, byteCount: n) }
                return n
            }
        case .snapback(let jump, let from, let to, let breakId, let start):
            var id = breakId
            return id.withUTF8 { idBytes in
                var w = ReasonWriter(buffer)
                w.put(jump ? "jump " : "seek ")
                w.put(Seconds(from))
                w.put("→")
                w.put(Seconds(to))
                w.put(" skipped unwatched break ")
                w.put(UnsafeRawBufferPointer(idBytes))
                w.put(" at ")
                w.put(Seconds(start))
                return w.count
            }
        }
    }
}

/// Writes a reason into a buffer sized for it: literals, break ids and whole seconds are copied in
/// place; a time with a fraction (rare in reasons) goes through `Seconds.description`.
struct ReasonWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    @inline(__always)
    mutating func put(_ s: StaticString) {
        s.withUTF8Buffer { put(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)  // literals of known length: the copy folds into a few moves
    mutating func put(_ bytes: UnsafeRawBufferPointer) {
        let n = min(bytes.count, buffer.count - count)
        guard n > 0 else { return }
        let to = buffer.baseAddress! + count
        let from = bytes.baseAddress!
        if n <= 32 {
            // The literals and ids of a reason are short: a byte loop beats a call into memcpy.
            for i in 0..<n { to.storeBytes(of: from.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self) }
        } else {
            to.copyMemory(from: from, byteCount: n)
        }
        count += n
    }

    mutating func put(_ t: Seconds) {
        guard let whole = t.wholeSeconds, buffer.count - count >= 20 else {
            var text = t.description
            text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
            return
        }
        var n = whole.magnitude
        if whole < 0 { buffer[count] = UInt8(ascii: "-"); count += 1 }
        var digits = 1
        var m = n
        while m >= 10 { m /= 10; digits += 1 }
        var i = count + digits
        count = i
        repeat {
            i -= 1
            buffer[i] = UInt8(truncatingIfNeeded: n % 10) &+ UInt8(ascii: "0")
            n /= 10
        } while n > 0
    }
}
