// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// The tests' wall-clock bounds (how long to wait for a reply, a log line, an exit) are set for a native
/// run on a loaded machine. Under an emulator (`make test-arm64` runs the aarch64 tests under qemu-user,
/// roughly ten times slower) the same work takes longer: `SNAPBACK_TEST_TIME_SCALE` multiplies every bound
/// that goes through here. Unset it is 1, and it is never less, so a native bound is never loosened.
public enum TestTime {
    public static let scale: Double = {
        guard let text = getenv("SNAPBACK_TEST_TIME_SCALE").map({ String(cString: $0) }),
            let value = Double(text), value.isFinite
        else { return 1 }
        return max(1, value)
    }()

    /// `bound` as long as the run needs.
    public static func scaled(_ bound: Duration) -> Duration { scale == 1 ? bound : bound * scale }

    /// `seconds` as long as the run needs.
    public static func scaled(seconds: Double) -> Double { seconds * scale }
}
