// SPDX-License-Identifier: Apache-2.0
import SnapbackTestSupport
import Testing

@testable import SnapbackTimeline

@Suite struct ReasonTextTests {
    /// Milliseconds rounded without libm agree with `rounded()` (halves away from zero), halves and
    /// values next to them included.
    @Test func roundedMillisAgreesWithTheStandardLibrary() {
        var values: [Double] = [0, -0.0, 0.0005, -0.0005, 0.0015, 2.5e-4, 1e14, -1e14, 9.999999e14, 4503599627370.4995]
        for k in -2000...2000 {
            let half = (Double(k) + 0.5) / 1000
            values += [half, half.nextUp, half.nextDown, Double(k) / 7]
        }
        var generator = SplitMix64(seed: 0x5EC0_4D5)
        for _ in 0..<20_000 {
            // Every magnitude up to 1e15, both signs.
            let exponent = Int.random(in: 0...14, using: &generator)
            var scale = 1.0
            for _ in 0..<exponent { scale *= 10 }
            values.append(Double.random(in: -scale...scale, using: &generator))
        }
        for v in values where abs(v) < 1e15 {
            #expect(Seconds.roundedMillis(v) == Int64((v * 1000).rounded()), "\(v)")
        }
    }

    @Test func snapbackReasonReadsAsTheInterpolationDid() {
        #expect(
            TimelineReason.snapback(jump: false, from: 300, to: 900, breakId: "b1", start: 600).description
                == "seek 300→900 skipped unwatched break b1 at 600")
        #expect(
            TimelineReason.snapback(jump: true, from: 0.5, to: 1000, breakId: "mid", start: 630.25).description
                == "jump 0.5→1000 skipped unwatched break mid at 630.25")
    }
}
