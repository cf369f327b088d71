// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Runs `body` once on a new detached thread: for the rare work that may block (reading configuration
/// files, name-service lookups) and must stay off the loop thread. The result comes back through
/// `LoopPost`.
enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// False if the thread could not be created (the caller runs the work some other way).
    static func run(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
