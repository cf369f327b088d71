/* SPDX-License-Identifier: Apache-2.0 */
/* libsnapback's break sources: the ad breaks a stream's own manifest announces, read once for every
 * player (since 0.3.0).
 *
 *   - HLS media playlists: EXT-X-DATERANGE (SCTE35-OUT/-IN paired by ID, PLANNED-DURATION, DURATION,
 *     END-DATE, END-ON-NEXT), HLS Interstitials (CLASS="com.apple.hls.interstitial": X-RESUME-OFFSET,
 *     X-RESTRICT, X-SNAP, CUE PRE/POST/ONCE, X-PLAYOUT-LIMIT), EXT-X-CUE-OUT/-CUE-OUT-CONT/-CUE-IN and
 *     EXT-OATCLS-SCTE35; date ranges placed through EXT-X-PROGRAM-DATE-TIME.
 *   - DASH MPDs: EventStream with urn:scte:scte35:2013:xml, urn:scte:scte35:2014:xml+bin and
 *     urn:scte:scte35:2013:bin; timescale, presentationTimeOffset, periods, Event@id, cancels; in-band
 *     emsg boxes of urn:scte:scte35:2013:bin (snapback_cues_update_emsg, since 0.4.0).
 *   - IAB VMAP 1.0: AdBreak timeOffset (start, end, hh:mm:ss.mmm, n%; #m refused), breakType,
 *     repeatAfter, either namespace (local names match), empty breaks marked unfilled.
 *   - SCTE-35 splice_info_sections (splice_insert, time_signal with segmentation descriptors; CRC-32
 *     checked): the one decoder every format above and the GStreamer plugin's MPEG-TS cues use.
 *
 * docs/cues-hls.md, docs/cues-dash.md, docs/cues-vmap.md and docs/cues-scte35.md say what is read, what
 * is refused and which anchor snapback follows where players disagree.
 *
 * A snapback_cues object reads one manifest: snapback_cues_update() with its text, again with each
 * refresh of a live one. After each call it holds every break known so far (a break that slid out of
 * a live window is kept: only an explicit removal removes one), the items of that text it refused
 * with their reasons, and the changes that text made. The parsers are bounded (input size, lines,
 * tags, elements, nesting: snapback_cues_options) and refuse hostile input with a reason: an XML
 * DOCTYPE, invalid UTF-8, a number out of its range. No I/O: the player fetches the manifests.
 *
 * Structs below are filled by the library and only read by the player (fields are only appended),
 * except snapback_cues_options, which the player fills (zero-initialise it: 0 means the default). */
#ifndef SNAPBACK_CUES_H
#define SNAPBACK_CUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapback/snapback.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum snapback_cues_format {
    SNAPBACK_CUES_AUTO = 0, /* detected from the text: #EXTM3U, <MPD, <VMAP (after any prefix) */
    SNAPBACK_CUES_HLS = 1,
    SNAPBACK_CUES_DASH = 2,
    SNAPBACK_CUES_VMAP = 3,
} snapback_cues_format;

/* "hls", "dash", "vmap" ("auto" for 0 and any other value). Never NULL. */
SNAPBACK_API const char *snapback_cues_format_name(snapback_cues_format format);

/* Restrictions a manifest puts on a break (HLS X-RESTRICT). */
#define SNAPBACK_CUE_RESTRICT_SKIP 1u /* the viewer may not skip it (fast forward through it) */
#define SNAPBACK_CUE_RESTRICT_JUMP 2u /* the viewer may not seek past it */
/* Where an interstitial may move its start and end to the primary's segment boundaries (HLS X-SNAP). */
#define SNAPBACK_CUE_SNAP_OUT 1u
#define SNAPBACK_CUE_SNAP_IN 2u

