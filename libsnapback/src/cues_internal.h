/* SPDX-License-Identifier: Apache-2.0 */
/* The break sources' internals: what one text yields (struct sb_parse), the bounded readers of
 * numbers, dates and base64 every format shares, and the per-format parsers. Nothing here is exported. */
#ifndef SNAPBACK_CUES_INTERNAL_H
#define SNAPBACK_CUES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "break_flags.h"
#include "cues_wire.h"
#include "snapback/cues.h"

#define SB_HIDDEN __attribute__((visibility("hidden")))

/* The daemon's ranges (PROTOCOL.md, Ranges). */
#define SB_MAX_TIME 1e10
#define SB_MAX_DURATION 1e8
#define SB_MAX_ID 256
#define SB_MAX_ADS 1000

struct sb_cue {
    char *id;
    snapback_break_position position;
    double start, duration;
    bool open, unfilled;
    double *ads;
    size_t n_ads;
    bool has_resume;
    double resume;
    unsigned restrictions, snap;
    bool once, has_limit;
    double limit;
    const char *source; /* a constant */
    unsigned line;
    bool removed; /* merge: named by one of the text's removals */
};

struct sb_cue_list {
    struct sb_cue *v;
    size_t n, cap;
};

/* A hash index of the ids of a growing array, so that a text of 50,000 tags naming as many breaks is
 * read in linear time. Each slot holds a position + 1 (0: empty); a slot whose position no longer holds
 * that id (the array shrank, or an entry moved) is passed over, and dropped when the index is rebuilt.
 * The entries from `upto` on are not indexed yet: they are, at the next lookup. */
struct sb_index {
    uint32_t *slot;
    size_t cap, used, upto;
};
/* Entry i's id and its length; false when it has none. */
typedef bool (*sb_index_key)(const void *items, size_t i, const char **id, size_t *len);
/* The position of the entry among the first n of `items` whose id is id[0..len), or -1; *oom set when
 * the index could not grow (the entries are then searched one by one). */
SB_HIDDEN long sb_index_find(struct sb_index *x, const void *items, size_t n, sb_index_key key, const char *id,
                             size_t len, bool *oom);
/* Entries from position i on changed (one moved there, or the array was cut): indexed again. */
SB_HIDDEN void sb_index_from(struct sb_index *x, size_t i);
SB_HIDDEN void sb_index_free(struct sb_index *x);
/* A cue list's key: the break's id. */
SB_HIDDEN bool sb_cue_key(const void *items, size_t i, const char **id, size_t *len);

struct sb_note_list {
    snapback_cue_note *v; /* id and reason owned */
    size_t n, cap;
};

/* What the HLS reader keeps from one refresh to the next. */
struct sb_hls_state {
    bool have;
    uint64_t msn0;       /* media sequence number of the last playlist's first segment */
    double *starts;      /* its segments' stream times, n_starts = segments + 1 (the end) */
    size_t n_starts;
    double target;       /* EXT-X-TARGETDURATION */
    /* A CUE-OUT still open at the end of the last playlist. */
    bool open;
    char *open_id;
    double open_start, open_planned;
    bool open_has_planned;
};

/* DASH events by (scheme, value, id): the MPD's Events and the emsg boxes read, so that an emsg
 * repeated in every segment, or carrying an Event the MPD has, counts once (ISO/IEC 23009-1 5.10.4).
 * The object keeps the newest SB_MAX_IDS. */
#define SB_MAX_IDS 4096
struct sb_ids {
    char **v; /* "id\x1fscheme\x1fvalue" */
    size_t n, cap;
};
SB_HIDDEN bool sb_ids_has(const struct sb_ids *l, const char *scheme, const char *value, const char *id);
/* Appended (up to SB_MAX_IDS; repeats are merged into the object's). false when out of memory. */
SB_HIDDEN bool sb_ids_add(struct sb_ids *l, const char *scheme, const char *value, const char *id);
SB_HIDDEN void sb_ids_free(struct sb_ids *l);

/* One text's yield. */
struct sb_parse {
    const snapback_cues_options *opt; /* every bound resolved (no 0) */
    struct sb_cue_list found;
    struct sb_index found_index;
    struct sb_note_list rejected;
    struct sb_note_list removed; /* explicit removals: id, reason */
    bool live;
    /* Seconds after which a live text says to read it again (HLS EXT-X-TARGETDURATION, DASH
     * MPD@minimumUpdatePeriod); 0 when it says nothing. */
    double refresh;
    /* Live HLS: the stream time where this text's window begins; a known break starting at or after
     * it and missing from the text was withdrawn. -1: no such rule (DASH, VMAP). */
    double window_start;
    struct sb_hls_state *hls;
    struct sb_ids ids;                /* DASH: the events this text has (kept by the object on success) */
    const struct sb_ids *known_ids;   /* emsg: those read before */
    char err[256];
    bool oom;
};

