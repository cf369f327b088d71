// SPDX-License-Identifier: Apache-2.0

/// An integer option's range check, worded as the tools always have: `--batch: '0' is not a whole number
/// in 1...10000000`.
public func checkRange(_ value: Int, _ name: String, _ range: ClosedRange<Int>) throws(UsageError) {
    guard range.contains(value) else {
        throw UsageError("\(name): '\(value)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
    }
}

/// A non-empty string option.
public func checkNonEmpty(_ value: String, _ name: String) throws(UsageError) {
    if value.isEmpty { throw UsageError("\(name) needs a non-empty value") }
}

/// A help text's paragraphs as they wrap: the lines of a paragraph joined, so that it wraps at the
/// terminal's width; a paragraph with indented lines (a list, a table) keeps its lines.
public func prose(_ text: String) -> String {
    text.split(separator: "\n\n", omittingEmptySubsequences: false).map { paragraph in
        let lines = paragraph.split(separator: "\n")
        if lines.dropFirst().contains(where: { $0.hasPrefix(" ") }) || lines.first?.hasPrefix(" ") == true {
            return String(paragraph)
        }
        return lines.joined(separator: " ")
    }.joined(separator: "\n\n")
}
