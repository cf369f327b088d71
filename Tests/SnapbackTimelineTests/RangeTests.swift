// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// The timeline checks the wire's ranges again (`Limits`): finite is not enough, a huge number must not
/// reach the shell's conversions through a caller that skipped the wire.
@Suite struct RangeTests {
    @Test(arguments: [1e300, 1e11, Double.greatestFiniteMagnitude])
    func hugeTimesAreOutOfRange(_ t: Double) throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .playheadReported(streamTime: t, rate: 1, playing: true), at: 1001,
            with: .outOfRange(field: "playhead", value: t, limit: Limits.position))
        expectRefused(
            &s, .seekEnded(from: 300, to: t), at: 1001,
            with: .outOfRange(field: "seek target", value: t, limit: Limits.position))
    }

    @Test func hugeRatesAreOutOfRange() throws {
        var s = try Factory.playing(at: 300)
        expectRefused(
            &s, .playheadReported(streamTime: 310, rate: 1e300, playing: true), at: 1001,
            with: .outOfRange(field: "rate", value: 1e300, limit: Limits.rate))
        expectRefused(
            &s, .trickPlayStarted(streamTime: 310, rate: -2000), at: 1001,
            with: .outOfRange(field: "rate", value: -2000, limit: Limits.rate))
    }

    @Test func hugeDurationsAreRejectedAtOpen() {
        expectRejected(
            SessionConfiguration(breaks: [AdBreak(id: "b1", start: 600, duration: 1e300)]),
            with: .outOfRange(field: "break b1 duration", value: 1e300, limit: Limits.duration))
        expectRejected(
            SessionConfiguration(contentDuration: 1e300),
            with: .outOfRange(field: "content duration", value: 1e300, limit: Limits.duration))
        expectRejected(
            SessionConfiguration(adRules: AdRules(breakDuration: 1e300)),
            with: .outOfRange(field: "ad rules break duration", value: 1e300, limit: Limits.duration))
        expectRejected(
            SessionConfiguration(policy: Factory.policy { $0.bookmarkInterval = 1e17 }),
            with: .outOfRange(field: "bookmark interval", value: 1e17, limit: Limits.duration))
    }

    @Test func outOfRangeIsInvalidArgumentAndSaysTheRange() {
        let error = TimelineError.outOfRange(field: "playhead", value: 1e300, limit: Limits.position)
        #expect(error.category == .invalidArgument)
        #expect(error.description == "playhead must be a time from 0 to 1e10 seconds (got 1e+300)")
    }
}
