// SPDX-License-Identifier: Apache-2.0
import SnapbackCommandLine
import Testing

/// SnapbackCommandLine's parser, help and exit statuses, on a command table of its own.
@Suite struct CommandLineTests {
    /// `tool get`'s run: "fail" fails (exit 1), "bad" is a bad command line found running (exit 2).
    static let get = Command(
        name: "get", abstract: "Get one thing.",
        parameters: [
            .option("socket", value: "path", help: "The socket.", completion: .file),
            .option("tag", value: "t", help: "A tag; give it again for another.", repeating: true),
            .option("count", value: "n", help: "How many.", default: "1"),
            .option("format", value: "f", help: "The format.", completion: .values(["a", "b"])),
            .flag("json", help: "Print JSON."),
            .positional("id", help: "The thing's id."),
            .positional("rest", help: "More things.", repeating: true, optional: true)
        ],
        run: { arguments in
            _ = try arguments.value("count", as: Int.self)
            if arguments.string("id") == "fail" { throw CommandError("it failed") }
            if arguments.string("id") == "bad" { throw UsageError("bad id") }
        })
    static let tool = Command(
        name: "tool", abstract: "A tool for the tests.",
        discussion: """
            The first paragraph, its lines
            joined.

              1. an indented list
              2. keeps its lines
            """,
        subcommands: [
            get,
            Command(
                name: "group", abstract: "Subcommands only.",
                subcommands: [Command(name: "leaf", abstract: "A leaf.", run: { _ in })], missing: "leaf is needed")
        ],
        missing: "a command is needed")

    /// The parsed arguments of a command line that must parse.
    static func parsed(_ arguments: [String]) throws -> ParsedArguments {
        guard case .run(_, let parsed) = parse(tool, arguments) else {
            Issue.record("\(arguments) did not parse to a run")
            throw CommandError("no run")
        }
        return parsed
    }

    /// The message of a command line that must be refused.
    static func refusal(_ arguments: [String]) -> String? {
        guard case .usageError(let error, _) = parse(tool, arguments) else { return nil }
        return error.description
    }

    /// `execute` with its outputs collected.
    static func run(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        var out = ""
        var err = ""
        let status = execute(tool, arguments, stdout: { out += $0 }, stderr: { err += $0 })
        return (status, out, err)
    }

    @Test func optionsWithEqualsAndSeparateValues() throws {
        let p = try Self.parsed(["get", "--socket=/a=b", "--count", "3", "--json", "x1"])
        #expect(p.path == ["tool", "get"])
        #expect(p.string("socket") == "/a=b" && p.string("count") == "3" && p.flag("json"))
        #expect(try p.value("count", as: Int.self) == 3)
        #expect(p.string("id") == "x1" && p.strings("rest").isEmpty && p.string("format") == nil && !p.flag("nope"))
        // Options and positionals in any order; `-` alone is a value.
        let q = try Self.parsed(["get", "x2", "--socket", "-", "r1", "--format=", "r2"])
        #expect(q.string("id") == "x2" && q.strings("rest") == ["r1", "r2"] && q.string("socket") == "-")
        #expect(q.string("format") == "")
    }

    @Test func aMissingValue() {
        #expect(Self.refusal(["get", "x", "--socket"]) == "Missing value for '--socket <path>'")
        // A word that looks like an option is not taken as a value (`--count=-1` is how to give one).
        #expect(Self.refusal(["get", "x", "--count", "-1"]) == "Missing value for '--count <n>'")
        #expect(Self.refusal(["get", "--socket", "--json", "x"]) == "Missing value for '--socket <path>'")
        #expect(Self.refusal(["get"]) == "Missing expected argument '<id>'")
    }

