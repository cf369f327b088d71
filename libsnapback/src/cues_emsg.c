/* SPDX-License-Identifier: Apache-2.0 */
/* In-band DASH events: one ISO BMFF DASHEventMessageBox (`emsg`, ISO/IEC 23009-1 5.10.3.3) carrying a
 * SCTE-35 splice_info_section (scheme urn:scte:scte35:2013:bin, SCTE 214-3), read field by field with
 * every read checked against the box's end, its section through the one decoder (scte35.c) and its
 * break through the MPD's own rule (sb_scte35_apply). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cues_internal.h"

#define EMSG_MAX_BYTES (64u << 10) /* a section is at most 4,096 bytes; the strings 1 KiB each */
#define EMSG_MAX_STRING 1024
#define SCTE35_BIN "urn:scte:scte35:2013:bin"

static uint32_t be32(const uint8_t *b) { return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; }
static uint64_t be64(const uint8_t *b) { return (uint64_t)be32(b) << 32 | be32(b + 4); }

/* A nul-terminated UTF-8 string at box[*i] inside the box: *i past its nul. NULL when it has none. */
static const char *cstring(struct sb_parse *p, const uint8_t *box, size_t len, size_t *i, const char *name, int *rc) {
    const uint8_t *nul = *i < len ? memchr(box + *i, 0, len - *i) : NULL;
    if (!nul) {
        *rc = sb_fail(p, "emsg: %s is not a nul-terminated string inside the box", name);
        return NULL;
    }
    size_t n = (size_t)(nul - (box + *i));
    if (n > EMSG_MAX_STRING) {
        *rc = sb_fail(p, "emsg: %s is %zu bytes: more than %d", name, n, EMSG_MAX_STRING);
        return NULL;
    }
    if (!sb_utf8_valid((const char *)box + *i, n, NULL)) {
        *rc = sb_fail(p, "emsg: %s is not UTF-8", name);
        return NULL;
    }
    const char *s = (const char *)box + *i;
    *i += n + 1;
    return s;
}

int sb_parse_emsg(struct sb_parse *p, const uint8_t *box, size_t len, double segment_start, double media_origin,
                  bool dynamic) {
    int rc = SNAPBACK_INVALID_ARGUMENT;
    if (!box) return sb_fail(p, "emsg: no box");
    if (len > EMSG_MAX_BYTES) return sb_fail(p, "emsg: %zu bytes: more than the limit of %u", len, EMSG_MAX_BYTES);
    if (len < 12) return sb_fail(p, "emsg: %zu bytes: shorter than a box header, version and flags", len);
    /* ISO/IEC 14496-12 4.2: size 1 means a 64-bit largesize follows the type; 0, to the end (of the bytes
     * given). */
    uint64_t size = be32(box);
    size_t i = 8;
    if (size == 1) {
        if (len < 20) return sb_fail(p, "emsg: %zu bytes: shorter than a box header with a largesize", len);
        size = be64(box + 8);
        i = 16;
    } else if (size == 0) {
        size = len;
    }
    if (size != len) return sb_fail(p, "emsg: the box says %llu bytes, %zu given", (unsigned long long)size, len);
    if (memcmp(box + 4, "emsg", 4) != 0) {
        char type[5];
        for (int k = 0; k < 4; k++) type[k] = box[4 + k] >= 0x20 && box[4 + k] < 0x7f ? (char)box[4 + k] : '?';
        type[4] = 0;
        return sb_fail(p, "a '%s' box, not 'emsg'", type);
    }
    unsigned version = box[i];
    i += 4; /* version, flags */
    if (version > 1) return sb_fail(p, "emsg: version %u (0 and 1 are defined)", version);
    uint32_t timescale, duration, id;
    uint64_t time;
    const char *scheme, *value;
    if (version == 0) {
        /* scheme_id_uri, value, timescale, presentation_time_delta, event_duration, id */
        if (!(scheme = cstring(p, box, len, &i, "scheme_id_uri", &rc)) || !(value = cstring(p, box, len, &i, "value", &rc)))
            return rc;
        if (len - i < 16) return sb_fail(p, "emsg: version 0 ends inside its timing fields");
        timescale = be32(box + i), time = be32(box + i + 4), duration = be32(box + i + 8), id = be32(box + i + 12);
        i += 16;
    } else {
        /* timescale, presentation_time (64 bits), event_duration, id, scheme_id_uri, value */
        if (len - i < 20) return sb_fail(p, "emsg: version 1 ends inside its timing fields");
        timescale = be32(box + i), time = be64(box + i + 4), duration = be32(box + i + 12), id = be32(box + i + 16);
        i += 20;
        if (!(scheme = cstring(p, box, len, &i, "scheme_id_uri", &rc)) || !(value = cstring(p, box, len, &i, "value", &rc)))
            return rc;
    }
    if (strcmp(scheme, SCTE35_BIN) != 0)
        return sb_fail(p, "emsg %u: scheme %.200s carries no SCTE-35 section (" SCTE35_BIN " does)", (unsigned)id, scheme);
    if (timescale == 0) return sb_fail(p, "emsg %u: timescale 0", (unsigned)id);
    /* Version 0 times from the earliest presentation time of the segment carrying it; version 1 on the
     * Representation's media timeline, whose 0 the player places (Period start minus
     * presentationTimeOffset). */
    double origin = version == 0 ? segment_start : media_origin;
    if (!isfinite(origin) || fabs(origin) > SB_MAX_TIME)
        return sb_fail(p, "emsg %u: the %s given is not a stream time", (unsigned)id,
                       version == 0 ? "segment start" : "media timeline's origin");
    double t = origin + (double)time / (double)timescale;
    if (!(t >= 0 && t <= SB_MAX_TIME))
        return sb_fail(p, "emsg %u: at stream time %g, outside 0 to 1e10 s", (unsigned)id, t);
    char what[40], ids[12];
    snprintf(what, sizeof what, "emsg %u", (unsigned)id);
    snprintf(ids, sizeof ids, "%u", (unsigned)id);
    /* The same (scheme, value, id) is one event: an emsg repeated in each segment until its time, or one
     * carrying an Event the MPD's EventStream has. */
    if (sb_ids_has(p->known_ids, scheme, value, ids)) {
        sb_reject(p, ids, 0, "%s: already read (the same scheme, value and id as an earlier emsg or an MPD Event)", what);
        return SNAPBACK_OK;
    }
    if (!sb_ids_add(&p->ids, scheme, value, ids)) return p->oom = true, SNAPBACK_E_NO_MEMORY;
    snapback_scte35 sec;
    char err[128];
    if (snapback_scte35_decode(box + i, len - i, &sec, err, sizeof err) != SNAPBACK_OK)
        return sb_fail(p, "%s: %s", what, err);
    /* 0xFFFFFFFF: the duration is unknown (23009-1 5.10.3.3.3). */
    bool has_dur = duration != UINT32_MAX;
    sb_scte35_apply(p, &sec, t, has_dur, has_dur ? (double)duration / (double)timescale : 0, dynamic, what, ids, 0);
    for (size_t k = 0; k < p->found.n; k++) {
        struct sb_cue *c = &p->found.v[k];
        if (c->open) c->duration = fmin(p->opt->max_open, fmax(c->duration, 1));
    }
    return SNAPBACK_OK;
}
