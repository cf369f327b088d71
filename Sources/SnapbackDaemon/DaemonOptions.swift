/// snapbackd's command line.
public struct DaemonOptions: Sendable, Hashable {
    public var socketPath = "./.run/snapbackd.sock"
    public var stateDirectory = "./.run/state"
    public var logLevel = Logger.Level.info
    public var maxFrameSize = 1_048_576
    public var maxOutboundBytes = 8_388_608

    public init() {}

    /// The per-connection limits these options set.
    public var connectionConfiguration: Connection.Configuration {
        Connection.Configuration(maxFrameSize: maxFrameSize, maxOutboundBytes: maxOutboundBytes)
    }

    /// What the command line asks for.
    public enum Command: Sendable, Hashable {
        case run(DaemonOptions)
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

    /// Parses the arguments after the program name. `--name VALUE` and `--name=VALUE` are both accepted.
    public static func parse(_ arguments: some Sequence<String>) throws(UsageError) -> Command {
        var options = DaemonOptions()
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
            default:
                if argument.hasPrefix("-") {
                    throw UsageError(message: "unknown option \(name)")
                }
                throw UsageError(message: "unexpected argument '\(argument)'")
            }
        }
        return .run(options)
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

    public static let usage = """
        Usage: snapbackd [OPTIONS]

        The snapback daemon runs the ad timeline for video players. Players connect to its Unix
        socket and exchange length-prefixed protobuf frames with it.

        Options:
          --socket PATH               Unix socket to listen on (default ./.run/snapbackd.sock).
                                      The parent directory is created; a stale socket is replaced.
          --state-dir DIR             Directory of the viewer-state database, DIR/snapback.db (SQLite,
                                      created if missing; default ./.run/state): bookmarks and watched
                                      breaks survive restarts, crashes and power cuts
          --log-level LEVEL           error, warning, notice, info or debug (default info)
          --max-frame-size BYTES      Largest request body accepted (default 1048576); a larger
                                      request is answered RESOURCE_EXHAUSTED
          --max-outbound-bytes BYTES  Output queued for a client that is not reading before it is
                                      disconnected (default 8388608, at least 4096)
          -h, --help                  Show this help and exit
          --version                   Show the version and exit

        Signals: SIGTERM or SIGINT stops gracefully (clients get up to 2 s to take their last
        answers); SIGHUP asks for a configuration reload.
        Logs go to stderr, one line per event, with <N> syslog priority prefixes for journald.

        Exit status: 0 after a clean stop, 1 if the daemon could not start or stop cleanly,
        2 for a bad command line.
        """
}
