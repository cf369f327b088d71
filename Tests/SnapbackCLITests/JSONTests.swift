// SPDX-License-Identifier: Apache-2.0
import SnapbackCLI
import Testing

@Suite struct JSONTests {
    @Test func membersKeepTheirOrderAndStringsAreEscaped() {
        let value = JSON.object(["z": .string("a\"b\\c\n\u{01}é"), "a": .array([.null, .bool(true), .bool(false)])])
        #expect(value.rendered == #"{"z":"a\"b\\c\n\u0001é","a":[null,true,false]}"#)
    }

    @Test func numbersAreShortestAndNonFiniteIsNull() {
        #expect(JSON.number(600).rendered == "600")
        #expect(JSON.number(7.5).rendered == "7.5")
        #expect(JSON.number(-0.25).rendered == "-0.25")
        #expect(JSON.number(.nan).rendered == "null")
        #expect(JSON.number(Double?.none).rendered == "null")
        #expect(JSON.uint(UInt64.max).rendered == "18446744073709551615")
        #expect(JSON.number(1e300).rendered == "1e+300")
    }
}
