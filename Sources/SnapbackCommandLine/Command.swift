// SPDX-License-Identifier: Apache-2.0

// The tools' command lines, declared as tables: a command is its name, help texts, parameters (long
// options with a value, flags, positionals) and subcommands; the parser, the help, the usage errors and
// the shell completion scripts are all made from the same table. No Foundation (argument-parser's
// would cost the installed CLI megabytes of resident memory).

/// A bad command line: printed with the command's usage on stderr, exit status 2.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public var description: String
    /// The parameter the error is about, whose help follows the message.
    public var parameter: Parameter?
    public init(_ description: String) { self.description = description }
    init(_ description: String, about parameter: Parameter?) {
        self.description = description
        self.parameter = parameter
    }
}

/// What a value completes to in the shells.
public enum Completion: Sendable, Equatable {
    /// Anything: the shell offers nothing.
    case none
    /// A path.
    case file
    /// One of these words.
    case values([String])
}

/// One parameter of a command: `--name <value>`, a flag `--name`, or a positional `<name>`.
public struct Parameter: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case option
        case flag
        case positional
    }
    public var kind: Kind
    /// The long name without its dashes; for a positional, the key its value is read by.
    public var name: String
    /// `<value>` in help and usage (a positional's is its name).
    public var valueName: String
    public var help: String
    /// Shown as `(default: …)` after the help when not empty.
    public var defaultValue: String
    /// An option given more than once keeps every value (else a repeat is a usage error); a positional
    /// takes every remaining value, at least one.
    public var repeating: Bool
    /// A positional that may be left out.
    public var optional: Bool
    public var completion: Completion

    /// `--name <value>`.
    public static func option(
        _ name: String, value: String, help: String, default defaultValue: String = "", repeating: Bool = false,
        completion: Completion = .none
    ) -> Parameter {
        Parameter(
            kind: .option, name: name, valueName: value, help: help, defaultValue: defaultValue, repeating: repeating,
            optional: true, completion: completion)
    }

    /// `--name`, off unless given.
    public static func flag(_ name: String, help: String) -> Parameter {
        Parameter(
            kind: .flag, name: name, valueName: "", help: help, defaultValue: "", repeating: false, optional: true,
            completion: .none)
    }

    /// `<name>`; `repeating`: `<name> ...`, one or more.
    public static func positional(
        _ name: String, help: String, repeating: Bool = false, optional: Bool = false, completion: Completion = .none
    ) -> Parameter {
        Parameter(
            kind: .positional, name: name, valueName: name, help: help, defaultValue: "", repeating: repeating,
            optional: optional, completion: completion)
    }

    /// As help and errors name it: `--width <n>`, `--json`, `<id>`.
    public var label: String {
        switch kind {
        case .option: return "--\(name) <\(valueName)>"
        case .flag: return "--\(name)"
        case .positional: return "<\(valueName)>"
        }
    }
}

/// A command: what it prints in help, what it takes, and what it runs.
public struct Command: Sendable {
    public var name: String
    /// One line: the OVERVIEW in its help, its line in its parent's SUBCOMMANDS.
    public var abstract: String
    /// Paragraphs after the overview: a paragraph's lines are joined and wrapped to the terminal; one
    /// with indented lines (a list, a table) keeps its lines.
    public var discussion: String
    public var parameters: [Parameter]
    public var subcommands: [Command]
    /// Runs the command with its parsed arguments. A UsageError is a bad command line (exit 2), any
    /// other error a failed command (exit 1). A command with subcommands runs when none is named.
    public var run: @Sendable (ParsedArguments) throws -> Void

    public init(
        name: String, abstract: String, discussion: String = "", parameters: [Parameter] = [],
        subcommands: [Command] = [], run: @escaping @Sendable (ParsedArguments) throws -> Void
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.parameters = parameters
        self.subcommands = subcommands
        self.run = run
    }

    /// A command that only groups subcommands: alone, it is a bad command line saying `missing`.
    public init(name: String, abstract: String, discussion: String = "", subcommands: [Command], missing: String) {
        self.init(
            name: name, abstract: abstract, discussion: discussion, subcommands: subcommands,
            run: { _ in throw UsageError(missing) })
    }

    func subcommand(_ name: String) -> Command? { subcommands.first { $0.name == name } }
}

/// What the command line gave a command: the values of its options and positionals, by name.
public struct ParsedArguments: Sendable {
    /// The command's names from the root: `["snapback", "bookmarks", "get"]`.
    public let path: [String]
    let parameters: [Parameter]
    var values: [String: [String]] = [:]

    init(path: [String], parameters: [Parameter]) {
        self.path = path
        self.parameters = parameters
    }

    /// Whether the flag was given.
    public func flag(_ name: String) -> Bool { values[name] != nil }

