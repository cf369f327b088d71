// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline
import Testing

@testable import SnapbackWire

/// The tables the wire mapping runs on, against protobuf-c's descriptors of the `.proto` files: every
/// policy row is a `PolicyOverrides` field of its kind and every field a row; every mirrored enum's
/// Swift cases are the proto values 1, 2, 3… by name.
@Suite struct ProtoTableTests {
    static func fieldDescriptors(_ descriptor: ProtobufCMessageDescriptor) -> [ProtobufCFieldDescriptor] {
        (0..<Int(descriptor.n_fields)).map { descriptor.fields[$0] }
    }

    @Test func everyPolicyRowIsAPolicyOverridesFieldOfItsKindAndEveryFieldARow() {
        let fields = Self.fieldDescriptors(snapback__v1__policy_overrides__descriptor)
        #expect(fields.map { String(cString: $0.name) } == AdPolicy.fields.map(\.protoName))
        for (row, field) in zip(AdPolicy.fields, fields) {
            let optional = field.flags & PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue != 0
            switch row.kind {
            case .flag: #expect(field.type == PROTOBUF_C_TYPE_BOOL && optional, "\(row.key)")
            case .seconds: #expect(field.type == PROTOBUF_C_TYPE_DOUBLE && optional, "\(row.key)")
            case .count: #expect(field.type == PROTOBUF_C_TYPE_UINT32 && optional, "\(row.key)")
            case .choice(let c):
                #expect(field.type == PROTOBUF_C_TYPE_ENUM && !optional, "\(row.key)")
                let values = field.descriptor.assumingMemoryBound(to: ProtobufCEnumDescriptor.self).pointee.n_values
                #expect(Int(values) == c.names.count + 1, "\(row.key): UNSPECIFIED and one value per case")
            }
        }
    }

    /// `SKIPPED_BREAK_CHOICE_LAST_UNWATCHED` → `lastUnwatched`, with the UNSPECIFIED value's prefix.
    static func swiftName(_ protoName: String, prefix: String) -> String {
        let words = protoName.dropFirst(prefix.count).split(separator: "_").map { $0.lowercased() }
        return words[0] + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    func expectMirrored<E: ProtoEnum>(_: E.Type, _ descriptor: ProtobufCEnumDescriptor) {
        let values = (0..<Int(descriptor.n_values)).map { descriptor.values[$0] }
        let unspecified = String(cString: values[0].name)
        #expect(values[0].value == 0 && unspecified.hasSuffix("_UNSPECIFIED"), "\(E.self)")
        let prefix = String(unspecified.dropLast("UNSPECIFIED".count))
        let names = values.dropFirst().map { Self.swiftName(String(cString: $0.name), prefix: prefix) }
        #expect(names == E.allCases.map { "\($0)" }, "\(E.self)")
        #expect(values.dropFirst().map(\.value) == Array(1...Int32(E.allCases.count)), "\(E.self)")
        for c in E.allCases {
            #expect(E(proto: c.proto) == c)
            #expect(c.proto.rawValue == c.protoNumber)
        }
        #expect(E(proto: E.Proto(rawValue: 0)!) == nil)
        #expect(E(proto: E.Proto(rawValue: UInt32(E.allCases.count) + 1)!) == nil)
    }

    @Test func everyMirroredEnumsCasesAreItsProtoValuesInOrder() {
        expectMirrored(SessionKind.self, snapback__v1__session_kind__descriptor)
        expectMirrored(SeekReason.self, snapback__v1__seek_reason__descriptor)
        expectMirrored(BookmarkTrigger.self, snapback__v1__bookmark_trigger__descriptor)
        expectMirrored(BreakSkipReason.self, snapback__v1__break_skip_reason__descriptor)
        expectMirrored(TimelineSnapshot.BreakPosition.self, snapback__v1__break_position__descriptor)
        expectMirrored(TimelineSnapshot.Phase.self, snapback__v1__session_phase__descriptor)
        expectMirrored(DecisionKind.self, snapback__v1__decision_kind__descriptor)
        expectMirrored(MetricType.self, snapback__v1__metric_type__descriptor)
        expectMirrored(AdPolicy.SkippedBreakChoice.self, snapback__v1__skipped_break_choice__descriptor)
        expectMirrored(AdPolicy.SeekGate.self, snapback__v1__seek_gate__descriptor)
        expectMirrored(AdPolicy.ReturnToTarget.self, snapback__v1__return_to_target__descriptor)
        expectMirrored(AdPolicy.LandingInBreak.self, snapback__v1__landing_in_break__descriptor)
        expectMirrored(AdPolicy.WatchedWhen.self, snapback__v1__watched_when__descriptor)
        expectMirrored(AdPolicy.WatchedBreakOnPlayback.self, snapback__v1__watched_break_on_playback__descriptor)
        expectMirrored(AdPolicy.ResumeBreaks.self, snapback__v1__resume_breaks__descriptor)
        expectMirrored(AdPolicy.TrickPlaySkippedBreaks.self, snapback__v1__trick_play_skipped_breaks__descriptor)
    }

    @Test func aPeersEnumValueIsNilWhenUnspecifiedAndRefusedWhenUnknown() throws {
        #expect(try SessionKind.from(SNAPBACK__V1__SESSION_KIND__SESSION_KIND_UNSPECIFIED, field: "kind") == nil)
        #expect(try SessionKind.from(SNAPBACK__V1__SESSION_KIND__SESSION_KIND_LIVE, field: "kind") == .live)
        #expect(throws: WireError.invalidArgument("kind: unknown enum value 3")) {
            try SessionKind.from(Snapback__V1__SessionKind(rawValue: 3), field: "kind")
        }
    }

