// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import SnapbackSync

/// The agent's poll timeout: none at idle (an event only), at once with work left, else until the earliest
/// timer, rounded up so that the poll never returns before it is due.
@Suite struct AgentTimersTests {
    @Test func noTimerWaitsForAnEventAndWorkLeftDoesNotWait() {
        let now = ContinuousClock.now
        var timers = AgentTimers()
        #expect(timers.earliest == nil)
        #expect(timers.pollTimeout(now: now) == -1)
        timers.again = true
        #expect(timers.pollTimeout(now: now) == 0)
    }

    @Test func theEarliestTimerDecidesRoundedUp() {
        let now = ContinuousClock.now
        var timers = AgentTimers()
        timers[.offline] = now + .seconds(10)
        timers[.publish] = now + .microseconds(2_500)
        #expect(timers.pollTimeout(now: now) == 3)
        timers[.publish] = nil
        #expect(timers.pollTimeout(now: now) == 10_000)
        timers[.snapbackd] = now - .seconds(1)
        #expect(timers.pollTimeout(now: now) == 0)
        // A deadline beyond what poll takes waits as long as it can.
        var far = AgentTimers()
        far[.nats] = now + .seconds(10_000_000)
        #expect(far.pollTimeout(now: now) == Int32.max)
    }
}
