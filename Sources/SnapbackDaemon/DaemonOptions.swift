// SPDX-License-Identifier: Apache-2.0
/// snapbackd's command line. The options that the configuration file also sets are nil unless given:
/// when given, they win over the file (``DaemonConfiguration/overridden(by:)``), at start and on reload.
public struct DaemonOptions: Sendable, Hashable {
    /// Bound when the daemon is not socket-activated; ignored when it is.
    public var socketPath = "/run/snapback/snapbackd.sock"
    public var stateDirectory = "/var/lib/snapback"
    /// `--config`: the main configuration file; nil for ``ConfigurationLoader/defaultPath``, which may
    /// be missing (a file named with `--config` may not).
    public var configPath: String?
    public var logLevel: Logger.Level?
    public var maxFrameSize: Int?
    public var maxOutboundBytes: Int?
    /// Seconds (`--hello-timeout`, `--partial-frame-timeout`).
    public var helloTimeout: Double?
    public var partialFrameTimeout: Double?

    public init() {}

    /// What the command line asks for.
    public enum Command: Sendable, Hashable {
        case run(DaemonOptions)
        /// `--check-config`: load the configuration, print it (or the error), exit.
        case checkConfiguration(DaemonOptions)
        case help
        case version
    }

    /// A command line that cannot be run; the daemon prints it with the usage and exits 2.
    public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Limits accepted for the byte-count options.
    public static let frameSizeRange = 0...(64 << 20)
    public static let outboundBytesRange = 4096...(1 << 30)
    /// Seconds accepted for the connection timeouts (options and file alike).
    public static let timeoutRange = 0.05...3600.0

    /// Parses the arguments after the program name. `--name VALUE` and `--name=VALUE` are both accepted.
    public static func parse(_ arguments: some Sequence<String>) throws(UsageError) -> Command {
        var options = DaemonOptions()
        var checkConfiguration = false
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = iterator.next() else { throw UsageError(message: "\(name) needs a value") }
                return next
            }
            func flag() throws(UsageError) {
                if inlineValue != nil { throw UsageError(message: "\(name) takes no value") }
            }
            switch name {
            case "--help", "-h":
                try flag()
                return .help
            case "--version":
                try flag()
                return .version
            case "--check-config":
                try flag()
                checkConfiguration = true
            case "--config":
                options.configPath = try nonEmpty(value(), name)
            case "--socket":
                options.socketPath = try nonEmpty(value(), name)
            case "--state-dir":
                options.stateDirectory = try nonEmpty(value(), name)
            case "--log-level":
                let text = try value()
                guard let level = Logger.Level(name: text) else {
                    throw UsageError(message: "\(name): unknown level '\(text)' (error, warning, notice, info, debug)")
                }
                options.logLevel = level
            case "--max-frame-size":
                options.maxFrameSize = try byteCount(value(), name, in: frameSizeRange)
            case "--max-outbound-bytes":
                options.maxOutboundBytes = try byteCount(value(), name, in: outboundBytesRange)
            case "--hello-timeout":
                options.helloTimeout = try timeout(value(), name)
            case "--partial-frame-timeout":
                options.partialFrameTimeout = try timeout(value(), name)
            default:
                if argument.hasPrefix("-") {
                    throw UsageError(message: "unknown option \(name)")
                }
                throw UsageError(message: "unexpected argument '\(argument)'")
            }
        }
        return checkConfiguration ? .checkConfiguration(options) : .run(options)
    }

    private static func nonEmpty(_ text: String, _ name: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError(message: "\(name) needs a non-empty value") }
        return text
    }

    private static func byteCount(_ text: String, _ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let count = Int(text), range.contains(count) else {
            throw UsageError(message: "\(name): '\(text)' is not a byte count in \(range.lowerBound)...\(range.upperBound)")
        }
        return count
    }

    private static func timeout(_ text: String, _ name: String) throws(UsageError) -> Double {
        do {
            return try ConfigurationFile.timeout(text)
        } catch {
            throw UsageError(message: "\(name): \(error.text)")
        }
    }

    public static let usage = """
        Usage: snapbackd [OPTIONS]

        The snapback daemon runs the ad timeline for video players. Players connect
        to its Unix socket and exchange length-prefixed protobuf frames with it.

        Options:
          --config FILE           Configuration file (default
                                  /etc/snapback/snapbackd.conf, which may be
                                  missing), read with its drop-ins FILE.d/*.conf
                                  in lexical order; see snapbackd.conf(5). The
                                  options below win over it.
          --check-config          Load the configuration, print it as in force,
                                  and exit: 0 if it is valid, 1 with
                                  FILE:LINE: REASON if not
          --socket PATH           Unix socket to listen on (default
                                  /run/snapback/snapbackd.sock), unless started
                                  by socket activation (LISTEN_FDS), which wins.
                                  The parent directory is created; a stale
                                  socket is replaced.
          --state-dir DIR         Directory of the viewer-state database,
                                  DIR/snapback.db (SQLite, created if missing;
                                  default /var/lib/snapback): bookmarks and
                                  watched breaks survive restarts, crashes and
                                  power cuts
          --log-level LEVEL       error, warning, notice, info or debug
                                  (default info)
          --max-frame-size BYTES  Largest request body accepted (default
                                  262144); a larger request is answered
                                  RESOURCE_EXHAUSTED
          --max-outbound-bytes BYTES
                                  Output queued for a client that is not reading
                                  before it is disconnected (default 8388608, at
                                  least 4096)
          --hello-timeout DURATION
                                  A connection that has not completed Hello this
                                  long after it was accepted is closed (default
                                  5s; 50ms to 1h)
          --partial-frame-timeout DURATION
                                  A connection holding a partial frame (header
                                  or body begun, not completed) this long is
                                  closed (default 10s; 50ms to 1h). A player
                                  idle between frames is never closed
          -h, --help              Show this help and exit
          --version               Show the version and exit

        Access: only peers on the allow-list (default: root and the socket's group)
        are served; others get PERMISSION_DENIED and are disconnected. Limits on
        connections (in total, per uid) and on sessions per connection answer
        RESOURCE_EXHAUSTED. Both are set in the configuration file.

        systemd: socket activation (LISTEN_FDS, one Unix stream socket), Type=notify
        (READY=1 once the socket and the state store are open, STOPPING=1,
        RELOADING=1), and the watchdog (WATCHDOG=1 from the event loop every
        WATCHDOG_USEC/2).

        Signals: SIGTERM or SIGINT stops gracefully (clients get up to 2 s to take
        their last answers); SIGHUP reloads the configuration: a valid one applies
        to sessions and connections opened afterwards, an invalid one is logged and
        the old one kept.

        Logs go to stderr, one line per event, with <N> syslog priority prefixes for
        journald. Logging never blocks: lines stderr does not take in time are
        dropped and counted (a warning says how many once it takes them again;
        `snapback status` shows the total).

        Exit status: 0 after a clean stop, 1 if the daemon could not start (an
        invalid configuration file included) or stop cleanly, 2 for a bad command
        line.
        """
}
