// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto
import Glibc
import SnapbackSync
import SnapbackTestSupport
import SnapbackWire
import Testing

@testable import SnapbackFleet

/// ``FleetReportReader`` (the report read in place) against protobuf-c's unpack and the checks over it
/// (ProtobufCReference.swift), on the same bytes: generated reports, valid and not, and their seeded
/// mutations. The outcome must be the same: the same report read, or a refusal for the same reason. One
/// difference is the reader's own: a string that is not UTF-8 or holds a NUL is refused (protobuf-c
/// copies it, and C reads it only up to its NUL).
@Suite struct FleetReaderReferenceTests {
    enum Outcome: Equatable {
        case read(FleetReport)
        case refused(String)
    }

    static func reader(_ bytes: [UInt8]) -> Outcome {
        do { return .read(try FleetReport.parse(bytes)) } catch { return .refused(error.reason) }
    }

    static func reference(_ bytes: [UInt8], _ arena: UnpackArena) -> Outcome {
        do { return .read(try FleetReport.referenceParse(bytes, arena: arena)) } catch { return .refused(error.reason) }
    }

    /// A report of random shape: mostly what a box sends, sometimes a name, label, bound or count the
    /// checks refuse, a family of an unknown type, a string past ASCII (the mutations make the NULs and
    /// the bytes that are not UTF-8).
    static func generated(_ random: inout SplitMix64) -> SnapbackV1.TelemetryReport {
        func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        let hex = Array("0123456789abcdef")
        func word() -> String {
            chance(4)
                ? pick(["Bad-Name", "", "é", "le", "firmware", "x y", String(repeating: "a", count: 130)])
                : pick(["reason", "preset", "kind", "snapback", "ima", "_x", "seek_2", "a"])
        }
        var families: [SnapbackV1.MetricFamily] = []
        for f in 0..<Int(random.next() % 7) {
            let histogram = chance(30)
            var type = histogram ? MetricType.histogram.proto : MetricType.counter.proto
            if chance(3) { type = Snapback__V1__MetricType(rawValue: UInt32(truncatingIfNeeded: random.next() % 9)) }
            var series: [SnapbackV1.MetricSample] = []
            for _ in 0..<Int(random.next() % 4) {
                let labels = (0..<Int(random.next() % (chance(5) ? 11 : 3))).map { _ in
                    SnapbackV1.MetricLabel(name: word(), value: chance(3) ? "movie/42 \"x\"" : word())
                }
                if histogram {
                    var bounds: [Double] = [0.001, 0.01, 0.1, 1].prefix(Int(random.next() % 5)) + [.infinity]
                    if chance(5) { bounds.reverse() }
                    if chance(3) { bounds.append(.nan) }
                    var counts = bounds.indices.map { UInt64($0) * (random.next() % 5) }
                    if chance(5) { counts.removeLast() }
                    series.append(
                        SnapbackV1.MetricSample(
                            labels: labels, bucketBounds: bounds, sum: chance(3) ? -1 : Double(random.next() % 1000) / 8,
                            count: counts.last ?? 0, bucketCounts: counts))
                } else {
                    series.append(SnapbackV1.MetricSample(labels: labels, value: random.next() >> (random.next() % 64)))
                }
            }
            if chance(5), let first = series.first { series.append(first) }
            let name =
                chance(5) ? word() : pick(["snapbackd_seeks", "snapbackd_breaks", "snapbackd_lag", "snapbackd_starts"]) + "_\(f)"
            families.append(SnapbackV1.MetricFamily(name: name, help: chance(50) ? "Help é" : "", type: type, series: series))
        }
        if chance(3), let first = families.first { families.append(first) }
        let box = String((0..<32).map { _ in hex[Int(random.next() % 16)] })
        return SnapbackV1.TelemetryReport(
            boxId: chance(3) ? pick(["AA:BB", box + "0", String(box.dropLast()) + "é", ""]) : box,
            seq: chance(3) ? 0 : 1 + random.next() % 1000, startId: chance(3) ? "a b" : "start-\(random.next() % 99)",
            bootId: chance(3) ? "boot é" : "boot",
            countingSince: chance(3) ? pick([0, .nan, 1e11, -5]) : 1_700_000_000 + Double(random.next() % 1000),
            firmware: chance(3) ? pick(["fw 1", "fw-é", String(repeating: "f", count: 65)]) : "4.2.1",
            model: "stb-x100", region: chance(2) ? "é" : "eu-west",
            time: chance(3) ? pick([.infinity, -1, 2e10]) : 1_700_000_300, families: families)
    }

