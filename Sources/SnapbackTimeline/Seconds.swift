/// Formats a time in seconds for reasons and logs without Foundation: `600`, `600.5`, `0.125`.
public struct Seconds: CustomStringConvertible, Sendable {
    public let value: Double
    public init(_ value: Double) { self.value = value }

    public var description: String {
        // Huge times (a peer may send 1e300) do not fit the millisecond form: print them as Swift does.
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        let millis = (value * 1000).rounded()
        let m = Int64(millis)
        let whole = m / 1000
        if m % 1000 == 0 { return String(whole) }  // the usual case, one allocation at most
        var frac = abs(m % 1000)
        var text = (m < 0 && whole == 0 ? "-" : "") + String(whole)
        var digits = 3
        while frac % 10 == 0 { frac /= 10; digits -= 1 }
        let s = String(frac)
        text += "." + String(repeating: "0", count: digits - s.count) + s
        return text
    }
}

extension Seconds {
    /// The value as whole seconds when it prints as such (no fraction at millisecond precision).
    var wholeSeconds: Int64? {
        guard value.isFinite, abs(value) < 1e15 else { return nil }
        let millis = Int64((value * 1000).rounded())
        return millis % 1000 == 0 ? millis / 1000 : nil
    }

    /// Appends the same text as `description` as UTF-8, without building a String for the usual case of
    /// whole seconds (the snapback reason is worded on every snapback).
    func append(to bytes: inout [UInt8]) {
        guard value.isFinite, abs(value) < 1e15 else { bytes.append(contentsOf: description.utf8); return }
        let millis = Int64((value * 1000).rounded())
        guard millis % 1000 == 0 else { bytes.append(contentsOf: description.utf8); return }
        var whole = millis / 1000
        if whole < 0 { bytes.append(UInt8(ascii: "-")); whole = -whole }
        // Digits from the right into a small stack buffer (division by the constant 10 is a multiply).
        var digits: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count
            var n = UInt64(whole)
            repeat {
                i -= 1
                buffer[i] = UInt8(truncatingIfNeeded: n % 10) &+ UInt8(ascii: "0")
                n /= 10
            } while n > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
    }
}
