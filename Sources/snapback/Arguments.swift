import Glibc

/// A command line the tool cannot run: printed with the command's usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Hand-written argument parsing: `--name VALUE`, `--name=VALUE`, flags, positionals, and `--` to end
/// the options. `-h`/`--help` is always a flag.
struct Arguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    var wantsHelp: Bool { flags.contains("--help") }

    /// - Parameters:
    ///   - valueOptions: options that take a value (e.g. `--socket`).
    ///   - flagOptions: options without a value.
    init(_ arguments: ArraySlice<String>, valueOptions: Set<String>, flagOptions: Set<String> = []) throws(UsageError) {
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            if name == "-h" || name == "--help" {
                if inline != nil { throw UsageError("\(name) takes no value") }
                flags.insert("--help")
            } else if valueOptions.contains(name) {
                guard let value = inline ?? iterator.next() else { throw UsageError("\(name) needs a value") }
                values[name] = value
            } else if flagOptions.contains(name) {
                if inline != nil { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError("unknown option \(name)")
            }
        }
    }

    func value(_ name: String) -> String? { values[name] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// A non-empty string option.
    func string(_ name: String, default fallback: String) throws(UsageError) -> String {
        guard let text = values[name] else { return fallback }
        guard !text.isEmpty else { throw UsageError("\(name) needs a non-empty value") }
        return text
    }

    /// An integer option within `range`.
    func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError("\(name): '\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    /// Fails on positionals beyond `count`.
    func expectPositionals(atMost count: Int) throws(UsageError) {
        if positionals.count > count {
            throw UsageError("unexpected argument '\(positionals[count])'")
        }
    }
}

/// The daemon's socket: `--socket`, else `$SNAPBACK_SOCKET`, else snapbackd's own default.
func socketPath(_ arguments: Arguments) throws(UsageError) -> String {
    if arguments.value("--socket") != nil { return try arguments.string("--socket", default: "") }
    if let env = getenv("SNAPBACK_SOCKET"), env.pointee != 0 { return String(cString: env) }
    return defaultSocketPath
}

let defaultSocketPath = "./.run/snapbackd.sock"

let socketOptionHelp = """
      --socket PATH     snapbackd's socket (default $SNAPBACK_SOCKET, else \(defaultSocketPath))
    """
