// SPDX-License-Identifier: Apache-2.0
import CSnapbackCues
import SnapbackJSON
import SnapbackTimeline
import SnapbackWire

/// One manifest's reader: libsnapback's break sources (the C every player links), fed the manifest's
/// text, then each refresh of a live one. Owns its `snapback_cues`; not thread-safe, as the C is not.
public final class CueReader {
    public enum Format: String, CaseIterable, Sendable {
        case hls, dash, vmap
    }

    let raw: OpaquePointer

    /// nil when out of memory. `contentDuration` (seconds, 0 = unknown) places VMAP's n% and end offsets.
    public init?(format: Format? = nil, contentDuration: Double = 0) {
        var options = snapback_cues_options()
        switch format {
        case .hls: options.format = SNAPBACK_CUES_HLS
        case .dash: options.format = SNAPBACK_CUES_DASH
        case .vmap: options.format = SNAPBACK_CUES_VMAP
        case nil: options.format = SNAPBACK_CUES_AUTO
        }
        options.content_duration = contentDuration
        guard let raw = snapback_cues_new(&options) else { return nil }
        self.raw = raw
    }

    deinit { snapback_cues_free(raw) }

    /// Reads a manifest (the first, or a refresh): nil, or why the whole text was refused.
    public func read(_ text: [UInt8]) -> String? {
        let rc = text.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snapback_cues_update(raw, $0.baseAddress, $0.count) }
        }
        return rc == SNAPBACK_OK.rawValue ? nil : String(cString: snapback_cues_error(raw))
    }

    /// Reads so many manifests (or refreshes) successfully: the first is not a refresh.
    public private(set) var reads = 0

    /// ``read(_:)``, counting the successful reads (what ``json(name:)`` calls a refresh).
    public func update(_ text: [UInt8]) -> String? {
        let refused = read(text)
        if refused == nil { reads += 1 }
        return refused
    }

    public var formatName: String { String(cString: snapback_cues_format_name(snapback_cues_format_of(raw))) }
    public var isLive: Bool { snapback_cues_is_live(raw) }
    public var isVMAP: Bool { snapback_cues_format_of(raw) == SNAPBACK_CUES_VMAP }

    /// What the reader holds after its last manifest.
    public var view: CuesView { CuesView(raw) }

    /// The breaks libsnapback's session calls send for a stitched stream (HLS, DASH) as `AdBreak`s: open
    /// and unfilled ones marked, none without a length unless open, none overlapping the one before.
    public var sessionBreaks: [AdBreak] {
        var n = 0
        var flags: UnsafePointer<sb_break_flags>?
        guard let list = sb_cues_wire_breaks(raw, &n, &flags) else { return [] }
        return (0..<n).map { i in
            let b = list[i]
            let f = flags?[i] ?? sb_break_flags()
            return AdBreak(
                id: String(cString: b.id), start: b.start, duration: b.duration,
                adDurations: (0..<b.n_ad_durations).map { b.ad_durations[$0] },
                contentResumeOffset: b.has_content_resume_offset ? b.content_resume_offset : nil, open: f.open,
                unfilled: f.unfilled, restrictSkip: f.restrict_skip, restrictJump: f.restrict_jump)
        }
    }

    /// A VMAP's filled breaks as the ad rules of an ad-rules session; nil for HLS and DASH.
    public var adRules: SnapbackV1.AdRules? {
        var rules = snapback_ad_rules()
        guard snapback_cues_ad_rules(raw, &rules) else { return nil }
        return SnapbackV1.AdRules(
            preroll: rules.preroll, midrollTimes: (0..<rules.n_midroll_times).map { rules.midroll_times[$0] },
            postroll: rules.postroll)
    }

    /// What the reader holds after its last manifest as one JSON object (`snapback cues --json`, the web
    /// bridge's `readCues`): "manifest" (`name`), "format", "live", "breaks" (every break known, each a
    /// `snapback.v1.AdBreak` in the generated proto3 JSON), "session" (HLS, DASH: the breaks the session
    /// calls send) or "adRules" (VMAP), on a refresh "update" (an `UpdateBreaksRequest` of the breaks it
    /// added or changed), "removed" and "rejected".
    public func json(name: String) -> String {
        let view = self.view
        let all = view.breaks.map(adBreak)
        var w = ProtoJSONWriter()
        w.beginObject()
        w.key("manifest")
        w.string(name)
        w.key("format")
        w.string(formatName)
        w.key("live")
        w.bool(isLive)
        w.key("breaks")
        w.array(all) { $0.message($1) }
        if let rules = adRules {
            w.key("adRules")
            w.message(rules)
        } else {
            w.key("session")
            w.array(sessionBreaks) { $0.message($1) }
        }
        if reads > 1 {
            var update = SnapbackV1.UpdateBreaksRequest()
            update.breaks = all.filter { view.kinds[$0.id] != nil }
            w.key("update")
            w.message(update)
        }
        w.key("removed")
        w.array(view.removed) { (w, r) in
            w.beginObject()
            w.key("id")
            w.string(r.0)
            w.key("reason")
            w.string(r.1)
            w.endObject()
        }
        w.key("rejected")
        w.array(view.rejected) { (w, r) in
            w.beginObject()
            w.key("id")
            w.string(String(cString: r.id))
            w.key("line")
            w.int(r.line)
            w.key("reason")
            w.string(String(cString: r.reason))
            w.endObject()
        }
        w.endObject()
        return w.text
    }
}

/// What the reader holds after its last manifest: every break, the changes that manifest made (by id;
/// removals apart, with why) and the items it refused.
public struct CuesView {
    public var breaks: [snapback_cue_break] = []
    public var kinds: [String: snapback_cue_change_kind] = [:]
    public var removed: [(id: String, reason: String)] = []
    public var rejected: [snapback_cue_note] = []

    init(_ cues: OpaquePointer) {
        var n = 0
        if let b = snapback_cues_breaks(cues, &n) { breaks = Array(UnsafeBufferPointer(start: b, count: n)) }
        var nChanges = 0
        let changes = snapback_cues_changes(cues, &nChanges)
        for i in 0..<nChanges {
            let c = changes![i]
            let id = String(cString: c.id)
            if c.kind == SNAPBACK_CUE_REMOVED { removed.append((id, String(cString: c.reason))) } else { kinds[id] = c.kind }
        }
        var nRejected = 0
        if let r = snapback_cues_rejected(cues, &nRejected) { rejected = Array(UnsafeBufferPointer(start: r, count: nRejected)) }
    }
}

/// A break the reader holds as the protocol's `AdBreak`: its id, times, ads, the content it replaces,
/// open, unfilled and its restrictions.
public func adBreak(_ b: snapback_cue_break) -> AdBreak {
    AdBreak(
        id: String(cString: b.id), start: b.start, duration: b.duration,
        adDurations: (0..<b.n_ad_durations).map { b.ad_durations[$0] },
        contentResumeOffset: b.has_content_resume_offset ? b.content_resume_offset : nil, open: b.open,
        unfilled: b.unfilled, restrictSkip: b.restrictions & UInt32(SNAPBACK_CUE_RESTRICT_SKIP) != 0,
        restrictJump: b.restrictions & UInt32(SNAPBACK_CUE_RESTRICT_JUMP) != 0)
}
