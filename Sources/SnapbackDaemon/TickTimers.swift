// SPDX-License-Identifier: Apache-2.0
/// Timers that fire together on a shared grid of monotonic time — the periodic bookmarks of every playing
/// session. A timer started for `deadline` is moved to the nearest multiple of `tick` seconds (a tick
/// at most its own delay, so it never moves by more than half of it), and every timer of one grid
/// instant fires from one callback of one underlying timer: in one loop turn, so that the store
/// commits their saves in one transaction, one fdatasync, instead of one each. With a 30-second
/// interval on a 5-second tick, any number of sessions make at most 6 commits per interval; once on
/// the grid a session stays there (30 is a multiple of 5), so only its first save moves.
///
/// Confined to the service's thread, like the service that owns it (which outlives its timers: they
/// are closed with their sessions).
final class TickTimers {
    private let clock: any ServiceClock
    let tick: Double
    private var underlying: (any ServiceTimer)?
    /// Timers by grid instant, each by the order it was made in (the order they fire in).
    private var due: [Double: [UInt64: Member]] = [:]
    /// The instant the underlying timer is set for; nil when it is not set.
    private var armedFor: Double?
    private var made: UInt64 = 0

    init(clock: any ServiceClock, tick: Double) {
        self.clock = clock
        self.tick = tick
    }

    /// Timers started and not yet fired or stopped (a bound the soak test checks).
    var dueCount: Int { due.values.reduce(0) { $0 + $1.count } }

    func makeTimer(_ callback: @escaping () -> Void) -> any ServiceTimer {
        made += 1
        return Member(ticks: self, order: made, callback: callback)
    }

    /// `deadline` moved to the nearest multiple of `tick` seconds (of the delay when that is shorter),
    /// always after `now`; unchanged when the tick is 0 or a value is not finite.
    static func aligned(_ deadline: Double, now: Double, tick: Double) -> Double {
        let step = min(tick, deadline - now)
        guard step > 0, step.isFinite, deadline.isFinite else { return deadline }
        let nearest = (deadline / step).rounded() * step
        return nearest > now && nearest.isFinite ? nearest : deadline
    }

    private func schedule(_ member: Member, afterSeconds seconds: Double) {
        remove(member)
        let now = clock.monotonic()
        // As LoopTimer: NaN and negatives are due at once.
        let deadline = seconds > 0 ? now + seconds : now
        let slot = Self.aligned(deadline, now: now, tick: tick)
        member.slot = slot
        due[slot, default: [:]][member.order] = member
        if armedFor.map({ slot < $0 }) ?? true { arm(slot, now: now) }
    }

    private func remove(_ member: Member) {
        guard let slot = member.slot else { return }
        member.slot = nil
        due[slot]?[member.order] = nil
        if due[slot]?.isEmpty == true { due[slot] = nil }
        // The underlying timer stays set: if it goes off first, `fire()` finds nothing due and moves on.
    }

    private func arm(_ slot: Double, now: Double) {
        if underlying == nil { underlying = clock.makeTimer { [unowned self] in self.fire() } }
        armedFor = slot
        underlying?.start(afterSeconds: slot - now)
    }

    /// Fires every timer of the instant the underlying timer was set for and of any earlier one.
    private func fire() {
        guard let limit = armedFor else { return }
        armedFor = nil
        var firing: [(slot: Double, member: Member)] = []
        for slot in due.keys.filter({ $0 <= limit }).sorted() {
            firing += due.removeValue(forKey: slot)!.sorted { $0.key < $1.key }.map { (slot, $0.value) }
        }
        for (slot, member) in firing {
            // An earlier callback may have stopped it, or started it again (then it is due again).
            guard member.slot == slot, due[slot]?[member.order] !== member else { continue }
            member.slot = nil
            member.callback?()
        }
        if let next = due.keys.min(), armedFor.map({ next < $0 }) ?? true { arm(next, now: clock.monotonic()) }
    }

    final class Member: ServiceTimer {
        unowned let ticks: TickTimers
        let order: UInt64
        var callback: (() -> Void)?
        var slot: Double?

        init(ticks: TickTimers, order: UInt64, callback: @escaping () -> Void) {
            self.ticks = ticks
            self.order = order
            self.callback = callback
        }

        func start(afterSeconds seconds: Double) {
            guard callback != nil else { return }
            ticks.schedule(self, afterSeconds: seconds)
        }

        func stop() { ticks.remove(self) }

        func close() {
            ticks.remove(self)
            callback = nil
        }

        var isActive: Bool { slot != nil }
    }
}
