// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackSync

// parse → load the configuration → run until SIGTERM or SIGINT; the rest lives in SnapbackSync.
func standardError(_ text: String) {
    var bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

let command: SyncCommand
do {
    command = try SyncCommand.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    standardError("snapback-sync: \(error)\n\n" + SyncCommand.usage)
    exit(2)
}

switch command {
case .help:
    print(SyncCommand.usage, terminator: "")
    exit(0)
case .version:
    print("snapback-sync \(SyncCommand.versionText)")
    exit(0)
case .checkConfiguration(let path):
    do {
        print(try loadConfiguration(path).render(), terminator: "")
        exit(0)
    } catch {
        standardError("\(error)")
        exit(1)
    }
case .run(let path):
    let configuration: SyncConfiguration
    do {
        configuration = try loadConfiguration(path)
    } catch {
        standardError("\(error)")
        exit(1)
    }
    // SIGTERM and SIGINT are blocked in every thread (the NATS client's are made after this) and read
    // by the loop's poll from a signalfd.
    let stopSignals = blockStopSignals()
    let agent: SyncAgent
    do {
        agent = try SyncAgent(configuration: configuration, log: standardError)
    } catch {
        standardError("snapback-sync: \(error)")
        exit(1)
    }
    do {
        try agent.run(stopSignals: stopSignals)
    } catch {
        standardError("snapback-sync: \(error)")
        exit(1)
    }
    standardError("snapback-sync: stopped")
    exit(0)
}
