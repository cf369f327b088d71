/* SPDX-License-Identifier: Apache-2.0 */
/* The break sources' object: one manifest read text after text (live refreshes), the breaks known so
 * far merged by id, the changes each text made, the shared bounded readers, and the session calls. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cues_internal.h"

struct change {
    snapback_cue_change_kind kind;
    char *id, *reason;
};

struct snapback_cues {
    snapback_cues_options opt;
    snapback_cues_format format;
    bool live;
    double refresh;            /* the last text's, seconds */
    struct sb_cue_list breaks; /* known, sorted */
    struct sb_note_list rejected;
    struct change *changes;
    size_t n_changes;
    struct sb_hls_state hls;
    struct sb_ids ids; /* DASH events read (MPD Events, emsg boxes), for the emsg dedupe */
    char error[256];
    /* Views rebuilt after each update. */
    snapback_cue_break *pub;
    snapback_cue_change *pub_changes;
    snapback_break *session;
    size_t n_session;
    /* What the session calls send: every break of a stitched stream the daemon can take, open and
     * unfilled ones too, with their flags beside them. */
    snapback_break *wire;
    struct sb_break_flags *wire_flags;
    size_t n_wire;
    double *midrolls;
    size_t n_midrolls;
    bool preroll, postroll;
};

/* ---------------------------------------------------------------------------------------------- */
/* Lists                                                                                          */

void sb_cue_clear(struct sb_cue *c) {
    free(c->id);
    free(c->ads);
    memset(c, 0, sizeof *c);
}

static void cue_list_free(struct sb_cue_list *l) {
    for (size_t i = 0; i < l->n; i++) sb_cue_clear(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void note_list_free(struct sb_note_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->v[i].id);
        free((char *)l->v[i].reason);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

bool sb_grow(void **v, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need) c *= 2;
    void *n = realloc(*v, c * size);
    if (!n) return false;
    *v = n;
    *cap = c;
    return true;
}

struct sb_cue *sb_found_add(struct sb_parse *p, const char *id, size_t id_len, const char *source, unsigned line) {
    /* Appended where an entry dropped before may have been: indexed at the next lookup. */
    sb_index_from(&p->found_index, p->found.n);
    if (!sb_grow((void **)&p->found.v, &p->found.cap, p->found.n + 1, sizeof *p->found.v)) {
        p->oom = true;
        return NULL;
    }
    char *copy = strndup(id, id_len);
    if (!copy) {
        p->oom = true;
        return NULL;
    }
    struct sb_cue *c = &p->found.v[p->found.n++];
    memset(c, 0, sizeof *c);
    c->id = copy;
    c->source = source;
    c->line = line;
    c->position = SNAPBACK_POSITION_MIDROLL;
    return c;
}

struct sb_cue *sb_found_find(struct sb_parse *p, const char *id) {
    bool oom = false;
    long i = sb_index_find(&p->found_index, p->found.v, p->found.n, sb_cue_key, id, strlen(id), &oom);
    if (oom) p->oom = true;
    return i < 0 ? NULL : &p->found.v[i];
}

bool sb_cue_key(const void *items, size_t i, const char **id, size_t *len) {
    const struct sb_cue *c = (const struct sb_cue *)items + i;
    if (!c->id) return false;
    *id = c->id;
    *len = strlen(c->id);
    return true;
}

static uint32_t id_hash(const char *id, size_t len) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)id[i]) * 16777619u;
    return h;
}

static void index_put(struct sb_index *x, const void *items, size_t i, sb_index_key key) {
    const char *id;
    size_t len;
    if (!key(items, i, &id, &len)) return;
    size_t mask = x->cap - 1;
    for (size_t k = id_hash(id, len) & mask;; k = (k + 1) & mask)
        if (!x->slot[k]) {
            x->slot[k] = (uint32_t)i + 1;
            x->used++;
            return;
        }
}

long sb_index_find(struct sb_index *x, const void *items, size_t n, sb_index_key key, const char *id, size_t len,
                   bool *oom) {
    if (x->upto > n) x->upto = n;
    /* At most half full, counting what is still to index: else made again at twice the entries. */
    if (n < UINT32_MAX && (!x->slot || 2 * (x->used + (n - x->upto) + 1) > x->cap)) {
        size_t cap = 64;
        while (cap < 4 * (n + 1)) cap *= 2;
        uint32_t *slot = calloc(cap, sizeof *slot);
        if (slot) {
            free(x->slot);
            *x = (struct sb_index){.slot = slot, .cap = cap};
        } else {
            *oom = true;
        }
    }
    if (*oom || n >= UINT32_MAX) {
        *oom = true;
        for (size_t i = n; i-- > 0;) {
            const char *k;
            size_t kl;
            if (key(items, i, &k, &kl) && kl == len && memcmp(k, id, len) == 0) return (long)i;
        }
        return -1;
    }
    for (; x->upto < n; x->upto++) index_put(x, items, x->upto, key);
    size_t mask = x->cap - 1;
    for (size_t k = id_hash(id, len) & mask; x->slot[k]; k = (k + 1) & mask) {
        size_t i = x->slot[k] - 1;
        const char *e;
        size_t el;
        if (i < n && key(items, i, &e, &el) && el == len && memcmp(e, id, len) == 0) return (long)i;
    }
    return -1;
}

