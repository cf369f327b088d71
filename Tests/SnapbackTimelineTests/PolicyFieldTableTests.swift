// SPDX-License-Identifier: Apache-2.0
import SnapbackTimeline
import Testing

/// `AdPolicy.fields`, the one table of the policy's fields: complete, in order, and each row reading,
/// writing, comparing and printing its own field and no other.
@Suite struct PolicyFieldTableTests {
    /// `skippedBreakChoice` → `skipped-break-choice`.
    static func kebab(_ name: String) -> String {
        var key = ""
        for c in name {
            if c.isUppercase { key += "-" + c.lowercased() } else { key.append(c) }
        }
        return key
    }

    /// A policy that differs from `policy` in `field` only.
    static func changed(_ field: AdPolicy.Field, of policy: AdPolicy) -> AdPolicy {
        var p = policy
        switch field.kind {
        case .flag(let k): p[keyPath: k].toggle()
        case .seconds(let k, _): p[keyPath: k] += 1.5
        case .count(let k, _, _): p[keyPath: k] += 1
        case .choice(let c): c.assign(&p, (c.position(policy) + 1) % c.names.count)
        }
        return p
    }

    @Test func everyStoredPropertyHasOneRowInDeclarationOrder() {
        let properties = Mirror(reflecting: AdPolicy()).children.compactMap(\.label)
        #expect(AdPolicy.fields.map(\.key) == properties.map(Self.kebab))
        #expect(AdPolicy.fields.map(\.protoName).contains("max_snapbacks_per_break"))
    }

    @Test func eachRowIsFoundByItsKeyPath() {
        #expect(AdPolicy.field(\AdPolicy.cooldown)?.key == "cooldown")
        #expect(AdPolicy.field(\AdPolicy.resumeBreaks)?.key == "resume-breaks")
        #expect(AdPolicy.field(\AdPolicy.Preset.rawValue) == nil)
        for field in AdPolicy.fields { #expect(AdPolicy.field(field.keyPath)?.key == field.key) }
    }

    @Test(arguments: AdPolicy.fields.map(\.key))
    func aRowComparesAndCopiesItsOwnFieldOnly(_ key: String) throws {
        let field = try #require(AdPolicy.fields.first { $0.key == key })
        for preset in AdPolicy.Preset.allCases {
            let base = AdPolicy(preset: preset)
            let other = Self.changed(field, of: base)
            #expect(other != base)
            #expect(!field.same(base, other) && field.same(base, base))
            for row in AdPolicy.fields where row.key != key { #expect(row.same(base, other)) }
            var copy = base
            field.copy(from: other, to: &copy)
            #expect(copy == other)
            #expect(field.text(in: copy) != field.text(in: base))
        }
    }

    @Test func rowsPrintAsTheConfigurationFileTakesThem() {
        var p = AdPolicy.tvsdk
        p.snapbackLandingOffset = 0.25
        p.maxSnapbacksPerBreak = 7
        let text = Dictionary(uniqueKeysWithValues: AdPolicy.fields.map { ($0.key, $0.text(in: p)) })
        #expect(text["landing-in-unwatched-break"] == "ad-start")
        #expect(text["trick-play-as-seek"] == "yes" && text["enforce-backward-seeks"] == "no")
        #expect(text["snapback-landing-offset"] == "0.25" && text["bookmark-interval"] == "30")
        #expect(text["max-snapbacks-per-break"] == "7")
        #expect(AdPolicy.Field.text(seconds: 0.0001) == "0.0001")
        #expect(AdPolicy.Field.text(seconds: 1e20) == "1e+20")
    }

    @Test func rangesComeFromLimitsAndOnlyBookmarkTimingIsDeviceWide() {
        for field in AdPolicy.fields {
            switch field.kind {
            case .seconds(_, let limit): #expect(limit == Limits.duration)
            case .count(_, let wire, let configured):
                #expect(
                    wire == Limits.snapbacksPerBreak && wire.contains(configured.lowerBound)
                        && wire.contains(configured.upperBound))
            case .flag, .choice: break
            }
        }
        #expect(AdPolicy.fields.filter(\.deviceWide).map(\.key) == ["bookmark-interval", "finished-margin"])
    }
}
