// SPDX-License-Identifier: Apache-2.0
import SnapbackFuzzing

// libFuzzer entry point over the generated JSON decoders (what the web bridge reads from a page):
//   make fuzz      (or swift build ... --product snapback-fuzz-json; .build-fuzz/release/snapback-fuzz-json
//                   Tests/Fuzz/json-corpus)
// Built without the fuzzer it does nothing; the corpus is replayed by JSONFuzzCorpusTests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    JSONReplay.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
