@testable import SnapbackTimeline
import Testing

@Suite struct ReasonTextTests {
    /// The byte path of the hot reasons writes exactly what `description` would.
    @Test(arguments: [0.0, 1, 9, 10, 600, 1290, 86_400, 123_456_789, -5, 0.5, 600.25, -0.125, 1e14, 1e300, -1e20])
    func secondsAppendMatchesDescription(value: Double) {
        var bytes: [UInt8] = []
        Seconds(value).append(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == Seconds(value).description)
    }

    @Test func snapbackReasonReadsAsTheInterpolationDid() {
        #expect(TimelineReason.snapback(jump: false, from: 300, to: 900, breakId: "b1", start: 600).description
                == "seek 300→900 skipped unwatched break b1 at 600")
        #expect(TimelineReason.snapback(jump: true, from: 0.5, to: 1000, breakId: "mid", start: 630.25).description
                == "jump 0.5→1000 skipped unwatched break mid at 630.25")
        var bytes: [UInt8] = []
        TimelineReason.snapback(jump: false, from: 1e300, to: 900, breakId: "ü", start: 0).write(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "seek \(Seconds(1e300))→900 skipped unwatched break ü at 0")
    }
}
