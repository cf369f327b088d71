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

// The wire form, field by field through the table: each row's proto field is found by its name in
// protobuf-c's descriptor. An enum travels as its Swift position + 1 (0 is UNSPECIFIED: not overridden).
extension PolicyOverrides: ProtoFields {
    func write(to m: ProtoBuilder) {
        for field in fields {
            let name = field.protoName
            switch field.kind {
            case .flag(let k): m.set(name, values[keyPath: k])
            case .seconds(let k, _): m.set(name, values[keyPath: k])
            case .count(let k, _, _): m.set(name, UInt32(clamping: values[keyPath: k]))
            case .choice(let c): m.setEnum(name, UInt32(c.position(values) + 1))
            }
        }
    }

    init(_ m: ProtoReader) throws(WireError) {
        self.init()
        for field in AdPolicy.fields where m.isSet(field.protoName) {
            let name = field.protoName
            var policy = AdPolicy()
            switch field.kind {
            case .flag(let k): policy[keyPath: k] = m.bool(name)
            case .seconds(let k, _): policy[keyPath: k] = m.double(name)
            case .count(let k, _, _): policy[keyPath: k] = Int(m.uint32(name))
            case .choice(let c):
                let number = m.enumNumber(name)
                guard number <= UInt32(c.names.count) else { throw unknownEnumValue(m.path + name, number) }
                c.assign(&policy, Int(number) - 1)
            }
            set(field, from: policy)
        }
    }
}
