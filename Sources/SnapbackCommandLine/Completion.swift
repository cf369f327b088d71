// SPDX-License-Identifier: Apache-2.0

// The shells' completion scripts, from the command table: the subcommands at each level, each command's
// options (and the values they take: paths, a list of words), and its positionals' paths. A command is
// known by its path from the root, `/bookmarks/get` (the root's is empty): each script finds the path of
// the line being completed by walking its words, taking those that name a subcommand of the path so far.

/// The script `--generate-completion-script SHELL` prints.
public func completionScript(_ root: Command, shell: Shell) -> String {
    let commands = allCommands(root, path: "")
    switch shell {
    case .bash: return bashScript(root.name, commands)
    case .zsh: return zshScript(root.name, commands)
    case .fish: return fishScript(root.name, commands)
    }
}

/// Every command with its path, the root first.
private func allCommands(_ command: Command, path: String) -> [(path: String, command: Command)] {
    [(path, command)] + command.subcommands.flatMap { allCommands($0, path: path + "/" + $0.name) }
}

/// The words a command's line may go on with: its subcommands, and `help`'s at the root.
private func subcommandNames(_ command: Command, root: Bool) -> [String] {
    command.subcommands.map(\.name) + (root && !command.subcommands.isEmpty ? ["help"] : [])
}

/// The options a command takes, as typed: `--socket`, and the help's `-h --help`.
private func optionWords(_ command: Command, root: Bool) -> [String] {
    command.parameters.filter { $0.kind != .positional }.map { "--" + $0.name } + ["-h", "--help"]
        + (root ? ["--generate-completion-script"] : [])
}

private func shellWords(_ words: [String]) -> String { words.joined(separator: " ") }

/// `'text'` for bash and zsh.
private func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }

/// `'text'` for fish, which escapes inside single quotes.
private func fishQuoted(_ text: String) -> String {
    "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
}

/// The first sentence of a help text, for the shells that show one beside each word.
private func summary(_ help: String) -> String {
    let line = help.split(separator: "\n").first.map(String.init) ?? ""
    if let end = line.firstRange(of: ". ") { return String(line[..<end.lowerBound]) + "." }
    return line
}

// MARK: bash

