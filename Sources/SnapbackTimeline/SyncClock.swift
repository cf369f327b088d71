// SPDX-License-Identifier: Apache-2.0
/// The hybrid logical clock of household sync (docs/sync.md): every change to a synced bookmark carries a
/// ``SyncStamp``, and the greater stamp wins. Pure: the wall time is passed in, nothing is read or stored
/// here (the store keeps the clock's state across restarts).

/// Why a number or a name from a peer was refused where it entered.
public enum SyncInputError: Error, Sendable, Equatable, CustomStringConvertible {
    case outOfRange(field: String, allowed: String)

    public var description: String {
        switch self {
        case .outOfRange(let field, let allowed): return "\(field) out of range: \(allowed)"
        }
    }
}

/// The name a box signs its changes with: 1 to 64 bytes of ASCII letters, digits, `.`, `_` and `-`, so
/// that it compares byte by byte the same everywhere and fits any key alphabet.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let text: String
    public static let maxBytes = 64

    public init(_ text: String) throws(SyncInputError) {
        guard Self.isValid(text) else {
            throw .outOfRange(field: "device id", allowed: "1 to \(Self.maxBytes) bytes of A-Z a-z 0-9 . _ -")
        }
        self.text = text
    }

    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...maxBytes).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F
                || b == 0x2D
        }
    }

    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.text.utf8.lexicographicallyPrecedes(b.text.utf8) }
    public var description: String { text }
}

/// A point of the hybrid logical clock: wall milliseconds as the box saw them (or as a clock it heard
/// from pushed them), a counter for changes within one millisecond or behind a clock that ran ahead, and
/// the device that made the change. Totally ordered, in that order of fields.
public struct SyncStamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch, 0 to ``maxPhysical``.
    public let physical: Int64
    public let counter: UInt32
    /// Who made the change (the record's origin).
    public let device: DeviceID

    /// 9999-12-31T23:59:59.999Z: far beyond any box's life, far below 2^53 (whole milliseconds stay exact
    /// in a double, as the store's migration computes them), and a sum of it and any bounded drift cannot
    /// overflow.
    public static let maxPhysical: Int64 = 253_402_300_799_999

    /// A stamp from numbers as a peer sends them: refused unless each is in range.
    public init(physical: UInt64, counter: UInt64, device: String) throws(SyncInputError) {
        guard physical <= UInt64(Self.maxPhysical) else {
            throw .outOfRange(field: "stamp physical time", allowed: "0 to \(Self.maxPhysical) ms")
        }
        guard counter <= UInt64(UInt32.max) else {
            throw .outOfRange(field: "stamp counter", allowed: "0 to \(UInt32.max)")
        }
        self.init(checkedPhysical: Int64(physical), counter: UInt32(counter), device: try DeviceID(device))
    }

    /// A stamp from values already in range (`physical` is clamped to it).
    public init(physical: Int64, counter: UInt32, device: DeviceID) {
        self.init(checkedPhysical: min(max(physical, 0), Self.maxPhysical), counter: counter, device: device)
    }

    private init(checkedPhysical: Int64, counter: UInt32, device: DeviceID) {
        self.physical = checkedPhysical
        self.counter = counter
        self.device = device
    }

    public static func < (a: SyncStamp, b: SyncStamp) -> Bool {
        if a.physical != b.physical { return a.physical < b.physical }
        if a.counter != b.counter { return a.counter < b.counter }
        return a.device < b.device
    }

    /// The least (physical, counter) after this one, signed by `device`: the counter's next value, or the
    /// next millisecond once the counter is at its top. At the top of both it stays (year 9999 with four
    /// billion changes in its last millisecond: saturating rather than trapping).
    public func successor(by device: DeviceID) -> SyncStamp {
        if counter < UInt32.max { return SyncStamp(checkedPhysical: physical, counter: counter + 1, device: device) }
        if physical < Self.maxPhysical { return SyncStamp(checkedPhysical: physical + 1, counter: 0, device: device) }
        return SyncStamp(checkedPhysical: physical, counter: counter, device: device)
    }

    public var description: String { "\(physical).\(counter)@\(device)" }

    /// Whole milliseconds of a wall time in seconds, clamped to the stamp's range: a clock that reads
    /// NaN, negative or 1e300 gives 0 or ``maxPhysical``, never a trap.
    public static func milliseconds(ofSeconds seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        let ms = (seconds * 1000).rounded(.down)
        return ms >= Double(maxPhysical) ? maxPhysical : Int64(ms)
    }
}

