// SPDX-License-Identifier: Apache-2.0
/// Incremental decoder of snapback frames (see ``FrameHeader`` for the byte layout).
///
/// The decoder owns one contiguous receive buffer, so a reader can hand its free tail straight to
/// `read(2)` / libuv's `alloc_cb` and parse in place:
///
/// ```swift
/// let tail = decoder.writableTail(minimumCount: 4096)   // compacts, grows only for a pending frame
/// let n = read(fd, tail.baseAddress, tail.count)
/// decoder.commit(n)
/// while let event = decoder.next() { ... }             // bodies point into the buffer
/// ```
///
/// or copy arbitrary chunks in with ``feed(_:_:)``.
///
/// States:
///
/// ```
///            ┌───────────── body complete: .frame ◀────────────┐
///            ▼                                                  │
///   ┌─ awaiting header ── 12 bytes, length ≤ max ──▶ awaiting body
///   │        │  │
///   │        │  └── length > max: .oversized ──▶ skipping `length` bytes ──▶ awaiting header
///   │        └───── header invalid for this side: .protocolError ──▶ failed (absorbs everything)
///   └────────┘
/// ```
///
/// An oversized frame is decided from its header alone: its body is never buffered, so the buffer
/// never grows beyond `FrameHeader.size + maxFrameSize` plus one read's worth of slack.
///
/// A body pointer from ``next()`` stays valid until the next call to ``writableTail(minimumCount:)``,
/// ``commit(_:)`` or ``feed(_:_:)`` (which move or free the buffer); ``next()`` itself moves nothing.
public struct FrameDecoder: ~Copyable {
    /// Which side of the socket is reading; decides which headers are acceptable.
    public enum Side: Sendable, Hashable {
        /// Accepts only REQUEST frames with status 0 and a non-zero call id.
        case server
        /// Accepts only RESPONSE and PUSH frames.
        case client
    }

    /// What the decoder found.
    public enum Event {
        /// A complete frame. `body` points into the decoder's buffer (see the type's documentation for
        /// how long it stays valid); copy it to keep it.
        case frame(FrameHeader, body: UnsafeRawBufferPointer)
        /// A header announcing a body longer than `maxFrameSize`. The decoder discards exactly
        /// `header.length` body bytes as they arrive and then continues with the next frame.
        case oversized(FrameHeader)
        /// A header that breaks the framing; the decoder is now failed and absorbs all further
        /// input. The reader should close the connection.
        case protocolError(FrameProtocolError)
    }

    public let side: Side
    /// Largest body accepted; a longer one is reported as ``Event/oversized(_:)``.
    public let maxFrameSize: Int
    private let initialCapacity: Int

    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var readIndex = 0
    private var writeIndex = 0
    /// Header of the frame whose body is being received (header bytes already consumed).
    private var pendingHeader: FrameHeader?
    /// Body bytes of an oversized frame still to discard. While non-zero the buffer is empty.
    private var skipRemaining = 0
    private var failure: FrameProtocolError?

    /// - Parameters:
    ///   - side: which headers to accept.
    ///   - maxFrameSize: the longest body accepted.
    ///   - initialCapacity: receive buffer size for ordinary traffic; it grows for a large frame and
    ///     shrinks back once that frame has been consumed.
    public init(side: Side, maxFrameSize: Int = 1 << 20, initialCapacity: Int = 16 * 1024) {
        precondition(maxFrameSize >= 0, "maxFrameSize must not be negative")
        precondition(initialCapacity >= FrameHeader.size, "initialCapacity must hold a header")
        self.side = side
        self.maxFrameSize = maxFrameSize
        self.initialCapacity = initialCapacity
    }

    deinit {
        storage?.deallocate()
    }

    /// Bytes received but not yet returned as events (a partial header or body).
    public var bufferedCount: Int { writeIndex - readIndex }
    /// Current receive buffer capacity.
    public var bufferCapacity: Int { capacity }
    /// Body bytes of an oversized frame that are still to be discarded.
    public var bytesToSkip: Int { skipRemaining }
    /// The protocol error that failed the decoder, if any.
    public var protocolError: FrameProtocolError? { failure }

    // MARK: Zero-copy input

