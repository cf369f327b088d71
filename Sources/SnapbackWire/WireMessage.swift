// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import SnapbackTimeline

/// A Swift value that is one protobuf message of the protocol. Encoding appends to a caller's buffer so
/// a connection can reuse one output buffer (reserve the frame header, append the body, patch the length).
public protocol WireMessage: Sendable {
    /// Appends the message's protobuf encoding to `out` and returns the number of bytes appended.
    @discardableResult
    func encode(into out: inout [UInt8]) -> Int
    /// Decodes a body. Unknown fields are ignored; bytes that do not parse throw `WireError.malformed`.
    static func decode(_ body: UnsafeRawBufferPointer) throws(WireError) -> Self
}

extension WireMessage {
    /// The message's protobuf encoding.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Self {
        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        try bytes.withUnsafeBytes { raw in Result { () throws(WireError) in try decode(raw) } }.get()
    }
}

/// The server side's encoders that are not a message's own `encode(into:)`: the EventReply written
/// straight into an outbound buffer, and the Status body of a non-OK response.
public enum WireReply {}

/// Glue between Swift values and protobuf-c messages. Every generated struct starts with a
/// `ProtobufCMessage base`, so a pointer to one is a pointer to a `ProtobufCMessage`.
enum ProtoC {
    /// Packs a generated message (initialised with its `*__init`) at the end of `out`.
    @inline(__always)
    @discardableResult
    static func append<M>(_ message: inout M, to out: inout [UInt8]) -> Int {
        withUnsafeMutablePointer(to: &message) { p in append(UnsafePointer<ProtobufCMessage>(OpaquePointer(p)), to: &out) }
    }

    /// Packs the message at `base` at the end of `out`.
    static func append(_ base: UnsafePointer<ProtobufCMessage>, to out: inout [UInt8]) -> Int {
        let size = protobuf_c_message_get_packed_size(base)
        guard size > 0 else { return 0 }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: size))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            protobuf_c_message_pack(base, buffer.baseAddress! + start)
        }
        assert(written == size, "protobuf-c packed \(written) bytes, announced \(size)")
        return size
    }

    /// A string field. proto3 strings are UTF-8: bytes that are not (`ff fe`) are refused, naming the
    /// field, instead of being repaired into U+FFFD — repaired, two different byte strings would become
    /// one content id and share a bookmark.
    @inline(__always)
    static func string(_ p: UnsafePointer<CChar>?, _ field: @autoclosure () -> String) throws(WireError) -> String {
        guard let p else { return "" }
        guard let s = String(validatingCString: p) else { throw .invalidArgument("\(field()): not valid UTF-8") }
        return s
    }

    @inline(__always)
    static func cBool(_ b: Bool) -> protobuf_c_boolean { b ? 1 : 0 }
}

/// The memory of a protobuf-c message being packed: its struct, strings, arrays and sub-messages, freed
/// all at once when the arena goes away. Used off the hot path (the round trip's EventReply and seek
/// push are written straight into the frame, without one).
final class CArena {
    private var blocks: [UnsafeMutableRawPointer] = []

    init() {}

    deinit {
        for block in blocks { block.deallocate() }
    }

    /// A NUL-terminated copy of `s`.
    func string(_ s: String) -> UnsafeMutablePointer<CChar> {
        let count = s.utf8.count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count + 1, alignment: 1)
        blocks.append(raw)
        s.withCString { raw.copyMemory(from: $0, byteCount: count + 1) }
        return raw.bindMemory(to: CChar.self, capacity: count + 1)
    }

    /// Uninitialised room for `count` values (at least one, so the pointer is never null).
    func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let p = UnsafeMutablePointer<T>.allocate(capacity: max(count, 1))
        blocks.append(UnsafeMutableRawPointer(p))
        return p
    }

    func strings(_ values: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        guard !values.isEmpty else { return nil }
        let p = allocate(UnsafeMutablePointer<CChar>?.self, count: values.count)
        for (i, s) in values.enumerated() { (p + i).initialize(to: string(s)) }
        return p
    }
}

// `snapback.v1.AdBreak` and `snapback.v1.Bookmark` are the timeline's `AdBreak` and `Bookmark`
// (scripts/gen-wire.py's `DOMAIN_TYPES`): the generated readers start from these empty values and set each
// field they read (and the JSON readers, in another module).
extension AdBreak {
    public init() { self.init(id: "", start: 0, duration: 0) }
}

extension Bookmark {
    public init() { self.init(profile: "", contentId: "", contentTime: 0, streamTime: 0, streamId: "", updatedAt: 0) }
}
