/* SPDX-License-Identifier: Apache-2.0 */
/* HLS media playlists (draft-pantos-hls-rfc8216bis, its Interstitials appendix, and the legacy
 * CUE-OUT family), read line by line in one bounded pass: the segments' durations and dates, the date
 * ranges merged by ID, and the cue tags at the segment they precede. The breaks are resolved after the
 * pass, once every segment's stream time and date are known. docs/cues-hls.md. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cues_internal.h"

#define MAX_ATTRS 48
#define INTERSTITIAL "com.apple.hls.interstitial"

struct seg {
    double dur;
    bool has_pdt;
    double pdt;
};

struct attr {
    const char *name, *val;
    size_t nlen, vlen;
};

struct range {
    const char *id;
    size_t idlen;
    unsigned line;
    struct attr *a;
    size_t na;
    const char *conflict; /* the attribute whose values differ */
    size_t conflict_len;
};

enum { EV_OUT, EV_CONT, EV_IN, EV_OATCLS };
struct ev {
    int kind;
    size_t seg; /* the segment the tag precedes */
    unsigned line;
    const char *arg;
    size_t len;
};

/* A range that has a CLASS and a START-DATE, for END-ON-NEXT: sorted by class, then date. */
struct dated {
    const char *cls;
    size_t clen;
    double t;
};

struct hls {
    struct sb_parse *p;
    struct seg *segs;
    size_t n_segs, cap_segs;
    struct range *ranges;
    size_t n_ranges, cap_ranges;
    struct sb_index range_index; /* ranges by ID */
    struct ev *evs;
    size_t n_evs, cap_evs;
    double *starts;   /* n_segs + 1 */
    double *pdt_max;  /* the segments' greatest program date up to each; NULL when they have none */
    struct dated *dated;
    size_t n_dated;
    bool have_dated;
};

void sb_hls_state_clear(struct sb_hls_state *s) {
    free(s->starts);
    free(s->open_id);
    memset(s, 0, sizeof *s);
}

static bool is(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* NAME=VALUE,NAME="VALUE",... into a; the count, or -1 when malformed. */
static long attr_list(const char *s, size_t n, struct attr *a, size_t max) {
    size_t i = 0, k = 0;
    while (i < n) {
        size_t ns = i;
        while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) i++;
        if (i == ns || i >= n || s[i] != '=') return -1;
        if (k == max) return -1;
        a[k].name = s + ns;
        a[k].nlen = i - ns;
        i++;
        if (i < n && s[i] == '"') {
            size_t vs = ++i;
            while (i < n && s[i] != '"') i++;
            if (i >= n) return -1;
            a[k].val = s + vs;
            a[k].vlen = i - vs;
            i++;
        } else {
            size_t vs = i;
            while (i < n && s[i] != ',') i++;
            a[k].val = s + vs;
            a[k].vlen = i - vs;
            if (a[k].vlen == 0) return -1;
        }
        k++;
        if (i < n) {
            if (s[i] != ',') return -1;
            i++;
            if (i == n) return -1;
        }
    }
    return (long)k;
}

static const struct attr *find_attr(const struct attr *a, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (is(a[i].name, a[i].nlen, name)) return &a[i];
    return NULL;
}

static bool range_key(const void *items, size_t i, const char **id, size_t *len) {
    const struct range *r = (const struct range *)items + i;
    *id = r->id;
    *len = r->idlen;
    return true;
}

static int add_range(struct hls *h, const struct attr *a, size_t n, unsigned line) {
    const struct attr *id = find_attr(a, n, "ID");
    if (!id || id->vlen == 0) {
        sb_reject(h->p, "", line, "EXT-X-DATERANGE without an ID");
        return 0;
    }
    if (id->vlen > SB_MAX_ID) {
        sb_reject(h->p, "", line, "EXT-X-DATERANGE: an ID of %zu bytes (at most %d)", id->vlen, SB_MAX_ID);
        return 0;
    }
    bool oom = false;
    long at = sb_index_find(&h->range_index, h->ranges, h->n_ranges, range_key, id->val, id->vlen, &oom);
    if (oom) return -1;
    struct range *r = at < 0 ? NULL : &h->ranges[at];
    if (!r) {
        if (!sb_grow((void **)&h->ranges, &h->cap_ranges, h->n_ranges + 1, sizeof *h->ranges)) return -1;
        r = &h->ranges[h->n_ranges++];
        memset(r, 0, sizeof *r);
        r->id = id->val;
        r->idlen = id->vlen;
        r->line = line;
    }
    /* Tags with one ID are one range; an attribute in both must have one value (RFC 8216bis 4.4.5.1). */
    for (size_t i = 0; i < n; i++) {
        const struct attr *old = NULL;
        for (size_t j = 0; j < r->na; j++)
            if (r->a[j].nlen == a[i].nlen && memcmp(r->a[j].name, a[i].name, a[i].nlen) == 0) old = &r->a[j];
        if (old) {
            if ((old->vlen != a[i].vlen || memcmp(old->val, a[i].val, a[i].vlen) != 0) && !r->conflict)
                r->conflict = a[i].name, r->conflict_len = a[i].nlen;
            continue;
        }
        if (r->na >= 4 * MAX_ATTRS) continue;
        struct attr *na = realloc(r->a, (r->na + 1) * sizeof *na);
        if (!na) return -1;
        r->a = na;
        r->a[r->na++] = a[i];
    }
    return 0;
}