    /// The free tail of the receive buffer, at least `minimumCount` bytes long (and long enough for
    /// the rest of a frame whose header has arrived). Write received bytes there, then call
    /// ``commit(_:)``.
    ///
    /// Moves the unconsumed partial frame to the front of the buffer first, which invalidates
    /// body pointers from earlier events.
    public mutating func writableTail(minimumCount: Int = 1) -> UnsafeMutableRawBufferPointer {
        compact()
        var needed = max(minimumCount, 1)
        if let header = pendingHeader {
            // Room for the rest of the body, so a large frame completes in as few reads as possible.
            needed = max(needed, Int(header.length) - bufferedCount)
        }
        if capacity - writeIndex < needed {
            grow(toAtLeast: writeIndex + needed)
        }
        return UnsafeMutableRawBufferPointer(start: storage! + writeIndex, count: capacity - writeIndex)
    }

    /// Accounts for `count` bytes written at the start of the last ``writableTail(minimumCount:)``.
    public mutating func commit(_ count: Int) {
        precondition(count >= 0 && count <= capacity - writeIndex, "commit(\(count)) beyond the writable tail")
        guard failure == nil else { return }
        if skipRemaining > 0 {
            // The buffer is empty while skipping, so the kept bytes simply start after the dropped ones.
            let dropped = min(count, skipRemaining)
            skipRemaining -= dropped
            readIndex = writeIndex + dropped
        }
        writeIndex += count
    }

    /// The next event from the buffered bytes, or nil when more input is needed (or the decoder failed).
    public mutating func next() -> Event? {
        guard failure == nil, skipRemaining == 0 else { return nil }
        let header: FrameHeader
        if let pending = pendingHeader {
            header = pending
        } else {
            guard bufferedCount >= FrameHeader.size else { return nil }
            do {
                let raw = UnsafeRawBufferPointer(start: storage! + readIndex, count: FrameHeader.size)
                header = try FrameHeader.decode(from: raw)
                try header.validate(as: side)
            } catch {
                failure = error
                readIndex = writeIndex
                return .protocolError(error)
            }
            readIndex += FrameHeader.size
            let length = Int(header.length)
            if length > maxFrameSize {
                let dropped = min(bufferedCount, length)
                readIndex += dropped
                skipRemaining = length - dropped
                return .oversized(header)
            }
            pendingHeader = header
        }
        let length = Int(header.length)
        guard bufferedCount >= length else { return nil }
        let body = UnsafeRawBufferPointer(start: storage.map { UnsafeRawPointer($0) + readIndex }, count: length)
        readIndex += length
        pendingHeader = nil
        return .frame(header, body: body)
    }

    // MARK: Copying input

    /// Copies `bytes` in, in pieces no larger than the buffer needs, and calls `onEvent` for every
    /// event as soon as it is complete. Bodies are valid only during the call to `onEvent`.
    /// Body bytes of an oversized frame are dropped without being copied.
    public mutating func feed<E: Error>(
        _ bytes: UnsafeRawBufferPointer,
        _ onEvent: (Event) throws(E) -> Void
    ) throws(E) {
        var offset = 0
        while offset < bytes.count {
            if failure != nil { return }
            if skipRemaining > 0 {
                let dropped = min(skipRemaining, bytes.count - offset)
                skipRemaining -= dropped
                offset += dropped
            } else {
                let remaining = bytes.count - offset
                let tail = writableTail(minimumCount: min(remaining, 4096))
                let count = min(tail.count, remaining)
                tail.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
                commit(count)
                offset += count
            }
            while let event = next() {
                try onEvent(event)
            }
        }
    }

    /// Copies the bytes of an array in; see ``feed(_:_:)``.
    public mutating func feed<E: Error>(_ bytes: [UInt8], _ onEvent: (Event) throws(E) -> Void) throws(E) {
        let result: Result<Void, E> = bytes.withUnsafeBytes { raw in
            do throws(E) {
                try feed(raw, onEvent)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: Buffer management

    private mutating func compact() {
        if readIndex == writeIndex {
            readIndex = 0
            writeIndex = 0
            // Give back the memory a large frame needed once it is gone.
            if capacity > 4 * initialCapacity {
                storage?.deallocate()
                storage = nil
                capacity = 0
            }
        } else if readIndex > 0 {
            let count = writeIndex - readIndex
            storage!.copyMemory(from: storage! + readIndex, byteCount: count)  // regions may overlap: memmove
            readIndex = 0
            writeIndex = count
        }
    }

    private mutating func grow(toAtLeast required: Int) {
        // Doubling for ordinary growth, exactly what is required for one large frame.
        let newCapacity = max(required, 2 * capacity, initialCapacity)
        let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let storage {
            newStorage.copyMemory(from: storage, byteCount: writeIndex)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
    }
}
