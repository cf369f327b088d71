/* SPDX-License-Identifier: Apache-2.0 */
/* The break sources per format, without a daemon: the specs' own examples (RFC 8216bis and its
 * Interstitials appendix, SCTE 35's sample sections, SCTE 214, IAB VMAP and Google's VMAP samples),
 * values from the anchors' test suites (facts, not code), live refresh sequences, and hostile inputs
 * (a 10 MB playlist, 100,000 tags, entity expansion, invalid UTF-8, numbers at every bound). The
 * corpora's replays are in test_cues_corpus (libsnapback/tests/fuzz/). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapback/cues.h"

#include "fuzz/crc32_mpeg2.h"

static int failures, checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
            goto out;                                                                \
        }                                                                            \
    } while (0)

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

static snapback_cues *reader(snapback_cues_format f, double content_duration) {
    snapback_cues_options o = {.format = f, .content_duration = content_duration};
    return snapback_cues_new(&o);
}

static int feed(snapback_cues *c, const char *text) { return snapback_cues_update(c, text, strlen(text)); }

static const snapback_cue_break *find(const snapback_cues *c, const char *id) {
    size_t n;
    const snapback_cue_break *b = snapback_cues_breaks(c, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(b[i].id, id) == 0) return &b[i];
    return NULL;
}

static bool rejected(const snapback_cues *c, const char *needle) {
    size_t n;
    const snapback_cue_note *r = snapback_cues_rejected(c, &n);
    for (size_t i = 0; i < n; i++)
        if (strstr(r[i].reason, needle)) return true;
    return false;
}

static int change(const snapback_cues *c, const char *id) {
    size_t n;
    const snapback_cue_change *ch = snapback_cues_changes(c, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ch[i].id, id) == 0) return ch[i].kind;
    return 0;
}

static size_t count(const snapback_cues *c) {
    size_t n;
    snapback_cues_breaks(c, &n);
    return n;
}

/* ---------------------------------------------------------------------------------------------- */
/* SCTE-35                                                                                        */

static size_t unbase64(const char *s, uint8_t *out) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 0;
    unsigned acc = 0, bits = 0;
    for (; *s && *s != '='; s++) {
        acc = acc << 6 | (unsigned)(strchr(t, *s) - t);
        if ((bits += 6) >= 8) out[n++] = (uint8_t)(acc >> (bits -= 8));
    }
    return n;
}

/* SCTE 35 (2019) section 14: the sample messages. */
#define SCTE_TIME_SIGNAL_PO_START "/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=="
#define SCTE_TIME_SIGNAL_PO_END "/DAvAAAAAAAA///wBQb+dGKQoAAZAhdDVUVJSAAAjn+fCAgAAAAALKChijUCAKnMZ1g="
#define SCTE_SPLICE_INSERT "/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo="

static void test_scte35_samples(void) {
    uint8_t b[256];
    snapback_scte35 s;
    char err[128];
    size_t n = unbase64(SCTE_TIME_SIGNAL_PO_START, b);
    CHECK(snapback_scte35_decode(b, n, &s, err, sizeof err) == SNAPBACK_OK);
    CHECK(s.command_type == SNAPBACK_SCTE35_TIME_SIGNAL && s.n_events == 1);
    CHECK(s.events[0].event_id == 0x4800008e && s.events[0].out && s.events[0].segmentation_type == 0x34);
    CHECK(s.events[0].has_pts && s.events[0].pts == 0x072bd0050ull);
    CHECK(s.events[0].has_duration && s.events[0].duration == 0x0001a599b0ull); /* 307 s */
    n = unbase64(SCTE_TIME_SIGNAL_PO_END, b);
    CHECK(snapback_scte35_decode(b, n, &s, err, sizeof err) == SNAPBACK_OK);
    CHECK(s.n_events == 1 && !s.events[0].out && s.events[0].segmentation_type == 0x35);
    n = unbase64(SCTE_SPLICE_INSERT, b);
    CHECK(snapback_scte35_decode(b, n, &s, err, sizeof err) == SNAPBACK_OK);
    CHECK(s.command_type == SNAPBACK_SCTE35_SPLICE_INSERT && s.n_events == 1);
    CHECK(s.events[0].event_id == 0x4800008f && s.events[0].out && s.events[0].auto_return);
    CHECK(s.events[0].pts == 0x07369c02eull && s.events[0].duration == 0x00052ccf5ull);
    CHECK(s.events[0].unique_program_id == 0 && s.events[0].avail_num == 0);
out:;
}

