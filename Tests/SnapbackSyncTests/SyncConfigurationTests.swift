// SPDX-License-Identifier: Apache-2.0
import Glibc
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
            ("[access]", 1, "unknown section [access] (sections: [telemetry])"),
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
        #expect(
            Self.error(Self.required + "[sync]\n")?.description
                == "sync.conf:3: unknown section [sync] (sections: [telemetry])")
        #expect(Self.error(Self.required + "[telemetry]\nhistory = 5\n")?.reason.contains("goes before [telemetry]") == true)
        #expect(Self.error("interval = 5\n" + Self.required)?.reason == "interval: belongs in [telemetry]")
        #expect(
            Self.error("servers\n")?.description == "sync.conf:1: expected 'key = value', a [section] header or a # comment")
        #expect(Self.error(" = x\n")?.reason == "a key is missing before '='")
        #expect(Self.error("hosehold = x\n")?.reason == "unknown key 'hosehold' (did you mean 'household'?)")
        #expect(Self.error("history = 0\n")?.reason.hasPrefix("history: ") == true)
    }

    @Test func requiredKeysAndPairsAreCheckedOverTheWholeFile() {
        #expect(Self.error("household = A")?.reason.contains("servers is required") == true)
        #expect(
            Self.error("servers = nats://x\n[telemetry]\nenabled = false")?.reason.contains("household is required") == true)
        // Telemetry alone: no household, no sync.
        #expect((try? SyncConfiguration.parse("servers = nats://x", file: "s"))?.syncEnabled == false)
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
        for line in text.split(separator: "\n") {
            if line == "[telemetry]" { uncommented += line + "\n" }
            guard line.hasPrefix("#"), line.contains(" ="), !line.hasPrefix("# ") else { continue }
            let body = line.dropFirst()
            shown.append(String(body.prefix(while: { $0 != " " })))
            uncommented += body + "\n"
        }
        #expect(shown == SyncConfiguration.keyNames + TelemetryConfiguration.keyNames)
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

/// `[telemetry]`: its keys read and bounded, the operator's labels a closed charset.
@Suite struct TelemetryConfigurationTests {
    @Test func everyKeyIsReadAndBounded() throws {
        let text = """
            servers = nats://127.0.0.1:4222

            [telemetry]
            enabled = yes
            interval = 60
            textfile = /var/lib/prometheus/node-exporter/snapback.prom
            stream = FLEET_1
            firmware = 4.2.1-rc.3
            model = STB_X-200
            region = eu-west
            box-id = 0123456789abcdef0123456789abcdef
            """
        let c = try SyncConfiguration.parse(text, file: "sync.conf")
        let t = c.telemetry
        #expect(t.enabled && t.interval == 60 && t.textfile == "/var/lib/prometheus/node-exporter/snapback.prom")
        #expect(t.stream == "FLEET_1" && t.firmware == "4.2.1-rc.3" && t.model == "STB_X-200" && t.region == "eu-west")
        #expect(t.boxId == "0123456789abcdef0123456789abcdef")
        #expect(!c.syncEnabled)
        #expect(try SyncConfiguration.parse(c.render(), file: "rendered") == c)
        let defaults = try SyncConfiguration.parse("servers = nats://x\nhousehold = h\n", file: "s").telemetry
        #expect(defaults == TelemetryConfiguration() && defaults.enabled && defaults.interval == 300)
        #expect(defaults.stream == "SNAPBACK_TELEMETRY" && defaults.textfile == nil && defaults.firmware.isEmpty)

        let refused: [(String, String)] = [
            ("interval = 0", "interval: '0' is not a whole number from 1 to 86400"),
            ("interval = 86401", "interval: '86401' is not a whole number from 1 to 86400"),
            ("enabled = maybe", "enabled: 'maybe' is not true or false"),
            ("firmware = 4.2 beta", "firmware: '4.2 beta' is not 0 to 64 bytes of A-Z a-z 0-9 . _ -"),
            ("region = \u{e9}u", "region: '\u{e9}u' is not 0 to 64 bytes of A-Z a-z 0-9 . _ -"),
            ("model = " + String(repeating: "m", count: 65), "is not 0 to 64 bytes"),
            ("stream = a.b", "stream: 'a.b' is not 1 to 64 bytes of A-Z a-z 0-9 _ -"),
            ("box-id = 0123456789ABCDEF0123456789ABCDEF", "box-id: '0123456789ABCDEF0123456789ABCDEF' is not 32 hex digits"),
            ("box-id = 0123", "is not 32 hex digits")
        ]
        for (line, reason) in refused {
            do {
                _ = try SyncConfiguration.parse("servers = nats://x\n[telemetry]\n" + line + "\n", file: "s")
                Issue.record("\(line) was taken")
            } catch {
                #expect(error.line == 3 && error.reason.contains(reason), "\(line): \(error)")
            }
        }
    }

    @Test func theBoxIdIsMadeOnceAndKept() throws {
        let directory = "/tmp/snapback-telemetry-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try makeDirectory(directory)
        defer { _ = unlink(directory + "/box-id"); _ = rmdir(directory) }
        let id = try TelemetryReporter.boxId(path: directory + "/box-id")
        #expect(TelemetryReporter.isBoxId(id))
        #expect(try TelemetryReporter.boxId(path: directory + "/box-id") == id)
        let other = "/tmp/snapback-telemetry-test-\(getpid())-other"
        try makeDirectory(other)
        defer { _ = unlink(other + "/box-id"); _ = rmdir(other) }
        #expect(try TelemetryReporter.boxId(path: other + "/box-id") != id)
        // A configured id wins, and is kept: the box is that one from then on, configured or not.
        let drawn = "0123456789abcdef0123456789abcdef"
        var logged: [String] = []
        #expect(try TelemetryReporter.boxId(path: other + "/box-id", configured: drawn, log: { logged.append($0) }) == drawn)
        #expect(logged.count == 1 && logged[0].contains("replaces"))
        #expect(try TelemetryReporter.boxId(path: other + "/box-id") == drawn)
        // A jitter within ±10 %.
        for _ in 0..<100 {
            let d = TelemetryReporter.jittered(.seconds(300))
            #expect(d >= .seconds(270) && d <= .seconds(330))
        }
    }
}
