/* SPDX-License-Identifier: Apache-2.0 */
/* SCTE-35 cues into breaks, without a pipeline: sections as tsdemux forwards them (parsed by the
 * gstreamer-mpegts library or built from bytes, decoded by libsnapback's one SCTE-35 decoder, splice
 * times in tsdemux's running-time map), segmentation descriptors, and
 * how cues add, close, cancel and order breaks. Run under ASan and UBSan by make test-gstreamer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scte.h"

static int failures;
#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                \
            failures++;                                                                             \
        }                                                                                           \
    } while (0)
#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

static guint32 crc32_mpeg2(const guint8 *d, size_t n) {
    guint32 crc = 0xFFFFFFFF;
    for (size_t i = 0; i < n; i++) {
        crc ^= (guint32)d[i] << 24;
        for (int k = 0; k < 8; k++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04C11DB7 : crc << 1;
    }
    return crc;
}

/* A time_signal section (splice time given) with one segmentation descriptor `seg` of `n` bytes. */
static GstMpegtsSection *time_signal_section(const guint8 *seg, size_t n) {
    guint8 *d = g_malloc0(64 + n);
    size_t i = 0;
    d[i++] = 0xFC;
    i += 2; /* section length, below */
    d[i++] = 0;                   /* protocol_version */
    i += 5;                       /* encrypted 0, algorithm 0, pts_adjustment 0 */
    d[i++] = 0;                   /* cw_index */
    d[i++] = 0xFF, d[i++] = 0xF0; /* tier 0xFFF, command length 5 */
    d[i++] = 5;
    d[i++] = 0x06;                                               /* time_signal */
    d[i++] = 0xFE, d[i++] = 0, d[i++] = 0, d[i++] = 0, d[i++] = 0; /* splice_time: specified, pts 0 */
    d[i++] = 0, d[i++] = (guint8)(n + 2);                        /* descriptor loop length */
    d[i++] = 0x02, d[i++] = (guint8)n;
    memcpy(d + i, seg, n);
    i += n;
    size_t len = i + 4 - 3;
    d[1] = 0x30 | (guint8)(len >> 8), d[2] = (guint8)len;
    guint32 crc = crc32_mpeg2(d, i);
    d[i++] = crc >> 24, d[i++] = crc >> 16, d[i++] = crc >> 8, d[i++] = crc;
    return gst_mpegts_section_new(500, d, i);
}

/* Segmentation descriptors, in time_signal sections: which start or end a break. */
static void test_segmentation(void) {
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    GstStructure *ev = gst_structure_new_empty("scte-sit");
    GstStructure *map = gst_structure_new("running-time-map", "splice-time", G_TYPE_UINT64, 10 * GST_SECOND, NULL);
    gst_structure_set(ev, "running-time-map", GST_TYPE_STRUCTURE, map, NULL);
    sbg_cue c[SBG_MAX_CUES_PER_SECTION];
    /* CUEI, event 7, not cancelled, program-wide with a duration of 30 s, no UPID, provider ad start. */
    static const guint8 start[] = {'C', 'U', 'E', 'I', 0, 0, 0, 7, 0x7F, 0xFF, 0x00, 0x00, 0x29,
                                   0x32, 0xE0, 0x00, 0x00, 0x30, 0, 0};
    GstMpegtsSection *s = time_signal_section(start, sizeof start);
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 1);
    CHECK(c[0].event_id == 7 && c[0].out && !c[0].cancel && c[0].has_duration && NEAR(c[0].duration, 30.0));
    gst_mpegts_section_unref(s);
    /* No duration, provider advertisement end. */
    static const guint8 end[] = {'C', 'U', 'E', 'I', 0, 0, 0, 7, 0x7F, 0xBF, 0x00, 0x00, 0x31, 0, 0};
    s = time_signal_section(end, sizeof end);
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 1 && c[0].event_id == 7 && !c[0].out &&
          !c[0].has_duration);
    gst_mpegts_section_unref(s);
    static const guint8 cancel[] = {'C', 'U', 'E', 'I', 0, 0, 0, 9, 0xFF};
    s = time_signal_section(cancel, sizeof cancel);
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 1 && c[0].cancel && c[0].event_id == 9);
    gst_mpegts_section_unref(s);
    guint8 other[sizeof start];
    memcpy(other, start, sizeof other);
    other[17] = 0x10; /* program start: not a break */
    s = time_signal_section(other, sizeof other);
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 0);
    gst_mpegts_section_unref(s);
    other[17] = 0x30;
    other[0] = 'X'; /* not CUEI */
    s = time_signal_section(other, sizeof other);
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 0);
    gst_mpegts_section_unref(s);
    s = time_signal_section(start, 9); /* cut short inside its descriptor */
    CHECK(sbg_cues_from_section(s, ev, &seg, c, G_N_ELEMENTS(c)) == 0);
    gst_mpegts_section_unref(s);
    gst_structure_free(map);
    gst_structure_free(ev);
}