void sb_index_from(struct sb_index *x, size_t i) {
    if (x->upto > i) x->upto = i;
}

void sb_index_free(struct sb_index *x) {
    free(x->slot);
    *x = (struct sb_index){0};
}

static void note_add(struct sb_parse *p, struct sb_note_list *l, const char *id, unsigned line, const char *fmt,
                     va_list ap) {
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    /* Bound the notes a hostile text can make: the first thousand say enough. */
    if (l->n >= 1000) return;
    if (!sb_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        p->oom = true;
        return;
    }
    char *i = strdup(id ? id : ""), *r = strdup(buf);
    if (!i || !r) {
        free(i);
        free(r);
        p->oom = true;
        return;
    }
    l->v[l->n++] = (snapback_cue_note){.id = i, .line = line, .reason = r};
}

void sb_reject(struct sb_parse *p, const char *id, unsigned line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    note_add(p, &p->rejected, id, line, fmt, ap);
    va_end(ap);
}

void sb_remove(struct sb_parse *p, const char *id, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    note_add(p, &p->removed, id, 0, fmt, ap);
    va_end(ap);
}

int sb_fail(struct sb_parse *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    return SNAPBACK_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------------------------------------- */
/* Bounded readers                                                                                */

bool sb_number(const char *s, size_t n, double lo, double hi, double *out) {
    char buf[65];
    if (n == 0 || n > 64) return false;
    size_t i = 0;
    if (s[i] == '-' || s[i] == '+') i++;
    size_t digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (!digits) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        size_t e = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, e++;
        if (!e) return false;
    }
    if (i != n) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    /* strtod reads the C locale's point only if the player did not set another: parse by hand. */
    double v = 0, scale = 1;
    bool neg = false;
    i = 0;
    if (buf[i] == '-' || buf[i] == '+') neg = buf[i++] == '-';
    while (buf[i] >= '0' && buf[i] <= '9') v = v * 10 + (buf[i++] - '0');
    if (buf[i] == '.') {
        i++;
        while (buf[i] >= '0' && buf[i] <= '9') {
            scale /= 10;
            v += (buf[i++] - '0') * scale;
        }
    }
    if (buf[i] == 'e' || buf[i] == 'E') {
        i++;
        bool eneg = false;
        if (buf[i] == '-' || buf[i] == '+') eneg = buf[i++] == '-';
        int e = 0;
        while (buf[i] >= '0' && buf[i] <= '9') {
            if (e < 10000) e = e * 10 + (buf[i] - '0');
            i++;
        }
        v *= pow(10, eneg ? -e : e);
    }
    if (neg) v = -v;
    if (!isfinite(v) || v < lo || v > hi) return false;
    *out = v == 0 ? 0 : v; /* no -0 */
    return true;
}

