import SnapbackTimeline
import Testing
@Suite struct ZZProbe {
    @Test func probe() throws {
        let p = Factory.policy { $0.cooldown = 300 }
        var (s, _) = try Factory.session(breaks: Factory.threeBreaks, contentDuration: 2400, policy: p, watched: ["m1"], lastBreakCompletedAt: 900)
        try s.report(300, at: 1000)
        print("PX cooldown seek into watched:", try s.seek(from: 300, to: 630, at: 1001))
        var (s2, _) = try Factory.session(breaks: Factory.threeBreaks, contentDuration: 2400, policy: p, watched: ["m1"], lastBreakCompletedAt: 900)
        try s2.report(590, at: 1000)
        print("PX cooldown playback into watched:", try s2.report(600.5, at: 1010), s2.snapshot(at: 1010).phase)
        var (s3, _) = try Factory.session(policy: Factory.policy { $0.resumeBreaks = .none }, resume: 900)
        print("PX stale 0 after resume none:", try s3.report(0, at: 1000.1))
        print("PX arrive:", try s3.report(990, at: 1000.5), s3.isWatched("pre"))
    }
}