static int add_ev(struct hls *h, int kind, unsigned line, const char *arg, size_t len) {
    if (!sb_grow((void **)&h->evs, &h->cap_evs, h->n_evs + 1, sizeof *h->evs)) return -1;
    h->evs[h->n_evs++] = (struct ev){kind, h->n_segs, line, arg, len};
    return 0;
}

/* The stream time of a date, through the segments' program dates; false without any. */
static bool place_date(const struct hls *h, double date, double *out) {
    if (!h->pdt_max || !h->n_segs) return false;
    /* The segment before the first whose date is later (its own when it is the first segment): the
     * first where the running greatest date passes `date`, found by halving. */
    size_t lo = 0, hi = h->n_segs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->pdt_max[mid] > date) hi = mid;
        else lo = mid + 1;
    }
    size_t best = lo ? lo - 1 : 0;
    *out = h->starts[best] + (date - h->segs[best].pdt);
    return isfinite(*out);
}

static int by_class_then_date(const void *a, const void *b) {
    const struct dated *x = a, *y = b;
    if (x->clen != y->clen) return x->clen < y->clen ? -1 : 1;
    int c = memcmp(x->cls, y->cls, x->clen);
    if (c) return c;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The earliest START-DATE after `after` of a range of class cls; INFINITY when none (or out of memory,
 * with p->oom set). */
static double next_of_class(struct hls *h, const struct attr *cls, double after) {
    if (!h->have_dated) {
        h->have_dated = true;
        h->dated = malloc((h->n_ranges ? h->n_ranges : 1) * sizeof *h->dated);
        if (!h->dated) {
            h->p->oom = true;
            return INFINITY;
        }
        for (size_t i = 0; i < h->n_ranges; i++) {
            const struct attr *c2 = find_attr(h->ranges[i].a, h->ranges[i].na, "CLASS"),
                              *s2 = find_attr(h->ranges[i].a, h->ranges[i].na, "START-DATE");
            double t2;
            if (c2 && s2 && sb_date(s2->val, s2->vlen, &t2))
                h->dated[h->n_dated++] = (struct dated){c2->val, c2->vlen, t2};
        }
        if (h->n_dated) qsort(h->dated, h->n_dated, sizeof *h->dated, by_class_then_date);
    }
    if (!h->dated) return INFINITY;
    /* The first entry past (cls, after). */
    struct dated key = {cls->val, cls->vlen, after};
    size_t lo = 0, hi = h->n_dated;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = by_class_then_date(&h->dated[mid], &key);
        if (c < 0 || (c == 0 && !(h->dated[mid].t > after))) lo = mid + 1;
        else hi = mid;
    }
    if (lo < h->n_dated && h->dated[lo].clen == cls->vlen && memcmp(h->dated[lo].cls, cls->val, cls->vlen) == 0)
        return h->dated[lo].t;
    return INFINITY;
}

static bool list_has(const char *v, size_t n, const char *word) {
    size_t w = strlen(word), i = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && v[i] != ',') i++;
        size_t a = s, b = i;
        while (a < b && v[a] == ' ') a++;
        while (b > a && v[b - 1] == ' ') b--;
        if (b - a == w && memcmp(v + a, word, w) == 0) return true;
        i++;
    }
    return false;
}

/* The words of an enumerated list that are not in `known`, for the note. */
static void unknown_words(const char *v, size_t n, const char *const *known, char *out, size_t size) {
    out[0] = 0;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && v[i] != ',') i++;
        bool ok = false;
        for (const char *const *k = known; *k; k++)
            if (strlen(*k) == i - s && memcmp(v + s, *k, i - s) == 0) ok = true;
        if (!ok && o + (i - s) + 2 < size) o += (size_t)snprintf(out + o, size - o, "%s%.*s", o ? "," : "", (int)(i - s), v + s);
        i++;
    }
}