bool sb_uint(const char *s, size_t n, uint64_t max, uint64_t *out) {
    if (n == 0 || n > 20) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool digits(const char *s, size_t n, size_t at, size_t k, unsigned *out) {
    if (at + k > n) return false;
    unsigned v = 0;
    for (size_t i = 0; i < k; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return true;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long days_from_civil(long y, unsigned m, unsigned d) {
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long)doe - 719468;
}

bool sb_date(const char *s, size_t n, double *out) {
    unsigned y, mo, d, h, mi, sec;
    if (!digits(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || !digits(s, n, 5, 2, &mo) || s[7] != '-' ||
        !digits(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, n, 11, 2, &h) ||
        s[13] != ':' || !digits(s, n, 14, 2, &mi) || s[16] != ':' || !digits(s, n, 17, 2, &sec))
        return false;
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60) return false;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return false;
    size_t i = 19;
    double frac = 0, scale = 1;
    if (i < n && (s[i] == '.' || s[i] == ',')) {
        i++;
        size_t k = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (k++ < 9) {
                scale /= 10;
                frac += (s[i] - '0') * scale;
            }
            i++;
        }
        if (!k) return false;
    }
    long offset = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int sign = s[i] == '-' ? -1 : 1;
        unsigned oh, om = 0;
        if (!digits(s, n, i + 1, 2, &oh)) return false;
        i += 3;
        if (i < n && s[i] == ':') {
            if (!digits(s, n, i + 1, 2, &om)) return false;
            i += 3;
        } else if (i + 2 <= n && digits(s, n, i, 2, &om)) {
            i += 2;
        }
        if (oh > 23 || om > 59) return false;
        offset = sign * (long)(oh * 3600 + om * 60);
    } else {
        return false; /* a date without a zone is no instant */
    }
    if (i != n) return false;
    double t = (double)days_from_civil((long)y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec + frac - (double)offset;
    if (t < 0) return false;
    *out = t;
    return true;
}

bool sb_clock(const char *s, size_t n, double *out) {
    /* hh:mm:ss[.mmm] or mm:ss[.mmm] */
    size_t colon[2], k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ':') {
            if (k == 2) return false;
            colon[k++] = i;
        }
    if (k == 0 || n > 32) return false;
    uint64_t h = 0, m;
    size_t ms = 0;
    if (k == 2) {
        if (!sb_uint(s, colon[0], 999999, &h)) return false;
        ms = colon[0] + 1;
    }
    size_t me = colon[k - 1];
    if (me - ms != 2 || !sb_uint(s + ms, 2, 59, &m)) return false;
    size_t ss = me + 1;
    double sec;
    if (n - ss < 2 || s[ss] < '0' || s[ss] > '9' || s[ss + 1] < '0' || s[ss + 1] > '9') return false;
    if (!sb_number(s + ss, n - ss, 0, 59.999999, &sec)) return false;
    for (size_t i = ss; i < n; i++)
        if (s[i] == 'e' || s[i] == 'E' || s[i] == '-' || s[i] == '+') return false;
    *out = (double)h * 3600 + (double)m * 60 + sec;
    return true;
}

bool sb_xs_duration(const char *s, size_t n, double *out) {
    size_t i = 0;
    bool neg = false;
    if (i < n && s[i] == '-') neg = true, i++;
    if (i >= n || s[i++] != 'P') return false;
    double total = 0;
    bool in_time = false, any = false;
    while (i < n) {
        if (s[i] == 'T') {
            if (in_time) return false;
            in_time = true;
            i++;
            continue;
        }
        size_t st = i;
        while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) i++;
        if (i == st || i >= n) return false;
        double v;
        if (!sb_number(s + st, i - st, 0, 1e10, &v)) return false;
        char u = s[i++];
        if (!in_time && u == 'D') total += v * 86400;
        else if (in_time && u == 'H') total += v * 3600;
        else if (in_time && u == 'M') total += v * 60;
        else if (in_time && u == 'S') total += v;
        else return false; /* years and months have no fixed length */
        any = true;
    }
    if (!any || neg || total > SB_MAX_TIME) return false;
    *out = total;
    return true;
}

long sb_base64(const char *s, size_t n, uint8_t *out, size_t cap) {
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0, pad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+' || c == '-') v = 62;
        else if (c == '/' || c == '_') v = 63;
        else if (c == '=') {
            pad++;
            continue;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        else return -1;
        if (pad) return -1; /* data after padding */
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap) return -1;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    if (pad > 2) return -1;
    return (long)o;
}

long sb_hex(const char *s, size_t n, uint8_t *out, size_t cap) {
    if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || n % 2) return -1;
    size_t o = 0;
    for (size_t i = 2; i < n; i += 2) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[i + k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        if (o >= cap) return -1;
        out[o++] = (uint8_t)v;
    }
    return (long)o;
}

bool sb_utf8_valid(const char *str, size_t n, size_t *bad) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp;
        if (c == 0) goto invalid;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) k = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) k = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4) k = 3, cp = c & 0x07;
        else goto invalid;
        if (n - i <= k) goto invalid;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) goto invalid;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            goto invalid;
        i += k + 1;
    }
    return true;
invalid:
    if (bad) *bad = i;
    return false;
}

