// SPDX-License-Identifier: Apache-2.0

/// A configuration file that cannot be used: `file:line: reason` (no line when the whole file is at
/// fault, e.g. it cannot be read, or a required key is missing).
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var reason: String

    public init(file: String, line: Int?, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String {
        if let line { return "\(file):\(line): \(reason)" }
        return "\(file): \(reason)"
    }
}

/// Why a value was refused: the reader adds the file, the line and the key.
public struct ConfigurationReason: Error, Sendable {
    public let text: String
    public init(_ text: String) { self.text = text }
}

/// The `key = value` syntax of `snapbackd.conf(5)`, which the sync agent's `sync.conf` shares
/// (`snapback-sync(8)`): its reading, with no I/O, for the callers' own keys and values.
///
/// ```
/// # a comment, and so is a line starting with ';'; blank lines are ignored
/// [section]          # where the format has sections
/// key = value        # blanks around the key and the value are ignored; a '#' after a blank starts a comment
/// ```
public enum KeyValueFile {
    /// Reads `text`, the contents of `file`, and hands each `key = value` to `apply` with its line, in
    /// order. `keys` are the format's, in the order of its documentation (for the suggestion of a
    /// misspelt one), each with its section; `sections` are the headers the format takes (none: a
    /// header is refused, as `format` having no sections). A key under another section's header, an
    /// unknown key or section, and a line that is none of these are errors, naming the line; so is a
    /// value `apply` refuses, naming its key.
    public static func read(
        _ text: String, file: String, format: String, sections: [String] = [],
        keys: [(name: String, section: String?)],
        apply: (_ key: String, _ value: String, _ line: Int) throws(ConfigurationReason) -> Void
    ) throws(ConfigurationError) {
        var sectionOf: [String: String?] = [:]
        for key in keys { sectionOf[key.name] = key.section }
        var section: String?
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            func fail(_ reason: String) -> ConfigurationError {
                ConfigurationError(file: file, line: lineNumber, reason: reason)
            }
            var line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            line = withoutTrailingComment(line)
            if line.hasPrefix("[") {
                guard !sections.isEmpty else { throw fail("\(format) has no sections") }
                guard line.hasSuffix("]") else { throw fail("a section header must end with ']'") }
                let name = trimmed(line.dropFirst().dropLast())
                guard sections.contains(name) else {
                    throw fail("unknown section [\(name)] (sections: \(sections.map { "[\($0)]" }.joined(separator: " ")))")
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw fail(
                    sections.isEmpty
                        ? "expected 'key = value' or a # comment" : "expected 'key = value', a [section] header or a # comment")
            }
            let name = trimmed(line[..<equals])
            let value = trimmed(line[line.index(after: equals)...])
            guard !name.isEmpty else { throw fail("a key is missing before '='") }
            guard let keySection = sectionOf[name] else {
                var reason = "unknown key '\(name)'"
                if let near = keys.first(where: { distance($0.name, name) <= 2 }) { reason += " (did you mean '\(near.name)'?)" }
                throw fail(reason)
            }
            if let section, let keySection, section != keySection {
                throw fail("'\(name)' belongs in [\(keySection)], not [\(section)]")
            }
            do {
                try apply(name, value, lineNumber)
            } catch {
                throw fail("\(name): \(error.text)")
            }
        }
    }

    /// `text` without the blanks (spaces, tabs, carriage returns) around it.
    public static func trimmed<S: StringProtocol>(_ text: S) -> String {
        func blank(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" }
        guard let first = text.firstIndex(where: { !blank($0) }),
            let last = text.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(text[first...last])
    }

    /// `value  # note` → `value`: a `#` after a blank starts a comment (no value contains one).
    public static func withoutTrailingComment(_ line: String) -> String {
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if character == "#", previous == " " || previous == "\t" {
                return trimmed(line[..<index])
            }
            previous = character
        }
        return line
    }

    /// Levenshtein distance, cut off above 2 (a typo is one or two edits away).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard abs(a.count - b.count) <= 2, !a.isEmpty, !b.isEmpty else { return 3 }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}
