import ArgumentParser
import Glibc
import SnapbackCLI

/// The path of snapbackd next to this executable (the benches' default daemon).
func siblingDaemonPath() -> String {
    BenchCommand.executablePath().map { BenchCommand.dirname($0) + "/snapbackd" } ?? "snapbackd"
}

/// A daemon the bench can start.
func checkExecutable(_ path: String, _ option: String = "--snapbackd") throws {
    guard access(path, X_OK) == 0 else { throw ValidationError("\(option): \(path) is not an executable file") }
}

/// A byte count as MiB with one decimal.
func mebibytes(_ kib: Int) -> String { fixed(Double(kib) / 1024, 1) + " MiB" }