void sb_format_time(double t, char *buf, size_t size) {
    snprintf(buf, size, "%.3f", t);
    char *dot = strchr(buf, '.');
    if (!dot) return;
    char *e = buf + strlen(buf);
    while (e > dot + 1 && e[-1] == '0') *--e = 0;
    if (e == dot + 1) *dot = 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* The object                                                                                     */

const char *snapback_cues_format_name(snapback_cues_format f) {
    switch (f) {
    case SNAPBACK_CUES_HLS: return "hls";
    case SNAPBACK_CUES_DASH: return "dash";
    case SNAPBACK_CUES_VMAP: return "vmap";
    default: return "auto";
    }
}

snapback_cues *snapback_cues_new(const snapback_cues_options *o) {
    snapback_cues *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (o) c->opt = *o;
    if (!c->opt.max_bytes) c->opt.max_bytes = 8u << 20;
    if (!c->opt.max_items) c->opt.max_items = 50000;
    if (!c->opt.max_breaks) c->opt.max_breaks = 1000;
    if (!(c->opt.max_open > 0) || c->opt.max_open > SB_MAX_DURATION) c->opt.max_open = 7200;
    if (!(c->opt.content_duration > 0) || c->opt.content_duration > SB_MAX_TIME) c->opt.content_duration = 0;
    if (c->opt.format < SNAPBACK_CUES_AUTO || c->opt.format > SNAPBACK_CUES_VMAP) c->opt.format = SNAPBACK_CUES_AUTO;
    return c;
}

static void views_free(snapback_cues *c) {
    free(c->pub);
    free(c->pub_changes);
    free(c->session);
    free(c->wire);
    free(c->wire_flags);
    free(c->midrolls);
    c->pub = NULL;
    c->pub_changes = NULL;
    c->session = NULL;
    c->wire = NULL;
    c->wire_flags = NULL;
    c->midrolls = NULL;
    c->n_session = c->n_wire = c->n_midrolls = 0;
}

static void changes_free(snapback_cues *c) {
    for (size_t i = 0; i < c->n_changes; i++) {
        free(c->changes[i].id);
        free(c->changes[i].reason);
    }
    free(c->changes);
    c->changes = NULL;
    c->n_changes = 0;
}

void snapback_cues_free(snapback_cues *c) {
    if (!c) return;
    cue_list_free(&c->breaks);
    note_list_free(&c->rejected);
    changes_free(c);
    views_free(c);
    sb_hls_state_clear(&c->hls);
    sb_ids_free(&c->ids);
    free(c);
}

/* The format an XML root element's name says (its local part). */
static snapback_cues_format root_format(const char *t, size_t n, size_t i) {
    size_t s = i;
    while (i < n && t[i] != ' ' && t[i] != '>' && t[i] != '/' && t[i] != '[' && t[i] != '\t' && t[i] != '\r' &&
           t[i] != '\n')
        i++;
    const char *name = t + s;
    size_t len = i - s;
    const char *colon = memchr(name, ':', len);
    if (colon) len -= (size_t)(colon + 1 - name), name = colon + 1;
    if (len == 3 && memcmp(name, "MPD", 3) == 0) return SNAPBACK_CUES_DASH;
    if (len == 4 && memcmp(name, "VMAP", 4) == 0) return SNAPBACK_CUES_VMAP;
    return SNAPBACK_CUES_AUTO;
}

static snapback_cues_format detect(const char *t, size_t n) {
    size_t i = 0;
    if (n >= 3 && (unsigned char)t[0] == 0xEF && (unsigned char)t[1] == 0xBB && (unsigned char)t[2] == 0xBF) i = 3;
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) i++;
    if (n - i >= 7 && memcmp(t + i, "#EXTM3U", 7) == 0) return SNAPBACK_CUES_HLS;
    /* XML: the root element's local name, after the declaration, comments and processing instructions;
     * a DOCTYPE names it too (and the XML reader then refuses the document, saying why). */
    while (i < n && t[i] == '<') {
        if (n - i >= 4 && memcmp(t + i, "<!--", 4) == 0) {
            const char *e = memmem(t + i, n - i, "-->", 3);
            if (!e) return SNAPBACK_CUES_AUTO;
            i = (size_t)(e - t) + 3;
        } else if (n - i >= 10 && memcmp(t + i, "<!DOCTYPE ", 10) == 0) {
            i += 10;
            while (i < n && t[i] == ' ') i++;
            return root_format(t, n, i);
        } else if (n - i >= 2 && (t[i + 1] == '?' || t[i + 1] == '!')) {
            const char *e = memchr(t + i, '>', n - i);
            if (!e) return SNAPBACK_CUES_AUTO;
            i = (size_t)(e - t) + 1;
        } else {
            return root_format(t, n, i + 1);
        }
        while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) i++;
    }
    return SNAPBACK_CUES_AUTO;
}

static int position_rank(snapback_break_position p) {
    return p == SNAPBACK_POSITION_PREROLL ? 0 : p == SNAPBACK_POSITION_POSTROLL ? 2 : 1;
}

static int by_order(const void *a, const void *b) {
    const struct sb_cue *x = a, *y = b;
    int px = position_rank(x->position), py = position_rank(y->position);
    if (px != py) return px - py;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return strcmp(x->id, y->id);
}

