// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto

/// The messages of the proto package `snapback.v1` as Swift values, generated from `proto/` with their
/// mapping onto protobuf-c's structs (Generated/, `make proto`). The domain types map from and to them
/// where they differ (an OpenSession's request, the policy overrides, the pushes, the events).
public enum SnapbackV1 {}

/// A generated message (Generated/*.pb.swift): a Swift value read from and written to its protobuf-c
/// struct `C` member by member, so that a field the `.proto` does not have, or of another type, does not
/// compile. protobuf-c packs and unpacks the bytes.
protocol ProtoCMessage: Sendable, Equatable {
    /// The struct protoc-c generated.
    associatedtype C
    /// `snapback.v1.Name`, for the refusal of bytes that do not parse.
    static var protoName: String { get }

    init()

    /// Reads an unpacked message. Strings are checked to be UTF-8 and named in the error with `path()`,
    /// the message's place in the request ("breaks[2]." for a nested one). A repeated message field with
    /// more than `maxElements` elements throws `.tooLarge` before any of them is read: reading them is
    /// what costs, and the loop must not spend it on a refusal.
    init(_ p: UnsafePointer<C>, path: () -> String, maxElements: Int) throws(WireError)

    /// Writes the value into `m` (initialised by `cInit`); strings, arrays and sub-messages go in `arena`,
    /// which must outlive the packing.
    func write(to m: inout C, in arena: CArena)

    /// The repeated message fields (number, proto name), whose count `maxElements` bounds.
    static var boundedFields: [(number: UInt64, name: String)] { get }

    /// The message read straight from its bytes when they are in the clean form the generated reader takes
    /// (a `ProtoPlainMessage`, or a message with lists of sub-messages and those sub-messages); nil
    /// otherwise, and protobuf-c reads them. It never throws: bytes it does not take, a string that is not
    /// UTF-8 among them, go to protobuf-c's path, whose refusal names the field.
    init?(clean bytes: UnsafeRawBufferPointer)

    /// Appends the message's bytes to `out`; returns how many.
    @discardableResult
    func protoEncode(into out: inout [UInt8]) -> Int

    static func cInit(_ m: UnsafeMutablePointer<C>)
    static func cUnpack(_ count: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<C>?
    static func cFree(_ m: UnsafeMutablePointer<C>)
}

extension ProtoCMessage {
    /// Unpacks `body`. Bytes that do not parse throw `.malformed` naming the message.
    init?(clean bytes: UnsafeRawBufferPointer) { nil }

    static var boundedFields: [(number: UInt64, name: String)] { [] }

    /// Refuses `body` when a repeated message field of its top level occurs more than `maxElements` times:
    /// counted over the bytes before protobuf-c unpacks anything, since unpacking them is what costs
    /// (a frame full of small breaks held the loop for milliseconds before its count was refused).
    /// Bytes that do not parse end the count; protobuf-c refuses them.
    static func checkCounts(_ body: UnsafeRawBufferPointer, maxElements: Int) throws(WireError) {
        var counts = [Int](repeating: 0, count: boundedFields.count)
        var r = WireFastPath.Reader(body)
        scan: while !r.atEnd {
            guard let tag = r.varint() else { break }
            switch tag & 7 {
            case 0: guard r.varint() != nil else { break scan }
            case 1: r.at += 8
            case 2:
                guard let length = r.varint(), length <= UInt64(body.count - r.at) else { break scan }
                r.at += Int(length)
                if let i = boundedFields.firstIndex(where: { $0.number == tag >> 3 }) { counts[i] += 1 }
            case 5: r.at += 4
            default: break scan
            }
        }
        for (i, field) in boundedFields.enumerated() where counts[i] > maxElements {
            throw .tooLarge("\(counts[i]) \(field.name), more than the \(maxElements) allowed")
        }
    }

    @inline(__always)
    static func decode(_ body: UnsafeRawBufferPointer, maxElements: Int = .max) throws(WireError) -> Self {
        // The count first: neither reader may spend the loop on elements it would refuse.
        if maxElements < .max, !boundedFields.isEmpty { try checkCounts(body, maxElements: maxElements) }
        if let m = Self(clean: body) { return m }
        // An empty body is a valid message (every field at its default); protobuf-c reads nothing then.
        let data = body.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let message = cUnpack(body.count, data) else { throw .malformed(message: protoName) }
        defer { cFree(message) }
        return try Self(message, path: { "" }, maxElements: maxElements)
    }

    /// A sub-message's bytes (a body's are its `WireMessage` encoding, preferred where both apply).
    @_disfavoredOverload
    @discardableResult
    func encode(into out: inout [UInt8]) -> Int { protoEncode(into: &out) }

    @_disfavoredOverload
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        protoEncode(into: &out)
        return out
    }

    static func decode(_ bytes: [UInt8], maxElements: Int = .max) throws(WireError) -> Self {
        try bytes.withUnsafeBytes { raw in Result { () throws(WireError) in try decode(raw, maxElements: maxElements) } }
            .get()
    }

