// SPDX-License-Identifier: Apache-2.0
/// A token bucket over messages: `perSecond` on average, `burst` at once. Time is passed in (loop
/// milliseconds), so it needs no timer and costs nothing while a page is quiet.
public struct MessageRate: Sendable {
    public let perSecond: Int
    public let burst: Int
    /// Tokens, in thousandths of a message.
    private var level: Int
    private var at: UInt64

    public init(perSecond: Int, burst: Int, now: UInt64) {
        self.perSecond = perSecond
        self.burst = burst
        level = burst * 1000
        at = now
    }

    /// Takes one message at `now`; false when the page is over its rate.
    public mutating func admit(now: UInt64) -> Bool {
        if now > at {
            let elapsed = min(now - at, 3_600_000)
            level = min(burst * 1000, level + Int(elapsed) * perSecond)
            at = now
        }
        guard level >= 1000 else { return false }
        level -= 1000
        return true
    }
}
