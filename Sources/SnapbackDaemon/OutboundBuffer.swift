// SPDX-License-Identifier: Apache-2.0
/// A growable byte buffer for output waiting to be written. Noncopyable: it owns its memory, and the
/// memory must stay put while libuv writes from it.
struct OutboundBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var readerIndex = 0
    private var writerIndex = 0

    /// Memory kept after a burst is written; anything larger is given back.
    static let retainedCapacity = 64 * 1024

    init() {}

    deinit {
        base?.deallocate()
    }

    var readableCount: Int { writerIndex - readerIndex }
    var isEmpty: Bool { readerIndex == writerIndex }

    /// Start of the bytes not yet written. Only meaningful when not empty.
    var readPointer: UnsafeMutableRawPointer { base! + readerIndex }

    /// Room for `count` bytes after the last committed byte; write there, then ``commit(_:)``.
    /// May move the buffer: never call while libuv writes from it.
    mutating func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if capacity - writerIndex < count {
            makeRoom(for: count)
        }
        return base! + writerIndex
    }

    mutating func commit(_ count: Int) {
        precondition(writerIndex + count <= capacity)
        writerIndex += count
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        reserve(bytes.count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        commit(bytes.count)
    }

    /// Drops `count` written bytes from the front.
    mutating func consume(_ count: Int) {
        precondition(count <= readableCount)
        readerIndex += count
        if readerIndex == writerIndex {
            clear()
        }
    }

    /// Empties the buffer, giving back memory a burst needed.
    mutating func clear() {
        readerIndex = 0
        writerIndex = 0
        if capacity > Self.retainedCapacity {
            base?.deallocate()
            base = nil
            capacity = 0
        }
    }

    private mutating func makeRoom(for count: Int) {
        let readable = readableCount
        if readerIndex > 0 && capacity - readable >= count {
            base!.copyMemory(from: base! + readerIndex, byteCount: readable)  // regions may overlap
            readerIndex = 0
            writerIndex = readable
            return
        }
        let newCapacity = max(readable + count, 2 * capacity, 4096)
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let base {
            newBase.copyMemory(from: base + readerIndex, byteCount: readable)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
        readerIndex = 0
        writerIndex = readable
    }
}
