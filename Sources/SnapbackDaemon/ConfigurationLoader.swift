// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackConfigFile

/// Reads the configuration files: the main file, then `<main file>.d/*.conf` in lexical (byte) order,
/// each over the result of the ones before, all over the built-in defaults.
public enum ConfigurationLoader {
    /// The main file when `--config` is not given (sysconfdir is /etc whatever the install prefix).
    public static let defaultPath = "/etc/snapback/snapbackd.conf"
    /// Files larger than this are refused: a configuration is a few hundred bytes.
    static let maxFileSize = 1 << 20

    /// What was loaded, and from where.
    public struct Loaded: Sendable, Equatable {
        public var configuration: DaemonConfiguration
        /// The files read, in the order applied (a missing default main file is not listed).
        public var files: [String]
    }

    /// Loads `path` (the default path if nil) and its drop-ins. A missing default file is the same as
    /// an empty one; a missing file named with `--config` is an error. A missing drop-in directory is
    /// fine.
    public static func load(path: String?, resolver: any AccountResolver = SystemAccounts()) throws(ConfigurationError) -> Loaded
    {
        let mainPath = path ?? defaultPath
        var configuration = DaemonConfiguration()
        var files: [String] = []
        switch readFile(mainPath) {
        case .success(let text):
            try ConfigurationFile.parse(text, file: mainPath, into: &configuration, resolver: resolver)
            files.append(mainPath)
        case .failure(let code):
            if !(code == ENOENT && path == nil) {
                throw ConfigurationError(file: mainPath, line: nil, reason: String(cString: strerror(code)))
            }
        }
        let directory = mainPath + ".d"
        for name in try dropInNames(directory) {
            let file = directory + "/" + name
            switch readFile(file) {
            case .success(let text):
                try ConfigurationFile.parse(text, file: file, into: &configuration, resolver: resolver)
                files.append(file)
            case .failure(let code):
                throw ConfigurationError(file: file, line: nil, reason: String(cString: strerror(code)))
            }
        }
        return Loaded(configuration: configuration, files: files)
    }

    /// The `*.conf` names in `directory`, sorted by bytes; none if it does not exist.
    static func dropInNames(_ directory: String) throws(ConfigurationError) -> [String] {
        guard let stream = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw ConfigurationError(file: directory, line: nil, reason: String(cString: strerror(errno)))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".conf"), !name.hasPrefix(".") else { continue }
            names.append(name)
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    enum ReadResult {
        case success(String)
        case failure(Int32)
    }

    /// The whole file as UTF-8 text, or the errno.
    static func readFile(_ path: String) -> ReadResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(errno) }
        if status.st_mode & S_IFMT == S_IFDIR { return .failure(EISDIR) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > maxFileSize { return .failure(EFBIG) }
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}

/// User and group names from the system's account files, /etc/passwd and /etc/group (where
/// systemd-sysusers puts the socket's group).
///
/// Only the files: the release daemon is linked statically (Package.swift), and glibc's static NSS would
/// dlopen the other modules of nsswitch.conf (nss-systemd for a name the files do not have), shared
/// objects that need the shared libc, which crashes the process. The files module is inside the static
/// libc; the debug build looks names up the same way, so the tests see what the box does.
public struct SystemAccounts: AccountResolver {
    public init() { _ = Self.filesOnly }

    private static let filesOnly: Void = {
        _ = __nss_configure_lookup("passwd", "files")
        _ = __nss_configure_lookup("group", "files")
    }()

    public func userId(named name: String) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    public func groupId(named name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 64 * 1024)
        let status = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
