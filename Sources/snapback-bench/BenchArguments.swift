// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import SnapbackCLI
import SnapbackCommandLine

/// `--snapbackd PATH`: the daemon a bench starts and measures.
struct DaemonOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon to measure (default: snapbackd next to this executable).",
            valueName: "path"), completion: .file())
    var snapbackd: String?

    /// `--snapbackd`, else the snapbackd next to this executable.
    var path: String {
        snapbackd ?? BenchCommand.executablePath().map { BenchCommand.dirname($0) + "/snapbackd" } ?? "snapbackd"
    }

    func validate() throws {
        if let snapbackd { try checkNonEmpty(snapbackd, "--snapbackd") }
    }

    /// Whether the daemon can be started (a bench that runs without one does not ask).
    func checkExecutable() throws {
        try snapback_bench.checkExecutable(path)
    }
}

/// A daemon the bench can start.
func checkExecutable(_ path: String, _ option: String = "--snapbackd") throws {
    guard access(path, X_OK) == 0 else { throw ValidationError("\(option): \(path) is not an executable file") }
}

/// A byte count as MiB with one decimal.
func mebibytes(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) + " MiB" }