    @Test func anUnknownOption() {
        #expect(Self.refusal(["get", "x", "--nope"]) == "Unknown option '--nope'")
        #expect(Self.refusal(["get", "x", "--nope=3"]) == "Unknown option '--nope'")
        #expect(Self.refusal(["get", "x", "-x"]) == "Unknown option '-x'")
        #expect(
            Self.refusal(["get", "x", "--json=yes"]) == "The option '--json' does not take any value, but 'yes' was specified.")
        #expect(Self.refusal(["nope"]) == "Unexpected argument 'nope'")
        #expect(Self.refusal(["group", "leaf", "a", "b"]) == "2 unexpected arguments: 'a', 'b'")
        #expect(Self.refusal(["--socket", "x"]) == "Unknown option '--socket'")
    }

    @Test func doubleDashEndsTheOptions() throws {
        let p = try Self.parsed(["get", "--json", "--", "--socket", "-h", "--"])
        #expect(p.flag("json") && p.string("socket") == nil)
        #expect(p.string("id") == "--socket" && p.strings("rest") == ["-h", "--"])
        // Help is asked for only before it.
        guard case .help = parse(Self.tool, ["get", "-h", "--", "x"]) else {
            Issue.record("-h before -- is not help")
            return
        }
    }

    @Test func repeatedOptionsWhereAllowed() throws {
        let p = try Self.parsed(["get", "--tag", "a", "x", "--tag=b", "--tag", "c", "--json", "--json"])
        #expect(p.strings("tag") == ["a", "b", "c"] && p.string("tag") == "c")
        #expect(Self.refusal(["get", "--count", "1", "x", "--count=2"]) == "The option '--count <n>' was given more than once")
    }

    @Test func valuesOfTheWrongType() {
        #expect(
            Self.run(["get", "x", "--count", "many"]).stderr.hasPrefix("Error: The value 'many' is invalid for '--count <n>'\n"))
        #expect(Self.run(["get", "x", "--count", "many"]).status == ExitCode.usage)
        #expect(Self.run(["get", "x", "--count", "7"]).status == ExitCode.ok)
    }

    @Test func helpForEachCommand() throws {
        let (status, help, err) = Self.run(["get", "--help"])
        #expect(status == ExitCode.ok && err.isEmpty)
        #expect(
            help == """
                OVERVIEW: Get one thing.

                USAGE: tool get [--socket <path>] [--tag <t> ...] [--count <n>] [--format <f>] [--json] <id> [<rest> ...]

                ARGUMENTS:
                  <id>                    The thing's id.
                  <rest>                  More things.

                OPTIONS:
                  --socket <path>         The socket.
                  --tag <t>               A tag; give it again for another.
                  --count <n>             How many. (default: 1)
                  --format <f>            The format.
                  --json                  Print JSON.
                  -h, --help              Show help information.


                """)
        // -h anywhere before --, with arguments that would not parse; and `help COMMAND` at the root.
        #expect(Self.run(["get", "--count", "many", "-h"]).stdout == help)
        #expect(Self.run(["help", "get"]).stdout == help)
        let root = Self.run(["--help"])
        #expect(root.status == ExitCode.ok && root.stdout == Self.run(["help"]).stdout)
        #expect(
            root.stdout.hasPrefix(
                """
                OVERVIEW: A tool for the tests.

                The first paragraph, its lines joined.

                  1. an indented list
                  2. keeps its lines

                USAGE: tool <subcommand>

                OPTIONS:
                  -h, --help              Show help information.

                SUBCOMMANDS:
                  get                     Get one thing.
                  group                   Subcommands only.

                  See 'tool help <subcommand>' for detailed help.

                """))
        #expect(Self.run(["group", "--help"]).stdout.hasSuffix("  See 'tool help group <subcommand>' for detailed help.\n"))
        #expect(Self.run(["help", "group", "leaf"]).stdout.hasPrefix("OVERVIEW: A leaf.\n\nUSAGE: tool group leaf\n"))
        #expect(Self.run(["help", "nope"]).status == ExitCode.usage)
    }

    @Test func exitStatuses() {
        #expect(Self.run(["get", "x"]) == (ExitCode.ok, "", ""))
        #expect(Self.run(["get", "fail"]) == (ExitCode.failure, "", "tool get: it failed\n"))
        #expect(
            Self.run(["get", "bad"])
                == (
                    ExitCode.usage, "",
                    """
                    Error: bad id
                    Usage: tool get [--socket <path>] [--tag <t> ...] [--count <n>] [--format <f>] [--json] <id> [<rest> ...]
                      See 'tool get --help' for more information.

                    """
                ))
        #expect(
            Self.run(["get", "x", "--socket"]).stderr
                == """
                Error: Missing value for '--socket <path>'
                Help:  --socket <path>  The socket.
                Usage: tool get [--socket <path>] [--tag <t> ...] [--count <n>] [--format <f>] [--json] <id> [<rest> ...]
                  See 'tool get --help' for more information.

                """)
        #expect(
            Self.run([]) == (
                ExitCode.usage, "",
                "Error: a command is needed\nUsage: tool <subcommand>\n  See 'tool --help' for more information.\n"
            ))
        #expect(Self.run(["group"]).stderr.hasPrefix("Error: leaf is needed\nUsage: tool group <subcommand>\n"))
        #expect(Self.run(["group", "leaf"]).status == ExitCode.ok)
    }

    /// Lines break at spaces before the width (the last line of the text may fill it), indented lines
    /// continue indented, and no word is lost or cut.
    @Test func wrapping() {
        let text = "one two three four five six seven eight nine ten eleven twelve\n    an indented line that is long\nx"
        let wrapped = wrap(text, width: 20)
        let lines = wrapped.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count < 20 }, "\(lines)")
        #expect(lines.filter { !$0.hasPrefix("    ") }.map { $0.split(separator: " ") }.joined().count == 13)
        #expect(lines.contains("    an indented") && lines.contains("    line that is") && lines.contains("    long"), "\(lines)")
        #expect(wrap("exactly twenty chars", width: 20) == "exactly twenty chars")
        #expect(wrap("exactly twenty chars\nx", width: 20) == "exactly twenty\nchars\nx")
        #expect(
            wrap("unbreakable-word-longer-than-the-width and more", width: 10)
                == "unbreakable-word-longer-than-the-width\nand more")
    }

    @Test func completionScriptsFromTheTable() {
        guard case .completionScript(let bash) = parse(Self.tool, ["--generate-completion-script", "bash"]),
            case .completionScript(let zsh) = parse(Self.tool, ["--generate-completion-script=zsh"]),
            case .completionScript(let fish) = parse(Self.tool, ["--generate-completion-script", "fish"])
        else {
            Issue.record("no completion script")
            return
        }
        #expect(bash.hasSuffix("complete -o filenames -F _tool tool\n"))
        #expect(bash.contains("'/get --socket')\n            COMPREPLY=($(compgen -f -- \"$cur\"))"))
        #expect(bash.contains("compgen -W 'get group help'") && bash.contains("compgen -W 'leaf'"))
        #expect(
            zsh.hasPrefix("#compdef tool\n") && zsh.contains("_tool_group_leaf()")
                && zsh.contains("'--socket[The socket.]:path:_files'"))
        #expect(zsh.contains("'*--tag[A tag; give it again for another.]:t: '") && zsh.contains("--format[The format.]:f:(a b)"))
        #expect(fish.contains("complete -c tool -n '__tool_at \\'/get\\'' -l socket -r -F -d 'The socket.'"))
        #expect(fish.contains("complete -c tool -n '__tool_at \\'\\'' -a group -d 'Subcommands only.'"))
        #expect(
            Self.refusal(["--generate-completion-script", "tcsh"])?.hasPrefix("Can't generate completion scripts for 'tcsh'")
                == true)
        #expect(Self.refusal(["--generate-completion-script"]) == "Missing value for '--generate-completion-script <shell>'")
    }
}
