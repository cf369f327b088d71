// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackFleet
import SnapbackSync

// parse → load fleet.conf → run until SIGTERM or SIGINT; the rest lives in SnapbackFleet.
func standardError(_ text: String) {
    var bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

let usage = """
    Usage: snapback-fleet [--config FILE] [--check-config]

    The fleet's aggregator: a durable consumer of the boxes' telemetry stream
    that sums their reports by firmware, model, region and each metric's own
    labels, and writes the totals to a metrics store (snapback-fleet(8)).

    Options:
      --config FILE     Configuration file (default /etc/snapback/fleet.conf):
                        NATS servers, the stream and consumer, the database,
                        the metrics store's import URL
      --check-config    Load the configuration, print it as in force, and
                        exit: 0 if it is valid, 1 with FILE:LINE: REASON if
                        not
      --help            This text
      --version         The version

    """

var configPath = FleetConfiguration.defaultPath
var check = false
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    case "--version":
        print("snapback-fleet 0.1.0")
        exit(0)
    case "--check-config": check = true
    case "--config":
        guard let path = arguments.popFirst(), !path.isEmpty else {
            standardError("snapback-fleet: --config needs a path\n\n" + usage)
            exit(2)
        }
        configPath = path
    default:
        if argument.hasPrefix("--config="), argument.count > "--config=".count {
            configPath = String(argument.dropFirst("--config=".count))
            continue
        }
        standardError("snapback-fleet: unknown argument '\(argument)'\n\n" + usage)
        exit(2)
    }
}

let configuration: FleetConfiguration
do {
    configuration = try loadFleetConfiguration(configPath)
} catch {
    standardError("\(error)")
    exit(1)
}
if check {
    print(configuration.render(), terminator: "")
    exit(0)
}

// SIGTERM and SIGINT are blocked in every thread (the NATS client's are made after this) and taken by
// one thread of their own, which ends the fetch under way.
let stopSignals = blockStopSignals()

let service: FleetService
do {
    service = try FleetService(configuration: configuration, log: standardError)
} catch {
    standardError("snapback-fleet: \(error)")
    exit(1)
}
service.stopOnSignals(stopSignals)
service.run()
exit(0)