/* *v an array of *cap elements of `size` bytes, grown (doubling) to hold `need`; false when out of memory. */
SB_HIDDEN bool sb_grow(void **v, size_t *cap, size_t need, size_t size);

SB_HIDDEN int sb_parse_hls(struct sb_parse *p, const char *text, size_t len);
SB_HIDDEN int sb_parse_dash(struct sb_parse *p, const char *text, size_t len);
SB_HIDDEN int sb_parse_vmap(struct sb_parse *p, const char *text, size_t len);
/* One ISO BMFF emsg box (cues_emsg.c); p->found holds every break known. */
SB_HIDDEN int sb_parse_emsg(struct sb_parse *p, const uint8_t *box, size_t len, double segment_start,
                            double media_origin, bool dynamic);
SB_HIDDEN void sb_hls_state_clear(struct sb_hls_state *s);

/* A new break in p->found (zeroed but for id, source, line), or NULL (p->oom set). */
SB_HIDDEN struct sb_cue *sb_found_add(struct sb_parse *p, const char *id, size_t id_len, const char *source,
                                      unsigned line);
SB_HIDDEN struct sb_cue *sb_found_find(struct sb_parse *p, const char *id);
SB_HIDDEN void sb_cue_clear(struct sb_cue *c);
/* A note on p->rejected / p->removed: printf-style reason. */
SB_HIDDEN void sb_reject(struct sb_parse *p, const char *id, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
SB_HIDDEN void sb_remove(struct sb_parse *p, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
SB_HIDDEN int sb_fail(struct sb_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bounded readers. Each reads the whole of [s, s+n) or fails (false). */
/* A decimal number: [-]digits[.digits][e[+-]digits], at most 64 characters, finite, within [lo, hi]. */
SB_HIDDEN bool sb_number(const char *s, size_t n, double lo, double hi, double *out);
/* An unsigned decimal integer up to max. */
SB_HIDDEN bool sb_uint(const char *s, size_t n, uint64_t max, uint64_t *out);
/* ISO 8601 / RFC 3339 date-time with a zone (Z, +hh:mm, +hhmm, +hh), years 1970-9999: unix seconds. */
SB_HIDDEN bool sb_date(const char *s, size_t n, double *out);
/* [hh:]mm:ss[.mmm] as VMAP and VAST write it (hh any number of digits up to 6): seconds. */
SB_HIDDEN bool sb_clock(const char *s, size_t n, double *out);
/* xs:duration without years or months: [-]P[nD][T[nH][nM][n[.n]S]]: seconds. */
SB_HIDDEN bool sb_xs_duration(const char *s, size_t n, double *out);
/* Base64 (whitespace ignored, padding optional) into out (cap bytes): the length, or -1. */
SB_HIDDEN long sb_base64(const char *s, size_t n, uint8_t *out, size_t cap);
/* Hex "0x..." (HLS SCTE35-OUT) into out: the length, or -1. */
SB_HIDDEN long sb_hex(const char *s, size_t n, uint8_t *out, size_t cap);
/* Whether [s, s+n) is valid UTF-8 without NUL; *bad: the offset of the first invalid byte. */
SB_HIDDEN bool sb_utf8_valid(const char *s, size_t n, size_t *bad);
SB_HIDDEN bool sb_scte35_is_break_type(unsigned type, bool *out);
SB_HIDDEN uint32_t sb_crc32_mpeg2(const uint8_t *d, size_t n);
/* A time as ids carry it: "600", "12.5", "0.042" (at most millisecond precision). */
SB_HIDDEN void sb_format_time(double t, char *buf, size_t size);

/* A DASH event's SCTE-35 section at stream time t (seconds; its duration `dur` when has_dur) into
 * p->found: a cue-out starts break scte35-<event id> (its end from the event's duration, else the
 * section's break_duration, else open while `dynamic`), a return closes it, a cancel removes it. `what`
 * names the event in the notes ("Event 5", "emsg 7"), item_id is the notes' id. An MPD's EventStream
 * Events and in-band emsg boxes (cues_emsg.c) both come here. */
SB_HIDDEN void sb_scte35_apply(struct sb_parse *p, const snapback_scte35 *sec, double t, bool has_dur, double dur,
                               bool dynamic, const char *what, const char *item_id, unsigned line);

/* The XML reader both DASH and VMAP use (expat, DOCTYPE and entity declarations refused, nesting and
 * element count bounded, names matched on their local part). */
struct sb_xml_handler {
    void *user;
    /* depth: 0 for the root. attrs: name, value pairs, local names, NULL-terminated. */
    void (*start)(void *user, const char *local, const char **attrs, unsigned depth, unsigned line);
    void (*end)(void *user, const char *local, const char *text, size_t text_len, unsigned depth);
};
SB_HIDDEN int sb_xml_parse(struct sb_parse *p, const char *text, size_t len, const struct sb_xml_handler *h);
SB_HIDDEN const char *sb_xml_attr(const char **attrs, const char *local);

#endif