typedef struct snapback_cue_break {
    const char *id;                   /* stable across refreshes: the manifest's id, else derived */
    snapback_break_position position; /* PREROLL, MIDROLL or POSTROLL */
    /* Seconds: stream time for HLS and DASH (0 = the first segment of the first playlist read, the
     * first Period's start); content time for VMAP (ad rules). A postroll's start is the content's
     * end when known, else 0. */
    double start;
    /* Seconds. A closed break's length; an open break's estimate (its planned duration, or as far as
     * the live edge if that is longer). 0 when unknown (VMAP without inline VAST durations). */
    double duration;
    /* The end is not known yet: a live CUE-OUT without its CUE-IN, a date range with only a
     * PLANNED-DURATION, a live SCTE-35 event without a duration. Each refresh updates it.
     * snapback_session_open_cues() and _update_cues() send it at once as AdBreak.open, which lets
     * UpdateBreaks extend and close it. */
    bool open;
    /* The break plays nothing (a VMAP AdBreak the ad server left empty): it must not snap anyone back.
     * snapback_cues_session_breaks() and snapback_cues_ad_rules() leave it out; the session calls send a
     * stitched stream's marked (AdBreak.unfilled: the daemon keeps its place, plays nothing). */
    bool unfilled;
    const double *ad_durations; /* per ad, when the manifest says (VMAP inline VAST) */
    size_t n_ad_durations;
    /* Seconds of content it replaces (HLS X-RESUME-OFFSET, or an interstitial's duration). */
    bool has_content_resume_offset;
    double content_resume_offset;
    unsigned restrictions; /* SNAPBACK_CUE_RESTRICT_ bits: sent as AdBreak.restrict_skip, restrict_jump */
    unsigned snap;         /* SNAPBACK_CUE_SNAP_ bits */
    bool once;             /* HLS CUE=ONCE: played once, then skipped (watched) */
    bool has_playout_limit;
    double playout_limit; /* HLS X-PLAYOUT-LIMIT, seconds */
    /* Where it came from: "daterange", "interstitial", "cue-out", "scte35", "vmap". */
    const char *source;
} snapback_cue_break;

/* An item of the last text that was refused, or a break removed, with why. */
typedef struct snapback_cue_note {
    const char *id;     /* the item's id when it has one, else "" */
    unsigned line;      /* 1-based line of the item in the text, 0 when not known */
    const char *reason; /* "DATERANGE splice-1: START-DATE cannot be placed: no EXT-X-PROGRAM-DATE-TIME" */
} snapback_cue_note;

typedef enum snapback_cue_change_kind {
    SNAPBACK_CUE_ADDED = 1,
    SNAPBACK_CUE_CHANGED = 2, /* start, duration, open or another value changed (an open break closed) */
    SNAPBACK_CUE_REMOVED = 3, /* removed explicitly (a cancel, RECENTLY-REMOVED-DATERANGES, withdrawn
                               * from inside the live window) */
} snapback_cue_change_kind;

typedef struct snapback_cue_change {
    snapback_cue_change_kind kind;
    const char *id;
    const char *reason; /* for REMOVED; "" otherwise */
} snapback_cue_change;

/* What the player fills. Zero-initialise: 0 (or false) is the default. */
typedef struct snapback_cues_options {
    snapback_cues_format format; /* AUTO: detected */
    /* Seconds of content, for VMAP's n% and "end" (and repeatAfter's last repeat); 0 = unknown: n%
     * breaks are refused then, as IMA ignores them. */
    double content_duration;
    size_t max_bytes;    /* a text longer is refused; 0 = 8 MiB */
    size_t max_items;    /* lines (HLS) or elements (XML) per text; 0 = 50,000 */
    size_t max_breaks;   /* breaks kept; 0 = 1,000 (the daemon's limit is higher) */
    double max_open;     /* seconds an open break may be estimated to last; 0 = 7,200 */
} snapback_cues_options;

typedef struct snapback_cues snapback_cues;

/* A new reader (options may be NULL); NULL when out of memory. */
SNAPBACK_API snapback_cues *snapback_cues_new(const snapback_cues_options *options);
SNAPBACK_API void snapback_cues_free(snapback_cues *cues);