/* A section's first break event, for a duration and an event id. */
static bool section(struct hls *h, const char *id, unsigned line, const char *name, const struct attr *a, bool hex,
                    snapback_scte35 *out) {
    uint8_t buf[4096];
    long n = hex ? sb_hex(a->val, a->vlen, buf, sizeof buf) : sb_base64(a->val, a->vlen, buf, sizeof buf);
    char err[128];
    if (n < 0) {
        sb_reject(h->p, id, line, "%s: not %s", name, hex ? "a hexadecimal sequence" : "base64");
        return false;
    }
    if (snapback_scte35_decode(buf, (size_t)n, out, err, sizeof err) != SNAPBACK_OK) {
        sb_reject(h->p, id, line, "%s: %s", name, err);
        return false;
    }
    return true;
}

static double clamp_estimate(const struct sb_parse *p, double v) { return v > p->opt->max_open ? p->opt->max_open : v; }

static void resolve_range(struct hls *h, struct range *r, double end, double target) {
    struct sb_parse *p = h->p;
    char id[SB_MAX_ID + 1];
    snprintf(id, sizeof id, "%.*s", (int)r->idlen, r->id);
    const struct attr *a = r->a;
    size_t n = r->na;
    const struct attr *cls = find_attr(a, n, "CLASS"), *sd = find_attr(a, n, "START-DATE"),
                      *cue = find_attr(a, n, "CUE"), *dur = find_attr(a, n, "DURATION"),
                      *planned = find_attr(a, n, "PLANNED-DURATION"), *ed = find_attr(a, n, "END-DATE"),
                      *eon = find_attr(a, n, "END-ON-NEXT"), *out = find_attr(a, n, "SCTE35-OUT"),
                      *in = find_attr(a, n, "SCTE35-IN"), *cmd = find_attr(a, n, "SCTE35-CMD");
    bool inter = cls && is(cls->val, cls->vlen, INTERSTITIAL);
    if (r->conflict) {
        sb_reject(p, id, r->line, "DATERANGE %s: tags with this ID give %.*s two values", id, (int)r->conflict_len,
                  r->conflict);
        return;
    }
    snapback_scte35 sec = {0};
    bool have_sec = false;
    if (out) have_sec = section(h, id, r->line, "SCTE35-OUT", out, true, &sec);
    else if (cmd) have_sec = section(h, id, r->line, "SCTE35-CMD", cmd, true, &sec);
    if (in && !out) {
        snapback_scte35 s2;
        (void)section(h, id, r->line, "SCTE35-IN", in, true, &s2);
    }
    bool cmd_out = false;
    if (have_sec && !out)
        for (size_t i = 0; i < sec.n_events; i++) cmd_out |= sec.events[i].out && !sec.events[i].cancel;
    if (!inter && !out && !in && !cmd_out) {
        sb_reject(p, id, r->line, "DATERANGE %s: not an ad break (no SCTE35-OUT/-IN, not an interstitial)", id);
        return;
    }
    if (!sd) {
        sb_reject(p, id, r->line, "DATERANGE %s: no START-DATE", id);
        return;
    }
    double start_date, start;
    if (!sb_date(sd->val, sd->vlen, &start_date)) {
        sb_reject(p, id, r->line, "DATERANGE %s: START-DATE is not a date with a time zone", id);
        return;
    }
    bool pre = cue && list_has(cue->val, cue->vlen, "PRE"), post = cue && list_has(cue->val, cue->vlen, "POST");
    bool once = cue && list_has(cue->val, cue->vlen, "ONCE");
    if (pre && post) {
        sb_reject(p, id, r->line, "DATERANGE %s: CUE has both PRE and POST", id);
        return;
    }
    if (cue) {
        static const char *const known[] = {"PRE", "POST", "ONCE", NULL};
        char bad[64];
        unknown_words(cue->val, cue->vlen, known, bad, sizeof bad);
        if (bad[0]) sb_reject(p, id, r->line, "DATERANGE %s: CUE value %s unknown: ignored", id, bad);
    }
    if (pre) start = 0;
    else if (post) start = end;
    else if (!place_date(h, start_date, &start)) {
        sb_reject(p, id, r->line, "DATERANGE %s: START-DATE cannot be placed: no EXT-X-PROGRAM-DATE-TIME", id);
        return;
    }
    double d = 0;
    bool closed = false, has_planned = false;
    double planned_d = 0;
    if (dur) {
        if (!sb_number(dur->val, dur->vlen, 0, SB_MAX_DURATION, &d)) {
            sb_reject(p, id, r->line, "DATERANGE %s: DURATION is not a number of seconds from 0 to 1e8", id);
            return;
        }
        closed = true;
    }
    if (ed) {
        double end_date;
        if (!sb_date(ed->val, ed->vlen, &end_date) || end_date < start_date) {
            sb_reject(p, id, r->line, "DATERANGE %s: END-DATE is not a date at or after START-DATE", id);
            return;
        }
        if (closed && fabs(end_date - start_date - d) > 0.001) {
            sb_reject(p, id, r->line, "DATERANGE %s: END-DATE and DURATION disagree", id);
            return;
        }
        d = end_date - start_date;
        closed = true;
    }
    if (eon && is(eon->val, eon->vlen, "YES")) {
        if (!cls) {
            sb_reject(p, id, r->line, "DATERANGE %s: END-ON-NEXT without a CLASS", id);
            return;
        }
        if (closed) {
            sb_reject(p, id, r->line, "DATERANGE %s: END-ON-NEXT with a DURATION or END-DATE", id);
            return;
        }
        /* It ends where the next range of its class starts. */
        double next = next_of_class(h, cls, start_date);
        if (isfinite(next)) {
            d = next - start_date;
            closed = true;
        }
    }
    if (closed && d > SB_MAX_DURATION) {
        sb_reject(p, id, r->line, "DATERANGE %s: lasts longer than 1e8 s", id);
        return;
    }
    if (planned) {
        if (!sb_number(planned->val, planned->vlen, 0, SB_MAX_DURATION, &planned_d)) {
            sb_reject(p, id, r->line, "DATERANGE %s: PLANNED-DURATION is not a number of seconds from 0 to 1e8", id);
            return;
        }
        has_planned = true;
    } else if (have_sec) {
        for (size_t i = 0; i < sec.n_events; i++)
            if (sec.events[i].has_duration && !has_planned) {
                has_planned = true;
                planned_d = (double)sec.events[i].duration / 90000.0;
            }
    }
    struct sb_cue *c = sb_found_find(p, id);
    if (c) {
        sb_reject(p, id, r->line, "DATERANGE %s: the ID of another break", id);
        return;
    }
    c = sb_found_add(p, id, strlen(id), inter ? "interstitial" : "daterange", r->line);
    if (!c) return;
    c->position = pre ? SNAPBACK_POSITION_PREROLL : post ? SNAPBACK_POSITION_POSTROLL : SNAPBACK_POSITION_MIDROLL;
    c->once = once;
    if (inter) {
        const struct attr *uri = find_attr(a, n, "X-ASSET-URI"), *list = find_attr(a, n, "X-ASSET-LIST"),
                          *resume = find_attr(a, n, "X-RESUME-OFFSET"), *limit = find_attr(a, n, "X-PLAYOUT-LIMIT"),
                          *restrict_ = find_attr(a, n, "X-RESTRICT"), *snap = find_attr(a, n, "X-SNAP");
        if (!uri == !list) {
            p->found.n--;
            sb_cue_clear(&p->found.v[p->found.n]);
            sb_reject(p, id, r->line, "interstitial %s: needs one of X-ASSET-URI and X-ASSET-LIST", id);
            return;
        }
        /* Its length: DURATION, else PLANNED-DURATION, capped by X-PLAYOUT-LIMIT (hls.js). */
        c->duration = closed ? d : has_planned ? planned_d : 0;
        if (limit) {
            if (sb_number(limit->val, limit->vlen, 0, SB_MAX_DURATION, &c->limit)) {
                c->has_limit = true;
                if (c->duration > c->limit || c->duration == 0) c->duration = c->limit;
            } else {
                sb_reject(p, id, r->line, "interstitial %s: X-PLAYOUT-LIMIT out of range: ignored", id);
            }
        }
        if (resume) {
            if (sb_number(resume->val, resume->vlen, 0, SB_MAX_DURATION, &c->resume)) c->has_resume = true;
            else sb_reject(p, id, r->line, "interstitial %s: X-RESUME-OFFSET out of range: ignored", id);
        }
        if (!c->has_resume) {
            /* Absent: the primary resumes after the interstitial's duration (Appendix D). */
            c->has_resume = true;
            c->resume = c->duration;
        }
        static const char *const rknown[] = {"SKIP", "JUMP", NULL}, *const sknown[] = {"OUT", "IN", NULL};
        char bad[64];
        if (restrict_) {
            if (list_has(restrict_->val, restrict_->vlen, "SKIP")) c->restrictions |= SNAPBACK_CUE_RESTRICT_SKIP;
            if (list_has(restrict_->val, restrict_->vlen, "JUMP")) c->restrictions |= SNAPBACK_CUE_RESTRICT_JUMP;
            unknown_words(restrict_->val, restrict_->vlen, rknown, bad, sizeof bad);
            if (bad[0]) sb_reject(p, id, r->line, "interstitial %s: X-RESTRICT value %s unknown: ignored", id, bad);
        }
        if (snap) {
            if (list_has(snap->val, snap->vlen, "OUT")) c->snap |= SNAPBACK_CUE_SNAP_OUT;
            if (list_has(snap->val, snap->vlen, "IN")) c->snap |= SNAPBACK_CUE_SNAP_IN;
            unknown_words(snap->val, snap->vlen, sknown, bad, sizeof bad);
            if (bad[0]) sb_reject(p, id, r->line, "interstitial %s: X-SNAP value %s unknown: ignored", id, bad);
        }
        if (c->duration == 0)
            sb_reject(p, id, r->line, "interstitial %s: no duration in the playlist (DURATION, PLANNED-DURATION or "
                                      "X-PLAYOUT-LIMIT): not given to the session", id);
    } else if (closed) {
        c->duration = d;
    } else if (p->live) {
        /* Open: its end comes in a later refresh. */
        c->open = true;
        double edge = end - start;
        c->duration = clamp_estimate(p, fmax(has_planned ? planned_d : 0, fmax(edge, target)));
    } else if (has_planned) {
        c->duration = planned_d;
    } else {
        p->found.n--;
        sb_cue_clear(&p->found.v[p->found.n]);
        sb_reject(p, id, r->line, "DATERANGE %s: no DURATION, END-DATE or PLANNED-DURATION in an ended playlist", id);
        return;
    }
    c->start = start;
    if (c->start < 0) {
        /* Begun before the first segment read: the part inside the stream. */
        c->duration += c->start;
        c->start = 0;
        if (!(c->duration > 0)) {
            p->found.n--;
            sb_cue_clear(&p->found.v[p->found.n]);
            sb_reject(p, id, r->line, "DATERANGE %s: ends before the stream's first segment", id);
            return;
        }
    }
    if (c->start > SB_MAX_TIME || c->start + c->duration > SB_MAX_TIME) {
        p->found.n--;
        sb_cue_clear(&p->found.v[p->found.n]);
        sb_reject(p, id, r->line, "DATERANGE %s: beyond the stream time range (1e10 s)", id);
        return;
    }
    if (c->start == 0 && c->position == SNAPBACK_POSITION_MIDROLL) c->position = SNAPBACK_POSITION_PREROLL;
}

