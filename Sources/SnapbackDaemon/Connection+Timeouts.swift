// SPDX-License-Identifier: Apache-2.0
/// The connection's two timeouts: Hello within `helloTimeout` of accepting, and a frame complete within
/// `partialFrameTimeout` of its first byte. The loop checks them (``EventLoop``'s watch list).
extension Connection {
    /// The loop time (milliseconds) by which the connection must have made progress, if any: the end
    /// of its Hello timeout, or of its partial-frame timeout, whichever comes first.
    var deadline: UInt64? {
        var result: UInt64?
        if !handshakeCompleted {
            result = acceptedAt &+ helloTimeout
        }
        if let since = partialFrameSince {
            result = min(result ?? .max, since &+ partialFrameTimeout)
        }
        return result
    }

    /// Closes the connection if its deadline passed at loop time `now`; returns whether it did.
    func closeIfOverdue(now: UInt64) -> Bool {
        guard isOpen else { return false }
        if let since = partialFrameSince, since &+ partialFrameTimeout <= now {
            close(
                reason: "partial frame not completed within \(describeDuration(milliseconds: partialFrameTimeout)) "
                    + "(\(max(unframedBytes, 0)) of its bytes received)", level: .warning)
            return true
        }
        if !handshakeCompleted, acceptedAt &+ helloTimeout <= now {
            close(reason: "no Hello within \(describeDuration(milliseconds: helloTimeout)) of connecting", level: .warning)
            return true
        }
        return false
    }
}
