// SPDX-License-Identifier: Apache-2.0
import Glibc

// Times and numbers as the CLI prints them, without Foundation.

/// `m:ss` (or `h:mm:ss`), with milliseconds when the time is not whole: `5:00`, `16:20`, `1:02:03`,
/// `0:07.5`.
public func clock(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "\(seconds)" }
    let millis = Int64((abs(seconds) * 1000).rounded())
    let sign = seconds < 0 && millis != 0 ? "-" : ""
    let whole = millis / 1000
    let h = whole / 3600, m = (whole / 60) % 60, s = whole % 60
    var text = sign + (h > 0 ? "\(h):\(pad2(m)):\(pad2(s))" : "\(m):\(pad2(s))")
    var fraction = millis % 1000
    if fraction != 0 {
        var digits = 3
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        let f = String(fraction)
        text += "." + String(repeating: "0", count: digits - f.count) + f
    }
    return text
}

public func pad2(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

/// A number with a fixed count of decimals, without Foundation: `fixed(13.456, 1)` = "13.5".
public func fixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int64((abs(value) * scale).rounded())
    let sign = value < 0 && scaled != 0 ? "-" : ""
    let p = Int64(scale)
    let whole = scaled / p
    guard decimals > 0 else { return sign + String(whole) }
    let f = String(scaled % p)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - f.count) + f
}

/// Left-aligns `text` in `width` columns.
public func padRight(_ text: String, _ width: Int) -> String {
    let n = text.count
    return n >= width ? text : text + String(repeating: " ", count: width - n)
}

/// Right-aligns `text` in `width` columns.
public func padLeft(_ text: String, _ width: Int) -> String {
    let n = text.count
    return n >= width ? text : String(repeating: " ", count: width - n) + text
}

/// Unix seconds as `2025-01-31 12:34:56 UTC`.
public func utcDate(_ unixSeconds: Double) -> String {
    guard unixSeconds.isFinite, unixSeconds > 0 else { return "-" }
    var t = time_t(unixSeconds)
    var parts = tm()
    guard gmtime_r(&t, &parts) != nil else { return "-" }
    let year = Int64(parts.tm_year) + 1900
    return "\(year)-\(pad2(Int64(parts.tm_mon + 1)))-\(pad2(Int64(parts.tm_mday))) "
        + "\(pad2(Int64(parts.tm_hour))):\(pad2(Int64(parts.tm_min))):\(pad2(Int64(parts.tm_sec))) UTC"
}