/* CUE-OUT / CUE-OUT-CONT / CUE-IN / EXT-OATCLS-SCTE35, in segment order. */
static void resolve_cues(struct hls *h, double end, double target) {
    struct sb_parse *p = h->p;
    struct sb_hls_state *st = p->hls;
    bool open = false, has_planned = false;
    double open_start = 0, planned = 0;
    char open_id[64] = "";
    unsigned open_line = 0;
    const char *src = "cue-out";
    /* A CUE-OUT of an earlier refresh whose tag slid out of the window, still open: this text goes on. */
    if (st->open && st->open_start < h->starts[0] - 1e-6) {
        open = true;
        open_start = st->open_start;
        has_planned = st->open_has_planned;
        planned = st->open_planned;
        snprintf(open_id, sizeof open_id, "%s", st->open_id);
    }
    snapback_scte35 pending;
    bool have_pending = false;
    size_t pending_seg = (size_t)-1;
    for (size_t i = 0; i < h->n_evs; i++) {
        const struct ev *e = &h->evs[i];
        double at = h->starts[e->seg];
        if (e->kind == EV_OATCLS) {
            uint8_t buf[4096];
            long n = sb_base64(e->arg, e->len, buf, sizeof buf);
            char err[128];
            if (n < 0) sb_reject(p, "", e->line, "EXT-OATCLS-SCTE35: not base64");
            else if (snapback_scte35_decode(buf, (size_t)n, &pending, err, sizeof err) != SNAPBACK_OK)
                sb_reject(p, "", e->line, "EXT-OATCLS-SCTE35: %s", err);
            else have_pending = true, pending_seg = e->seg;
            continue;
        }
        if (e->kind == EV_OUT) {
            double d = 0;
            bool has_d = false;
            if (e->len) {
                struct attr a[8];
                long k = attr_list(e->arg, e->len, a, 8);
                const struct attr *da = k > 0 ? find_attr(a, (size_t)k, "DURATION") : NULL;
                if (da) has_d = sb_number(da->val, da->vlen, 0, SB_MAX_DURATION, &d);
                else has_d = sb_number(e->arg, e->len, 0, SB_MAX_DURATION, &d);
                if (!has_d) sb_reject(p, "", e->line, "EXT-X-CUE-OUT: a duration that is not seconds from 0 to 1e8: "
                                                      "read as unknown");
            }
            if (open) {
                if (fabs(open_start - at) < 1e-6) continue; /* the same CUE-OUT again */
                sb_reject(p, open_id, e->line, "EXT-X-CUE-OUT inside the open break %s: ignored", open_id);
                continue;
            }
            open = true;
            open_start = at;
            open_line = e->line;
            has_planned = has_d;
            planned = d;
            char t[32];
            sb_format_time(at, t, sizeof t);
            snprintf(open_id, sizeof open_id, "cue-out@%s", t);
            src = "cue-out";
            if (have_pending && pending_seg == e->seg) {
                for (size_t j = 0; j < pending.n_events; j++) {
                    const snapback_scte35_event *se = &pending.events[j];
                    if (!se->out || se->cancel) continue;
                    snprintf(open_id, sizeof open_id, "scte35-%u", (unsigned)se->event_id);
                    if (!has_planned && se->has_duration) has_planned = true, planned = (double)se->duration / 90000.0;
                    break;
                }
            }
            have_pending = false;
            continue;
        }
        if (e->kind == EV_CONT) {
            /* ElapsedTime=5,Duration=30 or 5/30 (MediaTailor, Wowza). */
            double el = -1, du = -1;
            struct attr a[8];
            long k = attr_list(e->arg, e->len, a, 8);
            const struct attr *ea = k > 0 ? find_attr(a, (size_t)k, "ElapsedTime") : NULL;
            const struct attr *da = k > 0 ? find_attr(a, (size_t)k, "Duration") : NULL;
            if (ea && !sb_number(ea->val, ea->vlen, 0, SB_MAX_DURATION, &el)) el = -1;
            if (da && !sb_number(da->val, da->vlen, 0, SB_MAX_DURATION, &du)) du = -1;
            if (k <= 0) {
                const char *slash = memchr(e->arg, '/', e->len);
                if (slash && (!sb_number(e->arg, (size_t)(slash - e->arg), 0, SB_MAX_DURATION, &el) ||
                              !sb_number(slash + 1, e->len - (size_t)(slash - e->arg) - 1, 0, SB_MAX_DURATION, &du)))
                    el = du = -1;
            }
            if (!open) {
                if (el < 0) {
                    sb_reject(p, "", e->line, "EXT-X-CUE-OUT-CONT without an elapsed time outside a break: ignored");
                    continue;
                }
                /* Joined a break mid-way: it began ElapsedTime before this segment. */
                open = true;
                open_start = at - el;
                open_line = e->line;
                char t[32];
                sb_format_time(open_start < 0 ? 0 : open_start, t, sizeof t);
                snprintf(open_id, sizeof open_id, "cue-out@%s", t);
                has_planned = false;
            }
            if (du >= 0) has_planned = true, planned = du;
            continue;
        }
        /* EV_IN */
        if (!open) {
            sb_reject(p, "", e->line, "EXT-X-CUE-IN without an open EXT-X-CUE-OUT: ignored");
            continue;
        }
        open = false;
        struct sb_cue *c = sb_found_find(p, open_id) ? NULL : sb_found_add(p, open_id, strlen(open_id), src, open_line);
        if (!c) {
            if (!p->oom) sb_reject(p, open_id, e->line, "EXT-X-CUE-OUT: the id of another break");
            continue;
        }
        c->start = open_start;
        c->duration = at - open_start;
    }
    st->open = false;
    free(st->open_id);
    st->open_id = NULL;
    if (open) {
        struct sb_cue *c = sb_found_find(p, open_id) ? NULL : sb_found_add(p, open_id, strlen(open_id), src, open_line);
        if (c) {
            c->start = open_start;
            if (p->live) {
                c->open = true;
                c->duration = clamp_estimate(p, fmax(has_planned ? planned : 0, fmax(end - open_start, target)));
                st->open = true;
                st->open_id = strdup(open_id);
                if (!st->open_id) p->oom = true;
                st->open_start = open_start;
                st->open_has_planned = has_planned;
                st->open_planned = planned;
            } else {
                c->duration = has_planned && open_start + planned <= end ? planned : end - open_start;
                sb_reject(p, open_id, open_line, "EXT-X-CUE-OUT without EXT-X-CUE-IN in an ended playlist: "
                                                 "closed at %s", has_planned && open_start + planned <= end
                                                                     ? "its DURATION" : "the playlist's end");
            }
        }
    }
    /* Bounds and the part inside the stream, for each cue break just made. */
    for (size_t i = 0; i < p->found.n; i++) {
        struct sb_cue *c = &p->found.v[i];
        if (strcmp(c->source, "cue-out") != 0) continue;
        if (c->start < 0) c->duration += c->start, c->start = 0;
        if (!(c->duration > 0) || c->start + c->duration > SB_MAX_TIME) {
            sb_reject(p, c->id, c->line, "EXT-X-CUE-OUT %s: no length inside the stream's time range", c->id);
            sb_cue_clear(c);
            p->found.v[i] = p->found.v[--p->found.n];
            sb_index_from(&p->found_index, i);
            i--;
            continue;
        }
        if (c->start == 0) c->position = SNAPBACK_POSITION_PREROLL;
    }
}

