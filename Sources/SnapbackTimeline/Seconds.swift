// SPDX-License-Identifier: Apache-2.0
/// Formats a time in seconds for reasons and logs without Foundation: `600`, `600.5`, `0.125`.
public struct Seconds: CustomStringConvertible, Sendable {
    public let value: Double
    public init(_ value: Double) { self.value = value }

    public var description: String {
        // Huge times (a peer may send 1e300) do not fit the millisecond form: print them as Swift does.
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        let m = Self.roundedMillis(value)
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
    /// `Int64((value * 1000).rounded())` — halves away from zero — without the call into libm's `round`
    /// (three per snapback reason). For |value| < 1e15: the product fits, and subtracting its truncation is
    /// exact (above 2^52 a double has no fraction left).
    @inline(__always)
    static func roundedMillis(_ value: Double) -> Int64 {
        let m = value * 1000
        let whole = Int64(m)
        let fraction = m - Double(whole)
        if fraction >= 0.5 { return whole + 1 }
        if fraction <= -0.5 { return whole - 1 }
        return whole
    }

    /// The value as whole seconds when it prints as such (no fraction at millisecond precision): the
    /// wire's reason writer prints those digit by digit.
    public var wholeSeconds: Int64? {
        guard value.isFinite, abs(value) < 1e15 else { return nil }
        let millis = Self.roundedMillis(value)
        return millis % 1000 == 0 ? millis / 1000 : nil
    }
}