    @Test func theReaderDecidesAsProtobufCAndTheChecksDo() {
        var random = SplitMix64(seed: 0xf1ee_7ead)
        let arena = UnpackArena()
        var read = 0
        var refusedByProtobufC = 0
        var refusedByChecks = 0
        var badStrings = 0
        for i in 0..<30_000 {
            var bytes = Self.generated(&random).encoded()
            if i % 3 != 0 {
                for _ in 0...Int(random.next() % 3) { random.mutate(&bytes) }
            }
            let expected = Self.reference(bytes, arena)
            let got = Self.reader(bytes)
            if got == .refused(FleetReportReader.badString), got != expected {
                // The reader's own refusal: only for bytes that can make such a string.
                #expect(bytes.contains { $0 == 0 || $0 >= 0x80 }, "input \(i)")
                badStrings += 1
                continue
            }
            #expect(got == expected, "input \(i): \(bytes)")
            switch expected {
            case .read: read += 1
            case .refused(FleetReportReader.refused): refusedByProtobufC += 1
            case .refused: refusedByChecks += 1
            }
        }
        // Each way out was taken many times.
        #expect(
            read > 1000 && refusedByProtobufC > 1000 && refusedByChecks > 1000 && badStrings > 100,
            "\(read) read, \(refusedByProtobufC) refused by protobuf-c, \(refusedByChecks) by the checks, \(badStrings) bad strings"
        )
    }

    /// A report's bytes written field by field (what the encoder never writes: a field twice, fields out
    /// of order).
    static func field(_ number: UInt32, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count < 0x4000)
        var out = [UInt8(number << 3 | 2)]
        if payload.count < 0x80 {
            out.append(UInt8(payload.count))
        } else {
            out += [UInt8(payload.count & 0x7f | 0x80), UInt8(payload.count >> 7)]
        }
        return out + payload
    }

    static func field(_ number: UInt32, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }

    static func varint(_ number: UInt32, _ value: UInt8) -> [UInt8] { [UInt8(number << 3), value] }

    static func double(_ number: UInt32, _ value: Double) -> [UInt8] {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { [UInt8(number << 3 | 1)] + Array($0) }
    }

    static func report(family: [UInt8]) -> [UInt8] {
        field(1, FleetTests.box) + varint(2, 1) + double(5, 1_700_000_000) + field(9, "4.2.1") + field(10, "stb")
            + field(11, "eu") + double(12, 1_700_000_300) + field(13, family)
    }

    /// The reader's walk that checks protobuf-c's rules as it reads, on what only that walk sees: a
    /// label's name or value given twice (the first must be a string too), a family's type after its
    /// samples, a sample's packed counts with a varint that does not end.
    @Test func fieldsTwiceAndOutOfOrderAreReadAsTheReferenceDoes() throws {
        let label = { (names: [[UInt8]]) in Self.field(1, names.flatMap { Self.field(1, $0) } + Self.field(2, "x")) }
        func counter(_ sample: [UInt8], typeFirst: Bool = true) -> [UInt8] {
            let type = Self.varint(3, 1)
            return Self.field(1, "seeks") + (typeFirst ? type : []) + Self.field(5, sample) + (typeFirst ? [] : type)
        }
        let twice = Self.report(family: counter(label([Array("kind".utf8), Array("reason".utf8)]) + Self.varint(2, 7)))
        #expect(Self.reader(twice) == Self.reference(twice, UnpackArena()))
        #expect(try FleetReport.parse(twice).samples == [FleetSample(name: "seeks_total", labels: [("reason", "x")], value: 7)])
        let badFirst = Self.report(family: counter(label([[0xff], Array("reason".utf8)]) + Self.varint(2, 7)))
        #expect(Self.reader(badFirst) == .refused(FleetReportReader.badString))
        let nulFirst = Self.report(family: counter(label([[0x61, 0], Array("reason".utf8)]) + Self.varint(2, 7)))
        #expect(Self.reader(nulFirst) == .refused(FleetReportReader.badString))
        let typeAfter = Self.report(family: counter(label([Array("reason".utf8)]) + Self.varint(2, 3), typeFirst: false))
        #expect(Self.reader(typeAfter) == Self.reference(typeAfter, UnpackArena()))
        #expect(try FleetReport.parse(typeAfter).samples.map(\.value) == [3])
        // Packed counts whose last varint runs to the field's end: protobuf-c refuses the report.
        let histogram =
            Self.field(1, "lag") + Self.varint(3, 2)
            + Self.field(5, Self.field(3, Self.double(0, .infinity).dropFirst().map { $0 }) + Self.field(6, [0x81]))
        let unended = Self.report(family: histogram)
        #expect(Self.reader(unended) == .refused(FleetReportReader.refused))
        #expect(Self.reference(unended, UnpackArena()) == .refused(FleetReportReader.refused))
    }

    /// protobuf-c reads a string up to its NUL; the reader refuses it: the box_id checked is the one kept.
    @Test func aStringWithANulOrNotUTF8IsRefused() {
        var r = FleetTests.report(seq: 1, snapbacks: 1)
        // The encoder writes a string as C reads it: the NUL is put in after.
        r.boxId = FleetTests.box + "~tail"
        var bytes = r.encoded()
        let tail = Array("~tail".utf8)
        let nul = bytes.indices.first { Array(bytes[$0..<min($0 + 5, bytes.count)]) == tail }!
        bytes[nul] = 0
        #expect((try? FleetReport.referenceParse(bytes, arena: UnpackArena()))?.boxId == FleetTests.box)
        #expect(Self.reader(bytes) == .refused(FleetReportReader.badString))
        var valid = FleetTests.report(seq: 1, snapbacks: 1)
        valid.families[0].help = "Seeks é"
        var encoded = valid.encoded()
        #expect(Self.reader(encoded) == Self.reference(encoded, UnpackArena()))
        // The é's second byte made a lead byte: no longer UTF-8.
        let at = encoded.indices.dropLast().first { encoded[$0] == 0xc3 && encoded[$0 + 1] == 0xa9 }!
        encoded[at + 1] = 0xc3
        #expect(Self.reader(encoded) == .refused(FleetReportReader.badString))
        #expect(FleetReportReader.isText("a\u{e9}\u{10ffff}", 7) && !FleetReportReader.isText([0xed, 0xa0, 0x80], 3))
        #expect(!FleetReportReader.isText([0xc0, 0x80], 2) && !FleetReportReader.isText([0xf4, 0x90, 0x80, 0x80], 4))
    }
}
