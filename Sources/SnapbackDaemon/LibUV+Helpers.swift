// SPDX-License-Identifier: Apache-2.0
import CLibUV

// Small conversions libuv needs from Swift: its handle "subclasses" are separate C structs, so a
// pointer is cast through OpaquePointer, and errors are negative Int32 codes.

@inline(__always)
package func asStream<Handle>(_ handle: UnsafeMutablePointer<Handle>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutablePointer(OpaquePointer(handle))
}

@inline(__always)
package func asHandle<Handle>(_ handle: UnsafeMutablePointer<Handle>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutablePointer(OpaquePointer(handle))
}

/// The EventLoop that owns `handle` (every loop's `data` holds its EventLoop, unretained).
@inline(__always)
func owningEventLoop<Handle>(of handle: UnsafeMutablePointer<Handle>) -> EventLoop {
    let raw = asHandle(handle).pointee.loop!
    return Unmanaged<EventLoop>.fromOpaque(raw.pointee.data!).takeUnretainedValue()
}

/// "ECONNRESET (connection reset by peer)".
package func uvErrorDescription(_ code: Int32) -> String {
    "\(String(cString: uv_err_name(code))) (\(String(cString: uv_strerror(code))))"
}

@inline(__always)
package func isUVError(_ code: some BinaryInteger, _ error: uv_errno_t) -> Bool {
    Int(code) == Int(error.rawValue)
}

/// A libuv call that failed.
public struct LibUVError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32

    public init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(uvErrorDescription(code))" }
}

/// Throws unless `code` is 0.
@inline(__always)
func check(_ code: Int32, _ call: @autoclosure () -> String) throws(LibUVError) {
    if code != 0 { throw LibUVError(call(), code) }
}

/// Close callback for a handle that has no context: frees its memory.
func freeHandleOnClose<Handle>(_ handle: UnsafeMutablePointer<Handle>) {
    uv_close(asHandle(handle)) { raw in
        raw?.deallocate()
    }
}