private func bashScript(_ tool: String, _ commands: [(path: String, command: Command)]) -> String {
    let function = "_" + tool.replacing("-", with: "_")
    var script = """
        # bash completion for \(tool), made by `\(tool) --generate-completion-script bash`.
        \(function)() {
            local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" i word
            ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
            # --name=value: bash splits at the =.
            if [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then prev="${COMP_WORDS[COMP_CWORD - 2]}"; fi
            [[ $cur == "=" ]] && cur=""
            for ((i = 1; i < COMP_CWORD; i++)); do
                word="${COMP_WORDS[i]}"
                case "$path/$word" in

        """
    let paths = commands.dropFirst().map { quoted($0.path) }
    if !paths.isEmpty {
        script += "            \(paths.joined(separator: "|"))) path=\"$path/$word\" ;;\n"
    }
    script += """
                esac
            done
            COMPREPLY=()
            case "$path $prev" in
                " --generate-completion-script")
                    COMPREPLY=($(compgen -W \(quoted(shellWords(Shell.allCases.map(\.rawValue)))) -- "$cur"))
                    return ;;

        """
    for (path, command) in commands {
        for parameter in command.parameters where parameter.kind == .option {
            script += "        \(quoted(path + " --" + parameter.name)))\n"
            switch parameter.completion {
            case .file: script += "            COMPREPLY=($(compgen -f -- \"$cur\"))\n"
            case .values(let values):
                script += "            COMPREPLY=($(compgen -W \(quoted(shellWords(values))) -- \"$cur\"))\n"
            case .none: break
            }
            script += "            return ;;\n"
        }
    }
    script += """
            esac
            case "$path" in

        """
    for (index, (path, command)) in commands.enumerated() {
        script += "        \(quoted(path)))\n"
        script += "            if [[ $cur == -* ]]; then\n"
        script +=
            "                COMPREPLY=($(compgen -W \(quoted(shellWords(optionWords(command, root: index == 0)))) -- \"$cur\"))\n"
        let words = subcommandNames(command, root: index == 0)
        if !words.isEmpty {
            script += "            else\n"
            script += "                COMPREPLY=($(compgen -W \(quoted(shellWords(words))) -- \"$cur\"))\n"
        } else if command.parameters.contains(where: { $0.kind == .positional && $0.completion == .file }) {
            script += "            else\n"
            script += "                COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        }
        script += "            fi ;;\n"
    }
    script += """
            esac
        }
        complete -o filenames -F \(function) \(tool)

        """
    return script
}

// MARK: zsh

private func zshName(_ tool: String, _ path: String) -> String {
    "_" + (tool + path).replacing("-", with: "_").replacing("/", with: "_")
}

/// `[`, `]`, `:` and `\` are _arguments' own inside a description.
private func zshDescription(_ text: String) -> String {
    var escaped = ""
    for character in summary(text) {
        if "[]:\\".contains(character) { escaped.append("\\") }
        escaped.append(character)
    }
    return escaped
}

private func zshScript(_ tool: String, _ commands: [(path: String, command: Command)]) -> String {
    var script = "#compdef \(tool)\n# zsh completion for \(tool), made by `\(tool) --generate-completion-script zsh`.\n"
    for (index, (path, command)) in commands.enumerated() {
        script += "\n\(zshName(tool, path))() {\n"
        var specs: [String] = []
        for parameter in command.parameters {
            let description = zshDescription(parameter.help)
            let action: String
            switch parameter.completion {
            case .file: action = "_files"
            case .values(let values): action = "(\(values.joined(separator: " ")))"
            case .none: action = " "
            }
            switch parameter.kind {
            case .flag: specs.append(quoted("--\(parameter.name)[\(description)]"))
            case .option:
                let many = parameter.repeating ? "*" : ""
                specs.append(quoted("\(many)--\(parameter.name)[\(description)]:\(parameter.valueName):\(action)"))
            case .positional:
                specs.append(quoted((parameter.repeating ? "*" : "") + ":\(parameter.valueName):\(action)"))
            }
        }
        specs.append(quoted("(-h --help)") + "{-h,--help}" + quoted("[Show help information.]"))
        if index == 0 {
            let shells = Shell.allCases.map(\.rawValue).joined(separator: " ")
            specs.append(quoted("--generate-completion-script[Print a completion script.]:shell:(\(shells))"))
        }
        let words = command.subcommands.map { ($0.name, $0.abstract) } + (index == 0 ? [("help", "Show a command's help.")] : [])
        if command.subcommands.isEmpty {
            script += "    _arguments -s \\\n        " + specs.joined(separator: " \\\n        ") + "\n}\n"
            continue
        }
        script += "    local -a subcommands=(\n"
        for (name, abstract) in words { script += "        " + quoted(name + ":" + summary(abstract)) + "\n" }
        script += "    )\n"
        script += "    local context state state_descr line\n    typeset -A opt_args\n"
        script += "    _arguments -C \\\n        " + specs.joined(separator: " \\\n        ")
        script += " \\\n        '1: :->subcommand' \\\n        '*:: :->argument'\n"
        script += "    case $state in\n"
        script +=
            "        subcommand) _describe -t commands \(quoted(tool + path.replacing("/", with: " ") + " command")) subcommands ;;\n"
        script += "        argument)\n            case $words[1] in\n"
        for subcommand in command.subcommands {
            script += "                \(subcommand.name)) \(zshName(tool, path + "/" + subcommand.name)) ;;\n"
        }
        if index == 0 { script += "                help) _describe -t commands 'command' subcommands ;;\n" }
        script += "            esac ;;\n    esac\n}\n"
    }
    script += "\n\(zshName(tool, "")) \"$@\"\n"
    return script
}

// MARK: fish

private func fishScript(_ tool: String, _ commands: [(path: String, command: Command)]) -> String {
    let function = "__" + tool.replacing("-", with: "_") + "_at"
    var script = """
        # fish completion for \(tool), made by `\(tool) --generate-completion-script fish`.
        # Whether the command being completed is the one at this path: the words so far that name a
        # subcommand.
        function \(function) -a expected
            if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
                set -f words (commandline --tokens-raw --current-process --cut-at-cursor)
            else
                set -f words (commandline --tokenize --current-process --cut-at-cursor)
            end
            set -l path ""
            for word in $words[2..-1]
                switch "$path/$word"
                    case \(commands.dropFirst().map { fishQuoted($0.path) }.joined(separator: " "))
                        set path "$path/$word"
                end
            end
            test "$path" = "$expected"
        end
        complete -c \(tool) -f

        """
    for (index, (path, command)) in commands.enumerated() {
        let condition = "-n " + fishQuoted(function + " " + fishQuoted(path))
        for subcommand in command.subcommands {
            script += "complete -c \(tool) \(condition) -a \(subcommand.name) -d \(fishQuoted(summary(subcommand.abstract)))\n"
        }
        if index == 0, !command.subcommands.isEmpty {
            script += "complete -c \(tool) \(condition) -a help -d 'Show a command\\'s help.'\n"
            let shells = Shell.allCases.map(\.rawValue).joined(separator: " ")
            script += "complete -c \(tool) \(condition) -l generate-completion-script -x -a '\(shells)'"
            script += " -d 'Print a completion script.'\n"
        }
        for parameter in command.parameters {
            let description = fishQuoted(summary(parameter.help))
            switch (parameter.kind, parameter.completion) {
            case (.flag, _): script += "complete -c \(tool) \(condition) -l \(parameter.name) -d \(description)\n"
            case (.option, .file): script += "complete -c \(tool) \(condition) -l \(parameter.name) -r -F -d \(description)\n"
            case (.option, .values(let values)):
                script +=
                    "complete -c \(tool) \(condition) -l \(parameter.name) -x -a \(fishQuoted(values.joined(separator: " ")))"
                script += " -d \(description)\n"
            case (.option, .none): script += "complete -c \(tool) \(condition) -l \(parameter.name) -x -d \(description)\n"
            case (.positional, .file): script += "complete -c \(tool) \(condition) -F\n"
            case (.positional, _): break
            }
        }
        script += "complete -c \(tool) \(condition) -s h -l help -d 'Show help information.'\n"
    }
    return script
}
