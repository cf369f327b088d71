// SPDX-License-Identifier: Apache-2.0
/// A token bucket over messages: `perSecond` on average, `burst` at once. Time is passed in (loop
/// milliseconds), so it needs no timer and costs nothing while a page is quiet.
public struct MessageRate: Sendable {
    public private(set) var perSecond: Int
    public private(set) var burst: Int
    /// Tokens, in thousandths of a message.
    private var level: Int
    private var at: UInt64

    public init(perSecond: Int, burst: Int, now: UInt64) {
        self.perSecond = perSecond
        self.burst = burst
        level = burst * 1000
        at = now
    }

    /// New limits for what comes next (a configuration reload): what the bucket holds is kept, never
    /// more than the new burst, so a reload gives a flooder nothing.
    public mutating func retune(perSecond: Int, burst: Int) {
        self.perSecond = perSecond
        self.burst = burst
        level = min(level, burst * 1000)
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