static void test_scte35_refusals(void) {
    uint8_t b[256], c[256];
    snapback_scte35 s;
    char err[128];
    size_t n = unbase64(SCTE_SPLICE_INSERT, b);
    memcpy(c, b, n);
    c[20] ^= 1;
    CHECK(snapback_scte35_decode(c, n, &s, err, sizeof err) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(err, "CRC_32"));
    /* Every truncation is refused with a reason. */
    for (size_t k = 0; k < n; k++) {
        CHECK(snapback_scte35_decode(b, k, &s, err, sizeof err) == SNAPBACK_INVALID_ARGUMENT);
        CHECK(err[0]);
    }
    c[0] = 0xFD;
    CHECK(snapback_scte35_decode(c, n, &s, err, sizeof err) == SNAPBACK_INVALID_ARGUMENT && strstr(err, "table_id"));
    /* The RFC 8216bis example SCTE35-OUT is a section one byte shorter than its section_length. */
    static const uint8_t rfc[] = {0xFC, 0x00, 0x2F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x00, 0x14, 0x05,
                                  0x6F, 0xFF, 0xFF, 0xF0, 0x00, 0xE0, 0x11, 0x62, 0x2D, 0xCA, 0xFF, 0x00, 0x00, 0x52,
                                  0x63, 0x62, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x08, 0x02, 0x98, 0x96, 0xF5,
                                  0x00, 0x00, 0x00, 0x87, 0x00, 0x00, 0x00, 0x00};
    CHECK(snapback_scte35_decode(rfc, sizeof rfc - 1, &s, err, sizeof err) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(snapback_scte35_decode(NULL, 0, &s, NULL, 0) == SNAPBACK_INVALID_ARGUMENT);
out:;
}

/* ---------------------------------------------------------------------------------------------- */
/* HLS                                                                                            */

/* RFC 8216bis 4.4.5.1.1's example date ranges (their sections are the spec's), on a playlist of 10 s
 * segments dated from 11:14:00. */
#define RFC_OUT                                                                                                    \
    "0xFC002F0000000000FF000014056FFFFFF000E011622DCAFF000052636200000000000A0008029896F50000008700000000"
#define RFC_IN "0xFC002A0000000000FF00000F056FFFFFF000401162802E6100000000000A0008029896F50000008700000000"

static char *segments(char *p, int from, int n) {
    for (int i = 0; i < n; i++) p += sprintf(p, "#EXTINF:10.0,\nseg%d.ts\n", from + i);
    return p;
}

static void test_hls_daterange_rfc_example_live(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    /* Refresh 1: the OUT with its PLANNED-DURATION; the break open. */
    char *p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n"
                                   "#EXT-X-PROGRAM-DATE-TIME:2014-03-05T11:14:00Z\n");
    p = segments(p, 0, 6);
    p += sprintf(p, "#EXT-X-DATERANGE:ID=\"splice-6FFFFFF0\",START-DATE=\"2014-03-05T11:15:00Z\","
                    "PLANNED-DURATION=59.993,SCTE35-OUT=" RFC_OUT "\n");
    segments(p, 6, 2);
    CHECK(feed(c, text) == SNAPBACK_OK);
    CHECK(snapback_cues_format_of(c) == SNAPBACK_CUES_HLS && snapback_cues_is_live(c));
    const snapback_cue_break *b = find(c, "splice-6FFFFFF0");
    CHECK(b && NEAR(b->start, 60) && b->open && NEAR(b->duration, 59.993) && strcmp(b->source, "daterange") == 0);
    CHECK(change(c, "splice-6FFFFFF0") == SNAPBACK_CUE_ADDED);
    CHECK(rejected(c, "SCTE35-OUT: SCTE-35: section_length beyond the data")); /* kept, its section noted */
    size_t n;
    const snapback_break *sb = snapback_cues_session_breaks(c, &n);
    CHECK(n == 0); /* open: not given to the session until its end is known */
    /* Refresh 2: the IN tag with the same ID and its DURATION: one range, closed. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:2\n"
                             "#EXT-X-PROGRAM-DATE-TIME:2014-03-05T11:14:20Z\n");
    p = segments(p, 2, 4);
    p += sprintf(p, "#EXT-X-DATERANGE:ID=\"splice-6FFFFFF0\",START-DATE=\"2014-03-05T11:15:00Z\","
                    "PLANNED-DURATION=59.993,SCTE35-OUT=" RFC_OUT "\n");
    p = segments(p, 6, 6);
    p += sprintf(p, "#EXT-X-DATERANGE:ID=\"splice-6FFFFFF0\",START-DATE=\"2014-03-05T11:15:00Z\",DURATION=59.993,"
                    "SCTE35-IN=" RFC_IN "\n");
    segments(p, 12, 1);
    CHECK(feed(c, text) == SNAPBACK_OK);
    b = find(c, "splice-6FFFFFF0");
    CHECK(b && NEAR(b->start, 60) && !b->open && NEAR(b->duration, 59.993));
    CHECK(change(c, "splice-6FFFFFF0") == SNAPBACK_CUE_CHANGED);
    sb = snapback_cues_session_breaks(c, &n);
    CHECK(n == 1 && NEAR(sb[0].start, 60) && NEAR(sb[0].duration, 59.993));
    /* Refresh 3: the window slid past the break: it is kept, not removed. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:13\n"
                             "#EXT-X-PROGRAM-DATE-TIME:2014-03-05T11:16:10Z\n");
    segments(p, 13, 3);
    CHECK(feed(c, text) == SNAPBACK_OK);
    b = find(c, "splice-6FFFFFF0");
    CHECK(b && !b->open && NEAR(b->duration, 59.993));
    CHECK(change(c, "splice-6FFFFFF0") == 0);
out:
    snapback_cues_free(c);
}

static void test_hls_daterange_rules(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_HLS, 0);
    char *p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-PLAYLIST-TYPE:VOD\n"
                                   "#EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:00.000+01:00\n");
    p = segments(p, 0, 30);
    p += sprintf(p,
                 /* two values for one attribute: the range is refused (hls.js) */
                 "#EXT-X-DATERANGE:ID=\"c\",START-DATE=\"2023-12-31T23:01:00Z\",DURATION=10,SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"c\",START-DATE=\"2023-12-31T23:01:00Z\",DURATION=20\n"
                 /* END-DATE */
                 "#EXT-X-DATERANGE:ID=\"e\",START-DATE=\"2023-12-31T23:02:00Z\",END-DATE=\"2023-12-31T23:02:30Z\","
                 "SCTE35-OUT=0xFC\n"
                 /* END-DATE and DURATION disagree */
                 "#EXT-X-DATERANGE:ID=\"d\",START-DATE=\"2023-12-31T23:03:00Z\",END-DATE=\"2023-12-31T23:03:30Z\","
                 "DURATION=10,SCTE35-OUT=0xFC\n"
                 /* END-ON-NEXT: ends where the next of its class starts */
                 "#EXT-X-DATERANGE:ID=\"n1\",CLASS=\"x-ad\",START-DATE=\"2023-12-31T23:04:00Z\",END-ON-NEXT=YES,"
                 "SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"n2\",CLASS=\"x-ad\",START-DATE=\"2023-12-31T23:04:40Z\",DURATION=5,"
                 "SCTE35-OUT=0xFC\n"
                 /* END-ON-NEXT without CLASS */
                 "#EXT-X-DATERANGE:ID=\"n3\",START-DATE=\"2023-12-31T23:04:50Z\",END-ON-NEXT=YES,SCTE35-OUT=0xFC\n"
                 /* not an ad */
                 "#EXT-X-DATERANGE:ID=\"prog\",CLASS=\"com.example.program\",START-DATE=\"2023-12-31T23:00:00Z\"\n"
                 /* no duration at all in an ended playlist */
                 "#EXT-X-DATERANGE:ID=\"nod\",START-DATE=\"2023-12-31T23:01:30Z\",SCTE35-OUT=0xFC\n"
                 /* PLANNED-DURATION in an ended playlist: taken as the duration */
                 "#EXT-X-DATERANGE:ID=\"pl\",START-DATE=\"2023-12-31T23:00:00Z\",PLANNED-DURATION=15,"
                 "SCTE35-OUT=0xFC\n"
                 /* numbers at their bounds */
                 "#EXT-X-DATERANGE:ID=\"big\",START-DATE=\"2023-12-31T23:03:40Z\",DURATION=100000001,SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"long\",START-DATE=\"2023-12-31T23:03:40Z\",END-DATE=\"2200-01-01T00:00:00Z\","
                 "SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"far\",START-DATE=\"9999-12-31T23:59:59Z\",DURATION=1,SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"bad-date\",START-DATE=\"2023-02-29T00:00:00Z\",DURATION=1,SCTE35-OUT=0xFC\n"
                 "#EXT-X-DATERANGE:ID=\"nozone\",START-DATE=\"2023-12-31T23:03:40\",DURATION=1,SCTE35-OUT=0xFC\n"
                 "#EXT-X-ENDLIST\n");
    CHECK(feed(c, text) == SNAPBACK_OK);
    CHECK(!snapback_cues_is_live(c) && snapback_cues_refresh_interval(c) == 0); /* VOD: never read again */
    CHECK(!find(c, "c") && rejected(c, "tags with this ID give DURATION two values"));
    const snapback_cue_break *b = find(c, "e");
    CHECK(b && NEAR(b->start, 120) && NEAR(b->duration, 30));
    CHECK(!find(c, "d") && rejected(c, "END-DATE and DURATION disagree"));
    b = find(c, "n1");
    CHECK(b && NEAR(b->start, 240) && NEAR(b->duration, 40) && !b->open);
    CHECK(!find(c, "n3") && rejected(c, "END-ON-NEXT without a CLASS"));
    CHECK(!find(c, "prog") && rejected(c, "prog: not an ad break"));
    CHECK(!find(c, "nod") && rejected(c, "no DURATION, END-DATE or PLANNED-DURATION in an ended playlist"));
    b = find(c, "pl");
    CHECK(b && NEAR(b->start, 0) && NEAR(b->duration, 15) && b->position == SNAPBACK_POSITION_PREROLL && !b->open);
    CHECK(!find(c, "big") && rejected(c, "big: DURATION is not a number of seconds from 0 to 1e8"));
    CHECK(!find(c, "far") && rejected(c, "far: beyond the stream time range"));
    CHECK(!find(c, "long") && rejected(c, "long: lasts longer than 1e8 s")); /* found by fuzz_hls */
    CHECK(!find(c, "bad-date") && !find(c, "nozone"));
    CHECK(rejected(c, "nozone: START-DATE is not a date with a time zone"));
    /* The same text without a PROGRAM-DATE-TIME: nothing can be placed. */
    snapback_cues_free(c);
    c = reader(SNAPBACK_CUES_HLS, 0);
    CHECK(feed(c, "#EXTM3U\n#EXTINF:10,\na.ts\n#EXT-X-DATERANGE:ID=\"x\",START-DATE=\"2024-01-01T00:00:00Z\","
                  "DURATION=5,SCTE35-OUT=0xFC\n#EXT-X-ENDLIST\n") == SNAPBACK_OK);
    CHECK(count(c) == 0 && rejected(c, "START-DATE cannot be placed: no EXT-X-PROGRAM-DATE-TIME"));
out:
    snapback_cues_free(c);
}

