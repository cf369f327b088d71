// SPDX-License-Identifier: Apache-2.0
/// A time as an operator types it: seconds (`960`, `7.5`) or `m:ss` / `h:mm:ss` with optional fractions
/// (`16:00`, `1:02:03.5`), as `clock` prints them. nil for anything else, negatives and non-finite values.
public func parseTime(_ text: String) -> Double? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count),
        parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } })
    else { return nil }
    var seconds = 0.0
    for (i, part) in parts.enumerated() {
        let isLast = i == parts.count - 1
        // Only the seconds may have a fraction; minutes and seconds after a colon are below 60.
        guard let value = isLast ? Double(part) : Double(Int(part) ?? -1), value >= 0 else { return nil }
        if i > 0 && value >= 60 { return nil }
        seconds = seconds * 60 + value
    }
    return seconds.isFinite ? seconds : nil
}