static bool same_cue(const struct sb_cue *a, const struct sb_cue *b) {
    if (a->position != b->position || a->start != b->start || a->duration != b->duration || a->open != b->open ||
        a->unfilled != b->unfilled || a->n_ads != b->n_ads || a->has_resume != b->has_resume ||
        (a->has_resume && a->resume != b->resume) || a->restrictions != b->restrictions || a->snap != b->snap ||
        a->once != b->once || a->has_limit != b->has_limit || (a->has_limit && a->limit != b->limit) ||
        strcmp(a->source, b->source) != 0)
        return false;
    for (size_t i = 0; i < a->n_ads; i++)
        if (a->ads[i] != b->ads[i]) return false;
    return true;
}

static bool change_add(snapback_cues *c, struct change **v, size_t *n, size_t *cap, snapback_cue_change_kind k,
                       const char *id, const char *reason) {
    if (!sb_grow((void **)v, cap, *n + 1, sizeof **v)) return false;
    char *i = strdup(id), *r = strdup(reason ? reason : "");
    if (!i || !r) {
        free(i);
        free(r);
        return false;
    }
    (*v)[(*n)++] = (struct change){k, i, r};
    (void)c;
    return true;
}


static int rebuild_views(snapback_cues *c);

/* The (scheme, value, id) keys of DASH events read, the emsg boxes' dedupe (cues_emsg.c). */
static char *ids_key(const char *scheme, const char *value, const char *id) {
    char *k = NULL;
    /* The id first: keys then differ at their first bytes, and the linear searches stay cheap. */
    return asprintf(&k, "%s\x1f%s\x1f%s", id, scheme, value) < 0 ? NULL : k;
}

bool sb_ids_has(const struct sb_ids *l, const char *scheme, const char *value, const char *id) {
    char *k = ids_key(scheme, value, id);
    bool has = false;
    for (size_t i = 0; k && i < l->n && !has; i++) has = strcmp(l->v[i], k) == 0;
    free(k);
    return has;
}

bool sb_ids_add(struct sb_ids *l, const char *scheme, const char *value, const char *id) {
    if (l->n >= SB_MAX_IDS) return true; /* a text's first ones (repeats are merged by ids_merge) */
    char *k = ids_key(scheme, value, id);
    if (!k || !sb_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        free(k);
        return false;
    }
    l->v[l->n++] = k;
    return true;
}

