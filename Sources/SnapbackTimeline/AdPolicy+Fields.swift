// SPDX-License-Identifier: Apache-2.0
extension AdPolicy {
    /// One field of the policy as every outside form of it names it.
    ///
    /// ``AdPolicy/fields`` is the one list of them. It drives a session's overrides (which fields a session
    /// changes, applying them, the difference between two policies), the configuration file (the key, its
    /// section, parsing with the key named in the error, printing), and the wire (the `PolicyOverrides`
    /// proto field of the same name and its range check). Adding a field to the policy means adding its
    /// row below, and the proto field.
    public struct Field: Sendable {
        /// The configuration file's key, kebab-case: `skipped-break-choice`. The proto field is the same
        /// words in snake_case (``protoName``), the Swift property the same words in camelCase.
        public let key: String
        public let kind: Kind
        /// Whether the configuration file sets it for every session whatever its preset (`[bookmarks]`:
        /// set-top boxes write to flash), rather than as a change to the default preset (`[policy]`).
        public let deviceWide: Bool

        init(_ key: String, _ kind: Kind, deviceWide: Bool = false) {
            self.key = key
            self.kind = kind
            self.deviceWide = deviceWide
        }

        /// The `PolicyOverrides` proto field: `skipped_break_choice`.
        public var protoName: String { String(key.map { $0 == "-" ? "_" : $0 }) }
    }

    /// What a field holds, with its range (`Limits`) and the key path into the policy.
    public enum Kind: Sendable {
        /// yes/no.
        case flag(WritableKeyPath<AdPolicy, Bool> & Sendable)
        /// Seconds within `Limit`.
        case seconds(WritableKeyPath<AdPolicy, Double> & Sendable, Limit)
        /// A whole number within `wire` from a player; the configuration file takes `configured`.
        case count(WritableKeyPath<AdPolicy, Int> & Sendable, wire: ClosedRange<Int>, configured: ClosedRange<Int>)
        /// One of an enum's values.
        case choice(Choice)
    }

    /// An enum-valued field, by the value's position in `allCases`: the position is what the wire carries
    /// (the proto enum's values are the Swift cases in declaration order, from 1) and the names are what
    /// the configuration file takes (the raw values).
    public struct Choice: Sendable {
        public let keyPath: PartialKeyPath<AdPolicy> & Sendable
        /// The raw values, in declaration order.
        public let names: [String]
        /// The position of the field's value in `names`.
        public let position: @Sendable (AdPolicy) -> Int
        /// Sets the field to the value at a position in `names` (taken modulo their count: callers
        /// check it first).
        public let assign: @Sendable (inout AdPolicy, Int) -> Void

        init<E: RawRepresentable & CaseIterable & Equatable & Sendable>(_ keyPath: WritableKeyPath<AdPolicy, E> & Sendable)
        where E.RawValue == String {
            let cases = Array(E.allCases)
            self.keyPath = keyPath
            names = cases.map(\.rawValue)
            position = { policy in cases.firstIndex(of: policy[keyPath: keyPath]) ?? 0 }
            assign = { policy, position in policy[keyPath: keyPath] = cases[position % cases.count] }
        }
    }

    /// Every field of the policy, in the order of `snapback.v1.PolicyOverrides`' field numbers and, within
    /// each section, of the documentation (`snapbackd.conf(5)`, `config/snapbackd.conf`).
    public static let fields: [Field] = [
        Field("skipped-break-choice", .choice(Choice(\.skippedBreakChoice))),
        Field("seek-gate", .choice(Choice(\.seekGate))),
        Field("enforce-backward-seeks", .flag(\.enforceBackwardSeeks)),
        Field("return-to-target", .choice(Choice(\.returnToTarget))),
        Field("landing-in-unwatched-break", .choice(Choice(\.landingInUnwatchedBreak))),
        Field("skip-watched-break-on-landing", .flag(\.skipWatchedBreakOnLanding)),
        Field("watched-when", .choice(Choice(\.watchedWhen))),
        Field("refuse-seeks-during-unwatched-break", .flag(\.refuseSeeksDuringUnwatchedBreak)),
        Field("watched-break-on-playback", .choice(Choice(\.watchedBreakOnPlayback))),
        Field("snapback-landing-offset", .seconds(\.snapbackLandingOffset, Limits.duration)),
        Field("cooldown", .seconds(\.cooldown, Limits.duration)),
        Field("trick-play-as-seek", .flag(\.trickPlayAsSeek)),
        Field("resume-breaks", .choice(Choice(\.resumeBreaks))),
        Field("preroll-disabled", .flag(\.prerollDisabled)),
        Field("midrolls-disabled", .flag(\.midrollsDisabled)),
        Field("live-snapback", .flag(\.liveSnapback)),
        Field("live-bookmarks", .flag(\.liveBookmarks)),
        // An operator has no use for the benchmark's "no loop guard" (the wire range's top).
        Field(
            "max-snapbacks-per-break",
            .count(\.maxSnapbacksPerBreak, wire: Limits.snapbacksPerBreak, configured: 1...1000)),
        Field("coverage-tolerance", .seconds(\.coverageTolerance, Limits.duration)),
        Field("bookmark-interval", .seconds(\.bookmarkInterval, Limits.duration), deviceWide: true),
        Field("finished-margin", .seconds(\.finishedMargin, Limits.duration), deviceWide: true),
        Field("trick-play-skipped-breaks", .choice(Choice(\.trickPlaySkippedBreaks)))
    ]

    /// The field whose key path this is, if the policy has one.
    public static func field(_ keyPath: AnyKeyPath) -> Field? {
        fields.first { $0.keyPath == keyPath }
    }
}

extension AdPolicy.Field {
    /// The key path into `AdPolicy`.
    public var keyPath: AnyKeyPath {
        switch kind {
        case .flag(let k): return k
        case .seconds(let k, _): return k
        case .count(let k, _, _): return k
        case .choice(let c): return c.keyPath
        }
    }

    /// Whether `a` and `b` hold the same value in this field.
    public func same(_ a: AdPolicy, _ b: AdPolicy) -> Bool {
        switch kind {
        case .flag(let k): return a[keyPath: k] == b[keyPath: k]
        case .seconds(let k, _): return a[keyPath: k] == b[keyPath: k]
        case .count(let k, _, _): return a[keyPath: k] == b[keyPath: k]
        case .choice(let c): return c.position(a) == c.position(b)
        }
    }

    /// Sets this field of `policy` to its value in `source`.
    public func copy(from source: AdPolicy, to policy: inout AdPolicy) {
        switch kind {
        case .flag(let k): policy[keyPath: k] = source[keyPath: k]
        case .seconds(let k, _): policy[keyPath: k] = source[keyPath: k]
        case .count(let k, _, _): policy[keyPath: k] = source[keyPath: k]
        case .choice(let c): c.assign(&policy, c.position(source))
        }
    }

    /// The field's value in `policy` as the configuration file writes it: `yes`, `30`, `0.25`, `if-beyond`.
    public func text(in policy: AdPolicy) -> String {
        switch kind {
        case .flag(let k): return policy[keyPath: k] ? "yes" : "no"
        case .seconds(let k, _): return Self.text(seconds: policy[keyPath: k])
        case .count(let k, _, _): return "\(policy[keyPath: k])"
        case .choice(let c): return c.names[c.position(policy)]
        }
    }

    /// `30`, `0.5`: a number of seconds as the configuration file takes it, exactly (no rounding, so that
    /// a printed configuration reads back the same).
    public static func text(seconds value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return "\(Int(value))" }
        return "\(value)"
    }
}
