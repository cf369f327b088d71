import CSnapbackProto

/// A Swift value that maps to a protobuf message field by field, by name: it reads itself from a
/// `ProtoReader` and writes itself to a `ProtoBuilder`, and that is all it declares. As a sub-message of
/// another it is read with `ProtoReader.message(_:)` and written with `ProtoBuilder.set(_:_:)`; as a
/// call's whole body it is a `ProtoMessage`.
protocol ProtoFields {
    init(_ m: ProtoReader) throws(WireError)
    func write(to m: ProtoBuilder)
}

/// A call's body (its rpc's request or reply) mapped by field name: `encodeFields(into:)` and
/// `decodeFields(_:)` are its `WireMessage` encoding, and this protocol's extension is every conforming
/// type's `encode(into:)` and `decode(_:)`.
protocol ProtoMessage: ProtoFields, WireMessage {
    /// protobuf-c's descriptor of the message (`WireMethod.requestDescriptor`, `replyDescriptor`).
    static var descriptor: ProtoDescriptor { get }
}

typealias ProtoDescriptor = UnsafePointer<ProtobufCMessageDescriptor>

extension ProtoMessage {
    @discardableResult public func encode(into out: inout [UInt8]) -> Int { encodeFields(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self { try decodeFields(body) }

    func encodeFields(into out: inout [UInt8]) -> Int { ProtoC.append(Self.descriptor, to: &out, write(to:)) }

    static func decodeFields(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self {
        try ProtoC.read(body, descriptor) { m throws(WireError) in try Self(m) }
    }
}

/// A message protobuf-c unpacked, read by field name (cold path: one lookup in the descriptor per
/// field). Strings are checked to be UTF-8 and named in the error with `path`, the message's place in
/// the request ("breaks[2]." for a nested one).
struct ProtoReader {
    let message: UnsafeRawPointer
    let descriptor: ProtoDescriptor
    let path: String

    init(_ message: UnsafeRawPointer, path: String = "") {
        self.message = message
        descriptor = message.assumingMemoryBound(to: ProtobufCMessage.self).pointee.descriptor
        self.path = path
    }

    private func slot(_ name: String) -> ProtoSlot { ProtoSlot(descriptor, name) }

    func uint64(_ name: String) -> UInt64 { slot(name).load(UInt64.self, PROTOBUF_C_TYPE_UINT64, from: message) }
    func uint32(_ name: String) -> UInt32 { slot(name).load(UInt32.self, PROTOBUF_C_TYPE_UINT32, from: message) }
    func int32(_ name: String) -> Int32 { slot(name).load(Int32.self, PROTOBUF_C_TYPE_INT32, from: message) }
    func double(_ name: String) -> Double { slot(name).load(Double.self, PROTOBUF_C_TYPE_DOUBLE, from: message) }

    func bool(_ name: String) -> Bool {
        slot(name).load(protobuf_c_boolean.self, PROTOBUF_C_TYPE_BOOL, from: message) != 0
    }

    /// A proto3 `optional` double: nil when absent.
    func optionalDouble(_ name: String) -> Double? {
        let s = slot(name)
        return s.isSet(in: message) ? s.load(Double.self, PROTOBUF_C_TYPE_DOUBLE, from: message) : nil
    }

    /// Whether a proto3 `optional` field is present, or an enum is not UNSPECIFIED.
    func isSet(_ name: String) -> Bool { slot(name).isSet(in: message) }

    /// An enum's number as sent (0 = UNSPECIFIED).
    func enumNumber(_ name: String) -> UInt32 { slot(name).load(UInt32.self, PROTOBUF_C_TYPE_ENUM, from: message) }

    /// An enum from a peer: nil for UNSPECIFIED; a value this version does not know is refused, naming
    /// the field.
    func enumValue<E: ProtoEnum>(_ name: String, as _: E.Type) throws(WireError) -> E? {
        try E.from(number: enumNumber(name), field: path + name)
    }

    /// An enum from a server: nil for UNSPECIFIED or a value newer than this version.
    func knownEnumValue<E: ProtoEnum>(_ name: String, as _: E.Type) -> E? { E(protoNumber: enumNumber(name)) }

    func string(_ name: String) throws(WireError) -> String {
        try ProtoC.string(slot(name).load(UnsafePointer<CChar>?.self, PROTOBUF_C_TYPE_STRING, from: message), path + name)
    }

    func strings(_ name: String) throws(WireError) -> [String] {
        var out: [String] = []
        for (i, p) in slot(name).elements(UnsafePointer<CChar>?.self, PROTOBUF_C_TYPE_STRING, in: message).enumerated() {
            out.append(try ProtoC.string(p, "\(path)\(name)[\(i)]"))
        }
        return out
    }

    func doubles(_ name: String) -> [Double] {
        Array(slot(name).elements(Double.self, PROTOBUF_C_TYPE_DOUBLE, in: message))
    }

    /// A sub-message, nil when absent (or, for a case of a `oneof`, when another case is set: the cases
    /// share their storage).
    func nested(_ name: String) -> ProtoReader? {
        let s = slot(name)
        guard s.isSet(in: message) else { return nil }
        return s.load(UnsafeRawPointer?.self, PROTOBUF_C_TYPE_MESSAGE, from: message)
            .map { ProtoReader($0, path: "\(path)\(name).") }
    }

    /// A sub-message as the value it maps to, nil when absent.
    func message<M: ProtoFields>(_ name: String) throws(WireError) -> M? {
        guard let m = nested(name) else { return nil }
        return try M(m)
    }

    /// A repeated sub-message's elements as the values they map to (a null element, which protobuf-c
    /// never unpacks, is skipped). More than `limit` elements throw `.tooLarge` before any is read:
    /// reading them is what costs (microseconds each), and the loop must not spend it on a refusal.
    func messages<M: ProtoFields>(_ name: String, atMost limit: Int = .max) throws(WireError) -> [M] {
        let elements = slot(name).elements(UnsafeRawPointer?.self, PROTOBUF_C_TYPE_MESSAGE, in: message)
        guard elements.count <= limit else {
            throw .tooLarge("\(elements.count) \(path)\(name), more than the \(limit) allowed")
        }
        var out: [M] = []
        out.reserveCapacity(elements.count)
        for (i, p) in elements.enumerated() {
            if let p { out.append(try M(ProtoReader(p, path: "\(path)\(name)[\(i)]."))) }
        }
        return out
    }
}

/// A message being built for packing, field by field by name; its strings, arrays and sub-messages
/// live in `arena` until it is packed.
struct ProtoBuilder {
    let message: UnsafeMutableRawPointer
    let arena: CArena

    /// An empty message of `descriptor`'s type (every field at its default).
    init(_ descriptor: ProtoDescriptor, arena: CArena) {
        message = UnsafeMutableRawPointer(arena.allocate(UInt64.self, count: (descriptor.pointee.sizeof_message + 7) / 8))
        protobuf_c_message_init(descriptor, message)
        self.arena = arena
    }

    private var descriptor: ProtoDescriptor {
        message.assumingMemoryBound(to: ProtobufCMessage.self).pointee.descriptor
    }

    private func slot(_ name: String) -> ProtoSlot { ProtoSlot(descriptor, name) }

    func set(_ name: String, _ v: UInt64) { slot(name).store(v, PROTOBUF_C_TYPE_UINT64, into: message) }
    func set(_ name: String, _ v: UInt32) { slot(name).store(v, PROTOBUF_C_TYPE_UINT32, into: message) }
    func set(_ name: String, _ v: Int32) { slot(name).store(v, PROTOBUF_C_TYPE_INT32, into: message) }
    func set(_ name: String, _ v: Double) { slot(name).store(v, PROTOBUF_C_TYPE_DOUBLE, into: message) }
    func set(_ name: String, _ v: Bool) { slot(name).store(ProtoC.cBool(v), PROTOBUF_C_TYPE_BOOL, into: message) }

    /// A proto3 `optional` double: left absent when nil.
    func set(_ name: String, _ v: Double?) {
        if let v { set(name, v) }
    }

    /// An enum by its proto number; nil leaves it UNSPECIFIED.
    func set<E: ProtoEnum>(_ name: String, _ v: E?) {
        if let v { setEnum(name, v.protoNumber) }
    }

    func setEnum(_ name: String, _ number: UInt32) { slot(name).store(number, PROTOBUF_C_TYPE_ENUM, into: message) }

    func set(_ name: String, _ v: String) {
        slot(name).store(UnsafePointer(arena.string(v)), PROTOBUF_C_TYPE_STRING, into: message)
    }

    func set(_ name: String, _ v: [String]) {
        slot(name).setElements(arena.strings(v), count: v.count, PROTOBUF_C_TYPE_STRING, into: message)
    }

    func set(_ name: String, _ v: [Double]) {
        slot(name).setElements(arena.doubles(v), count: v.count, PROTOBUF_C_TYPE_DOUBLE, into: message)
    }

    /// A sub-message written from `v`, in the same arena; nil leaves it absent.
    func set<M: ProtoFields>(_ name: String, _ v: M?) {
        if let v { set(name, with: v.write(to:)) }
    }

    /// A sub-message written by `write`, in the same arena: present even when `write` sets nothing (a
    /// case of a `oneof` says which case the message is).
    func set(_ name: String, with write: (ProtoBuilder) -> Void) {
        slot(name).store(UnsafeRawPointer(sub(name, write).message), PROTOBUF_C_TYPE_MESSAGE, into: message)
    }

    /// A repeated sub-message's elements, each written from an element of `v`.
    func set<M: ProtoFields>(_ name: String, _ v: [M]) {
        guard !v.isEmpty else { return }
        let pointers = arena.allocate(UnsafeRawPointer?.self, count: v.count)
        for (i, e) in v.enumerated() { (pointers + i).initialize(to: UnsafeRawPointer(sub(name, e.write(to:)).message)) }
        slot(name).setElements(pointers, count: v.count, PROTOBUF_C_TYPE_MESSAGE, into: message)
    }

    /// A sub-message of field `name`'s type, in the same arena, written by `write`.
    private func sub(_ name: String, _ write: (ProtoBuilder) -> Void) -> ProtoBuilder {
        let m = ProtoBuilder(slot(name).field.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self), arena: arena)
        write(m)
        return m
    }

    /// Packs the message at the end of `out`; returns the number of bytes appended.
    @discardableResult
    func append(to out: inout [UInt8]) -> Int {
        withExtendedLifetime(arena) { ProtoC.append(message.assumingMemoryBound(to: ProtobufCMessage.self), to: &out) }
    }
}

extension ProtoC {
    /// Builds a message of `descriptor`'s type with `write` and packs it at the end of `out`; returns the
    /// number of bytes appended.
    static func append(
        _ descriptor: ProtoDescriptor, to out: inout [UInt8], _ write: (ProtoBuilder) -> Void
    ) -> Int {
        let m = ProtoBuilder(descriptor, arena: CArena())
        write(m)
        return m.append(to: &out)
    }

    /// Unpacks `body` as a message of `descriptor`'s type, hands it to `read`, and frees it whatever
    /// `read` does. Bytes that do not parse throw `.malformed` naming the message.
    static func read<R>(
        _ body: UnsafeRawBufferPointer, _ descriptor: ProtoDescriptor,
        _ read: (ProtoReader) throws(WireError) -> R
    ) throws(WireError) -> R {
        let data = body.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let message = protobuf_c_message_unpack(descriptor, nil, body.count, data) else {
            throw .malformed(message: String(cString: descriptor.pointee.name))
        }
        defer { protobuf_c_message_free_unpacked(message, nil) }
        return try read(ProtoReader(UnsafeRawPointer(message)))
    }
}

extension WireMethod {
    /// protobuf-c's descriptor of the rpc's request message.
    var requestDescriptor: ProtoDescriptor { rpc.input }

    /// protobuf-c's descriptor of the rpc's reply message.
    var replyDescriptor: ProtoDescriptor { rpc.output }

    /// The rpc in its generated service descriptor: the method's index is its position there
    /// (`ProtoMethodTableTests`).
    private var rpc: ProtobufCMethodDescriptor {
        let descriptor: ProtobufCServiceDescriptor
        switch service {
        case .control: descriptor = snapback__v1__control__descriptor
        case .timeline: descriptor = snapback__v1__timeline__descriptor
        case .bookmarks: descriptor = snapback__v1__bookmarks__descriptor
        }
        return descriptor.methods[Int(index)]
    }
}
