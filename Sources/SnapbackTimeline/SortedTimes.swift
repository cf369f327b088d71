/// A sorted array of times with an upper-bound search that stays fast for very long arrays: a binary
/// search over every 64th value (small enough to stay in L1), then one over the block of 64 it picked.
/// A plain binary search over 100,000 values pays a cache miss at most of its 17 steps.
struct SortedTimes: Sendable, Equatable {
    private(set) var values: [Double] = []
    /// `summary[j] = values[j * blockSize]`.
    private var summary: [Double] = []
    static let blockSize = 64

    init() {}

    init(_ sorted: [Double]) {
        values = sorted
        summary = stride(from: 0, to: sorted.count, by: Self.blockSize).map { sorted[$0] }
    }

    var count: Int { values.count }

    subscript(i: Int) -> Double { values[i] }

    /// The number of values `<= x`.
    @inline(__always)
    func countAtOrBelow(_ x: Double) -> Int {
        // Blocks whose first value is <= x.
        var lo = 0, hi = summary.count
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            if summary[mid] <= x { lo = mid &+ 1 } else { hi = mid }
        }
        if lo == 0 { return 0 }
        // The answer lies in block lo − 1: all of it before is <= x, the next block's first value is > x.
        var low = (lo &- 1) &* Self.blockSize
        var high = min(low &+ Self.blockSize, values.count)
        while low < high {
            let mid = (low &+ high) >> 1
            if values[mid] <= x { low = mid &+ 1 } else { high = mid }
        }
        return low
    }
}
