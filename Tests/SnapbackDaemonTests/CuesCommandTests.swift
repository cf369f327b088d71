// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// `snapback cues`: manifests read by libsnapback's break sources through the built binary (no daemon).
@Suite struct CuesCommandTests {
    static func write(_ text: String, _ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cues-\(getpid())-\(name)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func segments(_ from: Int, _ n: Int) -> String {
        (from..<from + n).map { "#EXTINF:10,\ns\($0).ts\n" }.joined()
    }

    /// A live CUE-OUT opened, extended, closed: each refresh says what it changed.
    @Test func liveRefreshes() throws {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        let opened = try Self.write(
            head + "#EXT-X-MEDIA-SEQUENCE:0\n" + Self.segments(0, 3) + "#EXT-X-CUE-OUT:DURATION=30\n" + Self.segments(3, 1),
            "1.m3u8")
        let extended = try Self.write(
            head + "#EXT-X-MEDIA-SEQUENCE:4\n#EXT-X-CUE-OUT-CONT:ElapsedTime=10,Duration=30\n" + Self.segments(4, 4),
            "2.m3u8")
        let closed = try Self.write(head + "#EXT-X-MEDIA-SEQUENCE:6\n" + Self.segments(6, 2) + "#EXT-X-CUE-IN\n", "3.m3u8")
        let (status, text) = try runToEnd(CLICommandTests.cli, ["cues", opened, extended, closed])
        #expect(status == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("  cue-out@30  midroll at 0:30, 30.000 s (open: its end is not known yet) [cue-out]"), "\(text)")
        #expect(lines.contains("~ cue-out@30  midroll at 0:30, 50.000 s (open: its end is not known yet) [cue-out]"), "\(text)")
        #expect(lines.contains("~ cue-out@30  midroll at 0:30, 50.000 s [cue-out]"), "\(text)")
        #expect(lines.contains("\(closed) (hls, live): 1 break, 1 added or changed, 0 removed"), "\(text)")
    }

    /// The same refreshes with --json: one object a line, the breaks as the protocol's AdBreak in proto3
    /// JSON (open while the CUE-IN has not come), each refresh's additions and changes as an
    /// UpdateBreaksRequest; read back by python3's json.
    @Test func liveRefreshesAsJSON() throws {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        let opened = try Self.write(
            head + "#EXT-X-MEDIA-SEQUENCE:0\n" + Self.segments(0, 3) + "#EXT-X-CUE-OUT:DURATION=30\n" + Self.segments(3, 1),
            "j1.m3u8")
        let extended = try Self.write(
            head + "#EXT-X-MEDIA-SEQUENCE:4\n#EXT-X-CUE-OUT-CONT:ElapsedTime=10,Duration=30\n" + Self.segments(4, 4),
            "j2.m3u8")
        let closed = try Self.write(
            head + "#EXT-X-MEDIA-SEQUENCE:6\n" + Self.segments(6, 2) + "#EXT-X-CUE-IN\n#EXT-X-BOGUS:1\n", "j3.m3u8")
        let (status, text) = try runToEnd(CLICommandTests.cli, ["cues", "--json", opened, extended, closed])
        #expect(status == 0, "\(text)")
        try Self.expectJSON(
            text,
            """
            assert len(lines) == 3, lines
            a, b, c = lines
            assert a["format"] == "hls" and a["live"] is True and "update" not in a, a
            assert a["breaks"] == [{"id": "cue-out@30", "start": 30.0, "duration": 30.0, "open": True}], a
            assert b["update"] == {"breaks": [{"id": "cue-out@30", "start": 30.0, "duration": 50.0, "open": True}]}, b
            assert c["update"] == {"breaks": [{"id": "cue-out@30", "start": 30.0, "duration": 50.0}]}, c
            assert c["removed"] == [] and a["rejected"] == [], c
            # What the session calls send: the open break at once, then closed.
            assert a["session"] == a["breaks"] and "adRules" not in a, a
            assert c["session"] == [{"id": "cue-out@30", "start": 30.0, "duration": 50.0}], c
            """)
    }

    /// Checks `output` (JSON lines) with a python3 `script` that reads them as `lines` and asserts.
    static func expectJSON(_ output: String, _ script: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = try write(output, "out-\(script.hashValue).jsonl")
        let program =
            "import json, sys\nlines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]\n" + script
            + "\nprint('ok')\n"
        let (status, text) = try runToEnd("/usr/bin/python3", ["-c", program, file])
        #expect(status == 0 && text.contains("ok"), "\(text)\n\(output)", sourceLocation: sourceLocation)
    }

    /// --json marks an unfilled VMAP break, and keeps what a manifest refused with its line.
    @Test func vmapAsJSON() throws {
        let vmap = try Self.write(
            """
            <vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0">
            <vmap:AdBreak timeOffset="50%" breakType="linear" breakId="half"><vmap:AdSource>\
            <vmap:AdTagURI>https://ads.example/x</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>
            <vmap:AdBreak timeOffset="00:01:00" breakType="linear" breakId="empty"/>
            </vmap:VMAP>
            """, "j.vmap")
        let (status, text) = try runToEnd(CLICommandTests.cli, ["cues", "--json", vmap])
        #expect(status == 0, "\(text)")
        try Self.expectJSON(
            text,
            """
            (a,) = lines
            assert a["format"] == "vmap" and a["live"] is False, a
            assert a["breaks"] == [{"id": "empty", "start": 60.0, "unfilled": True}], a
            # An ad-rules session: the unfilled break plays nothing, so no mid-roll; no stream breaks.
            assert a["adRules"] == {} and "session" not in a, a
            (r,) = a["rejected"]
            assert r["line"] == 2 and "timeOffset 50% needs the content duration" in r["reason"], r
            """)
    }

    /// VMAP: percentages need the content duration; an empty break is marked unfilled.
    @Test func vmapAndRefusals() throws {
        let vmap = try Self.write(
            """
            <vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0">
            <vmap:AdBreak timeOffset="50%" breakType="linear" breakId="half"><vmap:AdSource>\
            <vmap:AdTagURI>https://ads.example/x</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>
            <vmap:AdBreak timeOffset="00:01:00" breakType="linear" breakId="empty"/>
            </vmap:VMAP>
            """, "a.vmap")
        var (status, text) = try runToEnd(CLICommandTests.cli, ["cues", "--content-duration", "600", vmap])
        #expect(status == 0 && text.contains("  half  midroll at 5:00, duration unknown [vmap]"), "\(text)")
        #expect(text.contains("  empty  midroll at 1:00, duration unknown (unfilled: plays nothing, snaps nobody back)"))
        (status, text) = try runToEnd(CLICommandTests.cli, ["cues", vmap])
        #expect(status == 0 && text.contains("! line 2: AdBreak half: timeOffset 50% needs the content duration"), "\(text)")
        let doctype = try Self.write("<!DOCTYPE MPD [<!ENTITY a \"b\">]><MPD>&a;</MPD>", "x.mpd")
        (status, text) = try runToEnd(CLICommandTests.cli, ["cues", doctype])
        #expect(status == 1 && text.contains("snapback cues: \(doctype): a DOCTYPE (MPD, line 1): refused"), "\(text)")
        (status, text) = try runToEnd(CLICommandTests.cli, ["cues", "--format", "m3u", vmap])
        #expect(status == 2, "\(text)")
    }
}
