import CSnapbackProto
import SnapbackTimeline

/// A Swift enum that a proto enum mirrors: the proto's values 1, 2, 3… are the Swift cases in
/// declaration order, and 0 is UNSPECIFIED. That one rule is the whole mapping, for every enum of the
/// protocol; `WireEnumTests` checks it case by case against the names in protobuf-c's descriptors
/// (`lastUnwatched` ↔ `SKIPPED_BREAK_CHOICE_LAST_UNWATCHED`), so a proto value added out of step fails
/// there, not on the wire.
protocol ProtoEnum: CaseIterable, Equatable where AllCases == [Self] {
    /// The enum protoc-c generated.
    associatedtype Proto: RawRepresentable where Proto.RawValue == UInt32
}

extension ProtoEnum {
    /// The proto value.
    @inline(__always)
    var proto: Proto { Proto(rawValue: protoNumber)! }

    @inline(__always)
    var protoNumber: UInt32 {
        // A no-payload enum of 2 to 256 cases is stored as one byte, its case's index in declaration
        // order (Swift's type layout): the number is a load, not a scan of `allCases` — the snapback
        // round trip's seek push carries one (`make check-budget`). `ProtoTableTests` checks both agree.
        if MemoryLayout<Self>.size == 1 { return UInt32(withUnsafeBytes(of: self) { $0[0] }) + 1 }
        return UInt32(truncatingIfNeeded: Self.allCases.firstIndex(of: self)! + 1)
    }

    /// The case of a proto value; nil for UNSPECIFIED or a value this version does not know (a newer
    /// server's), which a client reads past.
    init?(proto value: Proto) { self.init(protoNumber: value.rawValue) }

    init?(protoNumber number: UInt32) {
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

extension SessionKind: ProtoEnum { typealias Proto = Snapback__V1__SessionKind }
extension SeekReason: ProtoEnum { typealias Proto = Snapback__V1__SeekReason }
extension BookmarkTrigger: ProtoEnum { typealias Proto = Snapback__V1__BookmarkTrigger }
extension TimelineSnapshot.Phase: ProtoEnum { typealias Proto = Snapback__V1__SessionPhase }
extension WireDecision.Kind: ProtoEnum { typealias Proto = Snapback__V1__DecisionKind }
extension AdPolicy.SkippedBreakChoice: ProtoEnum { typealias Proto = Snapback__V1__SkippedBreakChoice }
extension AdPolicy.SeekGate: ProtoEnum { typealias Proto = Snapback__V1__SeekGate }
extension AdPolicy.ReturnToTarget: ProtoEnum { typealias Proto = Snapback__V1__ReturnToTarget }
extension AdPolicy.LandingInBreak: ProtoEnum { typealias Proto = Snapback__V1__LandingInBreak }
extension AdPolicy.WatchedWhen: ProtoEnum { typealias Proto = Snapback__V1__WatchedWhen }
extension AdPolicy.WatchedBreakOnPlayback: ProtoEnum { typealias Proto = Snapback__V1__WatchedBreakOnPlayback }
extension AdPolicy.ResumeBreaks: ProtoEnum { typealias Proto = Snapback__V1__ResumeBreaks }
