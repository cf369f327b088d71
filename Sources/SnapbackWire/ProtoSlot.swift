import CSnapbackProto

/// A field of a protobuf-c message struct, found by its proto name in the message's descriptor: how the
/// cold-path mapping reads and writes a generated struct from a table of field names instead of one
/// hand-written line per C member (protobuf-c's own reflection: the offsets are the generated ones).
///
/// A name the message does not have, or a Swift type that is not the field's, is a programming error
/// (a table row out of step with the `.proto`): it traps, and the round-trip tests reach every row.
struct ProtoSlot {
    private let field: ProtobufCFieldDescriptor

    init(_ message: UnsafePointer<ProtobufCMessageDescriptor>, _ name: String) {
        guard let field = protobuf_c_message_descriptor_get_field_by_name(message, name) else {
            preconditionFailure("\(String(cString: message.pointee.name)) has no field \(name)")
        }
        self.field = field.pointee
    }

    private var isOneofMember: Bool { field.flags & PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue != 0 }

    /// Whether the field is present: a oneof member (proto3 `optional`) when its case says so; any other
    /// field when it is not 0 (proto3's "not set" for an enum).
    func isSet(in message: UnsafeRawPointer) -> Bool {
        if isOneofMember {
            return message.load(fromByteOffset: Int(field.quantifier_offset), as: UInt32.self) == field.id
        }
        return uint32(in: message) != 0
    }

    func bool(in message: UnsafeRawPointer) -> Bool {
        load(protobuf_c_boolean.self, PROTOBUF_C_TYPE_BOOL, from: message) != 0
    }

    func double(in message: UnsafeRawPointer) -> Double {
        load(Double.self, PROTOBUF_C_TYPE_DOUBLE, from: message)
    }

    /// A uint32 or an enum field (protobuf-c keeps both as 32 bits).
    func uint32(in message: UnsafeRawPointer) -> UInt32 {
        load(UInt32.self, field.type == PROTOBUF_C_TYPE_ENUM ? PROTOBUF_C_TYPE_ENUM : PROTOBUF_C_TYPE_UINT32, from: message)
    }

    func set(_ value: Bool, in message: UnsafeMutableRawPointer) {
        store(ProtoC.cBool(value), PROTOBUF_C_TYPE_BOOL, into: message)
    }

    func set(_ value: Double, in message: UnsafeMutableRawPointer) {
        store(value, PROTOBUF_C_TYPE_DOUBLE, into: message)
    }

    func set(_ value: UInt32, in message: UnsafeMutableRawPointer) {
        store(value, field.type == PROTOBUF_C_TYPE_ENUM ? PROTOBUF_C_TYPE_ENUM : PROTOBUF_C_TYPE_UINT32, into: message)
    }

    private func load<T>(_: T.Type, _ type: ProtobufCType, from message: UnsafeRawPointer) -> T {
        precondition(field.type == type, "\(String(cString: field.name)) is not of type \(T.self)")
        return message.load(fromByteOffset: Int(field.offset), as: T.self)
    }

    /// Stores the value and, for a oneof member, marks it present (set even at 0: present, not absent).
    private func store<T>(_ value: T, _ type: ProtobufCType, into message: UnsafeMutableRawPointer) {
        precondition(field.type == type, "\(String(cString: field.name)) is not of type \(T.self)")
        message.storeBytes(of: value, toByteOffset: Int(field.offset), as: T.self)
        if isOneofMember {
            message.storeBytes(of: field.id, toByteOffset: Int(field.quantifier_offset), as: UInt32.self)
        }
    }
}
