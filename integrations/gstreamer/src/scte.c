/* SPDX-License-Identifier: Apache-2.0 */
/* SCTE-35 cues into ad breaks. */
#include "scte.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <snapback/cues.h>

#define MPEG_HZ 90000.0

/* A splice time in running time (tsdemux's map) as stream time in `segment`, or FALSE. */
static gboolean stream_time_of(const GstStructure *map, const char *field, const GstSegment *segment, double *out) {
    guint64 rt;
    if (!map || !gst_structure_get_uint64(map, field, &rt) || rt == GST_CLOCK_TIME_NONE) return FALSE;
    guint64 pos = gst_segment_position_from_running_time(segment, GST_FORMAT_TIME, rt);
    if (pos == GST_CLOCK_TIME_NONE) return FALSE;
    guint64 st = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, pos);
    if (st == GST_CLOCK_TIME_NONE) return FALSE;
    *out = (double)st / GST_SECOND;
    return *out <= SBM_MAX_TIME;
}

size_t sbg_cues_from_section(GstMpegtsSection *section, const GstStructure *event, const GstSegment *segment,
                             sbg_cue *out, size_t max) {
    /* The section's own bytes (tsdemux keeps them; a section made from a GstMpegtsSCTESIT is packetized),
     * through libsnapback's one decoder, CRC included. */
    gsize size = 0;
    const guint8 *data = gst_mpegts_section_packetize(section, &size);
    snapback_scte35 sec;
    if (!data || snapback_scte35_decode(data, size, &sec, NULL, 0) != SNAPBACK_OK) return 0;
    GstStructure *map = NULL;
    if (event) gst_structure_get(event, "running-time-map", GST_TYPE_STRUCTURE, &map, NULL);
    size_t n = 0;
    for (size_t i = 0; i < sec.n_events && n < max; i++) {
        const snapback_scte35_event *e = &sec.events[i];
        sbg_cue c = {.event_id = e->event_id};
        if (e->cancel) {
            c.cancel = TRUE;
        } else {
            c.out = e->out;
            if (e->immediate) {
                c.immediate = TRUE;
            } else {
                /* tsdemux puts a splice_insert's time under its event id, a time_signal's as splice-time. */
                char *field = sec.command_type == SNAPBACK_SCTE35_SPLICE_INSERT
                                  ? g_strdup_printf("event-%u-splice-time", e->event_id)
                                  : g_strdup("splice-time");
                gboolean placed = stream_time_of(map, field, segment, &c.time);
                g_free(field);
                if (!placed) continue;
            }
            if (e->has_duration && e->duration / MPEG_HZ <= SBM_MAX_DURATION) {
                c.has_duration = TRUE;
                c.duration = (double)e->duration / MPEG_HZ;
            }
        }
        out[n++] = c;
    }
    if (map) gst_structure_free(map);
    return n;
}

void sbg_cue_state_clear(sbg_cue_state *s) {
    if (s->entries) g_array_free(s->entries, TRUE);
    s->entries = NULL;
}

static int by_start(const void *a, const void *b) {
    double x = ((const sbg_cue_entry *)a)->start, y = ((const sbg_cue_entry *)b)->start;
    return (x > y) - (x < y);
}

static gboolean same_breaks(const sbm_breaks *a, const sbm_breaks *b) {
    if (a->n != b->n) return FALSE;
    for (size_t i = 0; i < a->n; i++)
        if (fabs(a->items[i].start - b->items[i].start) > 1e-6 || fabs(a->items[i].duration - b->items[i].duration) > 1e-6)
            return FALSE;
    return TRUE;
}

gboolean sbg_cue_apply(sbg_cue_state *s, const sbg_cue *cue, double now, sbm_breaks *breaks) {
    if (!s->entries) s->entries = g_array_new(FALSE, TRUE, sizeof(sbg_cue_entry));
    double t = cue->immediate ? now : cue->time;
    if (!isfinite(t) || t < 0 || t > SBM_MAX_TIME) return FALSE;
    GArray *a = s->entries;
    guint found = a->len;
    for (guint i = 0; i < a->len; i++)
        if (g_array_index(a, sbg_cue_entry, i).event_id == cue->event_id) found = i;
    if (cue->cancel) {
        if (found < a->len) g_array_remove_index(a, found);
    } else if (cue->out) {
        sbg_cue_entry e = {.event_id = cue->event_id, .start = t, .duration = cue->has_duration ? cue->duration : -1};
        if (found < a->len) g_array_index(a, sbg_cue_entry, found) = e;
        else g_array_append_val(a, e);
        if (a->len > SBG_MAX_CUE_BREAKS) g_array_remove_index(a, 0);
    } else {
        /* A return to the network ends its event's break, or else the latest open one. */
        if (found == a->len)
            for (guint i = 0; i < a->len; i++)
                if (g_array_index(a, sbg_cue_entry, i).duration < 0) found = i;
        if (found < a->len) {
            sbg_cue_entry *e = &g_array_index(a, sbg_cue_entry, found);
            if (e->duration < 0 && t > e->start) e->duration = t - e->start;
        }
    }

    /* Closed breaks in order, overlaps dropped, as chapters: "ad" at each start, "content" at its end. */
    GArray *sorted = g_array_sized_new(FALSE, FALSE, sizeof(sbg_cue_entry), a->len);
    for (guint i = 0; i < a->len; i++)
        if (g_array_index(a, sbg_cue_entry, i).duration > 0) g_array_append_val(sorted, g_array_index(a, sbg_cue_entry, i));
    qsort(sorted->data, sorted->len, sizeof(sbg_cue_entry), by_start);
    sbm_chapter *ch = g_new0(sbm_chapter, 2 * (size_t)sorted->len + 1);
    size_t n = 0;
    double end = -1;
    for (guint i = 0; i < sorted->len; i++) {
        const sbg_cue_entry *e = &g_array_index(sorted, sbg_cue_entry, i);
        if (e->start < end) continue;
        ch[n++] = (sbm_chapter){.title = "ad", .time = e->start};
        end = MIN(e->start + e->duration, SBM_MAX_TIME);
        ch[n++] = (sbm_chapter){.title = "content", .time = end};
    }
    sbm_breaks fresh;
    char err[160];
    gboolean changed = FALSE;
    if (sbm_breaks_from_chapters(ch, n, 0, NULL, &fresh, err, sizeof err) == 0) {
        changed = !same_breaks(&fresh, breaks);
        sbm_breaks_free(breaks);
        *breaks = fresh;
    }
    g_free(ch);
    g_array_free(sorted, TRUE);
    return changed;
}
