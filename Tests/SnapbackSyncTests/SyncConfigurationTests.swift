// SPDX-License-Identifier: Apache-2.0
import SnapbackConfigFile
import Testing

@testable import SnapbackSync

/// sync.conf: every key read and bounded, errors as FILE:LINE: REASON, and the example in config/ true to
/// the defaults.
@Suite struct SyncConfigurationTests {
    static let required = "servers = nats://127.0.0.1:4222\nhousehold = A\n"

    static func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try SyncConfiguration.parse(text, file: "sync.conf")
            return nil
        } catch {
            return error
        }
    }

    @Test func everyKeyIsReadAndTheRestKeepTheirDefaults() throws {
        let text = """
            # comment
            servers = nats://a.example:4222, tls://b.example:4443  nats://user:pw@c.example
            household = smith-1
            device-id = box.living_room-1
            user = box1   # a trailing comment
            password-file = /etc/snapback/nats.password
            tls-ca = /etc/ssl/ca.pem
            tls-cert = /etc/ssl/box.pem
            tls-key = /etc/ssl/box.key
            socket = /run/x.sock
            state-directory = /var/lib/x
            bucket = bookmarks_2
            history = 64
            replicas = 3
            status-file = /run/x/status
            publish-rate = 250
            """
        let c = try SyncConfiguration.parse(text, file: "sync.conf")
        #expect(c.servers == ["nats://a.example:4222", "tls://b.example:4443", "nats://user:pw@c.example"])
        #expect(c.household == "smith-1" && c.deviceId == "box.living_room-1" && c.user == "box1")
        #expect(c.passwordFile == "/etc/snapback/nats.password" && c.tlsCA == "/etc/ssl/ca.pem")
        #expect(c.tlsCert == "/etc/ssl/box.pem" && c.tlsKey == "/etc/ssl/box.key" && c.socket == "/run/x.sock")
        #expect(c.stateDirectory == "/var/lib/x" && c.bucket == "bookmarks_2" && c.history == 64 && c.replicas == 3)
        #expect(c.statusFile == "/run/x/status" && c.publishRate == 250)
        // What --check-config prints reads back as the same configuration.
        #expect(try SyncConfiguration.parse(c.render(), file: "rendered") == c)

        let defaults = try SyncConfiguration.parse(Self.required, file: "sync.conf")
        #expect(defaults.bucket == "snapback" && defaults.history == 5 && defaults.replicas == 1)
        #expect(defaults.socket == "/run/snapback/snapbackd.sock" && defaults.stateDirectory == "/var/lib/snapback-sync")
        #expect(defaults.statusFile == "/run/snapback-sync/status" && defaults.deviceId == nil)
        #expect(defaults.publishRate == 100)
    }

    @Test func valuesOutOfRangeAreRefusedNamingTheirLine() {
        let cases: [(String, Int?, String)] = [
            ("servers = http://x:80", 1, "not a nats:// or tls:// URL"),
            ("servers = nats://x:0", 1, "the port is 1 to 65535"),
            ("servers = nats://x:99999", 1, "the port is 1 to 65535"),
            ("servers = nats://", 1, "names no host"),
            ("servers = " + String(repeating: "nats://x ", count: 17), 1, "1 to 16 URLs"),
            ("servers = nats://" + String(repeating: "x", count: 300), 1, "longer than 256"),
            ("\n\nhistory = 65", 3, "from 1 to 64"),
            ("history = 0", 1, "from 1 to 64"),
            ("replicas = 6", 1, "from 1 to 5"),
            ("publish-rate = 0", 1, "from 1 to 10000"),
            ("publish-rate = 10001", 1, "from 1 to 10000"),
            ("replicas = -1", 1, "from 1 to 5"),
            ("history = 99999999999999999999999", 1, "from 1 to 64"),
            ("household = a.b", 1, "A-Z a-z 0-9 _ -"),
            ("household = " + String(repeating: "h", count: 65), 1, "A-Z a-z 0-9 _ -"),
            ("bucket = a>b", 1, "A-Z a-z 0-9 _ -"),
            ("device-id = a b", 1, "not a device id"),
            ("socket = /" + String(repeating: "s", count: 107), 1, "1 to 107 bytes"),
            ("user = a b", 1, "no spaces"),
            ("househld = A", 1, "did you mean 'household'?"),
            ("[access]", 1, "no sections"),
            ("servers nats://x", 1, "expected 'key = value'")
        ]
        for (text, line, reason) in cases {
            let full = text.hasPrefix("servers") ? text + "\nhousehold = A" : Self.required + text
            let offset = text.hasPrefix("servers") ? 0 : 2
            let error = Self.error(full)
            #expect(error?.line == line.map { $0 + offset }, "\(text): \(String(describing: error))")
            #expect(error?.reason.contains(reason) == true, "\(text): \(String(describing: error))")
            #expect(error?.description.hasPrefix("sync.conf:") == true)
        }
    }

    /// The syntax of snapbackd.conf (one reader, KeyValueFile), without sections.
    @Test func theSyntaxIsSnapbackdConfsWithoutSections() throws {
        // A '#' starts a comment after a blank only, as in snapbackd.conf(5): one inside a value is the value's.
        let c = try SyncConfiguration.parse(Self.required + "status-file = /run/x#1   # where\n; also a comment\n", file: "s")
        #expect(c.statusFile == "/run/x#1")
        #expect(Self.error(Self.required + "[sync]\n")?.description == "sync.conf:3: sync.conf has no sections")
        #expect(Self.error("servers\n")?.description == "sync.conf:1: expected 'key = value' or a # comment")
        #expect(Self.error(" = x\n")?.reason == "a key is missing before '='")
        #expect(Self.error("hosehold = x\n")?.reason == "unknown key 'hosehold' (did you mean 'household'?)")
        #expect(Self.error("history = 0\n")?.reason.hasPrefix("history: ") == true)
    }

    @Test func requiredKeysAndPairsAreCheckedOverTheWholeFile() {
        #expect(Self.error("household = A")?.reason.contains("servers is required") == true)
        #expect(Self.error("servers = nats://x")?.reason.contains("household is required") == true)
        let both = Self.required + "credentials-file = /c\nuser = u\npassword-file = /p\n"
        #expect(Self.error(both)?.reason.contains("not both") == true)
        #expect(Self.error(both)?.line == 4)
        #expect(Self.error(Self.required + "user = u\n")?.reason.contains("go together") == true)
        #expect(Self.error(Self.required + "tls-key = /k\n")?.reason.contains("tls-cert and tls-key go together") == true)
    }

    /// config/sync.conf shows every key, commented out, with its default (the two required keys with an
    /// example): uncommented, it reads as the defaults.
    @Test func theExampleShowsEveryKeyWithItsDefault() throws {
        let path = String(#filePath.dropLast("Tests/SnapbackSyncTests/SyncConfigurationTests.swift".count)) + "config/sync.conf"
        let text = try #require(readFile(path, limit: 1 << 20))
        var shown: [String] = []
        var uncommented = ""
        for line in text.split(separator: "\n") where line.hasPrefix("#") && line.contains(" =") && !line.hasPrefix("# ") {
            let body = line.dropFirst()
            shown.append(String(body.prefix(while: { $0 != " " })))
            uncommented += body + "\n"
        }
        #expect(shown == SyncConfiguration.keyNames)
        // Keys without a default are shown empty; an empty value is no value.
        let valued = uncommented.split(separator: "\n").filter { !$0.hasSuffix("=") }.joined(separator: "\n")
        var c = try SyncConfiguration.parse(valued, file: "config/sync.conf")
        #expect(c.servers == ["nats://nats.example.net:4222"] && c.household == "smith")
        c.servers = []
        c.household = ""
        #expect(c == SyncConfiguration())
    }
}

/// snapback-sync's command line, and what it shows of a server URL.
@Suite struct SyncCommandTests {
    @Test func optionsAreParsedAndMistakesRefused() throws {
        #expect(try SyncCommand.parse([]) == .run(configPath: "/etc/snapback/sync.conf"))
        #expect(try SyncCommand.parse(["--config", "/x.conf"]) == .run(configPath: "/x.conf"))
        #expect(try SyncCommand.parse(["--config=/x.conf", "--check-config"]) == .checkConfiguration(configPath: "/x.conf"))
        #expect(try SyncCommand.parse(["--help"]) == .help)
        #expect(try SyncCommand.parse(["--version"]) == .version)
        for bad in [["--config"], ["--config="], ["--verbose"], ["extra"]] {
            #expect(throws: SyncUsageError.self, "\(bad)") { try SyncCommand.parse(bad) }
        }
    }

    @Test func aURLIsShownWithoutItsPassword() {
        #expect(SyncConfiguration.redacted("nats://box:secret@nats.example:4222") == "nats://nats.example:4222")
        #expect(SyncConfiguration.redacted("tls://token@h") == "tls://h")
        #expect(SyncConfiguration.redacted("nats://h:4222") == "nats://h:4222")
    }
}
