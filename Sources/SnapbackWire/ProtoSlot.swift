import CSnapbackProto

/// A field of a protobuf-c message struct, found by its proto name in the message's descriptor: how the
/// cold-path mapping reads and writes a generated struct from field names instead of one hand-written
/// line per C member (protobuf-c's own reflection: the offsets are the generated ones).
///
/// A name the message does not have, or a Swift type that is not the field's, is a programming error
/// (a table out of step with the `.proto`): it traps, and the round-trip tests reach every field.
struct ProtoSlot {
    let field: ProtobufCFieldDescriptor

    init(_ message: UnsafePointer<ProtobufCMessageDescriptor>, _ name: String) {
        guard let field = protobuf_c_message_descriptor_get_field_by_name(message, name) else {
            preconditionFailure("\(String(cString: message.pointee.name)) has no field \(name)")
        }
        self.field = field.pointee
    }

    var name: String { String(cString: field.name) }

    private var isOneofMember: Bool { field.flags & PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue != 0 }

    /// Whether the field is present: a oneof member (proto3 `optional`, or a case of a `oneof`) when its
    /// case says so; a sub-message when there is one; an enum when it is not 0 (proto3's "not set").
    func isSet(in message: UnsafeRawPointer) -> Bool {
        if isOneofMember {
            return message.load(fromByteOffset: Int(field.quantifier_offset), as: UInt32.self) == field.id
        }
        if field.type == PROTOBUF_C_TYPE_MESSAGE {
            return load(UnsafeRawPointer?.self, PROTOBUF_C_TYPE_MESSAGE, from: message) != nil
        }
        return load(UInt32.self, PROTOBUF_C_TYPE_ENUM, from: message) != 0
    }

    /// The value of a singular field of type `type`, as protobuf-c keeps it (a bool as `protobuf_c_boolean`,
    /// an enum as 32 bits, a string or a message as a pointer).
    func load<T>(_: T.Type, _ type: ProtobufCType, from message: UnsafeRawPointer) -> T {
        check(type, T.self, repeated: false)
        return message.load(fromByteOffset: Int(field.offset), as: T.self)
    }

    /// Stores a singular field and, for a oneof member, marks it present (even at 0: present, not absent).
    func store<T>(_ value: T, _ type: ProtobufCType, into message: UnsafeMutableRawPointer) {
        check(type, T.self, repeated: false)
        message.storeBytes(of: value, toByteOffset: Int(field.offset), as: T.self)
        if isOneofMember {
            message.storeBytes(of: field.id, toByteOffset: Int(field.quantifier_offset), as: UInt32.self)
        }
    }

    /// A repeated field's elements (protobuf-c: a count and a pointer to them).
    func elements<T>(_: T.Type, _ type: ProtobufCType, in message: UnsafeRawPointer) -> UnsafeBufferPointer<T> {
        check(type, T.self, repeated: true)
        let count = message.load(fromByteOffset: Int(field.quantifier_offset), as: Int.self)
        let start = message.load(fromByteOffset: Int(field.offset), as: UnsafePointer<T>?.self)
        guard let start, count > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: start, count: count)
    }

    /// Sets a repeated field to `count` elements at `start` (memory that outlives the packing).
    func setElements<T>(
        _ start: UnsafeMutablePointer<T>?, count: Int, _ type: ProtobufCType,
        into message: UnsafeMutableRawPointer
    ) {
        check(type, T.self, repeated: true)
        message.storeBytes(of: start == nil ? 0 : count, toByteOffset: Int(field.quantifier_offset), as: Int.self)
        message.storeBytes(of: start, toByteOffset: Int(field.offset), as: UnsafeMutablePointer<T>?.self)
    }

    private func check<T>(_ type: ProtobufCType, _: T.Type, repeated: Bool) {
        precondition(
            field.type == type && (field.label == PROTOBUF_C_LABEL_REPEATED) == repeated,
            "\(name) is not a \(repeated ? "repeated " : "")\(T.self) field")
    }
}
