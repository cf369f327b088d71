// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// A Swift enum that a proto enum mirrors: the proto's values 1, 2, 3… are the Swift cases in
/// declaration order, and 0 is UNSPECIFIED. That one rule is the whole mapping, for every enum of the
/// protocol; `WireEnumTests` checks it case by case against the names in protobuf-c's descriptors
/// (`lastUnwatched` ↔ `SKIPPED_BREAK_CHOICE_LAST_UNWATCHED`), so a proto value added out of step fails
/// there, not on the wire. A client reads a generated message's enum field through it:
/// `SeekReason(proto: decision.seekReason)`.
public protocol ProtoEnum: CaseIterable, Equatable where AllCases == [Self] {
    /// The enum protoc-c generated.
    associatedtype Proto: RawRepresentable where Proto.RawValue == UInt32
    /// The proto value's number: the case's position in `allCases`, plus one.
    var protoNumber: UInt32 { get }
}

extension ProtoEnum {
    /// The proto value.
    @inline(__always)
    public var proto: Proto { Proto(rawValue: protoNumber)! }

    public var protoNumber: UInt32 {
        UInt32(truncatingIfNeeded: (Self.allCases.firstIndex(of: self) ?? -1) + 1)
    }

    /// The case of a proto value; nil for UNSPECIFIED or a value this version does not know (a newer
    /// server's), which a client reads past.
    public init?(proto value: Proto) { self.init(protoNumber: value.rawValue) }

    public init?(protoNumber number: UInt32) {
        guard number >= 1, number <= UInt32(Self.allCases.count) else { return nil }
        self = Self.allCases[Int(number) - 1]
    }

    /// A value from a peer's request: nil for UNSPECIFIED (the caller's default); a value this version
    /// does not know is INVALID_ARGUMENT naming the field.
    static func from(_ value: Proto, field: @autoclosure () -> String) throws(WireError) -> Self? {
        try from(number: value.rawValue, field: field())
    }

    static func from(number: UInt32, field: @autoclosure () -> String) throws(WireError) -> Self? {
        if number == 0 { return nil }
        guard let known = Self(protoNumber: number) else { throw unknownEnumValue(field(), number) }
        return known
    }
}

/// The refusal of an enum value this version does not know (shown as the signed int32 protobuf sent).
func unknownEnumValue(_ field: String, _ raw: UInt32) -> WireError {
    .invalidArgument("\(field): unknown enum value \(Int32(bitPattern: raw))")
}

extension SessionKind: ProtoEnum { public typealias Proto = Snapback__V1__SessionKind }
extension SeekReason: ProtoEnum {
    public typealias Proto = Snapback__V1__SeekReason

    /// A switch, not the scan of `allCases` (an array built per call): the snapback round trip's seek push
    /// carries a reason, and the round trip allocates nothing (`make check-budget`). `ProtoTableTests`
    /// checks it against the declaration order.
    public var protoNumber: UInt32 {
        switch self {
        case .snapback: 1
        case .resumeAfterSnapback: 2
        case .resumeFromBookmark: 3
        case .breakBeforeResume: 4
        case .skipWatchedBreak: 5
        case .skipDuringCooldown: 6
        case .skipDisabledBreak: 7
        case .startOfBreak: 8
        case .seekRefusedDuringAd: 9
        }
    }
}
extension BookmarkTrigger: ProtoEnum { public typealias Proto = Snapback__V1__BookmarkTrigger }
extension BreakSkipReason: ProtoEnum { public typealias Proto = Snapback__V1__BreakSkipReason }
extension TimelineSnapshot.BreakPosition: ProtoEnum { public typealias Proto = Snapback__V1__BreakPosition }
extension TimelineSnapshot.Phase: ProtoEnum { public typealias Proto = Snapback__V1__SessionPhase }
extension DecisionKind: ProtoEnum { public typealias Proto = Snapback__V1__DecisionKind }
extension AdPolicy.SkippedBreakChoice: ProtoEnum { public typealias Proto = Snapback__V1__SkippedBreakChoice }
extension AdPolicy.SeekGate: ProtoEnum { public typealias Proto = Snapback__V1__SeekGate }
extension AdPolicy.ReturnToTarget: ProtoEnum { public typealias Proto = Snapback__V1__ReturnToTarget }
extension AdPolicy.LandingInBreak: ProtoEnum { public typealias Proto = Snapback__V1__LandingInBreak }
extension AdPolicy.WatchedWhen: ProtoEnum { public typealias Proto = Snapback__V1__WatchedWhen }
extension AdPolicy.WatchedBreakOnPlayback: ProtoEnum { public typealias Proto = Snapback__V1__WatchedBreakOnPlayback }
extension AdPolicy.ResumeBreaks: ProtoEnum { public typealias Proto = Snapback__V1__ResumeBreaks }
extension AdPolicy.TrickPlaySkippedBreaks: ProtoEnum { public typealias Proto = Snapback__V1__TrickPlaySkippedBreaks }

extension Optional where Wrapped: ProtoEnum {
    /// The proto value; UNSPECIFIED for nil.
    public var proto: Wrapped.Proto { self?.proto ?? Wrapped.Proto(rawValue: 0)! }
}
