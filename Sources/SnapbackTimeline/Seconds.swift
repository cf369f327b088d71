/// Formats a time in seconds for reasons and logs without Foundation: `600`, `600.5`, `0.125`.
public struct Seconds: CustomStringConvertible, Sendable {
    public let value: Double
    public init(_ value: Double) { self.value = value }

    public var description: String {
        // Huge times (a peer may send 1e300) do not fit the millisecond form: print them as Swift does.
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        let millis = (value * 1000).rounded()
        let negative = millis < 0
        let m = Int64(abs(millis))
        let whole = m / 1000
        var frac = m % 1000
        var text = (negative ? "-" : "") + String(whole)
        if frac != 0 {
            var digits = 3
            while frac % 10 == 0 { frac /= 10; digits -= 1 }
            let s = String(frac)
            text += "." + String(repeating: "0", count: digits - s.count) + s
        }
        return text
    }
}
