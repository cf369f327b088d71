// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import SnapbackTimeline

/// How the configuration file spells values: durations, sizes, counts, id lists, booleans; and its text rules.
extension ConfigurationFile {
    // MARK: Values

    /// Reads `text` as the value of `field` into `policy`. (A duration the file takes, at most a year,
    /// is within the policy's range for seconds.)
    static func assign(_ text: String, to field: AdPolicy.Field, of policy: inout AdPolicy) throws(Reason) {
        switch field.kind {
        case .flag(let k): policy[keyPath: k] = try boolean(text)
        case .seconds(let k, _): policy[keyPath: k] = try duration(text)
        case .count(let k, _, let configured): policy[keyPath: k] = try count(in: configured)(text)
        case .choice(let c):
            guard let position = c.names.firstIndex(of: text) else { throw notOneOf(text, c.names) }
            c.assign(&policy, position)
        }
    }

    static func notOneOf(_ text: String, _ names: [String]) -> Reason {
        Reason("'\(text)' is not one of \(names.joined(separator: ", "))")
    }

    static func boolean(_ text: String) throws(Reason) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw Reason("'\(text)' is not a boolean (yes, no, true, false, on, off, 1, 0)")
        }
    }

    /// A list of ids, names or one wildcard (allow-users, allow-groups): whether the wildcard was given,
    /// and the ids, names resolved through `resolve`.
    static func idList(
        _ text: String, wildcard: String, resolve: (String) -> UInt32?,
        unknown: (String) -> String
    ) throws(Reason) -> (Bool, [UInt32]) {
        var sawWildcard = false
        var ids: [UInt32] = []
        for item in listItems(text) {
            if item == wildcard {
                sawWildcard = true
            } else if let id = UInt32(item) ?? resolve(item) {
                ids.append(id)
            } else {
                throw Reason(unknown(item))
            }
        }
        return (sawWildcard, ids)
    }

    static func renderIdList(wildcard: String?, _ ids: [UInt32]) -> String {
        ((wildcard.map { [$0] } ?? []) + ids.map { "\($0)" }).joined(separator: " ")
    }

    /// Seconds: a non-negative number, optionally followed by ms, s, min or h; at most a year.
    package static func duration(_ text: String) throws(Reason) -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("h", 3600)]
        var number = text
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = trimmed(text.dropLast(suffix.count))
            scale = factor
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(number), value.isFinite
        else {
            throw Reason("'\(text)' is not a duration (seconds, or a number with ms, s, min or h)")
        }
        let seconds = value * scale
        guard seconds <= 86_400 * 365 else { throw Reason("'\(text)' is longer than a year") }
        return seconds
    }

    /// A connection timeout: a duration within ``DaemonOptions/timeoutRange`` (never 0: a connection
    /// that may hold a slot for ever is what these timeouts exist to prevent).
    static func timeout(_ text: String) throws(Reason) -> Double {
        let value = try duration(text)
        let range = DaemonOptions.timeoutRange
        guard range.contains(value) else {
            throw Reason("'\(text)' is not a timeout in \(seconds(range.lowerBound))...\(seconds(range.upperBound)) seconds")
        }
        return value
    }

    /// `30`, `0.5`: a number of seconds as the file takes it.
    static func seconds(_ value: Double) -> String { AdPolicy.Field.text(seconds: value) }

    package static func count(in range: ClosedRange<Int>) -> (String) throws(Reason) -> Int {
        { text throws(Reason) in
            guard let value = Int(text), range.contains(value) else {
                throw Reason("'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
    }

    /// Bytes: a whole number, optionally followed by K, M or G (KiB, MiB, GiB also accepted).
    package static func size(in range: ClosedRange<Int>) -> (String) throws(Reason) -> Int {
        { text throws(Reason) in
            let units: [(String, Int)] = [
                ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30),
                ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)
            ]
            var number = text
            var scale = 1
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                number = trimmed(text.dropLast(suffix.count))
                scale = factor
                break
            }
            guard let value = Int(number), value >= 0, value <= Int(UInt32.max) else {
                throw Reason("'\(text)' is not a size (bytes, or a number with K, M or G)")
            }
            let bytes = value * scale
            guard range.contains(bytes) else {
                throw Reason("\(bytes) bytes is not in \(range.lowerBound)...\(range.upperBound)")
            }
            return bytes
        }
    }

    // MARK: Text

    package static func listItems(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
    }

    static func trimmed<S: StringProtocol>(_ text: S) -> String { KeyValueFile.trimmed(text) }
}
