// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

@testable import SnapbackWire

/// The push's byte path of the snapback reason writes exactly what `TimelineReason.description` says.
@Suite struct PushReasonTests {
    /// The byte path of the hot reasons (ReasonWriter) writes exactly what `description` would.
    @Test(arguments: [
        0.0, 1, 9, 10, 600, 1290, 86_400, 123_456_789, -5, 0.5, 600.25, -0.125, 1e14, 1e300, -1e20,
        599.9996, 0.0005, -0.0005, 999_999_999_999.9995
    ])
    func reasonWriterMatchesDescription(value: Double) {
        let text = withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { buffer in
            var writer = ReasonWriter(buffer)
            writer.put(Seconds(value))
            return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
        }
        #expect(text == Seconds(value).description)
    }

    /// The reason as the seek push's frame carries it: the snapback's worded in place, any other as its text.
    static func written(_ reason: TimelineReason) -> String {
        let bound = 64 + reason.description.utf8.count * 2
        return withUnsafeTemporaryAllocation(byteCount: bound, alignment: 1) { buffer in
            var words = ReasonWriter(buffer)
            if case .snapback(let jump, let from, let to, let breakId, let start) = reason {
                #expect(ReasonWriter.snapbackBound(breakId: breakId) >= reason.description.utf8.count)
                TimelineReason.writeSnapback(jump: jump, from: from, to: to, breakId: breakId, start: start, into: &words)
            } else {
                words.put(reason.description)
            }
            return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<words.count]), as: UTF8.self)
        }
    }

    @Test func snapbackReasonIsWrittenAsItReads() {
        let huge = TimelineReason.snapback(jump: false, from: 1e300, to: 900, breakId: "ü", start: 0)
        #expect(Self.written(huge) == "seek \(Seconds(1e300))→900 skipped unwatched break ü at 0")
        #expect(Self.written(huge) == huge.description)
        let fractions = TimelineReason.snapback(jump: true, from: 0.5, to: 1000, breakId: "mid", start: 630.25)
        #expect(Self.written(fractions) == fractions.description)
    }

    /// Every other reason goes through its text, whole.
    @Test func otherReasonsAreWrittenAsTheirText() {
        let reasons: [TimelineReason] = [
            .seekRefused(from: 610, to: 900, breakId: "m1"), .resume(contentTime: 900, streamTime: 990),
            .breakPlays(.commanded(.snapback(jump: false, from: 1, to: 2, breakId: "b", start: 1.5)), breakId: "b")
        ]
        for reason in reasons { #expect(Self.written(reason) == reason.description) }
    }
}
