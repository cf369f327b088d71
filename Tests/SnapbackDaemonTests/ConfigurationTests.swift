// SPDX-License-Identifier: Apache-2.0
import Foundation
import SnapbackConfigFile
import SnapbackDaemon
import SnapbackTimeline
import SnapbackWire
import Testing

/// The configuration format and its loading (`ConfigurationFile`, `ConfigurationLoader`), without a
/// daemon.
@Suite struct ConfigurationTests {
    struct Accounts: AccountResolver {
        func userId(named name: String) -> UInt32? { ["root": 0, "player": 1001][name] }
        func groupId(named name: String) -> UInt32? { ["video": 44, "snapback": 990][name] }
    }

    func parse(_ text: String, over base: DaemonConfiguration = DaemonConfiguration()) throws(ConfigurationError)
        -> DaemonConfiguration
    {
        var configuration = base
        try ConfigurationFile.parse(text, file: "test.conf", into: &configuration, resolver: Accounts())
        return configuration
    }

    func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    static var repositoryRoot: URL {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        return root
    }

    // MARK: Format

    @Test func emptyTextCommentsAndBlankLinesKeepTheDefaults() throws {
        let text = "\n# a comment\n   ; another\n\t\n[policy]\n# preset = ima\n"
        #expect(try parse(text) == DaemonConfiguration())
        #expect(try parse("") == DaemonConfiguration())
    }

    @Test func everyPolicyKeyIsReadByItsKebabCaseNameAndRawValue() throws {
        let c = try parse(
            """
            [policy]
            preset = media3
            skipped-break-choice = first
            seek-gate = all-before-target
            enforce-backward-seeks = no
            return-to-target = never
            landing-in-unwatched-break = ad-start
            skip-watched-break-on-landing = false
            watched-when = on-begin
            refuse-seeks-during-unwatched-break = off
            watched-break-on-playback = replay
            snapback-landing-offset = 500ms
            cooldown = 2min
            trick-play-as-seek = 0
            resume-breaks = preroll-and-last
            preroll-disabled = yes
            midrolls-disabled = true
            live-snapback = on
            live-bookmarks = 1
            max-snapbacks-per-break = 5
            coverage-tolerance = 1.5s
            """)
        #expect(c.defaultPreset == .media3)
        let p = c.defaultPolicy
        #expect(p.skippedBreakChoice == .first)
        #expect(p.seekGate == .allBreaksBeforeTarget)
        #expect(p.enforceBackwardSeeks == false)  // media3's true, overridden
        #expect(p.returnToTarget == .never)
        #expect(p.landingInUnwatchedBreak == .adStart)
        #expect(p.skipWatchedBreakOnLanding == false)
        #expect(p.watchedWhen == .onBegin)
        #expect(p.refuseSeeksDuringUnwatchedBreak == false)
        #expect(p.watchedBreakOnPlayback == .replay)  // media3's skip, overridden
        #expect(p.snapbackLandingOffset == 0.5)
        #expect(p.cooldown == 120)
        #expect(p.trickPlayAsSeek == false)
        #expect(p.resumeBreaks == .prerollAndLastBefore)
        #expect(p.prerollDisabled && p.midrollsDisabled && p.liveSnapback && p.liveBookmarks)
        #expect(p.maxSnapbacksPerBreak == 5)
        #expect(p.coverageTolerance == 1.5)
    }

    @Test func presetAloneGivesThatPresetsPolicy() throws {
        for preset in AdPolicy.Preset.allCases {
            let c = try parse("preset = \(preset.rawValue)")
            #expect(c.defaultPolicy == AdPolicy(preset: preset))
        }
    }