/* Reads a manifest's text (the first, or a live refresh of the same manifest). SNAPBACK_OK, or
 * SNAPBACK_INVALID_ARGUMENT when the whole text is refused (too large, not UTF-8, not the format, a
 * DOCTYPE, malformed XML, a refresh of another format): the reason is in snapback_cues_error() and
 * the breaks so far are kept, with no change. SNAPBACK_E_NO_MEMORY. */
SNAPBACK_API int snapback_cues_update(snapback_cues *cues, const char *text, size_t len);
/* Reads one in-band DASH event: an ISO BMFF `emsg` box (version 0 or 1, from its size field to its
 * last byte; ISO/IEC 23009-1 5.10.3.3) whose scheme is urn:scte:scte35:2013:bin and whose message_data
 * is a SCTE-35 splice_info_section (SCTE 214-3). The player says where it sits in stream time: for
 * version 0 (presentation_time_delta), `segment_start`, the stream time of the earliest presentation
 * time of the segment that carried it; for version 1 (presentation_time on the media timeline),
 * `media_origin`, the stream time of that timeline's 0 (the Period's start minus the Representation's
 * presentationTimeOffset / timescale). It is merged into the breaks as an MPD's Event would be
 * (docs/cues-dash.md), the same (scheme_id_uri, value, id) read once — an emsg repeated in every
 * segment, or one an MPD EventStream Event already gave (noted in snapback_cues_rejected, no change).
 * Before any MPD the reader reads DASH, a live one's events. SNAPBACK_OK; SNAPBACK_INVALID_ARGUMENT
 * when the box is refused (malformed, over 64 KiB, a string without its nul, another scheme, a bad
 * section, a time out of range, a reader of another format), the reason in snapback_cues_error(), the
 * breaks kept with no change; SNAPBACK_E_NO_MEMORY. Since 0.4.0. */
SNAPBACK_API int snapback_cues_update_emsg(snapback_cues *cues, const uint8_t *box, size_t len, double segment_start,
                                           double media_origin);
/* Why the last snapback_cues_update() (or _update_emsg()) failed; "" after a success. Never NULL. */
SNAPBACK_API const char *snapback_cues_error(const snapback_cues *cues);
/* The format of the texts read so far (AUTO before the first). */
SNAPBACK_API snapback_cues_format snapback_cues_format_of(const snapback_cues *cues);
/* Whether the last text is a live one (HLS without EXT-X-ENDLIST, a dynamic MPD). */
SNAPBACK_API bool snapback_cues_is_live(const snapback_cues *cues);
/* Seconds after which the last text, a live one, says to read it again: an HLS playlist's
 * EXT-X-TARGETDURATION (RFC 8216bis 6.3.4), a dynamic MPD's minimumUpdatePeriod. 0 when the text is
 * not live or says nothing. Since 0.4.0. */
SNAPBACK_API double snapback_cues_refresh_interval(const snapback_cues *cues);

/* Every break known, sorted by (position, start): pre-rolls first, post-rolls last. Valid until the
 * next update or free. */
SNAPBACK_API const snapback_cue_break *snapback_cues_breaks(const snapback_cues *cues, size_t *n);
/* What the last text had that was refused, and why. */
SNAPBACK_API const snapback_cue_note *snapback_cues_rejected(const snapback_cues *cues, size_t *n);
/* The changes the last text made to the breaks (the first text: every break ADDED). */
SNAPBACK_API const snapback_cue_change *snapback_cues_changes(const snapback_cues *cues, size_t *n);

/* The breaks as a stitched session's (HLS, DASH) in snapback_break, which has no field for open,
 * unfilled or restrictions, sorted by start: those with a known end and a length. Left out: unfilled
 * breaks, breaks without a length, a break overlapping the one before it, and open breaks until a
 * refresh closes them (sent without its open flag, an estimate would be final for the daemon).
 * snapback_session_open_cues() and _update_cues() send more: open breaks at once, unfilled ones marked,
 * restrictions. Valid until the next update or free. */
