// SPDX-License-Identifier: Apache-2.0
import CSnapbackCues
import CSnapbackFetch
import Glibc
import SnapbackCLI
import SnapbackCommandLine
import SnapbackCues

/// `snapback cues [--format hls|dash|vmap] [--content-duration S] [--json] FILE|URL…`: the breaks a manifest
/// announces, read by libsnapback's break sources (the readers every player links), with what they
/// refused and why.
struct CuesCommand {
    static let command = Command(
        name: "cues",
        abstract: "The ad breaks an HLS playlist, a DASH MPD or a VMAP document announces.",
        discussion: """
            Reads each manifest (a file, - for standard input, or an http(s) URL, fetched through libcurl) \
            with libsnapback's break sources, as the players do, and prints each break (id, pre-, mid- or \
            post-roll, start, duration, whether it is open or unfilled, what it replaces, its restrictions), \
            each item refused and each break removed, with the reason. Several manifests are successive \
            refreshes of one live manifest: each prints what it added, changed or removed. Needs no daemon.

            With --json, one JSON object a line per manifest: "manifest", "format", "live", "breaks" (every \
            break known, each a snapback.v1.AdBreak in the protocol's proto3 JSON), "session" for HLS and \
            DASH (the breaks a player's session calls send) or "adRules" for VMAP, on a refresh "update" \
            (a snapback.v1.UpdateBreaksRequest of the breaks it added or changed), "removed" and \
            "rejected" (id, line, reason).

            Exits 1, saying why, when a whole manifest is refused (not UTF-8, too large, malformed XML, a \
            DOCTYPE, not a format snapback reads).
            """,
        parameters: [
            .option(
                "format", value: "format",
                help: "The manifests' format (hls, dash or vmap); detected from the content when not given.",
                completion: .values(["hls", "dash", "vmap"])),
            .option(
                "content-duration", value: "seconds",
                help: "Seconds of content, for VMAP's n% and end offsets and repeatAfter."),
            .flag("json", help: "One JSON object a line per manifest: the breaks as the protocol's AdBreak messages."),
            .positional(
                "manifest", help: "Manifests: files, - or http(s) URLs; several are refreshes of one.", repeating: true,
                completion: .file)
        ],
        run: { try CuesCommand($0).run() })

    let format: String?
    let contentDuration: Double?
    let json: Bool
    let manifests: [String]

    init(_ arguments: ParsedArguments) throws {
        format = arguments.string("format")
        contentDuration = try arguments.value("content-duration")
        json = arguments.flag("json")
        manifests = arguments.strings("manifest")
        if let format, ["hls", "dash", "vmap"].firstIndex(of: format) == nil {
            throw UsageError("--format: '\(format)' is not hls, dash or vmap")
        }
        if let contentDuration, !(contentDuration > 0 && contentDuration <= 1e10) {
            throw UsageError("--content-duration: seconds from 0 to 1e10 expected")
        }
        if manifests.isEmpty { throw UsageError("a manifest is needed") }
    }

    func run() throws {
        guard
            let reader = CueReader(
                format: format.flatMap(CueReader.Format.init(rawValue:)), contentDuration: contentDuration ?? 0)
        else { throw CommandError("out of memory") }
        for (index, name) in manifests.enumerated() {
            if let refused = reader.update(try read(name)) { throw CommandError("\(name): \(refused)") }
            if json {
                say(reader.json(name: name))
                continue
            }
            if index > 0 { say() }
            for line in describe(reader, name: name, refresh: index > 0) { say(line) }
        }
    }

    /// The manifest's bytes: standard input, or a file or URL through the fetch the mpv plugin uses.
    private func read(_ name: String) throws -> [UInt8] {
        if name == "-" {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
                if n < 0 { throw CommandError("-: \(String(cString: strerror(errno)))") }
                if n == 0 { break }
                bytes += chunk[0..<n]
                if bytes.count > Int(SNAPBACK_FETCH_MAX) { throw CommandError("-: larger than 8 MiB") }
            }
            return bytes
        }
        var length = 0
        var error = [CChar](repeating: 0, count: 256)
        guard let data = snapback_fetch(name, &length, &error, error.count) else {
            throw CommandError(
                "\(name): \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        defer { free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }
}

/// What the reader holds after a manifest: a header, each break (marked + added, ~ changed on a
/// refresh), then what was refused and removed.
func describe(_ reader: CueReader, name: String, refresh: Bool) -> [String] {
    let view = reader.view
    let (n, kinds, removed, nRejected) = (view.breaks.count, view.kinds, view.removed, view.rejected.count)
    var lines = [
        "\(name) (\(reader.formatName)\(reader.isLive ? ", live" : "")): \(n) break\(n == 1 ? "" : "s")"
            + (refresh ? ", \(kinds.count) added or changed, \(removed.count) removed" : "")
            + (nRejected > 0 ? ", \(nRejected) item\(nRejected == 1 ? "" : "s") refused" : "")
    ]
    for b in view.breaks {
        let id = String(cString: b.id)
        let mark = !refresh ? " " : kinds[id] == SNAPBACK_CUE_ADDED ? "+" : kinds[id] == SNAPBACK_CUE_CHANGED ? "~" : " "
        let position =
            b.position == SNAPBACK_POSITION_PREROLL
            ? "preroll" : b.position == SNAPBACK_POSITION_POSTROLL ? "postroll" : "midroll"
        var line = "\(mark) \(id)  \(position) at \(clock(b.start))"
        line += b.duration > 0 ? ", \(fixed(b.duration, 3)) s" : ", duration unknown"
        if b.open { line += " (open: its end is not known yet)" }
        if b.unfilled { line += " (unfilled: plays nothing, snaps nobody back)" }
        if b.n_ad_durations > 0 {
            line += ", ads " + (0..<b.n_ad_durations).map { fixed(b.ad_durations[$0], 3) }.joined(separator: "+")
        }
        if b.has_content_resume_offset { line += ", replaces \(fixed(b.content_resume_offset, 3)) s of content" }
        var restricted: [String] = []
        if b.restrictions & UInt32(SNAPBACK_CUE_RESTRICT_SKIP) != 0 { restricted.append("skip") }
        if b.restrictions & UInt32(SNAPBACK_CUE_RESTRICT_JUMP) != 0 { restricted.append("jump") }
        if !restricted.isEmpty { line += ", restricts " + restricted.joined(separator: ",") }
        if b.once { line += ", once" }
        if b.has_playout_limit { line += ", playout limit \(fixed(b.playout_limit, 3)) s" }
        line += " [\(String(cString: b.source))]"
        lines.append(line)
    }
    for (id, reason) in removed { lines.append("- \(id)  removed: \(reason)") }
    for r in view.rejected {
        lines.append("! " + (r.line > 0 ? "line \(r.line): " : "") + String(cString: r.reason))
    }
    return lines
}