static void test_hls_interstitials(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_HLS, 0);
    char *p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-PLAYLIST-TYPE:VOD\n"
                                   "#EXT-X-PROGRAM-DATE-TIME:2020-01-02T21:55:40.000Z\n");
    for (int i = 0; i < 40; i++) p += sprintf(p, "#EXTINF:6,\nmain%d.ts\n", i);
    p += sprintf(p,
                 /* Appendix D's example: a 15 s ad at 21:55:44, inserted (X-RESUME-OFFSET=0) */
                 "#EXT-X-DATERANGE:ID=\"ad1\",CLASS=\"com.apple.hls.interstitial\","
                 "START-DATE=\"2020-01-02T21:55:44.000Z\",DURATION=15.0,X-ASSET-URI=\"http://example.com/ad1.m3u8\","
                 "X-RESUME-OFFSET=0,X-RESTRICT=\"SKIP,JUMP\",CUE=\"ONCE\",X-SNAP=\"OUT,IN\",X-PLAYOUT-LIMIT=10\n"
                 "#EXT-X-DATERANGE:ID=\"pre\",CLASS=\"com.apple.hls.interstitial\",CUE=\"PRE\","
                 "START-DATE=\"2020-01-02T21:55:40.000Z\",X-ASSET-LIST=\"pre.json\",PLANNED-DURATION=20\n"
                 "#EXT-X-DATERANGE:ID=\"post\",CLASS=\"com.apple.hls.interstitial\",CUE=\"POST,ONCE,LATER\","
                 "START-DATE=\"2020-01-02T21:55:40.000Z\",X-ASSET-URI=\"post.m3u8\",DURATION=30\n"
                 "#EXT-X-DATERANGE:ID=\"both\",CLASS=\"com.apple.hls.interstitial\",CUE=\"PRE,POST\","
                 "START-DATE=\"2020-01-02T21:55:40.000Z\",X-ASSET-URI=\"x.m3u8\",DURATION=30\n"
                 "#EXT-X-DATERANGE:ID=\"noasset\",CLASS=\"com.apple.hls.interstitial\","
                 "START-DATE=\"2020-01-02T21:56:40.000Z\",DURATION=30\n"
                 "#EXT-X-DATERANGE:ID=\"replace\",CLASS=\"com.apple.hls.interstitial\","
                 "START-DATE=\"2020-01-02T21:57:40.000Z\",DURATION=30,X-ASSET-URI=\"r.m3u8\",X-RESTRICT=\"FLY\"\n"
                 "#EXT-X-ENDLIST\n");
    CHECK(feed(c, text) == SNAPBACK_OK);
    const snapback_cue_break *b = find(c, "ad1");
    CHECK(b && NEAR(b->start, 4) && NEAR(b->duration, 10) && b->has_playout_limit && NEAR(b->playout_limit, 10));
    CHECK(b->has_content_resume_offset && b->content_resume_offset == 0);
    CHECK(b->restrictions == (SNAPBACK_CUE_RESTRICT_SKIP | SNAPBACK_CUE_RESTRICT_JUMP));
    CHECK(b->snap == (SNAPBACK_CUE_SNAP_OUT | SNAPBACK_CUE_SNAP_IN) && b->once && strcmp(b->source, "interstitial") == 0);
    b = find(c, "pre");
    CHECK(b && b->position == SNAPBACK_POSITION_PREROLL && b->start == 0 && NEAR(b->duration, 20));
    CHECK(b->has_content_resume_offset && NEAR(b->content_resume_offset, 20)); /* absent: its duration */
    b = find(c, "post");
    CHECK(b && b->position == SNAPBACK_POSITION_POSTROLL && NEAR(b->start, 240) && b->once);
    CHECK(rejected(c, "CUE value LATER unknown"));
    CHECK(!find(c, "both") && rejected(c, "both: CUE has both PRE and POST"));
    CHECK(!find(c, "noasset") && rejected(c, "needs one of X-ASSET-URI and X-ASSET-LIST"));
    b = find(c, "replace");
    CHECK(b && b->restrictions == 0 && rejected(c, "X-RESTRICT value FLY unknown"));
    /* The order: pre-rolls first, post-rolls last. */
    size_t n;
    const snapback_cue_break *all = snapback_cues_breaks(c, &n);
    CHECK(n == 4 && strcmp(all[0].id, "pre") == 0 && strcmp(all[3].id, "post") == 0);
out:
    snapback_cues_free(c);
}

static void test_hls_cue_out_vod(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    char *p = text + sprintf(text, "\xEF\xBB\xBF#EXTM3U\r\n#EXT-X-TARGETDURATION:10\r\n");
    p = segments(p, 0, 3);
    p += sprintf(p, "#EXT-X-CUE-OUT:DURATION=30\n");
    p = segments(p, 3, 1);
    p += sprintf(p, "#EXT-X-CUE-OUT-CONT:ElapsedTime=10,Duration=30\n");
    p = segments(p, 4, 2);
    p += sprintf(p, "#EXT-X-CUE-IN\n");
    p = segments(p, 6, 2);
    p += sprintf(p, "#EXT-X-CUE-IN\n"); /* without an OUT */
    /* OATCLS: the section's event id names the break, its duration plans it */
    p += sprintf(p, "#EXT-OATCLS-SCTE35:" SCTE_SPLICE_INSERT "\n#EXT-X-CUE-OUT:60.3\n");
    p = segments(p, 8, 6);
    p += sprintf(p, "#EXT-X-CUE-IN\n");
    p = segments(p, 14, 1);
    p += sprintf(p, "#EXT-X-CUE-OUT\n"); /* bare, and never closed */
    p = segments(p, 15, 2);
    sprintf(p, "#EXT-X-ENDLIST\n");
    CHECK(feed(c, text) == SNAPBACK_OK);
    const snapback_cue_break *b = find(c, "cue-out@30");
    CHECK(b && NEAR(b->start, 30) && NEAR(b->duration, 30) && !b->open && strcmp(b->source, "cue-out") == 0);
    CHECK(rejected(c, "EXT-X-CUE-IN without an open EXT-X-CUE-OUT"));
    b = find(c, "scte35-1207959695");
    CHECK(b && NEAR(b->start, 80) && NEAR(b->duration, 60));
    b = find(c, "cue-out@150");
    CHECK(b && NEAR(b->duration, 20) && !b->open && rejected(c, "closed at the playlist's end"));
out:
    snapback_cues_free(c);
}

/* Opened, extended, closed, slid out: the live sequence the end-to-end test drives through the daemon. */
static void test_hls_cue_out_live_refreshes(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_HLS, 0);
    char *p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:100\n");
    p = segments(p, 100, 3);
    p += sprintf(p, "#EXT-X-CUE-OUT\n");
    segments(p, 103, 1);
    CHECK(feed(c, text) == SNAPBACK_OK && snapback_cues_is_live(c));
    const snapback_cue_break *b = find(c, "cue-out@30");
    CHECK(b && b->open && NEAR(b->start, 30) && NEAR(b->duration, 10)); /* as far as the live edge */
    CHECK(change(c, "cue-out@30") == SNAPBACK_CUE_ADDED);
    CHECK(snapback_cues_refresh_interval(c) == 10); /* EXT-X-TARGETDURATION */
    /* Extended: two more segments in the break, the CUE-OUT tag slid out of the window. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:104\n");
    p += sprintf(p, "#EXT-X-CUE-OUT-CONT:ElapsedTime=10\n");
    segments(p, 104, 2);
    CHECK(feed(c, text) == SNAPBACK_OK);
    b = find(c, "cue-out@30");
    CHECK(b && b->open && NEAR(b->duration, 30) && change(c, "cue-out@30") == SNAPBACK_CUE_CHANGED);
    /* The same refresh again: nothing changed. */
    CHECK(feed(c, text) == SNAPBACK_OK && change(c, "cue-out@30") == 0);
    /* Closed by its CUE-IN. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:105\n");
    p = segments(p, 105, 2);
    p += sprintf(p, "#EXT-X-CUE-IN\n");
    segments(p, 107, 1);
    CHECK(feed(c, text) == SNAPBACK_OK);
    b = find(c, "cue-out@30");
    CHECK(b && !b->open && NEAR(b->duration, 40) && change(c, "cue-out@30") == SNAPBACK_CUE_CHANGED);
    /* Slid out of the window: kept. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:110\n");
    segments(p, 110, 2);
    CHECK(feed(c, text) == SNAPBACK_OK && find(c, "cue-out@30") && change(c, "cue-out@30") == 0);
    /* A refresh of another format is refused, and nothing changes. */
    CHECK(feed(c, "<MPD/>") == SNAPBACK_INVALID_ARGUMENT && find(c, "cue-out@30"));
