import CLibUV

/// A one-shot or repeating timer on the loop (`uv_timer_t`) calling a closure on the loop thread.
///
/// One Swift owner: the timer closes its handle when ``close()`` is called or when the owner lets go
/// of it, whichever comes first; the handle's memory is freed in libuv's close callback. The callback
/// is released on close, so a callback that captures its owner does not keep it alive past ``close()``
/// (but does until then: capture `weak` or call ``close()``). A shutdown closes timers their owners
/// left open; ``start(after:repeatingEvery:)`` on a closed timer does nothing.
///
/// Loop-confined, `@unchecked Sendable` only so that an actor on the ``LoopExecutor`` can hold one.
public final class LoopTimer: @unchecked Sendable {
    /// What the handle points to: outlives the `LoopTimer` until the close callback.
    final class State {
        let handle: UnsafeMutablePointer<uv_timer_t>
        unowned let loop: EventLoop
        var callback: (() -> Void)?
        var isClosed = false

        init(loop: EventLoop, callback: @escaping () -> Void) {
            self.loop = loop
            self.callback = callback
            handle = .allocate(capacity: 1)
            // uv_timer_init cannot fail on an initialised loop.
            uv_timer_init(loop.raw, handle)
            handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
            loop.register(self)
        }

        func close() {
            guard !isClosed else { return }
            isClosed = true
            callback = nil
            uv_close(asHandle(handle)) { raw in
                let state = Unmanaged<State>.fromOpaque(raw!.pointee.data!).takeRetainedValue()
                state.loop.unregister(state)
                raw!.deallocate()
            }
        }
    }

    private let state: State

    /// Creates a stopped timer.
    public init(loop: EventLoop, _ callback: @escaping () -> Void) {
        precondition(loop.isOnLoopThread, "LoopTimer must be created on the loop thread")
        state = State(loop: loop, callback: callback)
    }

    deinit {
        state.close()
    }

    /// Fires once after `milliseconds` (measured from the loop's cached time), then every
    /// `repeatingEvery` milliseconds if non-zero. Restarts a running timer.
    public func start(after milliseconds: UInt64, repeatingEvery interval: UInt64 = 0) {
        guard !state.isClosed else { return }
        uv_timer_start(state.handle, { raw in
            let state = Unmanaged<State>.fromOpaque(raw!.pointee.data!).takeUnretainedValue()
            if let callback = state.callback {
                callback()
            }
            state.loop.flushPending()
        }, milliseconds, interval)
    }

    /// Stops the timer; it can be started again.
    public func stop() {
        guard !state.isClosed else { return }
        uv_timer_stop(state.handle)
    }

    /// Whether the timer is started and has not fired (or repeats).
    public var isActive: Bool {
        !state.isClosed && uv_is_active(asHandle(state.handle)) != 0
    }

    /// Closes the handle for good and releases the callback.
    public func close() {
        state.close()
    }

    public var isClosed: Bool { state.isClosed }
}