/// A box's hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", 2014): the greatest
/// (physical, counter) it has issued or adopted.
///
/// - A change made here is stamped after everything the clock has seen: max(now, last) and a counter.
/// - A stamp heard from another box is adopted (`receive`) so that this box's later changes order after
///   it even when this box's wall clock is behind the other's — but only up to ``maxAheadMilliseconds``
///   past this box's own time: a box whose clock is an hour ahead must not drag every box of the
///   household an hour ahead with it (docs/sync.md, "The clock").
/// - A change to a record stamped beyond what the clock adopted is stamped after that record anyway
///   (`stamp(now:after:)`): the hand-off from one box to another orders after what the second box read,
///   whatever the clocks say.
public struct HybridLogicalClock: Sendable, Equatable {
    public let device: DeviceID
    /// How far past this box's wall time a heard stamp may move the clock.
    public let maxAheadMilliseconds: Int64
    /// The greatest (physical, counter) issued or adopted.
    public private(set) var physical: Int64
    public private(set) var counter: UInt32

    /// 60 s: more than two boxes' clocks drift apart between NTP syncs (a 20 ppm crystal gains 1.7 s a
    /// day, under a minute in a month without NTP), far less than a clock that was simply set wrong.
    public static let defaultMaxAheadMilliseconds: Int64 = 60_000
    /// The cap itself is bounded: a day. A wider one would let a wrong clock spread as if it were drift.
    public static let maxAheadRange: ClosedRange<Int64> = 0...86_400_000

    /// A clock that resumes from its saved state (`physical`, `counter`: what the store kept).
    public init(
        device: DeviceID, maxAheadMilliseconds: Int64 = defaultMaxAheadMilliseconds, physical: Int64 = 0,
        counter: UInt32 = 0
    ) {
        self.device = device
        self.maxAheadMilliseconds = min(max(maxAheadMilliseconds, Self.maxAheadRange.lowerBound), Self.maxAheadRange.upperBound)
        self.physical = min(max(physical, 0), SyncStamp.maxPhysical)
        self.counter = counter
    }

    /// The clock's state as a stamp of this device.
    public var last: SyncStamp { SyncStamp(physical: physical, counter: counter, device: device) }

    /// Stamps a change made on this box at wall time `now` (seconds since the epoch).
    public mutating func tick(now: Double) -> SyncStamp {
        let wall = SyncStamp.milliseconds(ofSeconds: now)
        if wall > physical {
            physical = wall
            counter = 0
        } else {
            advanceCounter()
        }
        return last
    }

    /// Stamps a change made on this box to a record stamped `previous` (nil: a record it did not hold):
    /// after the clock and after `previous`, which is adopted first within the cap.
    public mutating func stamp(now: Double, after previous: SyncStamp?) -> SyncStamp {
        guard let previous else { return tick(now: now) }
        receive(previous, now: now)
        let stamp = tick(now: now)
        return stamp > previous ? stamp : previous.successor(by: device)
    }

    /// Adopts a stamp heard from another box (or read from the store), capped at this box's wall time
    /// plus ``maxAheadMilliseconds``. The stamp itself is kept as it is wherever it is stored: capping it
    /// there would make boxes with different clocks keep different winners (docs/sync.md).
    public mutating func receive(_ remote: SyncStamp, now: Double) {
        let cap = SyncStamp.milliseconds(ofSeconds: now) + maxAheadMilliseconds
        if remote.physical > cap {
            // Adopt the cap (if it is ahead of the clock), not the stamp.
            if cap > physical {
                physical = cap
                counter = 0
            }
            return
        }
        if remote.physical > physical {
            physical = remote.physical
            counter = remote.counter
        } else if remote.physical == physical, remote.counter > counter {
            counter = remote.counter
        }
    }

    private mutating func advanceCounter() {
        if counter < UInt32.max {
            counter += 1
        } else if physical < SyncStamp.maxPhysical {
            physical += 1
            counter = 0
        }
    }
}
