// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SnapbackCommandLine

// The bench's commands are swift-argument-parser's (it is not installed, so its Foundation costs no box
// anything); the operator's snapback has SnapbackCommandLine's own parser.

/// SnapbackCommandLine's range check, as argument-parser's validation error (exit 2).
func checkRange(_ value: Int, _ name: String, _ range: ClosedRange<Int>) throws {
    do { try SnapbackCommandLine.checkRange(value, name, range) } catch { throw ValidationError(error.description) }
}

/// SnapbackCommandLine's non-empty check, as argument-parser's validation error (exit 2).
func checkNonEmpty(_ value: String, _ name: String) throws {
    do { try SnapbackCommandLine.checkNonEmpty(value, name) } catch { throw ValidationError(error.description) }
}

/// Parses the command line as `Root`'s and runs the command; returns the exit status. Help goes to stdout
/// (exit 0); a bad command line prints argument-parser's message and usage on stderr and exits 2 (the
/// status these tools document, where argument-parser alone would exit 64); a run-time failure prints
/// one line, `TOOL COMMAND: why`, and exits 1.
func runCommandLine<Root: ParsableCommand>(_ root: Root.Type) -> Int32 {
    var command: any ParsableCommand
    do {
        command = try Root.parseAsRoot()
    } catch {
        return report(parseError: error, root)
    }
    do {
        try command.run()
        return SnapbackCommandLine.ExitCode.ok
    } catch let exit as ArgumentParser.ExitCode {
        return exit.rawValue
    } catch {
        // argument-parser's own commands (help) end in errors of its own; a ValidationError found only
        // once running (a daemon binary that is not executable) is still a bad command line.
        let status = Root.exitCode(for: error)
        if status == .success || status == .validationFailure { return report(parseError: error, root) }
        let arguments = CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("-") }
        let tool = Root.configuration.commandName ?? "\(Root.self)"
        warn("\(tool) \(arguments.first ?? ""): \(error)")
        return SnapbackCommandLine.ExitCode.failure
    }
}

private func report<Root: ParsableCommand>(parseError error: any Error, _: Root.Type) -> Int32 {
    let message = Root.fullMessage(for: error)
    let status = Root.exitCode(for: error)
    if status == .success {
        if !message.isEmpty { say(message) }
        return SnapbackCommandLine.ExitCode.ok
    }
    warn(message)
    return status == .validationFailure ? SnapbackCommandLine.ExitCode.usage : status.rawValue
}
