// SPDX-License-Identifier: Apache-2.0
import SnapbackFuzzing

// libFuzzer entry point over the whole service in process (DaemonReplay: embedded peers, a manual
// clock, an in-memory store), checking what the players receive after every step:
//   swift build --sanitize=fuzzer --sanitize=address --product snapback-fuzz-daemon
//   .build/debug/snapback-fuzz-daemon Tests/Fuzz/daemon-corpus      (or `make fuzz`)
// Built without the fuzzer it does nothing; the corpus is replayed by DaemonFuzzTests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    DaemonReplay.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