    /// The option's or positional's value, nil when not given.
    public func string(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeating option or positional, in order.
    public func strings(_ name: String) -> [String] { values[name] ?? [] }

    /// The value as a number (Int, UInt64, Double): nil when not given, a usage error when it is not one.
    public func value<T: LosslessStringConvertible>(_ name: String, as _: T.Type = T.self) throws(UsageError) -> T? {
        guard let text = string(name) else { return nil }
        guard let value = T(text) else {
            let parameter = parameters.first { $0.name == name }
            throw UsageError("The value '\(text)' is invalid for '\(parameter?.label ?? name)'", about: parameter)
        }
        return value
    }
}

/// What a command line asks for.
public enum Invocation {
    /// Print this help text on stdout (exit 0).
    case help(String)
    /// Print this completion script on stdout (exit 0).
    case completionScript(String)
    /// Run the command.
    case run(Command, ParsedArguments)
    /// A bad command line, for the command at this path.
    case usageError(UsageError, [Command])
}

/// The shells `--generate-completion-script` writes for.
public enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// Reads `arguments` (without the program's name) as `root`'s command line: leading words name the
/// subcommands, then the command's options (`--name value`, `--name=value`, flags), its positionals in
/// order, and after `--` positionals only. `-h`/`--help` anywhere before `--` asks for the command's
/// help, as does `help [COMMAND…]` at the root; `--generate-completion-script SHELL`, first, a script.
public func parse(_ root: Command, _ arguments: [String], width: Int = 80) -> Invocation {
    var commands = [root]
    var rest = arguments[...]
    if let first = rest.first, first == "--generate-completion-script" || first.hasPrefix("--generate-completion-script=") {
        var shellName = first.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init)
        if shellName == nil, rest.count > 1 { shellName = rest[rest.startIndex + 1] }
        guard let shellName else {
            return .usageError(UsageError("Missing value for '--generate-completion-script <shell>'"), commands)
        }
        guard let shell = Shell(rawValue: shellName) else {
            let shells = Shell.allCases.map(\.rawValue).joined(separator: " ")
            return .usageError(
                UsageError(
                    "Can't generate completion scripts for '\(shellName)'.\n"
                        + "Please use --generate-completion-script=<shell> with one of:\n    \(shells)"), commands)
        }
        if rest.count > (first.contains("=") ? 1 : 2) {
            let extra = rest.dropFirst(first.contains("=") ? 1 : 2)
            return .usageError(unexpected(Array(extra)), commands)
        }
        return .completionScript(completionScript(root, shell: shell))
    }
    if rest.first == "help" {
        for name in rest.dropFirst() {
            guard let next = commands.last!.subcommand(name) else {
                return .usageError(UsageError("Unknown command '\(name)'"), commands)
            }
            commands.append(next)
        }
        return .help(helpText(commands, width: width))
    }
    while let word = rest.first, let next = commands.last!.subcommand(word) {
        commands.append(next)
        rest = rest.dropFirst()
    }
    let command = commands.last!
    if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
        return .help(helpText(commands, width: width))
    }
    do {
        return .run(command, try parseParameters(command, path: commands.map(\.name), rest))
    } catch {
        return .usageError(error, commands)
    }
}

private func unexpected(_ extra: [String]) -> UsageError {
    UsageError(
        extra.count == 1
            ? "Unexpected argument '\(extra[0])'"
            : "\(extra.count) unexpected arguments: " + extra.map { "'\($0)'" }.joined(separator: ", "))
}

/// A command's own arguments, after its name.
private func parseParameters(_ command: Command, path: [String], _ arguments: ArraySlice<String>) throws(UsageError)
    -> ParsedArguments
{
    var parsed = ParsedArguments(path: path, parameters: command.parameters)
    var positionals: [String] = []
    var rest = arguments
    var optionsEnded = false
    while let word = rest.popFirst() {
        if optionsEnded || word == "-" || !word.hasPrefix("-") {
            positionals.append(word)
            continue
        }
        if word == "--" {
            optionsEnded = true
            continue
        }
        // `--name=value` or `--name`; a single dash is only ever -h.
        let body = word.hasPrefix("--") ? word.dropFirst(2) : ""
        let equals = body.firstIndex(of: "=")
        let name = String(body[..<(equals ?? body.endIndex)])
        let inline = equals.map { String(body[body.index(after: $0)...]) }
        guard let parameter = command.parameters.first(where: { $0.kind != .positional && $0.name == name }), !name.isEmpty
        else {
            throw UsageError("Unknown option '\(name.isEmpty ? word : "--" + name)'")
        }
        let value: String
        if parameter.kind == .flag {
            if let inline {
                throw UsageError("The option '--\(name)' does not take any value, but '\(inline)' was specified.")
            }
            value = ""
        } else if let inline {
            value = inline
        } else if let next = rest.first, next == "-" || !next.hasPrefix("-") {
            value = next
            rest = rest.dropFirst()
        } else {
            throw UsageError("Missing value for '\(parameter.label)'", about: parameter)
        }
        if parameter.kind == .option, !parameter.repeating, parsed.values[name] != nil {
            throw UsageError("The option '\(parameter.label)' was given more than once", about: parameter)
        }
        parsed.values[name, default: []].append(value)
    }
    var remaining = positionals[...]
    for parameter in command.parameters where parameter.kind == .positional {
        if remaining.isEmpty {
            if parameter.optional { continue }
            throw UsageError(
                "Missing expected argument '\(parameter.label)\(parameter.repeating ? " ..." : "")'", about: parameter)
        }
        if parameter.repeating {
            parsed.values[parameter.name] = Array(remaining)
            remaining = []
        } else {
            parsed.values[parameter.name] = [remaining.removeFirst()]
        }
    }
    if !remaining.isEmpty { throw unexpected(Array(remaining)) }
    return parsed
}