SNAPBACK_API const snapback_break *snapback_cues_session_breaks(const snapback_cues *cues, size_t *n);
/* VMAP: the filled breaks as client-side ad rules (pre-roll, mid-roll times, post-roll). false when
 * the breaks are not VMAP's. The arrays stay valid until the next update or free. */
SNAPBACK_API bool snapback_cues_ad_rules(const snapback_cues *cues, snapback_ad_rules *out);

/* Opens a session with the breaks of `cues`: `params` as for snapback_session_open, its breaks (or,
 * for VMAP, its ad rules) replaced by the manifest's; a live manifest makes it a live session. The
 * breaks go out with what the manifest says of them (AdBreak.open, unfilled, restrict_skip,
 * restrict_jump; PROTOCOL.md "Breaks from a manifest"): every break with a length or still open,
 * unfilled ones marked, none overlapping the one before it. */
SNAPBACK_API int snapback_session_open_cues(snapback_client *client, const snapback_session_params *params,
                                            const snapback_cues *cues, snapback_reply_cb callback, void *user,
                                            snapback_session **out);
/* After a live refresh (snapback_cues_update): UpdateBreaks with the breaks now known, as
 * snapback_session_open_cues sends them: an open break's new estimate, or its end once closed. A closed
 * break the manifest changed afterwards is refused by the daemon (INVALID_ARGUMENT, the whole update). */
SNAPBACK_API int snapback_session_update_cues(snapback_session *session, const snapback_cues *cues,
                                              snapback_reply_cb callback, void *user);

/* ---------------------------------------------------------------------------------------------- */
/* SCTE-35 splice_info_section (ANSI/SCTE 35)                                                     */

#define SNAPBACK_SCTE35_SPLICE_NULL 0x00
#define SNAPBACK_SCTE35_SPLICE_INSERT 0x05
#define SNAPBACK_SCTE35_TIME_SIGNAL 0x06
#define SNAPBACK_SCTE35_MAX_EVENTS 16

/* A splice event: a splice_insert's, or a time_signal's segmentation descriptor's. */
typedef struct snapback_scte35_event {
    uint32_t event_id;        /* splice_event_id, or segmentation_event_id */
    bool cancel;              /* the event is withdrawn */
    bool out;                 /* a break starts (out of network); false: it ends */
    bool immediate;           /* at once (splice_immediate_flag, or a time_signal without a time) */
    bool has_pts;
    uint64_t pts;             /* 90 kHz, pts_adjustment added, modulo 2^33 */
    bool has_duration;
    uint64_t duration;        /* 90 kHz */
    bool auto_return;
    uint8_t segmentation_type; /* time_signal: segmentation_type_id; 0 for splice_insert */
    uint16_t unique_program_id;
    uint8_t avail_num, avails_expected;
} snapback_scte35_event;

typedef struct snapback_scte35 {
    uint8_t command_type; /* SNAPBACK_SCTE35_ */
    uint64_t pts_adjustment;
    uint16_t tier;
    /* The events that start or end a break: a splice_insert's one (if it is for the whole program), a
     * time_signal's segmentation descriptors of break types (0x22/0x23 break, 0x30-0x37 provider and
     * distributor advertisement and placement opportunity, 0x38-0x3B overlay placement opportunity
     * excluded). Other segmentation types are counted in n_other. */
    size_t n_events;
    snapback_scte35_event events[SNAPBACK_SCTE35_MAX_EVENTS];
    size_t n_other;
} snapback_scte35;

/* Decodes a section from its table_id (0xFC) to its CRC_32, which must match. SNAPBACK_OK, or
 * SNAPBACK_INVALID_ARGUMENT with the reason in err (truncated, a wrong CRC, encrypted, an unknown
 * command is not an error: command_type says it and n_events is 0). err may be NULL. */
SNAPBACK_API int snapback_scte35_decode(const uint8_t *data, size_t len, snapback_scte35 *out, char *err,
                                        size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
