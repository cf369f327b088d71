// SPDX-License-Identifier: Apache-2.0
/// SplitMix64 (Steele, Lea, Flood 2014): a small seeded generator shared by the test suites, so every
/// failure replays from its seed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    public mutating func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &self)] }
}

extension SplitMix64 {
    /// One to six random edits of `bytes`, as a mutating fuzzer makes them: bit flips, byte overwrites,
    /// truncation, duplicated ranges, inserted bytes.
    public mutating func mutate(_ bytes: inout [UInt8]) {
        for _ in 0..<(1 + Int(next() % 6)) {
            guard !bytes.isEmpty else { break }
            let i = Int(next() % UInt64(bytes.count))
            switch next() % 5 {
            case 0: bytes[i] ^= UInt8(1 << (next() % 8))
            case 1: bytes[i] = UInt8(truncatingIfNeeded: next())
            case 2: bytes.removeSubrange(i...)
            case 3:
                let j = Int(next() % UInt64(bytes.count))
                bytes.insert(contentsOf: bytes[min(i, j)..<max(i, j)], at: i)
            default: bytes.insert(UInt8(truncatingIfNeeded: next()), at: i)
            }
        }
    }
}