out:
    snapback_cues_free(c);
}

static void test_hls_live_removals(void) {
    static char text[8192];
    snapback_cues *c = reader(SNAPBACK_CUES_HLS, 0);
    char *p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n"
                                   "#EXT-X-PROGRAM-DATE-TIME:2024-05-01T12:00:00Z\n");
    p = segments(p, 0, 6);
    sprintf(p, "#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"2024-05-01T12:00:20Z\",DURATION=10,SCTE35-OUT=0xFC\n"
               "#EXT-X-DATERANGE:ID=\"b\",START-DATE=\"2024-05-01T12:00:40Z\",DURATION=10,SCTE35-OUT=0xFC\n");
    CHECK(feed(c, text) == SNAPBACK_OK && count(c) == 2);
    /* "b" missing although its start is inside the window: withdrawn. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:1\n"
                             "#EXT-X-PROGRAM-DATE-TIME:2024-05-01T12:00:10Z\n");
    p = segments(p, 1, 6);
    sprintf(p, "#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"2024-05-01T12:00:20Z\",DURATION=10,SCTE35-OUT=0xFC\n");
    CHECK(feed(c, text) == SNAPBACK_OK);
    CHECK(find(c, "a") && !find(c, "b") && change(c, "b") == SNAPBACK_CUE_REMOVED);
    /* A delta update removes "a" explicitly. */
    p = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:1\n"
                             "#EXT-X-SKIP:SKIPPED-SEGMENTS=3,RECENTLY-REMOVED-DATERANGES=\"a\tzz\"\n");
    segments(p, 4, 4);
    CHECK(feed(c, text) == SNAPBACK_OK);
    CHECK(!find(c, "a") && change(c, "a") == SNAPBACK_CUE_REMOVED);
out:
    snapback_cues_free(c);
}

