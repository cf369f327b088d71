// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// Runs closures posted from other threads on the loop thread, in the order they were posted: how the
/// store's writer thread hands commit results back (`SQLiteViewerStateStore(post: context.post.post)`),
/// without SnapbackStore importing libuv.
///
/// Closures travel in a `LoopMailbox`; after each drain the
/// output they queued is flushed. The daemon creates one in `setUp` (``DaemonContext/post``) and closes
/// it in its last step, after the handler's `shutdown()`: closing runs what is still queued, then closes
/// the handle; later posts are dropped.
public final class LoopPost: @unchecked Sendable {
    private let mailbox: LoopMailbox<@Sendable () -> Void>
    private unowned let loop: EventLoop

    /// Loop thread.
    public init(loop: EventLoop) throws(LibUVError) {
        precondition(loop.isOnLoopThread, "LoopPost must be created on the loop thread")
        self.loop = loop
        mailbox = try LoopMailbox(loop: loop.raw) { body in body() }
    }

    /// Queues `body` to run on the loop thread. Any thread. Dropped once the post is closed.
    public func post(_ body: @escaping @Sendable () -> Void) {
        mailbox.send(body)
    }

    /// Runs queued closures until none are left, including those they post. Loop thread.
    func drain() { mailbox.drain() }

    /// Refuses further posts, runs what is queued and closes the handle. Loop thread, at shutdown.
    public func close() {
        mailbox.close()
        loop.flushPending()
    }
}
