// SPDX-License-Identifier: Apache-2.0
import SnapbackFuzzing

// libFuzzer entry point over the frame decoder, the request decoding and the timeline:
//   swift build -c debug --sanitize=fuzzer --sanitize=address --product snapback-fuzz
//   .build/debug/snapback-fuzz Tests/Fuzz/corpus      (or `make fuzz`)
// Built without the fuzzer it does nothing; the corpus is replayed by FuzzCorpusTests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var replay = FuzzReplay()
    replay.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
