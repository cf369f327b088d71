/* SPDX-License-Identifier: Apache-2.0 */
/* The one SCTE-35 splice_info_section decoder (ANSI/SCTE 35 9.2 and 10.3.3): HLS SCTE35-OUT/-IN and
 * EXT-OATCLS-SCTE35, DASH xml+bin and bin, and the GStreamer plugin's MPEG-TS sections all come here.
 * Every read is checked against the end of the part it belongs to (the section, the command, the
 * descriptor), so a length field cannot take a read past the bytes given. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cues_internal.h"

struct rd {
    const uint8_t *p;
    size_t n, i;
    bool bad;
};

static unsigned u8(struct rd *r) {
    if (r->i >= r->n) {
        r->bad = true;
        return 0;
    }
    return r->p[r->i++];
}
static uint32_t u16(struct rd *r) { uint32_t v = u8(r) << 8; return v | u8(r); }
static uint32_t u32(struct rd *r) { uint32_t v = u16(r) << 16; return v | u16(r); }
static void skip(struct rd *r, size_t k) {
    if (k > r->n - r->i) {
        r->bad = true;
        r->i = r->n;
    } else {
        r->i += k;
    }
}

uint32_t sb_crc32_mpeg2(const uint8_t *d, size_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)d[i] << 24;
        for (int b = 0; b < 8; b++) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
    }
    return crc;
}

/* splice_time(): whether a time is specified, and the 33-bit pts_time. */
static bool splice_time(struct rd *r, uint64_t *pts) {
    unsigned b = u8(r);
    if (!(b & 0x80)) return false;
    uint64_t v = (uint64_t)(b & 1) << 32;
    v |= u32(r);
    *pts = v;
    return true;
}

static void fail(char *err, size_t errlen, const char *what) {
    if (err && errlen) snprintf(err, errlen, "SCTE-35: %s", what);
}

bool sb_scte35_is_break_type(unsigned type, bool *out) {
    switch (type) {
    case 0x22: case 0x30: case 0x32: case 0x34: case 0x36: *out = true; return true;
    case 0x23: case 0x31: case 0x33: case 0x35: case 0x37: *out = false; return true;
    default: return false;
    }
}

static void add_event(snapback_scte35 *s, const snapback_scte35_event *e) {
    if (s->n_events < SNAPBACK_SCTE35_MAX_EVENTS) s->events[s->n_events++] = *e;
    else s->n_other++;
}

/* A segmentation_descriptor's body after its tag and length (identifier on). */
static void segmentation(struct rd *r, const snapback_scte35 *sec, bool has_time, uint64_t pts,
                         snapback_scte35 *s) {
    if (u32(r) != 0x43554549u) return; /* "CUEI": another owner's descriptor */
    snapback_scte35_event e = {0};
    e.event_id = u32(r);
    unsigned flags = u8(r);
    e.immediate = !has_time;
    e.has_pts = has_time;
    e.pts = has_time ? (pts + sec->pts_adjustment) & ((1ull << 33) - 1) : 0;
    if (flags & 0x80) {
        e.cancel = true;
        if (!r->bad) add_event(s, &e);
        return;
    }
    flags = u8(r);
    bool program = flags & 0x80, has_duration = flags & 0x40;
    if (!program) skip(r, (size_t)u8(r) * 6);
    if (has_duration) {
        uint64_t d = (uint64_t)u8(r) << 32;
        d |= u32(r);
        e.has_duration = true;
        e.duration = d;
    }
    u8(r); /* upid type */
    skip(r, u8(r));
    unsigned type = u8(r);
    u8(r); /* segment_num */
    u8(r); /* segments_expected */
    if (r->bad) return;
    e.segmentation_type = (uint8_t)type;
    if (!program) {
        s->n_other++; /* per-component: not a program break */
        return;
    }
    if (sb_scte35_is_break_type(type, &e.out)) add_event(s, &e);
    else s->n_other++;
}

