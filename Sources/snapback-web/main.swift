// SPDX-License-Identifier: Apache-2.0
import Glibc
import SnapbackConfigFile
import SnapbackDaemon
import SnapbackWeb

// parse → load the configuration → listen on loopback → run until SIGTERM or SIGINT (SIGHUP: reload).
func standardError(_ text: String) {
    var bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

let usage = """
    usage: snapback-web [--config FILE] [--log-level LEVEL] [--check-config]

    The loopback WebSocket bridge between web apps and snapbackd (snapback-web(8)).

      --config FILE      configuration (default /etc/snapback/snapback-web.conf), then its drop-ins
                         FILE.d/*.conf in name order (snapback-web.conf(5))
      --log-level LEVEL  error, warning, notice, info or debug (default info)
      --check-config     print the configuration in force (tokens not shown) and exit: 0 if valid
      --help, --version

    """

var configPath = "/etc/snapback/snapback-web.conf"
var logLevel = Logger.Level.info
var checkOnly = false
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    case "--version":
        print("snapback-web 0.1.0")
        exit(0)
    case "--check-config": checkOnly = true
    case "--config":
        guard let value = arguments.popFirst() else { standardError("snapback-web: --config needs a file\n\n" + usage); exit(2) }
        configPath = value
    case "--log-level":
        guard let value = arguments.popFirst(), let level = Logger.Level(name: value) else {
            standardError("snapback-web: --log-level is one of error, warning, notice, info, debug\n\n" + usage)
            exit(2)
        }
        logLevel = level
    default:
        standardError("snapback-web: unknown argument '\(argument)'\n\n" + usage)
        exit(2)
    }
}

/// A UTF-8 text file of at most 1 MiB.
func readText(_ file: String) throws(ConfigurationError) -> String {
    guard let handle = fopen(file, "r") else {
        throw ConfigurationError(file: file, line: nil, reason: String(cString: strerror(errno)))
    }
    defer { fclose(handle) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, handle)
        if count <= 0 { break }
        bytes += chunk[0..<count]
        guard bytes.count <= 1 << 20 else { throw ConfigurationError(file: file, line: nil, reason: "longer than 1 MiB") }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw ConfigurationError(file: file, line: nil, reason: "not UTF-8")
    }
    return text
}

/// The file, then FILE.d/*.conf in name order.
func loadConfiguration(_ path: String) throws(ConfigurationError) -> BridgeConfiguration {
    var configuration = BridgeConfiguration()
    try BridgeConfigurationFile.parse(try readText(path), file: path, into: &configuration)
    var dropIns: [String] = []
    if let directory = opendir(path + ".d") {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".conf"), !name.hasPrefix(".") { dropIns.append(path + ".d/" + name) }
        }
        closedir(directory)
    }
    for file in dropIns.sorted() {
        try BridgeConfigurationFile.parse(try readText(file), file: file, into: &configuration)
    }
    try BridgeConfigurationFile.validate(configuration, file: path)
    return configuration
}

let configuration: BridgeConfiguration
do {
    configuration = try loadConfiguration(configPath)
} catch {
    standardError("snapback-web: \(error)")
    exit(1)
}
if checkOnly {
    print(BridgeConfigurationFile.render(configuration), terminator: "")
    exit(0)
}
signal(SIGPIPE, SIG_IGN)

let logger = Logger(level: logLevel)
let loop: EventLoop
do {
    loop = try EventLoop(logger: logger)
} catch {
    standardError("snapback-web: \(error)")
    exit(1)
}
var files: [String: Handshake.StaticFile] = [:]
if !configuration.script.isEmpty {
    do {
        let script = try readText(configuration.script)
        files[Handshake.scriptPath] = Handshake.StaticFile(
            contentType: "text/javascript; charset=utf-8", body: Array(script.utf8))
    } catch {
        standardError("snapback-web: the script to serve at \(Handshake.scriptPath): \(error)")
        exit(1)
    }
}
let bridge = Bridge(loop: loop, configuration: configuration, files: files)
do {
    try bridge.listen(activated: try SocketActivation.takeTCP())
} catch {
    standardError("snapback-web: \(error)")
    exit(1)
}
let notifier = ServiceNotifier(logger: logger)
var signals: SignalWatcher?
do {
    signals = try SignalWatcher(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP]) { signal in
        // SIGHUP: the file and its drop-ins read again; a file that does not load, or changes what only
        // a restart can, is refused and the configuration in force kept.
        if signal == SIGHUP {
            // systemd's reload protocol (Type=notify): `systemctl reload` returns once READY=1 follows.
            _ = notifier?.send(
                "RELOADING=1", "STATUS=reloading the configuration",
                "MONOTONIC_USEC=\(ServiceNotifier.monotonicMicroseconds())")
            let listening = "listening on \(bridge.listeningOn.joined(separator: " "))"
            let new: BridgeConfiguration
            do {
                new = try loadConfiguration(configPath)
            } catch {
                logger.warning("SIGHUP: configuration not reloaded, the one in force is kept: \(error)")
                _ = notifier?.send("READY=1", "STATUS=\(listening); last reload refused: \(error)")
                return
            }
            if let refusal = bridge.reload(new) {
                logger.warning("SIGHUP: configuration not reloaded, the one in force is kept: \(refusal) (a restart takes it)")
                _ = notifier?.send("READY=1", "STATUS=\(listening); last reload refused: \(refusal)")
                return
            }
            let names = new.apps.map(\.name).joined(separator: ", ")
            logger.notice("SIGHUP: configuration reloaded: \(new.apps.count) apps (\(names))")
            _ = notifier?.send("READY=1", "STATUS=\(listening); configuration reloaded")
            return
        }
        logger.notice("\(SignalWatcher.name(of: signal)): stopping")
        _ = notifier?.send("STOPPING=1")
        bridge.whenStopped = {
            bridge.worker.close()
            signals?.close()
            loop.stop()
        }
        bridge.stop()
    }
} catch {
    standardError("snapback-web: \(error)")
    exit(1)
}
let apps = configuration.apps.map(\.name).joined(separator: ", ")
logger.notice(
    "listening on \(bridge.listeningOn.joined(separator: " ")) for \(configuration.apps.count) apps (\(apps)); snapbackd at \(configuration.daemonSocket)"
)
_ = notifier?.send("READY=1", "STATUS=listening on \(bridge.listeningOn.joined(separator: " "))")
loop.run()
logger.notice("stopped")
exit(0)
