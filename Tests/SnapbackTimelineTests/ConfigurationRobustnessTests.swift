// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// Bad session configurations are rejected with their specific error.
extension RobustnessTests {
    @Test func overlappingBreaksAreRejected() {
        expectRejected(
            SessionConfiguration(
                contentDuration: 1800,
                breaks: [
                    AdBreak(id: "a", start: 600, duration: 60), AdBreak(id: "b", start: 630, duration: 60)
                ]), with: .overlappingBreaks("a", "b"))
    }

    @Test func duplicateBreakIdsAreRejected() {
        expectRejected(
            SessionConfiguration(
                contentDuration: 1800,
                breaks: [
                    AdBreak(id: "a", start: 600, duration: 60), AdBreak(id: "a", start: 1200, duration: 60)
                ]), with: .duplicateBreakId("a"))
    }

    @Test(arguments: [-1.0, .nan, .infinity])
    func aBadContentDurationIsRejected(_ d: Double) {
        expectRejected(SessionConfiguration(contentDuration: d), with: .invalidTime(field: "content duration", value: d))
    }

    @Test func aBreakBeyondTheContentIsRejected() {
        expectRejected(
            SessionConfiguration(contentDuration: 500, breaks: Factory.oneBreak),
            with: .breakOutOfRange(id: "b1", start: 600))
    }

    @Test func aPostRollExactlyAtTheContentEndIsAccepted() throws {
        _ = try TimelineSession(SessionConfiguration(contentDuration: 600, breaks: Factory.oneBreak))
    }

    static let badPolicies: [(String, AdPolicy, Double)] = [
        ("snapback landing offset", Factory.policy { $0.snapbackLandingOffset = .nan }, .nan),
        ("cooldown", Factory.policy { $0.cooldown = -1 }, -1),
        ("coverage tolerance", Factory.policy { $0.coverageTolerance = .infinity }, .infinity),
        ("bookmark interval", Factory.policy { $0.bookmarkInterval = -30 }, -30),
        ("finished margin", Factory.policy { $0.finishedMargin = .nan }, .nan)
    ]

    @Test func badPolicyTimesAreRejected() {
        for (field, policy, value) in Self.badPolicies {
            expectRejected(SessionConfiguration(policy: policy), with: .invalidTime(field: field, value: value))
        }
    }

    @Test func aLoopBoundBelowOneIsRejected() {
        expectRejected(
            SessionConfiguration(policy: Factory.policy { $0.maxSnapbacksPerBreak = 0 }),
            with: .notSupported("max snapbacks per break below 1"))
    }

    @Test func errorsNameTheirCategory() {
        #expect(TimelineError.invalidTime(field: "x", value: -1).category == .invalidArgument)
        #expect(TimelineError.unknownBreak("x").category == .notFound)
        #expect(TimelineError.sessionClosed.category == .failedPrecondition)
        #expect(TimelineError.unexpectedEvent(event: "x", state: "y").category == .failedPrecondition)
        #expect(TimelineError.tooManyBreaks(limit: 1).category == .resourceExhausted)
        #expect(TimelineError.unknownBreak("b9").description == "no ad break with id b9 in this session")
    }
}