    @Test func policyKeysChangeOnlyTheDefaultPresetAndSessionOverridesWin() throws {
        let c = try parse("[policy]\npreset = ima\ncooldown = 60\n[bookmarks]\nbookmark-interval = 10\n")
        // No preset named: the configured default policy, with the bookmark timing.
        var expected = AdPolicy.ima
        expected.cooldown = 60
        expected.bookmarkInterval = 10
        #expect(c.policy(requestedPreset: nil, overrides: PolicyOverrides()) == expected)
        // A preset named: that preset as it is, with the device-wide bookmark timing.
        var tvsdk = AdPolicy.tvsdk
        tvsdk.bookmarkInterval = 10
        #expect(c.policy(requestedPreset: .tvsdk, overrides: PolicyOverrides()) == tvsdk)
        // The session's own overrides win over everything.
        var overrides = PolicyOverrides()
        overrides.cooldown = 5
        overrides.bookmarkInterval = 0
        let p = c.policy(requestedPreset: nil, overrides: overrides)
        #expect(p.cooldown == 5 && p.bookmarkInterval == 0)
    }

    @Test func watchedRetentionDefaultsToADayAndReadsDurations() throws {
        #expect(DaemonConfiguration().watchedRetention == 86_400)
        #expect(try parse("[bookmarks]\nwatched-retention = 36h\n").watchedRetention == 129_600)
        #expect(try parse("watched-retention = 0\n").watchedRetention == 0)
    }

