// SPDX-License-Identifier: Apache-2.0
import SnapbackCLI
import SnapbackCommandLine
import SnapbackJSON
import SnapbackWire

/// `snapback metrics`: the daemon's counters (Control/GetMetrics) as OpenMetrics text.
struct MetricsCommand {
    static let command = Command(
        name: "metrics",
        abstract: "The daemon's counters and histograms as OpenMetrics text (Control/GetMetrics).",
        discussion: """
            Counted since the first start on the daemon's store, kept across restarts (an unclean stop \
            loses at most the store's flush interval of counts). Root and the members of snapbackd's \
            admin-groups only. The text is what a node_exporter textfile holds (docs/telemetry.md).
            """,
        parameters: SocketOption.parameters + JSONOption.parameters,
        run: { try MetricsCommand($0).run() })

    let socket: SocketOption
    let output: JSONOption

    init(_ arguments: ParsedArguments) throws {
        socket = try SocketOption(arguments)
        output = JSONOption(arguments)
    }

    func run() throws {
        let client = try connect(socket.path, clientName: "snapback-metrics")
        defer { client.close() }
        let reply: SnapbackV1.MetricsReply = try client.call(.getMetrics)
        if output.json {
            say(JSON.message(reply).rendered)
        } else {
            // The text ends with its own newline.
            say(String(OpenMetrics.render(reply).dropLast()))
        }
    }
}
