/* SPDX-License-Identifier: Apache-2.0 */
/* SCTE-35 cues from MPEG-TS, as tsdemux sends them downstream (send-scte35-events): splice_insert and
 * time_signal (with segmentation descriptors) turned into ad breaks in stream time. The section's bytes
 * go through libsnapback's one SCTE-35 decoder (snapback_scte35_decode, snapback/cues.h), which the
 * manifests' break sources use too; tsdemux adds the splice times in running time ("running-time-map"),
 * which the segment of the pad they travel on turns into stream time. */
#ifndef SNAPBACK_GST_SCTE_H
#define SNAPBACK_GST_SCTE_H

#include <gst/gst.h>
#include <gst/mpegts/mpegts.h>

#include "media.h"

#define SBG_MAX_CUES_PER_SECTION 8
/* A stream announces at most this many breaks that the core keeps (older ones go first). */
#define SBG_MAX_CUE_BREAKS 1000

typedef struct sbg_cue {
    guint32 event_id;
    gboolean cancel;    /* the event is withdrawn */
    gboolean out;       /* out of network: a break starts; FALSE: the break ends (return to network) */
    gboolean immediate; /* at once: where the playhead is when it arrives */
    gboolean has_duration;
    double time;        /* stream time, unless immediate */
    double duration;
} sbg_cue;

typedef struct sbg_cue_entry {
    guint32 event_id;
    double start, duration; /* duration < 0: open, waiting for its return */
} sbg_cue_entry;

typedef struct sbg_cue_state {
    GArray *entries; /* sbg_cue_entry, in arrival order */
} sbg_cue_state;

/* The cues of a splice_info_section (splice_insert, time_signal: segmentation descriptors of break
 * types); 0 for others (splice_null, ...), for sections the decoder refuses (encrypted, truncated, a
 * wrong CRC), and for splice times tsdemux could not place in running time.
 * `event` is the section event's structure, `segment` the pad's current TIME segment. */
size_t sbg_cues_from_section(GstMpegtsSection *section, const GstStructure *event, const GstSegment *segment,
                             sbg_cue *out, size_t max);

/* Applies a cue (`now`: the playhead, for immediate ones) and rebuilds `breaks` from every cue so far:
 * each closed break is an ad break whose id is its content position (media.h: "ad@600"), as chapters'
 * are. TRUE when the breaks changed. */
gboolean sbg_cue_apply(sbg_cue_state *state, const sbg_cue *cue, double now, sbm_breaks *breaks);
void sbg_cue_state_clear(sbg_cue_state *state);

#endif