static void test_sections(void) {
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    seg.start = seg.time = GST_SECOND / 8; /* tsdemux: the stream time is the first PTS */

    /* splice_insert as an application makes it (running time), as tsdemux forwards it: with its map. */
    GstMpegtsSCTESIT *sit = gst_mpegts_scte_splice_out_new(1, 8 * GST_SECOND, 4 * GST_SECOND);
    GstMpegtsSection *section = gst_mpegts_section_from_scte_sit(sit, 500);
    GstStructure *ev = gst_structure_new_empty("scte-sit");
    GstStructure *map = gst_structure_new("running-time-map", "event-1-splice-time", G_TYPE_UINT64, 8 * GST_SECOND, NULL);
    gst_structure_set(ev, "running-time-map", GST_TYPE_STRUCTURE, map, NULL);
    sbg_cue cues[SBG_MAX_CUES_PER_SECTION];
    size_t n = sbg_cues_from_section(section, ev, &seg, cues, G_N_ELEMENTS(cues));
    CHECK(n == 1);
    CHECK(n == 1 && cues[0].event_id == 1 && cues[0].out && !cues[0].immediate && NEAR(cues[0].time, 8.125) &&
          cues[0].has_duration);
    /* Without tsdemux's map (splice time not placed): no cue rather than a wrong one. */
    CHECK(sbg_cues_from_section(section, NULL, &seg, cues, G_N_ELEMENTS(cues)) == 0);
    gst_mpegts_section_unref(section);
    gst_structure_free(map);
    gst_structure_free(ev);

    /* time_signal with a segmentation descriptor, from its bytes. */
    static const guint8 seg_start[] = {'C', 'U', 'E', 'I', 0, 0, 0, 2, 0x7F, 0xFF, 0x00, 0x00, 0x04, 0x1E, 0xB0, 0x00, 0x00, 0x30, 0, 0};
    section = time_signal_section(seg_start, sizeof seg_start);
    ev = gst_structure_new_empty("scte-sit");
    map = gst_structure_new("running-time-map", "splice-time", G_TYPE_UINT64, 18 * GST_SECOND, NULL);
    gst_structure_set(ev, "running-time-map", GST_TYPE_STRUCTURE, map, NULL);
    n = sbg_cues_from_section(section, ev, &seg, cues, G_N_ELEMENTS(cues));
    CHECK(n == 1);
    CHECK(n == 1 && cues[0].event_id == 2 && cues[0].out && NEAR(cues[0].time, 18.125) && NEAR(cues[0].duration, 3.0));
    gst_mpegts_section_unref(section);
    gst_structure_free(map);
    gst_structure_free(ev);

    /* splice_null: nothing. */
    section = gst_mpegts_section_from_scte_sit(gst_mpegts_scte_null_new(), 500);
    CHECK(sbg_cues_from_section(section, NULL, &seg, cues, G_N_ELEMENTS(cues)) == 0);
    gst_mpegts_section_unref(section);
}

static void test_apply(void) {
    sbg_cue_state st = {0};
    sbm_breaks b = {0};
    /* A break with its duration. */
    sbg_cue c = {.event_id = 1, .out = TRUE, .has_duration = TRUE, .time = 100, .duration = 30};
    CHECK(sbg_cue_apply(&st, &c, 0, &b));
    CHECK(b.n == 1 && NEAR(b.items[0].start, 100) && NEAR(b.items[0].duration, 30) && !strcmp(b.items[0].id, "ad@100"));
    CHECK(!sbg_cue_apply(&st, &c, 0, &b)); /* repeated: nothing changes */
    /* An open break (no duration) counts once its return arrives; ids are content positions. */
    sbg_cue out = {.event_id = 2, .out = TRUE, .time = 200};
    CHECK(!sbg_cue_apply(&st, &out, 0, &b) && b.n == 1);
    sbg_cue in = {.event_id = 2, .out = FALSE, .time = 215};
    CHECK(sbg_cue_apply(&st, &in, 0, &b));
    CHECK(b.n == 2 && NEAR(b.items[1].start, 200) && NEAR(b.items[1].duration, 15) && !strcmp(b.items[1].id, "ad@170"));
    /* An overlapping break is left out; an immediate one is where the playhead is. */
    sbg_cue overlap = {.event_id = 3, .out = TRUE, .has_duration = TRUE, .time = 110, .duration = 10};
    sbg_cue_apply(&st, &overlap, 0, &b);
    CHECK(b.n == 2);
    sbg_cue now = {.event_id = 4, .out = TRUE, .immediate = TRUE, .has_duration = TRUE, .duration = 5};
    CHECK(sbg_cue_apply(&st, &now, 50, &b));
    CHECK(b.n == 3 && NEAR(b.items[0].start, 50) && !strcmp(b.items[0].id, "ad@50"));
    /* A cancel withdraws its event's break. */
    sbg_cue cancel = {.event_id = 1, .cancel = TRUE};
    CHECK(sbg_cue_apply(&st, &cancel, 0, &b));
    CHECK(b.n == 3 && NEAR(b.items[1].start, 110)); /* the overlap it hid counts now */
    /* Out of range: refused. */
    sbg_cue far = {.event_id = 5, .out = TRUE, .has_duration = TRUE, .time = 2e10, .duration = 1};
    CHECK(!sbg_cue_apply(&st, &far, 0, &b));
    sbg_cue nan_cue = {.event_id = 6, .out = TRUE, .has_duration = TRUE, .time = NAN, .duration = 1};
    CHECK(!sbg_cue_apply(&st, &nan_cue, 0, &b));
    sbm_breaks_free(&b);
    sbg_cue_state_clear(&st);
}

int main(void) {
    gst_init(NULL, NULL);
    gst_mpegts_initialize();
    test_segmentation();
    test_sections();
    test_apply();
    if (failures) {
        fprintf(stderr, "test_scte: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_scte: ok\n");
    return 0;
}