    @Test func syncKeysAreBoundedAndGoToTheStore() throws {
        let defaults = DaemonConfiguration().storeConfiguration
        #expect(defaults.deviceId == nil && defaults.maxClockAheadMilliseconds == 60_000 && defaults.tombstoneCapacity == 10_000)
        let c = try parse("[sync]\ndevice-id = living-room.1\nmax-clock-ahead = 5min\ntombstones = 0\n")
        #expect(c.storeConfiguration.deviceId?.text == "living-room.1")
        #expect(c.storeConfiguration.maxClockAheadMilliseconds == 300_000)
        #expect(c.storeConfiguration.tombstoneCapacity == 0)
        #expect(try parse("device-id = \n").sync.deviceId == nil)
        #expect(try parse("max-clock-ahead = 24h").storeConfiguration.maxClockAheadMilliseconds == 86_400_000)
        for bad in [
            "device-id = living room", "device-id = \(String(repeating: "a", count: 65))", "device-id = salón",
            "max-clock-ahead = 25h", "max-clock-ahead = -1", "max-clock-ahead = 1e300", "tombstones = 1000001",
            "tombstones = -1", "[log]\ntombstones = 5"
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try parse(bad) }
        }
        // The file the configuration renders to reads back the same.
        #expect(try parse(ConfigurationFile.render(c)).sync == c.sync)
    }

    @Test func limitsAccessAndLogLevel() throws {
        let c = try parse(
            """
            [limits]
            max-connections = 10
            max-connections-per-uid = 3
            max-sessions-per-connection = 2
            max-frame-size = 64K
            max-outbound-bytes = 1M
            [access]
            allow-users = root, player 2000
            allow-groups = video @socket 77
            [log]
            level = debug
            """)
        #expect(c.maxConnections == 10 && c.maxConnectionsPerUid == 3 && c.maxSessionsPerConnection == 2)
        #expect(c.maxFrameSize == 65536 && c.maxOutboundBytes == 1 << 20)
        #expect(c.access.users == [0, 1001, 2000] && !c.access.anyone)
        #expect(c.access.groups == [44, 77] && c.access.socketGroup)
        #expect(c.logLevel == .debug)
    }

    @Test func sectionsAreOptionalAndTrailingCommentsAreCut() throws {
        let c = try parse("preset = hlsjs   # for the web player\nmax-connections = 7\nlevel = warning\n")
        #expect(c.defaultPreset == .hlsjs && c.maxConnections == 7 && c.logLevel == .warning)
    }

    @Test func theLastValueOfAKeyWins() throws {
        #expect(try parse("cooldown = 1\ncooldown = 2\n").defaultPolicy.cooldown == 2)
    }

    @Test func emptyListsAllowNobodyAndStarAllowsAnyone() throws {
        let nobody = try parse("allow-users =\nallow-groups =\n").access
        #expect(nobody.users.isEmpty && nobody.groups.isEmpty && !nobody.socketGroup && !nobody.anyone)
        #expect(!nobody.allows(PeerCredentials(pid: 1, uid: 0, gid: 0), socketGroup: 0))
        let anyone = try parse("allow-users = *").access
        #expect(anyone.allows(PeerCredentials(pid: 1, uid: 4242, gid: 4242), socketGroup: nil))
    }

    @Test func adminGroupsAreRootAndTheListedGroupsByNameOrGid() throws {
        let access = try parse("[access]\nadmin-groups = snapback 77\n").access
        #expect(access.adminGroups == [990, 77])
        #expect(access.isAdmin(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(access.isAdmin(PeerCredentials(pid: 1, uid: 5, gid: 990)))
        #expect(access.isAdmin(PeerCredentials(pid: 1, uid: 5, gid: 5, groups: [3, 77])))
        #expect(!access.isAdmin(PeerCredentials(pid: 1, uid: 5, gid: 5, groups: [3])))
        #expect(!DaemonConfiguration().access.isAdmin(PeerCredentials(pid: 1, uid: 5, gid: 44)))
        #expect(throws: ConfigurationError.self) { try parse("admin-groups = nosuchgroup") }
        #expect(try parse("[limits]\nmax-watch-queue-bytes = 64K").maxWatchQueueBytes == 65536)
        #expect(throws: ConfigurationError.self) { try parse("max-watch-queue-bytes = 100") }
    }

    @Test func accessListChecksUidPrimaryAndSupplementaryGroupsAndTheSocketGroup() throws {
        let access = try parse("allow-users = 1001\nallow-groups = @socket video\n").access
        #expect(access.allows(PeerCredentials(pid: 1, uid: 1001, gid: 5), socketGroup: 990))
        #expect(access.allows(PeerCredentials(pid: 1, uid: 7, gid: 44), socketGroup: 990))
        #expect(access.allows(PeerCredentials(pid: 1, uid: 7, gid: 7, groups: [3, 990]), socketGroup: 990))
        #expect(!access.allows(PeerCredentials(pid: 1, uid: 7, gid: 7, groups: [3]), socketGroup: 990))
        #expect(!access.allows(PeerCredentials(pid: 1, uid: 0, gid: 0), socketGroup: 990))
        // The default: root and the socket's group.
        let defaults = AccessList()
        #expect(defaults.allows(PeerCredentials(pid: 1, uid: 0, gid: 0), socketGroup: 990))
        #expect(defaults.allows(PeerCredentials(pid: 1, uid: 1001, gid: 990), socketGroup: 990))
        #expect(!defaults.allows(PeerCredentials(pid: 1, uid: 1001, gid: 1001), socketGroup: 990))
        #expect(!defaults.allows(.unknown, socketGroup: 990))
    }

    @Test func sizesAndDurationsTakeUnits() throws {
        #expect(try parse("max-frame-size = 2M").maxFrameSize == 2 << 20)
        #expect(try parse("max-frame-size = 512KiB").maxFrameSize == 512 << 10)
        #expect(try parse("max-outbound-bytes = 1G").maxOutboundBytes == 1 << 30)
        #expect(try parse("bookmark-interval = 1h").bookmarkInterval == 3600)
        #expect(try parse("finished-margin = 45s").finishedMargin == 45)
        #expect(try parse("bookmark-interval = 0").bookmarkInterval == 0)
        #expect(try parse("hello-timeout = 2s").helloTimeout == 2)
        #expect(try parse("partial-frame-timeout = 250ms").partialFrameTimeout == 0.25)
        #expect(try parse("partial-frame-timeout = 250ms").connectionConfiguration.partialFrameTimeoutMilliseconds == 250)
        #expect(DaemonConfiguration().connectionConfiguration.helloTimeoutMilliseconds == 5000)
    }

    // MARK: Errors: file:line: reason

    @Test(
        arguments: [
            ("[policy]\nbogus = 1", 2, "unknown key 'bogus'"),
            ("coldown = 3", 1, "did you mean 'cooldown'?"),
            ("[policy]\n\n[nonsense]", 3, "unknown section [nonsense]"),
            ("[policy", 1, "must end with ']'"),
            ("just words", 1, "expected 'key = value'"),
            (" = 3", 1, "a key is missing"),
            ("[limits]\npreset = ima", 2, "'preset' belongs in [policy], not [limits]"),
            ("[policy]\nbookmark-interval = 5", 2, "belongs in [bookmarks]"),
            ("preset = netflix", 1, "'netflix' is not one of snapback, ima, tvsdk, media3, hlsjs"),
            ("skipped-break-choice = last", 1, "is not one of last-unwatched, nearest-only, first"),
            ("live-snapback = maybe", 1, "is not a boolean"),
            ("cooldown = -1", 1, "is not a duration"),
            ("cooldown = ", 1, "is not a duration"),
            ("cooldown = 5 days", 1, "is not a duration"),
            ("cooldown = nan", 1, "is not a duration"),
            ("max-snapbacks-per-break = 0", 1, "not a whole number in 1...1000"),
            ("max-connections = lots", 1, "not a whole number"),
            ("max-frame-size = 65M", 1, "is not in 0...67108864"),
            ("max-outbound-bytes = 1K", 1, "is not in 4096..."),
            ("max-frame-size = -5", 1, "is not a size"),
            ("hello-timeout = 0", 1, "is not a timeout in 0.05...3600 seconds"),
            ("partial-frame-timeout = 2h", 1, "is not a timeout in 0.05...3600 seconds"),
            ("[log]\nhello-timeout = 5", 2, "belongs in [limits]"),
            ("allow-users = nosuchuser", 1, "no user 'nosuchuser'"),
            ("allow-groups = nosuchgroup", 1, "no group 'nosuchgroup'"),
            ("level = loud", 1, "'loud' is not a level")
        ] as [(String, Int, String)])
    func badLinesAreRefusedWithFileLineAndReason(_ text: String, _ line: Int, _ reason: String) throws {
        let failure = try #require(error(text))
        #expect(failure.file == "test.conf")
        #expect(failure.line == line)
        #expect(failure.reason.contains(reason), "\(failure.reason)")
        #expect(failure.description.hasPrefix("test.conf:\(line): "))
    }

    // MARK: Rendering and the installed default file

    @Test func renderThenParseGivesTheSameEffect() throws {
        let original = try parse(
            """
            preset = tvsdk
            cooldown = 90
            snapback-landing-offset = 0.25
            max-connections = 12
            allow-users = * 5
            allow-groups = 44
            level = notice
            """)
        let text = ConfigurationFile.render(original)
        let again = try parse(text)
        #expect(again.defaultPolicy == original.defaultPolicy)
        #expect(ConfigurationFile.render(again) == text)
        #expect(again.access == original.access && again.maxConnections == 12 && again.logLevel == .notice)
    }

    /// `config/snapbackd.conf` (installed as /etc/snapback/snapbackd.conf) lists every key, commented
    /// out, with its built-in default.
    @Test func theDefaultFileListsEveryKeyWithItsDefault() throws {
        let path = Self.repositoryRoot.appendingPathComponent("config/snapbackd.conf").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try parse(text) == DaemonConfiguration(), "everything in it is commented out")
        // Uncomment the "#key = value" lines; prose comments start with "# ".
        var uncommented: [String] = []
        var keys: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let rest = line.dropFirst()
            if line.hasPrefix("#"), let first = rest.first, first.isLowercase, let equals = rest.firstIndex(of: "=") {
                keys.insert(rest[..<equals].trimmingCharacters(in: .whitespaces))
                uncommented.append(String(rest))
            } else {
                uncommented.append(String(line))
            }
        }
        let all = Set(ConfigurationFile.keyNames.map(\.name))
        #expect(keys == all, "missing: \(all.subtracting(keys)); unknown: \(keys.subtracting(all))")
        let parsed = try parse(uncommented.joined(separator: "\n"))
        #expect(ConfigurationFile.render(parsed) == ConfigurationFile.render(DaemonConfiguration()))
    }

    // MARK: Loading: main file, drop-ins, errors

    @Test func dropInsApplyInLexicalOrderOverTheMainFile() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let main = directory.appendingPathComponent("snapbackd.conf")
        let dropIns = directory.appendingPathComponent("snapbackd.conf.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        try "preset = ima\ncooldown = 10\nmax-connections = 5\n".write(to: main, atomically: true, encoding: .utf8)
        try "preset = tvsdk\n".write(to: dropIns.appendingPathComponent("20-b.conf"), atomically: true, encoding: .utf8)
        try "preset = media3\ncooldown = 20\n".write(
            to: dropIns.appendingPathComponent("10-a.conf"), atomically: true, encoding: .utf8)
        try "preset = hlsjs\n".write(to: dropIns.appendingPathComponent("30-c.conf.disabled"), atomically: true, encoding: .utf8)
        try "preset = hlsjs\n".write(to: dropIns.appendingPathComponent(".hidden.conf"), atomically: true, encoding: .utf8)
        let loaded = try ConfigurationLoader.load(path: main.path, resolver: Accounts())
        #expect(loaded.configuration.defaultPreset == .tvsdk)  // 20-b after 10-a
        #expect(loaded.configuration.defaultPolicy.cooldown == 20)  // 10-a over the main file
        #expect(loaded.configuration.maxConnections == 5)  // the main file, untouched by drop-ins
        #expect(
            loaded.files == [
                main.path, dropIns.appendingPathComponent("10-a.conf").path,
                dropIns.appendingPathComponent("20-b.conf").path
            ])
    }

    @Test func anErrorInADropInNamesThatFileAndLine() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let main = directory.appendingPathComponent("x.conf")
        try "preset = ima\n".write(to: main, atomically: true, encoding: .utf8)
        let dropIns = directory.appendingPathComponent("x.conf.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        let bad = dropIns.appendingPathComponent("50-bad.conf")
        try "# ok\n\ncooldown = soon\n".write(to: bad, atomically: true, encoding: .utf8)
        #expect(
            throws: ConfigurationError(
                file: bad.path, line: 3,
                reason: "cooldown: 'soon' is not a duration (seconds, or a number with ms, s, min or h)")
        ) {
            try ConfigurationLoader.load(path: main.path, resolver: Accounts())
        }
    }

    @Test func aMissingExplicitFileIsAnErrorAndAMissingDropInDirectoryIsNot() throws {
        let directory = try DaemonHarness.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("absent.conf").path
        #expect(throws: ConfigurationError(file: missing, line: nil, reason: "No such file or directory")) {
            try ConfigurationLoader.load(path: missing, resolver: Accounts())
        }
        let present = directory.appendingPathComponent("present.conf")
        try "level = error\n".write(to: present, atomically: true, encoding: .utf8)
        #expect(try ConfigurationLoader.load(path: present.path, resolver: Accounts()).configuration.logLevel == .error)
    }

    @Test func commandLineOptionsWinOverTheFile() throws {
        let file = try parse("max-frame-size = 2048\nmax-outbound-bytes = 65536\nlevel = error\n")
        guard case .run(let options) = try DaemonOptions.parse(["--max-frame-size", "1024", "--log-level", "debug"]) else {
            Issue.record("not a run command")
            return
        }
        let merged = file.overridden(by: options)
        #expect(merged.maxFrameSize == 1024 && merged.logLevel == .debug)
        #expect(merged.maxOutboundBytes == 65536)  // not on the command line: the file's
        guard case .run(let timeouts) = try DaemonOptions.parse(["--hello-timeout", "2s", "--partial-frame-timeout=300ms"]) else {
            Issue.record("not a run command")
            return
        }
        let withTimeouts = try parse("hello-timeout = 9\npartial-frame-timeout = 9\n").overridden(by: timeouts)
        #expect(withTimeouts.helloTimeout == 2 && withTimeouts.partialFrameTimeout == 0.3)
    }
}

@Suite struct LoggerLevelTests {
    /// A reload sets the level once; every component's copy of the logger follows.
    @Test func copiesShareTheLevel() {
        let logger = Logger(level: .info)
        let copy = logger
        #expect(!copy.isEnabled(.debug))
        logger.level = .debug
        #expect(copy.isEnabled(.debug) && copy.level == .debug)
    }
}
