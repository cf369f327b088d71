// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackDaemon
import SnapbackTimeline
import Testing

/// Every row of `AdPolicy.fields` is a key of the configuration file, documented in its section of
/// `snapbackd.conf(5)` with its values, and shown with its default in the installed sample file.
@Suite struct PolicyFieldDocumentationTests {
    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: ConfigurationTests.repositoryRoot.appendingPathComponent(path).path, encoding: .utf8)
    }

    /// The lines of `text` from the line `start` up to the next line starting with `end`.
    static func section(_ text: String, from start: String, to end: String) -> [Substring] {
        let lines = text.split(separator: "\n")
        guard let first = lines.firstIndex(where: { $0 == start }) else { return [] }
        let rest = lines[(first + 1)...]
        return Array(rest.prefix { !$0.hasPrefix(end) })
    }

    @Test func everyRowIsAKeyInItsSection() {
        let keys = ConfigurationFile.keyNames
        for field in AdPolicy.fields {
            let section: ConfigurationFile.Section = field.deviceWide ? .bookmarks : .policy
            #expect(keys.contains { $0.section == section && $0.name == field.key }, "\(field.key)")
        }
    }

    @Test func theManPageDocumentsEveryRowWithItsValuesInItsSection() throws {
        let page = try Self.text("docs/man/snapbackd.conf.5")
        func roff(_ s: String) -> String { s.replacingOccurrences(of: "-", with: "\\-") }
        for field in AdPolicy.fields {
            let values: String
            switch field.kind {
            case .flag: values = "\\fIboolean\\fR"
            case .seconds: values = "\\fIduration\\fR"
            case .count: values = "\\fIcount\\fR"
            case .choice(let c): values = c.names.map(roff).joined(separator: " | ")
            }
            let header = field.deviceWide ? ".SH [bookmarks]" : ".SH [policy]"
            let lines = Self.section(page, from: header, to: ".SH ")
            #expect(lines.contains { $0 == ".BR \(roff(field.key)) \" = \" \(values)" }, "\(field.key) under \(header)")
        }
    }

    @Test func theSampleFileShowsEveryRowWithItsDefaultInItsSection() throws {
        let sample = try Self.text("config/snapbackd.conf")
        for field in AdPolicy.fields {
            let header = field.deviceWide ? "[bookmarks]" : "[policy]"
            let lines = Self.section(sample, from: header, to: "[")
            let line = "#\(field.key) = \(field.text(in: AdPolicy()))"
            #expect(lines.contains { $0 == line }, "\(line) under \(header)")
        }
    }
}
