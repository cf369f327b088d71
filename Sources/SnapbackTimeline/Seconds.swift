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
