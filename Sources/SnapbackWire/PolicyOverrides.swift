// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// `snapback.v1.PolicyOverrides`: changes to a session's preset. Every field of `AdPolicy` can be
/// overridden, by its own name (`overrides.cooldown = 90`); nil keeps the preset's value.
///
/// The fields are `AdPolicy.fields`, the one table of them: nothing here names a field.
@dynamicMemberLookup
public struct PolicyOverrides: Sendable, Equatable {
    /// The overridden values, at their fields; the others hold `AdPolicy()`'s and are never read.
    public private(set) var values = AdPolicy()
    /// Bit i set: `AdPolicy.fields[i]` is overridden.
    private var overridden: UInt64 = 0

    public init() {}

    /// Whether no field is overridden.
    public var isEmpty: Bool { overridden == 0 }

    /// The overridden fields, in the table's order.
    public var fields: [AdPolicy.Field] {
        AdPolicy.fields.indices.filter(isOverridden).map { AdPolicy.fields[$0] }
    }

    /// A field's override, nil when it keeps the preset's value.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<AdPolicy, Value>) -> Value? {
        get { isOverridden(Self.index(keyPath)) ? values[keyPath: keyPath] : nil }
        set {
            let i = Self.index(keyPath)
            guard let newValue else {
                overridden &= ~(1 << UInt64(i))
                return
            }
            values[keyPath: keyPath] = newValue
            overridden |= 1 << UInt64(i)
        }
    }

    /// Overrides `field` with its value in `policy`.
    public mutating func set(_ field: AdPolicy.Field, from policy: AdPolicy) {
        let i = Self.index(field.keyPath)
        field.copy(from: policy, to: &values)
        overridden |= 1 << UInt64(i)
    }

    /// `policy` with every overridden field replaced.
    public func applied(to policy: AdPolicy) -> AdPolicy {
        var p = policy
        for field in fields { field.copy(from: values, to: &p) }
        return p
    }

    /// The overrides that turn `base` into `policy`: every field where they differ.
    public init(from base: AdPolicy, to policy: AdPolicy) {
        for field in AdPolicy.fields where !field.same(base, policy) { set(field, from: policy) }
    }

    public static func == (a: PolicyOverrides, b: PolicyOverrides) -> Bool {
        a.overridden == b.overridden && a.fields.allSatisfy { $0.same(a.values, b.values) }
    }

    private func isOverridden(_ i: Int) -> Bool { overridden & (1 << UInt64(i)) != 0 }

    /// The row of a key path. Every stored property of `AdPolicy` has one (`PolicyFieldTableTests`), so
    /// only a new property without its row can miss: a programming error.
    private static func index(_ keyPath: AnyKeyPath) -> Int {
        guard let i = AdPolicy.fields.firstIndex(where: { $0.keyPath == keyPath }) else {
            preconditionFailure("AdPolicy has no row in AdPolicy.fields for \(keyPath)")
        }
        return i
    }
}

// The wire form, field by field through the table: each row of `AdPolicy.fields` has its member of the
// generated message at the same position in `protoRows` (generated from the message's fields, in order).
// An enum travels as its Swift position + 1 (0 is UNSPECIFIED: not overridden).
extension PolicyOverrides {
    typealias Proto = SnapbackV1.PolicyOverrides

    /// A member of the generated message, by the kind of its policy field.
    enum ProtoRow: Sendable {
        case flag(WritableKeyPath<Proto, Bool?> & Sendable)
        case seconds(WritableKeyPath<Proto, Double?> & Sendable)
        case count(WritableKeyPath<Proto, UInt32?> & Sendable)
        /// An enum member's number (0: not set), read and written.
        case choice(get: @Sendable (Proto) -> UInt32, set: @Sendable (inout Proto, UInt32) -> Void)

        static func choice<E: RawRepresentable & Sendable>(_ k: WritableKeyPath<Proto, E> & Sendable) -> ProtoRow
        where E.RawValue == UInt32 {
            .choice(get: { $0[keyPath: k].rawValue }, set: { $0[keyPath: k] = E(rawValue: $1)! })
        }
    }

    var proto: Proto {
        var p = Proto()
        for (i, (field, row)) in zip(AdPolicy.fields, Self.protoRows).enumerated() where isOverridden(i) {
            switch (field.kind, row) {
            case (.flag(let k), .flag(let m)): p[keyPath: m] = values[keyPath: k]
            case (.seconds(let k, _), .seconds(let m)): p[keyPath: m] = values[keyPath: k]
            case (.count(let k, _, _), .count(let m)): p[keyPath: m] = UInt32(clamping: values[keyPath: k])
            case (.choice(let c), .choice(_, let set)): set(&p, UInt32(c.position(values) + 1))
            default: preconditionFailure("PolicyOverrides.protoRows: \(field.key) is not of its row's kind")
            }
        }
        return p
    }

    /// The overrides a peer sent; an enum value this version does not know is refused, named with `path`.
    init(proto p: Proto, path: String) throws(WireError) {
        self.init()
        for (field, row) in zip(AdPolicy.fields, Self.protoRows) {
            var policy = AdPolicy()
            switch (field.kind, row) {
            case (.flag(let k), .flag(let m)):
                guard let v = p[keyPath: m] else { continue }
                policy[keyPath: k] = v
            case (.seconds(let k, _), .seconds(let m)):
                guard let v = p[keyPath: m] else { continue }
                policy[keyPath: k] = v
            case (.count(let k, _, _), .count(let m)):
                guard let v = p[keyPath: m] else { continue }
                policy[keyPath: k] = Int(v)
            case (.choice(let c), .choice(let get, _)):
                let number = get(p)
                guard number != 0 else { continue }
                guard number <= UInt32(c.names.count) else { throw unknownEnumValue(path + field.protoName, number) }
                c.assign(&policy, Int(number) - 1)
            default: preconditionFailure("PolicyOverrides.protoRows: \(field.key) is not of its row's kind")
            }
            set(field, from: policy)
        }
    }
}