int snapback_scte35_decode(const uint8_t *data, size_t len, snapback_scte35 *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
    if (!out) return SNAPBACK_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!data || len < 17) return fail(err, errlen, "section too short"), SNAPBACK_INVALID_ARGUMENT;
    if (data[0] != 0xFC) return fail(err, errlen, "table_id is not 0xFC"), SNAPBACK_INVALID_ARGUMENT;
    size_t section_length = ((size_t)(data[1] & 0x0F) << 8) | data[2];
    if (data[1] & 0x80) return fail(err, errlen, "section_syntax_indicator set"), SNAPBACK_INVALID_ARGUMENT;
    if (section_length + 3 > len) return fail(err, errlen, "section_length beyond the data"), SNAPBACK_INVALID_ARGUMENT;
    len = section_length + 3;
    if (len < 17) return fail(err, errlen, "section too short"), SNAPBACK_INVALID_ARGUMENT;
    if (sb_crc32_mpeg2(data, len) != 0) return fail(err, errlen, "CRC_32 does not match"), SNAPBACK_INVALID_ARGUMENT;
    struct rd r = {data, len - 4, 3, false};
    if (u8(&r) != 0) return fail(err, errlen, "protocol_version is not 0"), SNAPBACK_INVALID_ARGUMENT;
    unsigned b = u8(&r);
    if (b & 0x80) return fail(err, errlen, "encrypted section"), SNAPBACK_INVALID_ARGUMENT;
    out->pts_adjustment = ((uint64_t)(b & 1) << 32) | u32(&r);
    u8(&r); /* cw_index */
    uint32_t t = u8(&r) << 16;
    t |= u16(&r);
    out->tier = (uint16_t)(t >> 12);
    size_t cmd_len = t & 0xFFF;
    out->command_type = (uint8_t)u8(&r);
    size_t cmd_start = r.i;
    /* 0xFFF: the legacy "length not given"; the command is parsed to find its end. */
    struct rd c = {data, cmd_len == 0xFFF ? r.n : cmd_start + cmd_len, cmd_start, false};
    if (c.n > r.n) return fail(err, errlen, "splice_command_length beyond the section"), SNAPBACK_INVALID_ARGUMENT;
    bool has_time = false;
    uint64_t pts = 0;
    snapback_scte35_event ins = {0};
    bool have_insert = false;
    switch (out->command_type) {
    case SNAPBACK_SCTE35_SPLICE_INSERT: {
        ins.event_id = u32(&c);
        unsigned f = u8(&c);
        if (f & 0x80) {
            ins.cancel = true;
            have_insert = true;
            break;
        }
        f = u8(&c);
        ins.out = f & 0x80;
        bool program = f & 0x40, duration = f & 0x20, immediate = f & 0x10;
        ins.immediate = immediate;
        if (program && !immediate) {
            ins.has_pts = splice_time(&c, &ins.pts);
            if (ins.has_pts) ins.pts = (ins.pts + out->pts_adjustment) & ((1ull << 33) - 1);
            else ins.immediate = true; /* time_specified_flag 0 */
        }
        if (!program) {
            unsigned k = u8(&c);
            for (unsigned i = 0; i < k && !c.bad; i++) {
                u8(&c);
                if (!immediate) (void)splice_time(&c, &pts);
            }
        }
        if (duration) {
            unsigned d = u8(&c);
            ins.auto_return = d & 0x80;
            ins.has_duration = true;
            ins.duration = ((uint64_t)(d & 1) << 32) | u32(&c);
        }
        ins.unique_program_id = (uint16_t)u16(&c);
        ins.avail_num = (uint8_t)u8(&c);
        ins.avails_expected = (uint8_t)u8(&c);
        have_insert = program;
        if (!program) out->n_other++;
        break;
    }
    case SNAPBACK_SCTE35_TIME_SIGNAL:
        has_time = splice_time(&c, &pts);
        break;
    case SNAPBACK_SCTE35_SPLICE_NULL:
        break;
    default:
        if (cmd_len == 0xFFF) return fail(err, errlen, "an unknown command without a length"), SNAPBACK_INVALID_ARGUMENT;
        c.i = c.n;
        break;
    }
    if (c.bad) return fail(err, errlen, "splice command truncated"), SNAPBACK_INVALID_ARGUMENT;
    if (cmd_len != 0xFFF && c.i != c.n)
        return fail(err, errlen, "splice_command_length does not match the command"), SNAPBACK_INVALID_ARGUMENT;
    r.i = c.i;
    if (have_insert) add_event(out, &ins);
    size_t loop = u16(&r);
    if (r.bad || loop > r.n - r.i) return fail(err, errlen, "descriptor_loop_length beyond the section"), SNAPBACK_INVALID_ARGUMENT;
    size_t end = r.i + loop;
    while (r.i < end) {
        if (end - r.i < 2) return fail(err, errlen, "descriptor truncated"), SNAPBACK_INVALID_ARGUMENT;
        unsigned tag = data[r.i], dlen = data[r.i + 1];
        if (dlen > end - r.i - 2) return fail(err, errlen, "descriptor_length beyond the loop"), SNAPBACK_INVALID_ARGUMENT;
        struct rd d = {data, r.i + 2 + dlen, r.i + 2, false};
        if (tag == 0x02 && out->command_type == SNAPBACK_SCTE35_TIME_SIGNAL) {
            segmentation(&d, out, has_time, pts, out);
            if (d.bad) return fail(err, errlen, "segmentation_descriptor truncated"), SNAPBACK_INVALID_ARGUMENT;
        }
        r.i += 2 + dlen;
    }
    /* What follows the loop is alignment stuffing (encrypted sections only, refused above). */
    return SNAPBACK_OK;
}