static void test_hls_refusals(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    char *big = NULL;
    CHECK(feed(c, "") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(feed(c, "hello") == SNAPBACK_INVALID_ARGUMENT && strstr(snapback_cues_error(c), "not a manifest"));
    snapback_cues_free(c);
    c = reader(SNAPBACK_CUES_HLS, 0);
    CHECK(feed(c, "#EXTM3X\n") == SNAPBACK_INVALID_ARGUMENT && strstr(snapback_cues_error(c), "starts with #EXTM3U"));
    CHECK(feed(c, "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(snapback_cues_error(c), "multivariant"));
    CHECK(feed(c, "#EXTM3U\n#EXTINF:1e300,\na.ts\n") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(feed(c, "#EXTM3U\n#EXTINF:86400,\na.ts\n") == SNAPBACK_OK);
    CHECK(feed(c, "#EXTM3U\n#EXTINF:86400.001,\na.ts\n") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(feed(c, "#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:99999999999999999999999\n") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(feed(c, "#EXTM3U\n#EXT-X-TARGETDURATION:-1\n") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(snapback_cues_update(c, "#EXTM3U\n#EXTINF:1,\xff\n", 20) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(snapback_cues_error(c), "not valid UTF-8 (byte 18)"));
    CHECK(snapback_cues_update(c, "#EXTM3U\n\0", 9) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(snapback_cues_update(c, "#EXTM3U\n\xed\xa0\x80\n", 12) == SNAPBACK_INVALID_ARGUMENT); /* a surrogate */
    CHECK(snapback_cues_update(c, "#EXTM3U\n\xc0\xaf\n", 11) == SNAPBACK_INVALID_ARGUMENT);     /* overlong */
    /* A 10 MB playlist. */
    size_t n = 10u << 20;
    big = malloc(n + 1);
    CHECK(big);
    memcpy(big, "#EXTM3U\n", 8);
    memset(big + 8, '#', n - 8);
    CHECK(snapback_cues_update(c, big, n) == SNAPBACK_INVALID_ARGUMENT && strstr(snapback_cues_error(c), "more than the limit"));
    /* 100,000 tags in under 8 MiB. */
    char *q = big + 8;
    for (int i = 0; i < 100000; i++) q += sprintf(q, "#EXT-X-CUE-IN\n");
    CHECK(snapback_cues_update(c, big, (size_t)(q - big)) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(snapback_cues_error(c), "more than 50000 lines"));
    /* 40,000 date ranges under the limits are read in one bounded pass (each refused: no PDT). */
    q = big + 8;
    for (int i = 0; i < 40000; i++) q += sprintf(q, "#EXT-X-DATERANGE:ID=\"r%d\",START-DATE=\"2024-01-01T00:00:00Z\"\n", i);
    CHECK(snapback_cues_update(c, big, (size_t)(q - big)) == SNAPBACK_OK && count(c) == 0);
    /* Attribute lists: malformed ones noted, never read past. */
    CHECK(feed(c, "#EXTM3U\n#EXT-X-DATERANGE:ID=\"unterminated\n#EXT-X-DATERANGE:ID=a,,B=1\n#EXT-X-DATERANGE:=1\n"
                  "#EXT-X-DATERANGE:ID=\n#EXT-X-DATERANGE:ID=\"x\",\n") == SNAPBACK_OK);
    CHECK(rejected(c, "a malformed attribute list"));
out:
    free(big);
    snapback_cues_free(c);
}

/* ---------------------------------------------------------------------------------------------- */
/* DASH                                                                                           */

#define MPD_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" "

static void test_dash_scte214(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    const char *mpd =
        MPD_HEAD "type=\"static\" mediaPresentationDuration=\"PT20M\">\n"
        " <Period id=\"p0\" start=\"PT0S\" duration=\"PT5M\">\n"
        "  <EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"90000\" presentationTimeOffset=\"900000\">\n"
        "   <Event presentationTime=\"9000000\" duration=\"2700000\" id=\"1\">\n"
        "    <scte35:SpliceInfoSection xmlns:scte35=\"http://www.scte.org/schemas/35/2016\" ptsAdjustment=\"0\">\n"
        "     <scte35:SpliceInsert spliceEventId=\"100\" outOfNetworkIndicator=\"true\" spliceImmediateFlag=\"false\">\n"
        "      <scte35:Program><scte35:SpliceTime ptsTime=\"9000000\"/></scte35:Program>\n"
        "      <scte35:BreakDuration autoReturn=\"true\" duration=\"2700000\"/>\n"
        "     </scte35:SpliceInsert>\n"
        "    </scte35:SpliceInfoSection>\n"
        "   </Event>\n"
        "   <Event presentationTime=\"9000000\" duration=\"2700000\" id=\"1\"/>\n"
        "   <Event presentationTime=\"18000000\" id=\"2\"><scte35:SpliceInfoSection xmlns:scte35=\"x\">"
        "<scte35:TimeSignal><scte35:SpliceTime ptsTime=\"1\"/></scte35:TimeSignal>"
        "<scte35:SegmentationDescriptor segmentationEventId=\"7\" segmentationTypeId=\"52\" "
        "segmentationDuration=\"1800000\"/></scte35:SpliceInfoSection></Event>\n"
        "   <Event presentationTime=\"20000000\" id=\"3\"><SpliceInfoSection>"
        "<SegmentationDescriptor segmentationEventId=\"8\" segmentationTypeId=\"16\"/></SpliceInfoSection></Event>\n"
        "  </EventStream>\n"
        "  <EventStream schemeIdUri=\"urn:example:other\"><Event presentationTime=\"1\" duration=\"5\"/></EventStream>\n"
        " </Period>\n"
        " <Period id=\"p1\">\n"
        "  <EventStream schemeIdUri=\"urn:scte:scte35:2014:xml+bin\" timescale=\"1000\">\n"
        "   <Event presentationTime=\"60000\" id=\"1\"><Signal xmlns=\"http://www.scte.org/schemas/35/2016\">"
        "<Binary>" SCTE_TIME_SIGNAL_PO_START "</Binary></Signal></Event>\n"
        "   <Event presentationTime=\"70000\" id=\"2\"><Signal><Binary>AAAA</Binary></Signal></Event>\n"
        "  </EventStream>\n"
        " </Period>\n"
        "</MPD>\n";
    CHECK(feed(c, mpd) == SNAPBACK_OK);
    CHECK(snapback_cues_format_of(c) == SNAPBACK_CUES_DASH && !snapback_cues_is_live(c));
    const snapback_cue_break *b = find(c, "scte35-100");
    CHECK(b && NEAR(b->start, 90) && NEAR(b->duration, 30) && strcmp(b->source, "scte35") == 0);
    CHECK(rejected(c, "Event 1: a repeated Event id: the first kept"));
    b = find(c, "scte35-7");
    CHECK(b && NEAR(b->start, 190) && NEAR(b->duration, 20)); /* the descriptor's duration, 90 kHz */
    CHECK(rejected(c, "Event 3: no SCTE-35 break in it")); /* type 0x10, program start */
    /* The second Period starts where the first ends (PT5M); the section's own duration, 307 s. */
    b = find(c, "scte35-1207959694");
    CHECK(b && NEAR(b->start, 360) && NEAR(b->duration, 307));
    CHECK(rejected(c, "Event 2: SCTE-35: section too short"));
    CHECK(count(c) == 3);
out:
    snapback_cues_free(c);
}

static void test_dash_live_cancel(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_DASH, 0);
    const char *open_ =
        MPD_HEAD "type=\"dynamic\"><Period id=\"1\" start=\"PT100S\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\">"
        "<Event presentationTime=\"10\" id=\"a\"><SpliceInfoSection><SpliceInsert spliceEventId=\"5\" "
        "outOfNetworkIndicator=\"1\"/></SpliceInfoSection></Event></EventStream></Period></MPD>";
    CHECK(feed(c, open_) == SNAPBACK_OK && snapback_cues_is_live(c));
    CHECK(snapback_cues_refresh_interval(c) == 0); /* no minimumUpdatePeriod */
    const snapback_cue_break *b = find(c, "scte35-5");
    CHECK(b && b->open && NEAR(b->start, 110));
    const char *closed =
        MPD_HEAD "type=\"dynamic\"><Period id=\"1\" start=\"PT100S\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\">"
        "<Event presentationTime=\"10\" id=\"a\"><SpliceInfoSection><SpliceInsert spliceEventId=\"5\" "
        "outOfNetworkIndicator=\"1\"/></SpliceInfoSection></Event>"
        "<Event presentationTime=\"40\" id=\"b\"><SpliceInfoSection><SpliceInsert spliceEventId=\"5\" "
        "outOfNetworkIndicator=\"0\"/></SpliceInfoSection></Event></EventStream></Period></MPD>";
    CHECK(feed(c, closed) == SNAPBACK_OK);
    b = find(c, "scte35-5");
    CHECK(b && !b->open && NEAR(b->duration, 30) && change(c, "scte35-5") == SNAPBACK_CUE_CHANGED);
    /* A refresh without it: a live MPD's events are only removed by a cancel. */
    CHECK(feed(c, MPD_HEAD "type=\"dynamic\" minimumUpdatePeriod=\"PT2.5S\"><Period id=\"2\"/></MPD>") == SNAPBACK_OK &&
          find(c, "scte35-5"));
    CHECK(snapback_cues_refresh_interval(c) == 2.5);
    const char *cancel =
        MPD_HEAD "type=\"dynamic\"><Period id=\"2\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\">"
        "<Event presentationTime=\"0\" id=\"c\"><SpliceInfoSection><SpliceInsert spliceEventId=\"5\" "
        "spliceEventCancelIndicator=\"true\"/></SpliceInfoSection></Event></EventStream></Period></MPD>";
    CHECK(feed(c, cancel) == SNAPBACK_OK && !find(c, "scte35-5") && change(c, "scte35-5") == SNAPBACK_CUE_REMOVED);
out:
    snapback_cues_free(c);
}

/* In-band events: ISO BMFF emsg boxes (ISO/IEC 23009-1 5.10.3.3) of SCTE 214-3's scheme. */
static void put32(uint8_t *b, uint32_t v) { b[0] = v >> 24, b[1] = v >> 16, b[2] = v >> 8, b[3] = (uint8_t)v; }

static size_t emsg(uint8_t *b, int version, const char *scheme, const char *value, uint32_t timescale, uint64_t time,
                   uint32_t duration, uint32_t id, const uint8_t *msg, size_t n) {
    size_t i = 8;
    memcpy(b + 4, "emsg", 4);
    b[i++] = (uint8_t)version, b[i++] = 0, b[i++] = 0, b[i++] = 0;
    if (version == 0) {
        i += (size_t)sprintf((char *)b + i, "%s", scheme) + 1;
        i += (size_t)sprintf((char *)b + i, "%s", value) + 1;
        put32(b + i, timescale), put32(b + i + 4, (uint32_t)time), put32(b + i + 8, duration), put32(b + i + 12, id);
        i += 16;
    } else {
        put32(b + i, timescale), put32(b + i + 4, (uint32_t)(time >> 32)), put32(b + i + 8, (uint32_t)time);
        put32(b + i + 12, duration), put32(b + i + 16, id);
        i += 20;
        i += (size_t)sprintf((char *)b + i, "%s", scheme) + 1;
        i += (size_t)sprintf((char *)b + i, "%s", value) + 1;
    }
    memcpy(b + i, msg, n);
    i += n;
    put32(b, (uint32_t)i);
    return i;
}

/* A splice_insert for the whole program, immediate, without a break_duration (SCTE 35 9.7.3): a cue-out
 * (`out`), a return, or a cancel. */
static size_t splice_insert(uint8_t *b, uint32_t event, bool cancel, bool out) {
    static const uint8_t head[] = {0xFC, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xF0, 0, 0x05};
    size_t i = sizeof head;
    memcpy(b, head, i);
    put32(b + i, event);
    i += 4;
    b[i++] = cancel ? 0xFF : 0x7F;
    if (!cancel) b[i++] = (uint8_t)((out ? 0x80 : 0) | 0x40 | 0x10 | 0x0F), b[i++] = 0, b[i++] = 1, b[i++] = 0, b[i++] = 0;
    b[12] = (uint8_t)(i - sizeof head); /* splice_command_length: the command after its type */
    b[i++] = 0, b[i++] = 0;                 /* descriptor_loop_length */
    b[2] = (uint8_t)(i + 4 - 3);            /* section_length */
    put32(b + i, crc32_mpeg2(b, i));
    return i + 4;
}

#define SCTE214_BIN "urn:scte:scte35:2013:bin"

static void test_dash_emsg(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    static uint8_t box[8192], sec[512];
    size_t n, s;
    /* Version 0: presentation_time_delta from the earliest presentation time of its segment (here at
     * stream time 100); event_duration 0xFFFFFFFF is unknown, so the section's break_duration (60.293 s)
     * is the break's. The media timeline's origin is no part of it. */
    s = unbase64(SCTE_SPLICE_INSERT, sec);
    n = emsg(box, 0, SCTE214_BIN, "", 90000, 180000, 0xFFFFFFFFu, 1, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 100, 5000) == SNAPBACK_OK);
    CHECK(snapback_cues_format_of(c) == SNAPBACK_CUES_DASH);
    const snapback_cue_break *b = find(c, "scte35-1207959695");
    CHECK(b && NEAR(b->start, 102) && NEAR(b->duration, 5426421 / 90000.0) && !b->open);
    CHECK(change(c, "scte35-1207959695") == SNAPBACK_CUE_ADDED && strcmp(b->source, "scte35") == 0);
    /* Version 1: presentation_time on the Representation's media timeline, whose 0 is at stream time -10
     * (the Period at 0, presentationTimeOffset 10 s); the event's own duration (30 s) wins over the
     * section's segmentation_duration (307 s). The segment's start is no part of it. */
    s = unbase64(SCTE_TIME_SIGNAL_PO_START, sec);
    n = emsg(box, 1, SCTE214_BIN, "", 1000, 3600000, 30000, 2, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 7777, -10) == SNAPBACK_OK);
    b = find(c, "scte35-1207959694");
    CHECK(b && NEAR(b->start, 3590) && NEAR(b->duration, 30) && change(c, "scte35-1207959694") == SNAPBACK_CUE_ADDED);
    CHECK(find(c, "scte35-1207959695") && change(c, "scte35-1207959695") == 0); /* kept, unchanged */
    /* The same box in the next segment: one event (scheme, value and id), no change. */
    CHECK(snapback_cues_update_emsg(c, box, n, 7778, -10) == SNAPBACK_OK && rejected(c, "emsg 2: already read"));
    size_t k;
    snapback_cues_changes(c, &k);
    CHECK(k == 0 && count(c) == 2);
    /* Another value is another event: its break is the same one (scte35-<splice_event_id>), unchanged. */
    n = emsg(box, 1, SCTE214_BIN, "1", 1000, 3600000, 30000, 2, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 0, -10) == SNAPBACK_OK && count(c) == 2);
    snapback_cues_changes(c, &k);
    CHECK(k == 0);
    /* The largesize form (size 1, a 64-bit size after the type) reads the same. */
    uint8_t big[600];
    n = emsg(box, 0, SCTE214_BIN, "", 90000, 0, 900000, 3, sec, s);
    memcpy(big, box, 8);
    put32(big, 1), put32(big + 8, 0), put32(big + 12, (uint32_t)n + 8);
    memcpy(big + 16, box + 8, n - 8);
    CHECK(snapback_cues_update_emsg(c, big, n + 8, 600, 0) == SNAPBACK_OK);
    b = find(c, "scte35-1207959694"); /* the same splice event at another time: the first start kept */
    CHECK(b && NEAR(b->start, 3590) && rejected(c, "another start"));
out:
    snapback_cues_free(c);
}

/* A live MPD, then its in-band events: a cue-out without a duration opens a break, the return closes it
 * (SCTE 214-3: the splice_insert's out_of_network_indicator), a cancel removes it; an emsg with an id the
 * MPD's EventStream of the same scheme already has is that Event. */
static void test_dash_emsg_live(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    static uint8_t box[1024], sec[256];
    size_t n, s;
    char mpd[2048], b64[600];
    s = unbase64(SCTE_SPLICE_INSERT, sec);
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < s; i += 3) {
        uint32_t v = (uint32_t)sec[i] << 16 | (i + 1 < s ? (uint32_t)sec[i + 1] << 8 : 0) | (i + 2 < s ? sec[i + 2] : 0);
        b64[o++] = t[v >> 18 & 63], b64[o++] = t[v >> 12 & 63];
        b64[o++] = i + 1 < s ? t[v >> 6 & 63] : '=', b64[o++] = i + 2 < s ? t[v & 63] : '=';
    }
    b64[o] = 0;
    snprintf(mpd, sizeof mpd, MPD_HEAD "type=\"dynamic\"><Period id=\"1\"><EventStream schemeIdUri=\"" SCTE214_BIN "\" "
             "timescale=\"1\"><Event presentationTime=\"500\" id=\"005\">%s</Event></EventStream></Period></MPD>", b64);
    CHECK(feed(c, mpd) == SNAPBACK_OK && snapback_cues_is_live(c) && find(c, "scte35-1207959695"));
    /* The MPD's Event 5 again, in-band: already read, whatever its timing says. */
    n = emsg(box, 0, SCTE214_BIN, "", 1, 7, 0xFFFFFFFFu, 5, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 0, 0) == SNAPBACK_OK && rejected(c, "emsg 5: already read"));
    CHECK(NEAR(find(c, "scte35-1207959695")->start, 500));
    /* Opened at 40 (segment at 38, delta 2 s), no duration anywhere: open. */
    s = splice_insert(sec, 77, false, true);
    n = emsg(box, 0, SCTE214_BIN, "", 1000, 2000, 0xFFFFFFFFu, 10, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 38, 0) == SNAPBACK_OK);
    const snapback_cue_break *b = find(c, "scte35-77");
    CHECK(b && b->open && NEAR(b->start, 40) && change(c, "scte35-77") == SNAPBACK_CUE_ADDED);
    /* Its return at 70: closed, 30 s. */
    s = splice_insert(sec, 77, false, false);
    n = emsg(box, 1, SCTE214_BIN, "", 10, 700, 0, 11, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 0, 0) == SNAPBACK_OK);
    b = find(c, "scte35-77");
    CHECK(b && !b->open && NEAR(b->duration, 30) && change(c, "scte35-77") == SNAPBACK_CUE_CHANGED);
    /* Cancelled. */
    s = splice_insert(sec, 77, true, false);
    n = emsg(box, 1, SCTE214_BIN, "", 10, 710, 0, 12, sec, s);
    CHECK(snapback_cues_update_emsg(c, box, n, 0, 0) == SNAPBACK_OK);
    CHECK(!find(c, "scte35-77") && change(c, "scte35-77") == SNAPBACK_CUE_REMOVED && find(c, "scte35-1207959695"));
    /* The MPD refreshed without the Event: a live MPD's events stay. */
    CHECK(feed(c, MPD_HEAD "type=\"dynamic\"><Period id=\"1\"/></MPD>") == SNAPBACK_OK && find(c, "scte35-1207959695"));
out:
    snapback_cues_free(c);
}

