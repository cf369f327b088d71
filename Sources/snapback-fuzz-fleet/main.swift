// SPDX-License-Identifier: Apache-2.0
import SnapbackFleet

// libFuzzer entry point over snapback-fleet's report decoder and checks (what it reads off the stream
// comes from every box): `make fuzz` (or swift build ... --product snapback-fuzz-fleet;
// .build-fuzz/release/snapback-fuzz-fleet Tests/Fuzz/fleet-corpus). Built without the fuzzer it does
// nothing; the corpus is replayed by FleetFuzzCorpusTests.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FleetFuzzReplay.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
