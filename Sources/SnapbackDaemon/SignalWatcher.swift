// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc

/// Delivers signals as loop events (`uv_signal_t`), so a handler runs on the loop thread like any
/// other callback.
public final class SignalWatcher {
    private let loop: EventLoop
    private var handles: [UnsafeMutablePointer<uv_signal_t>] = []
    private var onSignal: ((Int32) -> Void)?

    public init(loop: EventLoop, signals: [Int32], onSignal: @escaping (Int32) -> Void) throws(LibUVError) {
        self.loop = loop
        self.onSignal = onSignal
        for signal in signals {
            let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
            uv_signal_init(loop.raw, handle)
            // One reference per handle, released in its close callback.
            handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
            handles.append(handle)
            let result = uv_signal_start(
                handle,
                { raw, signal in
                    let watcher = Unmanaged<SignalWatcher>.fromOpaque(raw!.pointee.data!).takeUnretainedValue()
                    watcher.onSignal?(signal)
                    watcher.loop.flushPending()
                }, signal)
            if result != 0 {
                close()
                throw LibUVError("uv_signal_start \(signal)", result)
            }
        }
    }

    /// Stops watching; the signals get their default disposition back.
    public func close() {
        onSignal = nil
        for handle in handles {
            uv_close(asHandle(handle)) { raw in
                Unmanaged<SignalWatcher>.fromOpaque(raw!.pointee.data!).release()
                raw!.deallocate()
            }
        }
        handles.removeAll()
    }

    /// "SIGTERM".
    public static func name(of signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        case SIGQUIT: "SIGQUIT"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        default: "signal \(signal)"
        }
    }
}