int sb_parse_hls(struct sb_parse *p, const char *text, size_t len) {
    struct hls h = {.p = p};
    int rc = SNAPBACK_OK;
    size_t i = 0, lines = 0;
    bool pending_pdt = false, ended = false, seen_header = false, vod = false;
    double pdt = 0, target = 0;
    uint64_t msn = 0, skipped = 0;
    double pending_dur = -1;
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
        i = 3;
    while (i < len) {
        const char *l = text + i;
        const char *nl = memchr(l, '\n', len - i);
        size_t n = nl ? (size_t)(nl - l) : len - i;
        i += n + 1;
        if (n && l[n - 1] == '\r') n--;
        unsigned line = (unsigned)++lines;
        if (lines > p->opt->max_items) {
            rc = sb_fail(p, "more than %zu lines", p->opt->max_items);
            goto out;
        }
        if (!seen_header) {
            while (n && (*l == ' ' || *l == '\t')) l++, n--;
            if (n == 0) continue;
            if (!is(l, n, "#EXTM3U")) {
                rc = sb_fail(p, "line %u: an HLS playlist starts with #EXTM3U", line);
                goto out;
            }
            seen_header = true;
            continue;
        }
        if (n == 0) continue;
        if (l[0] != '#') {
            /* A segment's URI: the segment ends here. */
            if (pending_dur < 0) continue; /* a URI without EXTINF: not a segment snapback can time */
            if (!sb_grow((void **)&h.segs, &h.cap_segs, h.n_segs + 1, sizeof *h.segs)) goto oom;
            h.segs[h.n_segs++] = (struct seg){pending_dur, pending_pdt, pdt};
            pending_dur = -1;
            pending_pdt = false;
            continue;
        }
        if (n < 4 || memcmp(l, "#EXT", 4) != 0) continue; /* a comment */
        const char *colon = memchr(l, ':', n);
        size_t tn = colon ? (size_t)(colon - l) : n;
        const char *arg = colon ? colon + 1 : l + n;
        size_t an = colon ? n - tn - 1 : 0;
        if (is(l, tn, "#EXTINF")) {
            const char *comma = memchr(arg, ',', an);
            size_t dn = comma ? (size_t)(comma - arg) : an;
            if (!sb_number(arg, dn, 0, 86400, &pending_dur)) {
                rc = sb_fail(p, "line %u: EXTINF duration is not seconds from 0 to 86400", line);
                goto out;
            }
        } else if (is(l, tn, "#EXT-X-PROGRAM-DATE-TIME")) {
            if (sb_date(arg, an, &pdt)) pending_pdt = true;
            else sb_reject(p, "", line, "EXT-X-PROGRAM-DATE-TIME is not a date with a time zone: ignored");
        } else if (is(l, tn, "#EXT-X-MEDIA-SEQUENCE")) {
            if (h.n_segs || !sb_uint(arg, an, UINT32_MAX * 1024ull, &msn)) {
                rc = sb_fail(p, "line %u: EXT-X-MEDIA-SEQUENCE is not a number before the first segment", line);
                goto out;
            }
        } else if (is(l, tn, "#EXT-X-TARGETDURATION")) {
            uint64_t t;
            if (!sb_uint(arg, an, 86400, &t)) {
                rc = sb_fail(p, "line %u: EXT-X-TARGETDURATION is not whole seconds up to 86400", line);
                goto out;
            }
            target = (double)t;
        } else if (is(l, tn, "#EXT-X-ENDLIST")) {
            ended = true;
        } else if (is(l, tn, "#EXT-X-PLAYLIST-TYPE")) {
            vod = is(arg, an, "VOD");
        } else if (is(l, tn, "#EXT-X-STREAM-INF") || is(l, tn, "#EXT-X-I-FRAME-STREAM-INF")) {
            rc = sb_fail(p, "line %u: a multivariant playlist: give one of its media playlists", line);
            goto out;
        } else if (is(l, tn, "#EXT-X-DATERANGE")) {
            struct attr a[MAX_ATTRS];
            long k = attr_list(arg, an, a, MAX_ATTRS);
            if (k < 0) sb_reject(p, "", line, "EXT-X-DATERANGE: a malformed attribute list (or more than %d)", MAX_ATTRS);
            else if (add_range(&h, a, (size_t)k, line) < 0) goto oom;
        } else if (is(l, tn, "#EXT-X-CUE-OUT")) {
            if (add_ev(&h, EV_OUT, line, arg, an) < 0) goto oom;
        } else if (is(l, tn, "#EXT-X-CUE-OUT-CONT")) {
            if (add_ev(&h, EV_CONT, line, arg, an) < 0) goto oom;
        } else if (is(l, tn, "#EXT-X-CUE-IN")) {
            if (add_ev(&h, EV_IN, line, arg, an) < 0) goto oom;
        } else if (is(l, tn, "#EXT-OATCLS-SCTE35")) {
            if (add_ev(&h, EV_OATCLS, line, arg, an) < 0) goto oom;
        } else if (is(l, tn, "#EXT-X-SKIP")) {
            struct attr a[8];
            long k = attr_list(arg, an, a, 8);
            const struct attr *s = k > 0 ? find_attr(a, (size_t)k, "SKIPPED-SEGMENTS") : NULL;
            const struct attr *rr = k > 0 ? find_attr(a, (size_t)k, "RECENTLY-REMOVED-DATERANGES") : NULL;
            if (!s || h.n_segs || !sb_uint(s->val, s->vlen, 1u << 20, &skipped)) {
                rc = sb_fail(p, "line %u: EXT-X-SKIP without a SKIPPED-SEGMENTS count before the segments", line);
                goto out;
            }
            /* Tab-separated IDs the server removed. */
            for (size_t j = 0, st = 0; rr && j <= rr->vlen; j++) {
                if (j < rr->vlen && rr->val[j] != '\t') continue;
                if (j > st && j - st <= SB_MAX_ID) {
                    char id[SB_MAX_ID + 1];
                    snprintf(id, sizeof id, "%.*s", (int)(j - st), rr->val + st);
                    sb_remove(p, id, "removed by the server (RECENTLY-REMOVED-DATERANGES)");
                }
                st = j + 1;
            }
        }
    }
    if (!seen_header) {
        rc = sb_fail(p, "an empty text: an HLS playlist starts with #EXTM3U");
        goto out;
    }
    p->live = !ended && !vod;
    /* RFC 8216bis 6.3.4: a client reloads a live media playlist after its target duration. */
    if (p->live) p->refresh = target;

    /* Stream times: the first playlist's first segment is 0; a refresh's segments keep the times their
     * media sequence numbers had (or follow on from the last known one). */
    struct sb_hls_state *st = p->hls;
    uint64_t first = msn + skipped;
    double base = 0;
    if (st->have && st->n_starts) {
        uint64_t last = st->msn0 + st->n_starts - 1;
        double t = st->target > 0 ? st->target : target;
        if (first >= st->msn0 && first <= last) base = st->starts[first - st->msn0];
        else if (first > last) base = st->starts[st->n_starts - 1] + (double)(first - last) * t;
        else base = st->starts[0] - (double)(st->msn0 - first) * t;
    }
    h.starts = malloc((h.n_segs + 1) * sizeof *h.starts);
    if (!h.starts) goto oom;
    h.starts[0] = base;
    for (size_t s = 0; s < h.n_segs; s++) h.starts[s + 1] = h.starts[s] + h.segs[s].dur;
    double end = h.starts[h.n_segs];
    if (!(end <= SB_MAX_TIME) || base < -SB_MAX_TIME) {
        rc = sb_fail(p, "the playlist's times leave the stream time range (1e10 s)");
        goto out;
    }
    /* Every segment's date, from the nearest EXT-X-PROGRAM-DATE-TIME before it (or after, back). */
    long anchor = -1;
    for (size_t s = 0; s < h.n_segs; s++) {
        if (h.segs[s].has_pdt) {
            if (anchor < 0)
                for (size_t b = s; b-- > 0;) h.segs[b].pdt = h.segs[b + 1].pdt - h.segs[b].dur, h.segs[b].has_pdt = true;
            anchor = (long)s;
        } else if (anchor >= 0) {
            h.segs[s].pdt = h.segs[s - 1].pdt + h.segs[s - 1].dur;
            h.segs[s].has_pdt = true;
        }
    }
    if (h.n_segs && h.segs[0].has_pdt) {
        /* Every segment has its date once one has (above). */
        if (!(h.pdt_max = malloc(h.n_segs * sizeof *h.pdt_max))) goto oom;
        for (size_t s = 0; s < h.n_segs; s++)
            h.pdt_max[s] = s && h.pdt_max[s - 1] > h.segs[s].pdt ? h.pdt_max[s - 1] : h.segs[s].pdt;
    }
    if (p->live) p->window_start = base;
    for (size_t r = 0; r < h.n_ranges && !p->oom; r++) resolve_range(&h, &h.ranges[r], end, target);
    resolve_cues(&h, end, target);
    if (p->oom) goto oom;
    free(st->starts);
    st->starts = h.starts;
    h.starts = NULL;
    st->n_starts = h.n_segs + 1;
    st->msn0 = first;
    st->target = target;
    st->have = true;
    goto out;
oom:
    p->oom = true;
    rc = SNAPBACK_E_NO_MEMORY;
out:
    for (size_t r = 0; r < h.n_ranges; r++) free(h.ranges[r].a);
    free(h.ranges);
    sb_index_free(&h.range_index);
    free(h.pdt_max);
    free(h.dated);
    free(h.segs);
    free(h.evs);
    free(h.starts);
    return rc;
}
