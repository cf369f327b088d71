// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The column where the help of an option, positional or subcommand starts.
private let helpColumn = 26

/// `snapback bookmarks get [--profile <p>] [--socket <path>] [--json] <content-id>`: the command's path,
/// then its parameters in order, options in brackets; `<subcommand>` for a command that has them.
public func usage(_ commands: [Command]) -> String {
    let command = commands.last!
    var words = commands.map(\.name)
    if !command.subcommands.isEmpty {
        words.append("<subcommand>")
    } else {
        for parameter in command.parameters {
            switch parameter.kind {
            case .option, .flag: words.append("[\(parameter.label)\(parameter.repeating ? " ..." : "")]")
            case .positional:
                let label = parameter.label + (parameter.repeating ? " ..." : "")
                words.append(parameter.optional ? "[\(label)]" : label)
            }
        }
    }
    return words.joined(separator: " ")
}

/// The command's help as `--help` prints it: overview, discussion, usage, arguments, options and
/// subcommands, wrapped to `width` columns.
public func helpText(_ commands: [Command], width: Int = 80) -> String {
    let command = commands.last!
    var text = wrap("OVERVIEW: " + command.abstract, width: width) + "\n\n"
    if !command.discussion.isEmpty { text += wrap(prose(command.discussion), width: width) + "\n\n" }
    text += "USAGE: " + usage(commands) + "\n\n"
    let positionals = command.parameters.filter { $0.kind == .positional }
    if !positionals.isEmpty {
        text += "ARGUMENTS:\n" + positionals.map { entry($0.label, $0.help, width: width) }.joined() + "\n"
    }
    text += "OPTIONS:\n"
    for parameter in command.parameters where parameter.kind != .positional {
        let help = parameter.defaultValue.isEmpty ? parameter.help : parameter.help + " (default: \(parameter.defaultValue))"
        text += entry(parameter.label, help, width: width)
    }
    text += entry("-h, --help", "Show help information.", width: width) + "\n"
    if !command.subcommands.isEmpty {
        text += "SUBCOMMANDS:\n" + command.subcommands.map { entry($0.name, $0.abstract, width: width) }.joined() + "\n"
        let path = commands.map(\.name)
        text += "  See '" + ([path[0], "help"] + path.dropFirst() + ["<subcommand>"]).joined(separator: " ")
        text += "' for detailed help.\n"
    }
    return text
}

/// What a bad command line prints on stderr: the error, the help of the parameter it is about, the usage.
public func usageErrorText(_ error: UsageError, _ commands: [Command]) -> String {
    var text = "Error: \(error.description)\n"
    if let parameter = error.parameter {
        text += "Help:  \(parameter.label)  \(parameter.help)\n"
    }
    text += "Usage: \(usage(commands))\n"
    text += "  See '\(commands.map(\.name).joined(separator: " ")) --help' for more information.\n"
    return text
}

/// `  label                   help`, the help wrapped at the help column (under the label when the
/// label is too long to leave it room).
private func entry(_ label: String, _ help: String, width: Int) -> String {
    let indent = String(repeating: " ", count: helpColumn)
    let body = wrap(help, width: max(width - helpColumn, 20)).split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.isEmpty ? "" : indent + $0 }.joined(separator: "\n")
    let head = "  " + label
    if head.count + 2 > helpColumn { return head + "\n" + body + "\n" }
    return head + body.dropFirst(head.count) + "\n"
}

/// Each line of `text` broken at spaces to fit `width` columns, its continuation lines indented as the
/// line itself is; a word longer than the line stays whole. A line fills all `width` columns only at the
/// end of the text: elsewhere one column stays free (the layout of argument-parser's help, which the
/// tools' help texts have always had).
public func wrap(_ text: String, width: Int) -> String {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    return lines.indices.map { index in
        let line = lines[index]
        let indent = String(line.prefix { $0 == " " })
        var rest = line.dropFirst(indent.count)
        var wrapped: [String] = []
        while true {
            let room = width - indent.count
            if rest.count < room || (index == lines.count - 1 && rest.count == room) {
                wrapped.append(indent + rest)
                break
            }
            guard let space = rest.prefix(room).lastIndex(of: " ") ?? rest.firstIndex(of: " ") else {
                wrapped.append(indent + rest)
                break
            }
            wrapped.append(indent + rest[..<space])
            rest = rest[rest.index(after: space)...]
        }
        return wrapped.joined(separator: "\n")
    }.joined(separator: "\n")
}

/// Columns for help: the terminal's when stdout is one, else 80 (a pipe, a file, the tests).
public func helpWidth() -> Int {
    var size = winsize()
    if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 40 {
        return Int(size.ws_col)
    }
    return 80
}