    // MARK: PolicyOverrides over the table

    @Test func aFieldSetToNilIsNoLongerOverriddenWhateverItHeld() {
        var o = PolicyOverrides()
        o.cooldown = 5
        o.resumeBreaks = AdPolicy.ResumeBreaks.none
        #expect(o.fields.map(\.key) == ["cooldown", "resume-breaks"] && !o.isEmpty)
        #expect(o != PolicyOverrides())
        o.cooldown = nil
        o.resumeBreaks = nil
        #expect(o.cooldown == nil && o.isEmpty && o == PolicyOverrides())
        var zero = PolicyOverrides()
        zero.cooldown = 0  // the default value, but overridden
        #expect(zero != PolicyOverrides() && zero.applied(to: AdPolicy.media3) == AdPolicy.media3)
    }

    @Test func theDifferenceBetweenTwoPresetsNamesTheFieldsThatDiffer() {
        let o = PolicyOverrides(from: .snapback, to: .media3)
        #expect(
            o.fields.map(\.key) == [
                "skipped-break-choice", "seek-gate", "enforce-backward-seeks",
                "return-to-target", "watched-break-on-playback"
            ])
        #expect(o.seekGate == .allBreaksBeforeTarget && o.cooldown == nil)
        #expect(o.applied(to: .snapback) == .media3)
    }

    @Test(arguments: AdPolicy.fields.map(\.key))
    func eachFieldAloneTravelsAndComesBack(_ key: String) throws {
        let field = try #require(AdPolicy.fields.first { $0.key == key })
        var changed = AdPolicy.hlsjs
        switch field.kind {
        case .flag(let k): changed[keyPath: k].toggle()
        case .seconds(let k, _): changed[keyPath: k] = 12.5
        case .count(let k, _, _): changed[keyPath: k] = 1_000_000_000
        case .choice(let c): c.assign(&changed, (c.position(changed) + 1) % c.names.count)
        }
        let overrides = PolicyOverrides(from: .hlsjs, to: changed)
        #expect(overrides.fields.map(\.key) == [key])
        let request = OpenSessionRequest(streamId: "s", contentId: "c", preset: .hlsjs, overrides: overrides)
        let decoded = try OpenSessionRequest.decode(request.encoded())
        #expect(decoded.overrides == overrides && decoded.policy == changed)
    }
}
