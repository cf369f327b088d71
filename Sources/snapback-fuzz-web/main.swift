// SPDX-License-Identifier: Apache-2.0
import SnapbackWeb

// libFuzzer entry point over the web bridge's request heads, upgrade checks, WebSocket framing and
// JSON-RPC envelopes (`make fuzz`). Built without the fuzzer it does nothing; the corpus
// (Tests/Fuzz/web-corpus) is replayed by WebFuzzCorpusTests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    WebFuzzReplay.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
