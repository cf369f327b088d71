// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile

/// snapback-sync's command line.
public enum SyncCommand: Equatable, Sendable {
    case run(configPath: String)
    /// `--check-config`: load the configuration, print it as in force (or FILE:LINE: REASON), exit.
    case checkConfiguration(configPath: String)
    case help
    case version

    public static let versionText = "0.1.0"

    /// Parses the arguments after the program name; `--config PATH` and `--config=PATH` alike.
    public static func parse(_ arguments: [String]) throws(SyncUsageError) -> SyncCommand {
        var configPath = SyncConfiguration.defaultPath
        var check = false
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            switch argument {
            case "--help", "-h": return .help
            case "--version": return .version
            case "--check-config": check = true
            case "--config":
                guard i < arguments.count, !arguments[i].isEmpty else { throw SyncUsageError(message: "--config needs a path") }
                configPath = arguments[i]
                i += 1
            default:
                if argument.hasPrefix("--config=") {
                    configPath = String(argument.dropFirst("--config=".count))
                    guard !configPath.isEmpty else { throw SyncUsageError(message: "--config needs a path") }
                    continue
                }
                throw SyncUsageError(
                    message: argument.hasPrefix("-") ? "unknown option \(argument)" : "unexpected argument '\(argument)'")
            }
        }
        return check ? .checkConfiguration(configPath: configPath) : .run(configPath: configPath)
    }

    public static let usage = """
        Usage: snapback-sync [--config FILE] [--check-config]

        The household sync agent: carries this box's bookmarks and watched breaks
        from snapbackd to a NATS JetStream key-value bucket shared by the
        household's boxes, and theirs back into snapbackd (snapback-sync(8)).

        Options:
          --config FILE     Configuration file (default /etc/snapback/sync.conf):
                            servers, household, credentials, TLS, snapbackd's
                            socket, the state directory, the bucket
          --check-config    Load the configuration, print it as in force, and
                            exit: 0 if it is valid, 1 with FILE:LINE: REASON if
                            not
          --help            This text
          --version         The version

        """
}

public struct SyncUsageError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Loads and checks a configuration file; the files it names must be readable.
public func loadConfiguration(_ path: String) throws(ConfigurationError) -> SyncConfiguration {
    guard let text = readFile(path, limit: 1 << 20) else {
        throw ConfigurationError(file: path, line: nil, reason: "cannot read it")
    }
    var lines: [String: Int] = [:]
    let configuration = try SyncConfiguration.parse(text, file: path, lines: &lines)
    let files: [(String, String?)] = [
        ("credentials-file", configuration.credentialsFile), ("password-file", configuration.passwordFile),
        ("tls-ca", configuration.tlsCA), ("tls-cert", configuration.tlsCert), ("tls-key", configuration.tlsKey)
    ]
    for (key, file) in files {
        guard let file else { continue }
        guard readFile(file, limit: 1) != nil else {
            throw ConfigurationError(file: path, line: lines[key], reason: "\(key): cannot read \(file)")
        }
    }
    return configuration
}