void sb_ids_free(struct sb_ids *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static bool ids_entry_key(const void *items, size_t i, const char **id, size_t *len) {
    const char *const *v = items;
    if (!v[i]) return false;
    *id = v[i];
    *len = strlen(v[i]);
    return true;
}

/* This text's event keys into the object's, each once, the oldest dropped past SB_MAX_IDS. */
static bool ids_merge(struct sb_ids *known, struct sb_ids *text) {
    struct sb_index x = {0};
    bool ok = true, oom = false; /* an index that cannot grow searches one by one: still right */
    for (size_t i = 0; i < text->n; i++) {
        if (sb_index_find(&x, known->v, known->n, ids_entry_key, text->v[i], strlen(text->v[i]), &oom) >= 0) continue;
        if (!sb_grow((void **)&known->v, &known->cap, known->n + 1, sizeof *known->v)) {
            ok = false;
            break;
        }
        known->v[known->n++] = text->v[i];
        text->v[i] = NULL;
    }
    sb_index_free(&x);
    if (known->n > SB_MAX_IDS) {
        size_t drop = known->n - SB_MAX_IDS;
        for (size_t i = 0; i < drop; i++) free(known->v[i]);
        memmove(known->v, known->v + drop, SB_MAX_IDS * sizeof *known->v);
        known->n = SB_MAX_IDS;
    }
    return ok;
}

/* What a text that was refused leaves: the breaks so far, no change, the reason. */
static int refused(snapback_cues *c, struct sb_parse *p, int rc) {
    snprintf(c->error, sizeof c->error, "%s", p->err[0] ? p->err : rc == SNAPBACK_E_NO_MEMORY ? "out of memory" : "refused");
    cue_list_free(&p->found);
    sb_index_free(&p->found_index);
    note_list_free(&p->rejected);
    note_list_free(&p->removed);
    sb_ids_free(&p->ids);
    changes_free(c);
    views_free(c);
    if (rebuild_views(c) != SNAPBACK_OK) return SNAPBACK_E_NO_MEMORY;
    return rc == SNAPBACK_OK ? SNAPBACK_INVALID_ARGUMENT : rc;
}

/* A text's yield, read in format f, merged into what is known: the changes it made. */
static int merge(snapback_cues *c, struct sb_parse *p, snapback_cues_format f) {
    struct change *ch = NULL;
    size_t n_ch = 0, cap_ch = 0;
    struct sb_cue_list next = {0};
    bool ok = true;
    /* The breaks known, by id, looked up once for each of the text's (their index: before any is moved). */
    struct sb_index known = {0};
    bool known_oom = false;
    long *known_at = NULL;
    if (p->found.n && !(known_at = malloc(p->found.n * sizeof *known_at))) ok = false;
    for (size_t i = 0; i < p->found.n && ok; i++)
        known_at[i] = sb_index_find(&known, c->breaks.v, c->breaks.n, sb_cue_key, p->found.v[i].id,
                                    strlen(p->found.v[i].id), &known_oom);
    sb_index_free(&known);
    for (size_t r = 0; r < p->removed.n; r++) {
        struct sb_cue *f = sb_found_find(p, p->removed.v[r].id);
        if (f) f->removed = true;
    }
    /* Kept: what this text does not mention, unless removed or withdrawn from inside its window. */
    for (size_t i = 0; i < c->breaks.n && ok; i++) {
        struct sb_cue *k = &c->breaks.v[i];
        const char *why = NULL;
        for (size_t r = 0; r < p->removed.n; r++)
            if (strcmp(p->removed.v[r].id, k->id) == 0) why = p->removed.v[r].reason;
        bool in_text = sb_found_find(p, k->id) != NULL;
        if (!why && !in_text && p->window_start >= 0 && k->start >= p->window_start)
            why = "withdrawn: missing from a refresh whose window holds its start";
        if (!why && !in_text && p->window_start < 0 && !p->live)
            why = "not in the manifest any more";
        if (why) {
            if (!change_add(c, &ch, &n_ch, &cap_ch, SNAPBACK_CUE_REMOVED, k->id, why)) ok = false;
            continue;
        }
        if (in_text) continue;
        if (!sb_grow((void **)&next.v, &next.cap, next.n + 1, sizeof *next.v)) {
            ok = false;
            break;
        }
        next.v[next.n++] = *k;
        memset(k, 0, sizeof *k);
    }
    for (size_t i = 0; i < p->found.n && ok; i++) {
        struct sb_cue *f2 = &p->found.v[i];
        if (f2->removed) continue;
        long k = known_at[i];
        if (k < 0 && next.n >= c->opt.max_breaks) {
            sb_reject(p, f2->id, f2->line, "more than %zu breaks", c->opt.max_breaks);
            continue;
        }
        if (k < 0) ok = change_add(c, &ch, &n_ch, &cap_ch, SNAPBACK_CUE_ADDED, f2->id, NULL);
        else if (!same_cue(&c->breaks.v[k], f2)) ok = change_add(c, &ch, &n_ch, &cap_ch, SNAPBACK_CUE_CHANGED, f2->id, NULL);
        if (!ok || !sb_grow((void **)&next.v, &next.cap, next.n + 1, sizeof *next.v)) {
            ok = false;
            break;
        }
        next.v[next.n++] = *f2;
        memset(f2, 0, sizeof *f2);
    }
    free(known_at);
    if (known_oom) p->oom = true;
    if (ok && !p->oom) ok = ids_merge(&c->ids, &p->ids);
    if (!ok || p->oom) {
        cue_list_free(&next);
        for (size_t i = 0; i < n_ch; i++) free(ch[i].id), free(ch[i].reason);
        free(ch);
        /* The known breaks moved into `next` are lost with it: start again from none. */
        cue_list_free(&c->breaks);
        return refused(c, p, SNAPBACK_E_NO_MEMORY);
    }
    if (next.n) qsort(next.v, next.n, sizeof *next.v, by_order);
    cue_list_free(&c->breaks);
    c->breaks = next;
    changes_free(c);
    c->changes = ch;
    c->n_changes = n_ch;
    note_list_free(&c->rejected);
    c->rejected = p->rejected;
    p->rejected = (struct sb_note_list){0};
    c->format = f;
    cue_list_free(&p->found);
    sb_index_free(&p->found_index);
    note_list_free(&p->removed);
    sb_ids_free(&p->ids);
    return rebuild_views(c);
}

int snapback_cues_update(snapback_cues *c, const char *text, size_t len) {
    if (!c) return SNAPBACK_E_INVALID;
    c->error[0] = 0;
    struct sb_parse p = {.opt = &c->opt, .window_start = -1, .hls = &c->hls};
    int rc = SNAPBACK_OK;
    snapback_cues_format f;
    size_t bad = 0;
    if (!text) return refused(c, &p, sb_fail(&p, "no text"));
    if (len > c->opt.max_bytes)
        return refused(c, &p, sb_fail(&p, "%zu bytes: more than the limit of %zu", len, c->opt.max_bytes));
    if (!sb_utf8_valid(text, len, &bad)) return refused(c, &p, sb_fail(&p, "not valid UTF-8 (byte %zu)", bad));
    f = c->opt.format ? c->opt.format : detect(text, len);
    if (f == SNAPBACK_CUES_AUTO)
        return refused(c, &p, sb_fail(&p, "not a manifest snapback reads (an HLS playlist, a DASH MPD or a VMAP document)"));
    if (c->format && f != c->format)
        return refused(c, &p, sb_fail(&p, "a refresh in %s of a %s manifest", snapback_cues_format_name(f),
                                      snapback_cues_format_name(c->format)));
    rc = f == SNAPBACK_CUES_HLS ? sb_parse_hls(&p, text, len)
         : f == SNAPBACK_CUES_DASH ? sb_parse_dash(&p, text, len)
                                   : sb_parse_vmap(&p, text, len);
    if (p.oom) rc = SNAPBACK_E_NO_MEMORY;
    if (rc != SNAPBACK_OK) return refused(c, &p, rc);
    bool live = p.live;
    double refresh = p.live ? p.refresh : 0;
    rc = merge(c, &p, f);
    if (rc == SNAPBACK_OK) c->live = live, c->refresh = refresh;
    return rc;
}

static bool cue_copy(struct sb_cue *dst, const struct sb_cue *src) {
    *dst = *src;
    dst->id = strdup(src->id);
    dst->ads = src->n_ads ? malloc(src->n_ads * sizeof *dst->ads) : NULL;
    if (!dst->id || (src->n_ads && !dst->ads)) {
        free(dst->id);
        free(dst->ads);
        memset(dst, 0, sizeof *dst);
        return false;
    }
    if (src->n_ads) memcpy(dst->ads, src->ads, src->n_ads * sizeof *dst->ads);
    return true;
}

int snapback_cues_update_emsg(snapback_cues *c, const uint8_t *box, size_t len, double segment_start,
                              double media_origin) {
    if (!c) return SNAPBACK_E_INVALID;
    c->error[0] = 0;
    /* A delta, not a whole text: it starts from every break known, so that it can extend, close or
     * cancel one, and leaves alone what it does not name. */
    struct sb_parse p = {.opt = &c->opt, .window_start = -1, .hls = &c->hls, .live = true, .known_ids = &c->ids};
    snapback_cues_format f = c->format ? c->format : c->opt.format; /* what it read, else what it was told */
    if (f && f != SNAPBACK_CUES_DASH)
        return refused(c, &p, sb_fail(&p, "an emsg box is DASH's: this reader reads %s", snapback_cues_format_name(f)));
    if (!sb_grow((void **)&p.found.v, &p.found.cap, c->breaks.n, sizeof *p.found.v)) return refused(c, &p, SNAPBACK_E_NO_MEMORY);
    for (size_t i = 0; i < c->breaks.n; i++) {
        if (!cue_copy(&p.found.v[i], &c->breaks.v[i])) return refused(c, &p, SNAPBACK_E_NO_MEMORY);
        p.found.n++;
    }
    /* Before any MPD, in-band events are read as a live stream's (a break without an end is open). */
    int rc = sb_parse_emsg(&p, box, len, segment_start, media_origin, !c->format || c->live);
    if (p.oom) rc = SNAPBACK_E_NO_MEMORY;
    if (rc != SNAPBACK_OK) return refused(c, &p, rc);
    return merge(c, &p, SNAPBACK_CUES_DASH);
}

/* The public views; and the session's list, overlaps refused (the daemon would refuse the whole list). */
static int rebuild_views(snapback_cues *c) {
    views_free(c);
    size_t n = c->breaks.n;
    c->pub = calloc(n ? n : 1, sizeof *c->pub);
    c->pub_changes = calloc(c->n_changes ? c->n_changes : 1, sizeof *c->pub_changes);
    c->session = calloc(n ? n : 1, sizeof *c->session);
    c->wire = calloc(n ? n : 1, sizeof *c->wire);
    c->wire_flags = calloc(n ? n : 1, sizeof *c->wire_flags);
    c->midrolls = calloc(n ? n : 1, sizeof *c->midrolls);
    if (!c->pub || !c->pub_changes || !c->session || !c->wire || !c->wire_flags || !c->midrolls) {
        views_free(c);
        return SNAPBACK_E_NO_MEMORY;
    }
    for (size_t i = 0; i < c->n_changes; i++)
        c->pub_changes[i] = (snapback_cue_change){c->changes[i].kind, c->changes[i].id, c->changes[i].reason};
    c->preroll = c->postroll = false;
    double end = -1, wire_end = -1;
    for (size_t i = 0; i < n; i++) {
        const struct sb_cue *b = &c->breaks.v[i];
        c->pub[i] = (snapback_cue_break){
            .id = b->id, .position = b->position, .start = b->start, .duration = b->duration, .open = b->open,
            .unfilled = b->unfilled, .ad_durations = b->ads, .n_ad_durations = b->n_ads,
            .has_content_resume_offset = b->has_resume, .content_resume_offset = b->resume,
            .restrictions = b->restrictions, .snap = b->snap, .once = b->once, .has_playout_limit = b->has_limit,
            .playout_limit = b->limit, .source = b->source,
        };
        const snapback_break sb = {
            .id = b->id, .start = b->start, .duration = b->duration, .ad_durations = b->ads,
            .n_ad_durations = b->n_ads, .has_content_resume_offset = b->has_resume,
            .content_resume_offset = b->resume,
        };
        /* The session calls' list: an open break at once (UpdateBreaks extends and closes it), an unfilled
         * one marked (it keeps its place, plays nothing); one without a length only while open (its
         * estimate grows), and none overlapping the one before it (the daemon would refuse the list). */
        if (c->format != SNAPBACK_CUES_VMAP && (b->duration > 0 || b->open) && b->start >= wire_end - 1e-9) {
            c->wire_flags[c->n_wire] = (struct sb_break_flags){
                .open = b->open,
                .unfilled = b->unfilled,
                .restrict_skip = (b->restrictions & SNAPBACK_CUE_RESTRICT_SKIP) != 0,
                .restrict_jump = (b->restrictions & SNAPBACK_CUE_RESTRICT_JUMP) != 0,
            };
            c->wire[c->n_wire++] = sb;
            wire_end = b->start + b->duration;
        }
        if (b->unfilled) continue;
        if (c->format == SNAPBACK_CUES_VMAP) {
            if (b->position == SNAPBACK_POSITION_PREROLL) c->preroll = true;
            else if (b->position == SNAPBACK_POSITION_POSTROLL) c->postroll = true;
            else c->midrolls[c->n_midrolls++] = b->start;
            continue;
        }
        /* The plain list has no open flag: an open break sent without it would be closed for the daemon,
         * its estimate final. It waits there for its end (snapback_session_open_cues sends it at once). */
        if (b->open || !(b->duration > 0) || b->start < end - 1e-9) continue;
        c->session[c->n_session++] = sb;
        end = b->start + b->duration;
    }
    return SNAPBACK_OK;
}

const char *snapback_cues_error(const snapback_cues *c) { return c ? c->error : "no reader"; }
snapback_cues_format snapback_cues_format_of(const snapback_cues *c) { return c ? c->format : SNAPBACK_CUES_AUTO; }
bool snapback_cues_is_live(const snapback_cues *c) { return c && c->live; }
double snapback_cues_refresh_interval(const snapback_cues *c) { return c ? c->refresh : 0; }

const snapback_cue_break *snapback_cues_breaks(const snapback_cues *c, size_t *n) {
    if (n) *n = c ? c->breaks.n : 0;
    return c ? c->pub : NULL;
}

const snapback_cue_note *snapback_cues_rejected(const snapback_cues *c, size_t *n) {
    if (n) *n = c ? c->rejected.n : 0;
    return c ? c->rejected.v : NULL;
}

const snapback_cue_change *snapback_cues_changes(const snapback_cues *c, size_t *n) {
    if (n) *n = c ? c->n_changes : 0;
    return c ? c->pub_changes : NULL;
}

const snapback_break *sb_cues_wire_breaks(const snapback_cues *c, size_t *n, const struct sb_break_flags **flags) {
    *n = c ? c->n_wire : 0;
    *flags = c ? c->wire_flags : NULL;
    return c ? c->wire : NULL;
}

const snapback_break *snapback_cues_session_breaks(const snapback_cues *c, size_t *n) {
    if (n) *n = c ? c->n_session : 0;
    return c ? c->session : NULL;
}

bool snapback_cues_ad_rules(const snapback_cues *c, snapback_ad_rules *out) {
    if (!c || !out || c->format != SNAPBACK_CUES_VMAP) return false;
    memset(out, 0, sizeof *out);
    out->preroll = c->preroll;
    out->postroll = c->postroll;
    out->midroll_times = c->midrolls;
    out->n_midroll_times = c->n_midrolls;
    return true;
}