/* Hostile boxes: each refused whole, with its reason, the breaks kept and no change. */
static void test_dash_emsg_refusals(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0), *h = reader(SNAPBACK_CUES_AUTO, 0);
    static uint8_t box[70000], sec[256], good[1024];
    size_t n, s = unbase64(SCTE_SPLICE_INSERT, sec);
    size_t g = emsg(good, 0, SCTE214_BIN, "", 90000, 0, 0xFFFFFFFFu, 1, sec, s);
    CHECK(snapback_cues_update_emsg(c, good, g, 10, 0) == SNAPBACK_OK && count(c) == 1);
#define REFUSED(len, seg, origin, why)                                                                   \
    do {                                                                                                 \
        CHECK(snapback_cues_update_emsg(c, box, len, seg, origin) == SNAPBACK_INVALID_ARGUMENT);        \
        CHECK(strstr(snapback_cues_error(c), why) && count(c) == 1 && change(c, "scte35-1207959695") == 0); \
    } while (0)
    memcpy(box, good, g);
    REFUSED(11, 0, 0, "shorter than a box header");
    REFUSED(g - 1, 0, 0, "the box says"); /* the size field and the bytes given disagree */
    memcpy(box + 4, "moof", 4);
    REFUSED(g, 0, 0, "a 'moof' box");
    memcpy(box, good, g);
    box[8] = 2;
    REFUSED(g, 0, 0, "version 2");
    /* A scheme without its nul inside the box. */
    n = 12 + 10;
    memcpy(box, good, 12);
    memset(box + 12, 'u', 10);
    put32(box, (uint32_t)n);
    REFUSED(n, 0, 0, "scheme_id_uri is not a nul-terminated string");
    /* The value's nul missing: the box ends inside it. */
    n = 12 + sizeof SCTE214_BIN + 3;
    memcpy(box + 12, SCTE214_BIN, sizeof SCTE214_BIN);
    memset(box + 12 + sizeof SCTE214_BIN, 'v', 3);
    put32(box, (uint32_t)n);
    REFUSED(n, 0, 0, "value is not a nul-terminated string");
    /* Version 1 ends inside its timing fields. */
    memcpy(box, good, 12);
    box[8] = 1;
    put32(box, 30);
    REFUSED(30, 0, 0, "version 1 ends inside its timing fields");
    /* A 2,000-byte value. */
    char longv[2001];
    memset(longv, 'x', 2000);
    longv[2000] = 0;
    n = emsg(box, 0, SCTE214_BIN, longv, 1, 0, 0, 1, sec, s);
    REFUSED(n, 0, 0, "more than 1024");
    /* Invalid UTF-8 in the scheme. */
    n = emsg(box, 0, "urn:\xff", "", 1, 0, 0, 1, sec, s);
    REFUSED(n, 0, 0, "not UTF-8");
    n = emsg(box, 0, "urn:mpeg:dash:event:2012", "1", 1, 0, 0, 1, sec, s);
    REFUSED(n, 0, 0, "carries no SCTE-35 section");
    n = emsg(box, 0, SCTE214_BIN, "", 0, 0, 0, 1, sec, s);
    REFUSED(n, 0, 0, "timescale 0");
    /* Times: a 64-bit presentation_time beyond the range, before the stream's start, no origin. */
    n = emsg(box, 1, SCTE214_BIN, "", 1, UINT64_MAX, 0, 1, sec, s);
    REFUSED(n, 0, 0, "outside 0 to 1e10 s");
    n = emsg(box, 1, SCTE214_BIN, "", 1, 5, 0, 1, sec, s);
    REFUSED(n, 0, -10, "outside 0 to 1e10 s");
    n = emsg(box, 0, SCTE214_BIN, "", 1, 5, 0, 1, sec, s);
    REFUSED(n, NAN, 0, "not a stream time");
    REFUSED(n, 1e11, 0, "not a stream time");
    /* A section with a wrong CRC; no section at all. */
    sec[s - 1] ^= 1;
    n = emsg(box, 0, SCTE214_BIN, "", 1, 5, 0, 9, sec, s);
    REFUSED(n, 0, 0, "emsg 9: ");
    n = emsg(box, 0, SCTE214_BIN, "", 1, 5, 0, 9, sec, 0);
    REFUSED(n, 0, 0, "emsg 9: ");
    /* Over 64 KiB (a section is at most 4 KiB), and no box. */
    static const uint8_t huge[65536];
    n = emsg(box, 0, SCTE214_BIN, "", 1, 5, 0, 1, huge, sizeof huge);
    REFUSED(n, 0, 0, "more than the limit");
    CHECK(snapback_cues_update_emsg(c, NULL, 0, 0, 0) == SNAPBACK_INVALID_ARGUMENT && count(c) == 1);
    /* An HLS reader takes no emsg. */
    CHECK(feed(h, "#EXTM3U\n#EXTINF:1,\na.ts\n") == SNAPBACK_OK);
    CHECK(snapback_cues_update_emsg(h, good, g, 0, 0) == SNAPBACK_INVALID_ARGUMENT &&
          strstr(snapback_cues_error(h), "DASH's") && snapback_cues_format_of(h) == SNAPBACK_CUES_HLS);
    snapback_cues *v = reader(SNAPBACK_CUES_VMAP, 0); /* told VMAP, nothing read yet */
    CHECK(v && snapback_cues_update_emsg(v, good, g, 0, 0) == SNAPBACK_INVALID_ARGUMENT &&
          strstr(snapback_cues_error(v), "reads vmap") && count(v) == 0);
    snapback_cues_free(v);
    /* After every refusal the good box still reads (no state was left half-changed). */
    CHECK(snapback_cues_update_emsg(c, good, g, 10, 0) == SNAPBACK_OK && rejected(c, "already read"));
