import SnapbackTimeline
import Testing
@Suite struct ZZProbe {
    @Test func probe() throws {
        var n = 0
        for seed in PropertyTests.seeds {
            var rng = SplitMix64(seed: seed)
            let tl = RandomTimeline(&rng)
            let layout = try TimelineLayout(breaks: tl.breaks)
            for s in PropertyTests().streamProbes(tl, &rng) where layout.breakContaining(s) == nil {
                let c = layout.contentTime(forStreamTime: s)
                let back = layout.streamTime(forContentTime: c)
                if abs(back - s) > 1e-9 * max(1, s), n < 4 {
                    n += 1
                    let k = layout.breaks.lastIndex { $0.start <= s }
                    let nx = layout.breaks.firstIndex { $0.start > s }
                    print("PX seed \(seed) s=\(s) c=\(c) back=\(back)")
                    if let k { let b = layout.breaks[k]; print("PX  prev \(b.id) start=\(b.start) end=\(b.end) dur=\(b.duration) cp=\(layout.contentPosition(ofBreakAt: k))") }
                    if let nx { let b = layout.breaks[nx]; print("PX  next \(b.id) start=\(b.start) end=\(b.end) dur=\(b.duration) cp=\(layout.contentPosition(ofBreakAt: nx))") }
                }
            }
        }
    }
}
