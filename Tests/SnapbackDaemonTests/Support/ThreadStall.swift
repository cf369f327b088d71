// SPDX-License-Identifier: Apache-2.0
import Foundation

/// One thread of another process held still for a while, its other threads running on: what a long
/// computation or a blocked call does to the thread it runs on, done from outside, with no hook in the
/// program. A helper process attaches to the thread alone with ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT:
/// ptrace works per thread, where SIGSTOP would stop the whole process) and detaches after `seconds`.
/// The helper, not the test process, is the tracer, so that no ptrace stop reaches Foundation's wait for
/// its own children; its end is read from its output, which closes when it exits (Foundation's
/// `waitUntilExit` did not return for it). It needs CAP_SYS_PTRACE or a tracee of the same uid (the
/// tests run as root). What goes wrong it says on stderr, which the test's output shows.
final class ThreadStall {
    private let process = Process()
    private let output = Pipe()

    private static let helper = """
        import ctypes, os, sys, time
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.restype = ctypes.c_long
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT, WALL = 17, 0x4206, 0x4207, 0x40000000
        tid, seconds = int(sys.argv[1]), float(sys.argv[2])
        def ptrace(request, name):
            if libc.ptrace(request, tid, None, None) != 0:
                sys.exit("%s on thread %d: %s" % (name, tid, os.strerror(ctypes.get_errno())))
        ptrace(PTRACE_SEIZE, "PTRACE_SEIZE")
        ptrace(PTRACE_INTERRUPT, "PTRACE_INTERRUPT")
        os.waitpid(tid, WALL)
        print("stopped", flush=True)
        time.sleep(seconds)
        ptrace(PTRACE_DETACH, "PTRACE_DETACH")
        print("resumed", flush=True)
        """

    /// Starts holding thread `tid` for `seconds`; returns once the thread is stopped.
    init(thread tid: Int32, seconds: Double) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.helper, String(tid), String(seconds)]
        process.standardOutput = output
        try process.run()
        guard line() == "stopped" else { throw Failure("thread \(tid) could not be stopped") }
    }

    /// Waits until the thread runs again and the helper has ended.
    func waitUntilResumed() throws {
        guard line() == "resumed" else { throw Failure("the stopped thread was not resumed") }
        guard output.fileHandleForReading.readDataToEndOfFile().isEmpty else {
            throw Failure("the helper wrote more than it should")
        }
    }

    private func line() -> String {
        var bytes: [UInt8] = []
        while let byte = try? output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