#undef REFUSED
out:
    snapback_cues_free(c);
    snapback_cues_free(h);
}

/* Found by fuzz_dash: a return more than 1e8 s after its break's start (the daemon's longest break)
 * closed the break with a duration the daemon refuses. The return is refused; the break stays open. */
static void test_dash_far_return(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_DASH, 0);
    const char *far =
        MPD_HEAD "type=\"dynamic\"><Period id=\"1\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\">"
        "<Event presentationTime=\"10\" id=\"a\"><SpliceInfoSection><SpliceInsert spliceEventId=\"7\" "
        "outOfNetworkIndicator=\"1\"/></SpliceInfoSection></Event>"
        "<Event presentationTime=\"200000010\" id=\"b\"><SpliceInfoSection><SpliceInsert spliceEventId=\"7\" "
        "outOfNetworkIndicator=\"0\"/></SpliceInfoSection></Event></EventStream></Period></MPD>";
    CHECK(feed(c, far) == SNAPBACK_OK);
    const snapback_cue_break *b = find(c, "scte35-7");
    CHECK(b && b->open && NEAR(b->start, 10) && b->duration <= 1e8);
    CHECK(rejected(c, "Event b: the end of break scte35-7 more than 1e8 s after its start: ignored"));
out:
    snapback_cues_free(c);
}

static void test_dash_refusals(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 0);
    char *deep = NULL;
    /* Entity expansion ("billion laughs"): refused at its DOCTYPE, before any entity is defined. */
    const char *lol = "<?xml version=\"1.0\"?>\n<!DOCTYPE MPD [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;"
                      "&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n<MPD>&c;</MPD>";
    CHECK(feed(c, lol) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(snapback_cues_error(c), "DOCTYPE"));
    CHECK(feed(c, "<!DOCTYPE MPD SYSTEM \"file:///etc/passwd\"><MPD/>") == SNAPBACK_INVALID_ARGUMENT);
    CHECK(feed(c, "<MPD><Period></MPD>") == SNAPBACK_INVALID_ARGUMENT && strstr(snapback_cues_error(c), "not well-formed"));
    CHECK(feed(c, "<MPD>&undefined;</MPD>") == SNAPBACK_INVALID_ARGUMENT);
    /* Nesting. */
    deep = malloc(64 * 1000 + 64);
    CHECK(deep);
    char *p = deep + sprintf(deep, "<MPD>");
    for (int i = 0; i < 1000; i++) p += sprintf(p, "<a>");
    CHECK(snapback_cues_update(c, deep, (size_t)(p - deep)) == SNAPBACK_INVALID_ARGUMENT);
    CHECK(strstr(snapback_cues_error(c), "nested deeper than 32"));
    /* Numbers at their bounds: the stream's events ignored, with a reason. */
    snapback_cues_free(c);
    c = reader(SNAPBACK_CUES_DASH, 0);
    CHECK(feed(c, MPD_HEAD "><Period><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"0\"/>"
                  "<EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"4294967296\"/>"
                  "<EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" presentationTimeOffset=\"9223372036854775808\"/>"
                  "<EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"1\">"
                  "<Event presentationTime=\"10000000001\" duration=\"1\"><SpliceInfoSection><SpliceInsert "
                  "spliceEventId=\"1\" outOfNetworkIndicator=\"true\"/></SpliceInfoSection></Event>"
                  "<Event presentationTime=\"1\" duration=\"1\"><SpliceInfoSection><SpliceInsert "
                  "spliceEventId=\"4294967296\" outOfNetworkIndicator=\"true\"/></SpliceInfoSection></Event>"
                  "</EventStream></Period></MPD>") == SNAPBACK_OK);
    CHECK(count(c) == 0);
    CHECK(rejected(c, "timescale is not a number from 1 to 2^32-1") && rejected(c, "presentationTimeOffset out of range"));
    CHECK(rejected(c, "beyond the stream time range") && rejected(c, "SpliceInsert without a valid event id"));
    CHECK(feed(c, "<VMAP/>") == SNAPBACK_INVALID_ARGUMENT || strstr(snapback_cues_error(c), "root"));
out:
    free(deep);
    snapback_cues_free(c);
}

/* ---------------------------------------------------------------------------------------------- */
/* VMAP                                                                                           */

/* Google's IMA VMAP sample "pre-, mid- and post-rolls, single ads" (namespace vmap-1.0 as Google
 * writes it), with an AdBreak the ad server left empty. */
