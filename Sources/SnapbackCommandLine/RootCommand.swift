// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Parses the command line (without the program's name) as `root`'s and runs the command; returns the
/// exit status. Help and completion scripts go to `stdout` (exit 0); a bad command line prints the error
/// and the usage on `stderr` (exit 2); a run-time failure prints one line, `TOOL COMMAND: why` (exit 1).
public func execute(
    _ root: Command, _ arguments: [String], width: Int = 80, stdout: (String) -> Void, stderr: (String) -> Void
) -> Int32 {
    switch parse(root, arguments, width: width) {
    case .help(let text), .completionScript(let text):
        stdout(text)
        return ExitCode.ok
    case .usageError(let error, let commands):
        stderr(usageErrorText(error, commands))
        return ExitCode.usage
    case .run(let command, let parsed):
        do {
            try command.run(parsed)
            return ExitCode.ok
        } catch let error as UsageError {
            // A check made only once running (a file that is not there) is still a bad command line.
            var commands = [root]
            for name in parsed.path.dropFirst() { commands.append(commands.last!.subcommand(name)!) }
            stderr(usageErrorText(error, commands))
            return ExitCode.usage
        } catch {
            stderr("\(parsed.path.joined(separator: " ")): \(error)\n")
            return ExitCode.failure
        }
    }
}

/// `execute` on the process's command line, stdout and stderr, help wrapped to the terminal.
public func runCommandLine(_ root: Command) -> Int32 {
    execute(
        root, Array(CommandLine.arguments.dropFirst()), width: helpWidth(),
        stdout: { Output.write($0, to: STDOUT_FILENO) }, stderr: { Output.write($0, to: STDERR_FILENO) })
}