    /// Packs the message at the end of `out` with protobuf-c; returns the number of bytes appended.
    @discardableResult
    func protoEncode(into out: inout [UInt8]) -> Int {
        let arena = CArena()
        let m = arena.message(self)
        return withExtendedLifetime(arena) {
            ProtoC.append(UnsafeRawPointer(m).assumingMemoryBound(to: ProtobufCMessage.self), to: &out)
        }
    }

}

/// A generated message of plain scalars (singular uint64, double and bool fields numbered 1 to 7: the
/// session events and their reply), also read and written straight from and to its bytes, without
/// protobuf-c's allocation, packed-size pass and zero-filled reservation: the snapback round trip's
/// SeekEnded and EventReply among them. The bytes are protobuf-c's (`WireFastPathTests`).
/// A message written straight to its bytes, as protobuf-c packs them, by a generated writer: the replies
/// with lists of sub-messages (a GetSessionState page of 1,000 breaks), and those sub-messages.
protocol ProtoDirectMessage: ProtoCMessage {
    /// The size of the message's bytes.
    var directSize: Int { get }
    /// Writes the message's bytes at `out`'s end (at least `directSize` bytes left).
    func directWrite(to out: inout RawWriter)
}

extension ProtoDirectMessage {
    @discardableResult
    func protoEncode(into out: inout [UInt8]) -> Int {
        WireFastPath.append(to: &out, bound: directSize) { buffer in
            var writer = RawWriter(buffer)
            directWrite(to: &writer)
            return writer.count
        }
    }
}

protocol ProtoPlainMessage: ProtoCMessage {
    /// At least the size of the message's bytes.
    static var byteBound: Int { get }
    /// Writes the message's bytes at `out`'s end (at least `byteBound` bytes left).
    func write(to out: inout RawWriter)
}

extension ProtoPlainMessage {
    /// Writes the message's bytes at the start of `buffer` (at least `byteBound` bytes); returns how many.
    @inline(__always)
    func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var out = RawWriter(buffer)
        write(to: &out)
        return out.count
    }

    @discardableResult
    func protoEncode(into out: inout [UInt8]) -> Int {
        WireFastPath.append(to: &out, bound: Self.byteBound) { write(into: $0) }
    }
}

/// A domain type whose wire form is a generated message: its `WireMessage` encoding is the message's.
protocol ProtoMapped: WireMessage {
    associatedtype Proto: ProtoCMessage
    /// Throws for what the generated message cannot refuse itself: an enum value unknown to this version
    /// in a request, an unknown preset name.
    init(proto: Proto) throws(WireError)
    var proto: Proto { get }
}

extension ProtoMapped {
    @discardableResult public func encode(into out: inout [UInt8]) -> Int { proto.encode(into: &out) }
    public static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self {
        try Self(proto: Proto.decode(body))
    }
}

extension ProtoC {
    /// A repeated scalar field's elements.
    @inline(__always)
    static func array<T>(_ start: UnsafeMutablePointer<T>?, _ count: Int) -> [T] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// A repeated string field's elements, each checked as `string` is, named `field(i)` in the error.
    static func strings(
        _ start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ count: Int, _ field: (Int) -> String
    ) throws(WireError) -> [String] {
        guard let start, count > 0 else { return [] }
        var out: [String] = []
        out.reserveCapacity(count)
        for i in 0..<count { out.append(try string(start[i], field(i))) }
        return out
    }
}

extension CArena {
    /// A copy of `values` (nil when empty, as protobuf-c leaves an empty repeated field).
    func copy<T>(_ values: [T]) -> UnsafeMutablePointer<T>? {
        guard !values.isEmpty else { return nil }
        let p = allocate(T.self, count: values.count)
        _ = UnsafeMutableBufferPointer(start: p, count: values.count).initialize(from: values)
        return p
    }

    /// A sub-message written from `value`.
    func message<M: ProtoCMessage>(_ value: M) -> UnsafeMutablePointer<M.C> {
        let p = allocate(M.C.self, count: 1)
        M.cInit(p)
        value.write(to: &p.pointee, in: self)
        return p
    }

    /// A repeated sub-message's elements, side by side, and the pointers to them protobuf-c reads.
    func messages<M: ProtoCMessage>(_ values: [M]) -> UnsafeMutablePointer<UnsafeMutablePointer<M.C>?> {
        let elements = allocate(M.C.self, count: values.count)
        let pointers = allocate(UnsafeMutablePointer<M.C>?.self, count: values.count)
        for (i, v) in values.enumerated() {
            M.cInit(elements + i)
            v.write(to: &elements[i], in: self)
            (pointers + i).initialize(to: elements + i)
        }
        return pointers
    }
}

extension ProtoCMessage {
    /// protobuf-c's descriptor of the message, read off an initialised one.
    static var cDescriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        withUnsafeTemporaryAllocation(of: C.self, capacity: 1) { p in
            cInit(p.baseAddress!)
            return UnsafeRawPointer(p.baseAddress!).load(as: ProtobufCMessage.self).descriptor
        }
    }
}