static const char ima_sample[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<vmap:VMAP xmlns:vmap=\"http://www.iab.net/vmap-1.0\" version=\"1.0\">\n"
    " <vmap:AdBreak timeOffset=\"start\" breakType=\"linear\" breakId=\"preroll\">\n"
    "  <vmap:AdSource id=\"preroll-ad-1\" allowMultipleAds=\"false\" followRedirects=\"true\">\n"
    "   <vmap:AdTagURI templateType=\"vast3\"><![CDATA[https://pubads.g.doubleclick.net/gampad/ads?pre]]></vmap:AdTagURI>\n"
    "  </vmap:AdSource>\n"
    " </vmap:AdBreak>\n"
    " <vmap:AdBreak timeOffset=\"00:00:15.000\" breakType=\"linear\" breakId=\"midroll-1\">\n"
    "  <vmap:AdSource id=\"midroll-1-ad-1\" allowMultipleAds=\"false\" followRedirects=\"true\">\n"
    "   <vmap:AdTagURI templateType=\"vast3\"><![CDATA[https://pubads.g.doubleclick.net/gampad/ads?mid]]></vmap:AdTagURI>\n"
    "  </vmap:AdSource>\n"
    " </vmap:AdBreak>\n"
    " <vmap:AdBreak timeOffset=\"00:00:30.000\" breakType=\"linear\" breakId=\"empty\">\n"
    "  <vmap:AdSource id=\"e\"><vmap:VASTAdData><VAST version=\"3.0\"/></vmap:VASTAdData></vmap:AdSource>\n"
    " </vmap:AdBreak>\n"
    " <vmap:AdBreak timeOffset=\"end\" breakType=\"linear\" breakId=\"postroll\">\n"
    "  <vmap:AdSource id=\"postroll-ad-1\" allowMultipleAds=\"false\" followRedirects=\"true\">\n"
    "   <vmap:AdTagURI templateType=\"vast3\"><![CDATA[https://pubads.g.doubleclick.net/gampad/ads?post]]></vmap:AdTagURI>\n"
    "  </vmap:AdSource>\n"
    " </vmap:AdBreak>\n"
    "</vmap:VMAP>\n";

static void test_vmap_ima_sample(void) {
    snapback_cues *c = reader(SNAPBACK_CUES_AUTO, 120);
    snapback_ad_rules r;
    CHECK(feed(c, ima_sample) == SNAPBACK_OK && snapback_cues_format_of(c) == SNAPBACK_CUES_VMAP);
    CHECK(count(c) == 4);
    const snapback_cue_break *b = find(c, "preroll");
    CHECK(b && b->position == SNAPBACK_POSITION_PREROLL && b->start == 0 && !b->unfilled);
    b = find(c, "midroll-1");
    CHECK(b && b->position == SNAPBACK_POSITION_MIDROLL && NEAR(b->start, 15));
    b = find(c, "empty");
    CHECK(b && b->unfilled);
    b = find(c, "postroll");
    CHECK(b && b->position == SNAPBACK_POSITION_POSTROLL && NEAR(b->start, 120));
    /* The empty break is in no ad rule: it snaps nobody back. */
    CHECK(snapback_cues_ad_rules(c, &r) && r.preroll && r.postroll && r.n_midroll_times == 1);
    CHECK(NEAR(r.midroll_times[0], 15));
    size_t n;
    snapback_cues_session_breaks(c, &n);
    CHECK(n == 0);
out:
    snapback_cues_free(c);
}

static void test_vmap_offsets(void) {
    /* The spec's namespace, written unprefixed; and a prefix never declared at all. */
    static const char doc[] =
        "<VMAP xmlns=\"http://www.iab.net/videosuite/vmap\" version=\"1.0\">"
        "<AdBreak timeOffset=\"50%\" breakType=\"linear\" breakId=\"half\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"#2\" breakType=\"linear\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"abc\" breakType=\"linear\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"00:01:00\" breakType=\"nonlinear\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"00:10:00.000\" breakType=\"linear,display\" repeatAfter=\"00:10:00\">"
        "<AdSource><VASTAdData><VAST><Ad id=\"1\"><InLine><Creatives><Creative><Linear><Duration>00:00:15</Duration>"
        "</Linear></Creative></Creatives></InLine></Ad><Ad id=\"2\"><InLine><Creatives><Creative><Linear>"
        "<Duration>00:00:20.500</Duration></Linear></Creative></Creatives></InLine></Ad></VAST></VASTAdData>"
        "</AdSource></AdBreak>"
        "<AdBreak timeOffset=\"00:10:00.000\" breakType=\"linear\"><AdSource><AdTagURI> </AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"00:20:00.000\" breakType=\"linear\"/>"
        "<AdBreak timeOffset=\"00:60:00\" breakType=\"linear\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "<AdBreak timeOffset=\"start\" repeatAfter=\"00:01:00\"><AdSource><AdTagURI>u</AdTagURI></AdSource></AdBreak>"
        "</VMAP>";
    snapback_cues *c = reader(SNAPBACK_CUES_VMAP, 3600);
    CHECK(feed(c, doc) == SNAPBACK_OK);
    const snapback_cue_break *b = find(c, "half");
    CHECK(b && NEAR(b->start, 1800));
    CHECK(rejected(c, "timeOffset #2 names a break opportunity"));
    CHECK(rejected(c, "timeOffset abc is not start, end"));
    CHECK(rejected(c, "breakType nonlinear is not linear"));
    CHECK(rejected(c, "timeOffset 00:60:00 is not start"));
    CHECK(rejected(c, "repeatAfter on a start break"));
    /* The pod at 10:00 (two AdBreaks at one offset), its inline durations; repeated every 10 minutes. */
    b = find(c, "vmap@600");
    CHECK(b && !b->unfilled && b->n_ad_durations == 2 && NEAR(b->ad_durations[1], 20.5) && NEAR(b->duration, 35.5));
    CHECK(find(c, "vmap@1200") && find(c, "vmap@3000") && !find(c, "vmap@3600"));
    /* 20:00 is both a repeat (filled) and an empty AdBreak: one pod, filled. */
    b = find(c, "vmap@1200");
    CHECK(b && !b->unfilled);
    CHECK(find(c, "vmap@start"));
    snapback_cues_free(c);
    /* Without the content duration: n% refused (IMA ignores it), repeatAfter not expanded. */
    c = reader(SNAPBACK_CUES_VMAP, 0);
    CHECK(feed(c, doc) == SNAPBACK_OK && !find(c, "half") && rejected(c, "needs the content duration"));
    CHECK(find(c, "vmap@600") && !find(c, "vmap@1800") && rejected(c, "repeatAfter needs the content duration"));
    CHECK(find(c, "vmap@1200") && find(c, "vmap@1200")->unfilled); /* the empty AdBreak alone now */
    CHECK(feed(c, "<vmap:VMAP version=\"1.0\"><vmap:AdBreak timeOffset=\"00:00:05\" breakType=\"linear\">"
                  "<vmap:AdSource><vmap:AdTagURI>x</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak></vmap:VMAP>") ==
          SNAPBACK_OK);
    CHECK(find(c, "vmap@5") && !find(c, "vmap@600") && change(c, "vmap@600") == SNAPBACK_CUE_REMOVED);
    CHECK(feed(c, "<VAST/>") == SNAPBACK_INVALID_ARGUMENT);
out:
    snapback_cues_free(c);
}

int main(void) {
    test_scte35_samples();
    test_scte35_refusals();
    test_hls_daterange_rfc_example_live();
    test_hls_daterange_rules();
    test_hls_interstitials();
    test_hls_cue_out_vod();
    test_hls_cue_out_live_refreshes();
    test_hls_live_removals();
    test_hls_refusals();
    test_dash_scte214();
    test_dash_live_cancel();
    test_dash_far_return();
    test_dash_refusals();
    test_dash_emsg();
    test_dash_emsg_live();
    test_dash_emsg_refusals();
    test_vmap_ima_sample();
    test_vmap_offsets();
    if (failures) {
        fprintf(stderr, "test_cues: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_cues: ok (%d checks)\n", checks);
    return 0;
}
