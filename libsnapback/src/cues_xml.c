/* SPDX-License-Identifier: Apache-2.0 */
/* The XML formats through expat: DASH MPD EventStreams (SCTE 214-1: SCTE-35 as XML or as a base64
 * section) and IAB VMAP 1.0. One reader for both: any DOCTYPE (hence any entity declaration) refused,
 * whatever the installed expat's own protections; nesting, elements and text bounded; names matched
 * on their local part, so a document with the namespace written either way (or a prefix it never
 * declared) reads the same. docs/cues-dash.md, docs/cues-vmap.md. */
#define _GNU_SOURCE
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cues_internal.h"

#define MAX_DEPTH 32
#define MAX_TEXT 65536
#define MAX_ATTRS 64

struct xml {
    struct sb_parse *p;
    const struct sb_xml_handler *h;
    XML_Parser parser;
    unsigned depth;
    size_t elements;
    char *text; /* grown as needed, up to MAX_TEXT */
    size_t text_len, text_cap;
    bool stopped;
};

static const char *local(const char *name) {
    const char *c = strrchr(name, ':');
    return c ? c + 1 : name;
}

/* expat 2.9 (Debian sid) deprecates XML_GetCurrentLineNumber for a 64-bit call that bookworm's 2.5
 * lacks; a manifest's line number fits an unsigned long on either. */
static unsigned long line_of(XML_Parser parser) {
#if XML_MAJOR_VERSION > 2 || (XML_MAJOR_VERSION == 2 && XML_MINOR_VERSION >= 9)
    return (unsigned long)XML_GetCurrentLineNumber64(parser);
#else
    return (unsigned long)XML_GetCurrentLineNumber(parser);
#endif
}

static void stop(struct xml *x, const char *fmt, const char *arg) {
    if (x->stopped) return;
    x->stopped = true;
    snprintf(x->p->err, sizeof x->p->err, fmt, arg, line_of(x->parser));
    XML_StopParser(x->parser, XML_FALSE);
}

static void XMLCALL on_doctype(void *u, const XML_Char *name, const XML_Char *sys, const XML_Char *pub, int internal) {
    (void)sys, (void)pub, (void)internal;
    stop(u, "a DOCTYPE (%s, line %lu): refused", name);
}

static void XMLCALL on_entity(void *u, const XML_Char *name, int pe, const XML_Char *v, int vl, const XML_Char *b,
                              const XML_Char *s, const XML_Char *pid, const XML_Char *nn) {
    (void)pe, (void)v, (void)vl, (void)b, (void)s, (void)pid, (void)nn;
    stop(u, "an entity declaration (%s, line %lu): refused", name);
}

static void XMLCALL on_start(void *u, const XML_Char *name, const XML_Char **atts) {
    struct xml *x = u;
    if (x->stopped) return;
    if (x->depth >= MAX_DEPTH) return stop(x, "elements nested deeper than 32 (%s, line %lu)", local(name));
    if (++x->elements > x->p->opt->max_items) return stop(x, "more elements than the limit (%s, line %lu)", local(name));
    const char *a[2 * MAX_ATTRS + 1];
    size_t k = 0;
    for (size_t i = 0; atts[i] && atts[i + 1]; i += 2) {
        if (strncmp(atts[i], "xmlns", 5) == 0 && (atts[i][5] == 0 || atts[i][5] == ':')) continue;
        if (k == 2 * MAX_ATTRS) return stop(x, "more than 64 attributes (%s, line %lu)", local(name));
        a[k++] = local(atts[i]);
        a[k++] = atts[i + 1];
    }
    a[k] = NULL;
    x->text_len = 0;
    x->h->start(x->h->user, local(name), a, x->depth, (unsigned)line_of(x->parser));
    x->depth++;
}

static void XMLCALL on_end(void *u, const XML_Char *name) {
    struct xml *x = u;
    if (x->stopped) return;
    x->depth--;
    if (x->text) x->text[x->text_len] = 0;
    x->h->end(x->h->user, local(name), x->text ? x->text : "", x->text_len, x->depth);
    x->text_len = 0;
}

static void XMLCALL on_text(void *u, const XML_Char *s, int len) {
    struct xml *x = u;
    if (x->stopped || len <= 0) return;
    if ((size_t)len > MAX_TEXT - 1 - x->text_len) return stop(x, "an element's text longer than 64 KiB (%s, line %lu)", "");
    if (x->text_len + (size_t)len + 1 > x->text_cap) {
        size_t cap = x->text_cap ? x->text_cap : 256;
        while (cap < x->text_len + (size_t)len + 1) cap *= 2;
        char *t = realloc(x->text, cap);
        if (!t) {
            x->p->oom = true;
            return stop(x, "out of memory (%s, line %lu)", "");
        }
        x->text = t;
        x->text_cap = cap;
    }
    memcpy(x->text + x->text_len, s, (size_t)len);
    x->text_len += (size_t)len;
}

int sb_xml_parse(struct sb_parse *p, const char *text, size_t len, const struct sb_xml_handler *h) {
    struct xml *x = calloc(1, sizeof *x);
    if (!x) return p->oom = true, SNAPBACK_E_NO_MEMORY;
    x->p = p;
    x->h = h;
    /* The text was checked to be UTF-8: read it as that, whatever its declaration says. */
    x->parser = XML_ParserCreate("UTF-8");
    if (!x->parser) {
        free(x);
        return p->oom = true, SNAPBACK_E_NO_MEMORY;
    }
    XML_SetUserData(x->parser, x);
    XML_SetStartDoctypeDeclHandler(x->parser, on_doctype);
    XML_SetEntityDeclHandler(x->parser, on_entity);
    XML_SetParamEntityParsing(x->parser, XML_PARAM_ENTITY_PARSING_NEVER);
    XML_SetElementHandler(x->parser, on_start, on_end);
    XML_SetCharacterDataHandler(x->parser, on_text);
    int rc = SNAPBACK_OK;
    if (len > (size_t)INT32_MAX) {
        rc = sb_fail(p, "too large");
    } else if (XML_Parse(x->parser, text, (int)len, XML_TRUE) != XML_STATUS_OK || x->stopped) {
        if (!x->stopped)
            sb_fail(p, "not well-formed XML: %s (line %lu)", XML_ErrorString(XML_GetErrorCode(x->parser)),
                    line_of(x->parser));
        rc = p->oom ? SNAPBACK_E_NO_MEMORY : SNAPBACK_INVALID_ARGUMENT;
    }
    XML_ParserFree(x->parser);
    free(x->text);
    free(x);
    return rc;
}

const char *sb_xml_attr(const char **attrs, const char *name) {
    for (size_t i = 0; attrs[i]; i += 2)
        if (strcmp(attrs[i], name) == 0) return attrs[i + 1];
    return NULL;
}

static bool xml_bool(const char *v) { return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0); }

static bool attr_uint(const char **a, const char *name, uint64_t max, uint64_t *out) {
    const char *v = sb_xml_attr(a, name);
    return v && sb_uint(v, strlen(v), max, out);
}

/* Leading and trailing whitespace off text. */
static const char *trim(const char *s, size_t *n) {
    while (*n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++, (*n)--;
    while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t' || s[*n - 1] == '\r' || s[*n - 1] == '\n')) (*n)--;
    return s;
}

/* ---------------------------------------------------------------------------------------------- */
/* DASH                                                                                           */

enum { SCHEME_NONE, SCHEME_XML, SCHEME_XML_BIN, SCHEME_BIN };

#define MAX_SEEN 4096

struct dash {
    struct sb_parse *p;
    bool root, dynamic;
    double refresh; /* MPD@minimumUpdatePeriod of a dynamic MPD, seconds */
    unsigned period_n;
    double period_start, period_duration;
    bool period_has_duration;
    char period_id[SB_MAX_ID + 1];
    int scheme;
    char scheme_uri[SB_MAX_ID + 1], value[SB_MAX_ID + 1]; /* the EventStream's, for the emsg dedupe */
    unsigned stream_n;
    uint64_t timescale, pto;
    bool in_event;
    unsigned event_line;
    char event_id[64];
    uint64_t pt, dur;
    bool has_dur, dup;
    const char *message_data_attr;
    char message_data[4096]; /* an Event@messageData */
    /* The SCTE-35 of the event: from the XML elements, or a section. */
    snapback_scte35 sec;
    bool have_sec, sec_bad;
    snapback_scte35_event *cur; /* the XML element being filled */
    /* Event ids seen in this EventStream. */
    char (*seen)[64];
    size_t n_seen, cap_seen;
    struct sb_index seen_index;
};

void sb_scte35_apply(struct sb_parse *p, const snapback_scte35 *sec, double t, bool has_dur, double dur,
                     bool dynamic, const char *what, const char *item_id, unsigned line) {
    if (sec->n_events == 0) {
        sb_reject(p, item_id, line, "%s: no SCTE-35 break in it", what);
        return;
    }
    if (!(t <= SB_MAX_TIME)) {
        sb_reject(p, item_id, line, "%s: beyond the stream time range (1e10 s)", what);
        return;
    }
    for (size_t i = 0; i < sec->n_events; i++) {
        const snapback_scte35_event *e = &sec->events[i];
        char id[32];
        snprintf(id, sizeof id, "scte35-%u", (unsigned)e->event_id);
        struct sb_cue *c = sb_found_find(p, id);
        if (e->cancel) {
            sb_remove(p, id, "cancelled (SCTE-35 cancel indicator, %s)", what);
            continue;
        }
        if (!e->out) {
            /* A return to the network ends its event's open break. */
            if (c && c->open && t - c->start > SB_MAX_DURATION) {
                sb_reject(p, id, line, "%s: the end of break %s more than 1e8 s after its start: ignored", what, id);
            } else if (c && c->open && t > c->start) {
                c->open = false;
                c->duration = t - c->start;
            } else if (!c) {
                sb_reject(p, id, line, "%s: the end of break %s, which this MPD does not start", what, id);
            }
            continue;
        }
        if (c) {
            if (fabs(c->start - t) > 1e-6) sb_reject(p, id, line, "%s: another start for %s: ignored", what, id);
            continue;
        }
        bool closed = false;
        if (has_dur && dur > 0) {
            closed = true;
        } else if (e->has_duration && e->duration > 0) {
            dur = (double)e->duration / 90000.0;
            closed = true;
        }
        if (!closed && !dynamic) {
            sb_reject(p, id, line, "%s: no duration in a static MPD", what);
            continue;
        }
        if (dur > SB_MAX_DURATION || t + dur > SB_MAX_TIME) {
            sb_reject(p, id, line, "%s: a duration beyond the range", what);
            continue;
        }
        c = sb_found_add(p, id, strlen(id), "scte35", line);
        if (!c) return;
        c->start = t;
        c->duration = closed ? dur : 0;
        c->open = !closed;
        c->position = t == 0 ? SNAPBACK_POSITION_PREROLL : SNAPBACK_POSITION_MIDROLL;
    }
}

static void dash_event_apply(struct dash *d) {
    struct sb_parse *p = d->p;
    if (d->dup || d->sec_bad) return;
    char what[80];
    snprintf(what, sizeof what, "Event %s", d->event_id);
    if (!d->have_sec || d->sec.n_events == 0) {
        sb_reject(p, d->event_id, d->event_line, "%s: no SCTE-35 break in it", what);
        return;
    }
    if (d->pt < d->pto) {
        sb_reject(p, d->event_id, d->event_line, "%s: presentationTime before the presentationTimeOffset", what);
        return;
    }
    double t = d->period_start + (double)(d->pt - d->pto) / (double)d->timescale;
    double dur = d->has_dur ? (double)d->dur / (double)d->timescale : 0;
    sb_scte35_apply(p, &d->sec, t, d->has_dur, dur, d->dynamic, what, d->event_id, d->event_line);
}

static void dash_section_text(struct dash *d, const char *s, size_t n) {
    uint8_t buf[4096];
    s = trim(s, &n);
    long k = sb_base64(s, n, buf, sizeof buf);
    char err[128];
    if (k < 0) {
        sb_reject(d->p, d->event_id, d->event_line, "Event %s: the section is not base64", d->event_id);
        d->sec_bad = true;
    } else if (snapback_scte35_decode(buf, (size_t)k, &d->sec, err, sizeof err) != SNAPBACK_OK) {
        sb_reject(d->p, d->event_id, d->event_line, "Event %s: %s", d->event_id, err);
        d->sec_bad = true;
    } else {
        d->have_sec = true;
    }
}

static bool seen_key(const void *items, size_t i, const char **id, size_t *len) {
    const char *e = ((const char (*)[64])items)[i];
    *id = e;
    *len = strlen(e);
    return true;
}

static void dash_start(void *u, const char *name, const char **a, unsigned depth, unsigned line) {
    struct dash *d = u;
    struct sb_parse *p = d->p;
    if (depth == 0) {
        d->root = strcmp(name, "MPD") == 0;
        const char *type = sb_xml_attr(a, "type");
        d->dynamic = type && strcmp(type, "dynamic") == 0;
        /* ISO/IEC 23009-1 5.4: a dynamic MPD is fetched again at the latest after minimumUpdatePeriod. */
        const char *mup = sb_xml_attr(a, "minimumUpdatePeriod");
        double period;
        if (d->dynamic && mup && sb_xs_duration(mup, strlen(mup), &period)) d->refresh = period;
        return;
    }
    if (strcmp(name, "Period") == 0 && depth == 1) {
        double start = d->period_n == 0 ? 0 : d->period_start + (d->period_has_duration ? d->period_duration : 0);
        const char *s = sb_xml_attr(a, "start"), *du = sb_xml_attr(a, "duration"), *id = sb_xml_attr(a, "id");
        if (s && !sb_xs_duration(s, strlen(s), &start))
            sb_reject(p, id ? id : "", line, "Period %s: start is not a duration: read as following the last",
                      id ? id : "");
        d->period_start = start;
        d->period_has_duration = du && sb_xs_duration(du, strlen(du), &d->period_duration);
        snprintf(d->period_id, sizeof d->period_id, "%s", id ? id : "");
        d->period_n++;
        return;
    }
    if (strcmp(name, "EventStream") == 0 && depth == 2) {
        const char *scheme = sb_xml_attr(a, "schemeIdUri");
        d->scheme = !scheme ? SCHEME_NONE
                    : strcmp(scheme, "urn:scte:scte35:2013:xml") == 0      ? SCHEME_XML
                    : strcmp(scheme, "urn:scte:scte35:2014:xml+bin") == 0  ? SCHEME_XML_BIN
                    : strcmp(scheme, "urn:scte:scte35:2013:bin") == 0      ? SCHEME_BIN
                                                                           : SCHEME_NONE;
        d->timescale = 1;
        d->pto = 0;
        d->n_seen = 0;
        sb_index_from(&d->seen_index, 0);
        if (d->scheme == SCHEME_NONE) return;
        const char *value = sb_xml_attr(a, "value");
        snprintf(d->scheme_uri, sizeof d->scheme_uri, "%s", scheme);
        snprintf(d->value, sizeof d->value, "%s", value ? value : "");
        if (sb_xml_attr(a, "timescale") && (!attr_uint(a, "timescale", UINT32_MAX, &d->timescale) || !d->timescale)) {
            sb_reject(p, "", line, "EventStream %s: timescale is not a number from 1 to 2^32-1: its events ignored", scheme);
            d->scheme = SCHEME_NONE;
        }
        if (sb_xml_attr(a, "presentationTimeOffset") && !attr_uint(a, "presentationTimeOffset", INT64_MAX, &d->pto)) {
            sb_reject(p, "", line, "EventStream %s: presentationTimeOffset out of range: its events ignored", scheme);
            d->scheme = SCHEME_NONE;
        }
        return;
    }
    if (d->scheme == SCHEME_NONE) return;
    if (strcmp(name, "Event") == 0 && depth == 3) {
        d->in_event = true;
        d->event_line = line;
        d->have_sec = d->sec_bad = d->dup = false;
        memset(&d->sec, 0, sizeof d->sec);
        d->cur = NULL;
        const char *id = sb_xml_attr(a, "id");
        snprintf(d->event_id, sizeof d->event_id, "%s", id ? id : "");
        d->pt = 0;
        d->has_dur = false;
        if (sb_xml_attr(a, "presentationTime") && !attr_uint(a, "presentationTime", INT64_MAX, &d->pt)) {
            sb_reject(p, d->event_id, line, "Event %s: presentationTime out of range", d->event_id);
            d->sec_bad = true;
        }
        if (sb_xml_attr(a, "duration")) {
            d->has_dur = attr_uint(a, "duration", INT64_MAX, &d->dur);
            if (!d->has_dur) {
                sb_reject(p, d->event_id, line, "Event %s: duration out of range", d->event_id);
                d->sec_bad = true;
            }
        }
        /* The same Event id twice in one EventStream is one event (DASH 5.10.2): the first counts. */
        if (id) {
            bool oom = false;
            d->dup = sb_index_find(&d->seen_index, d->seen, d->n_seen, seen_key, d->event_id, strlen(d->event_id),
                                   &oom) >= 0;
            if (oom) p->oom = true;
            if (d->dup) sb_reject(p, d->event_id, line, "Event %s: a repeated Event id: the first kept", d->event_id);
            else if (d->n_seen < MAX_SEEN) {
                if (d->n_seen == d->cap_seen) {
                    size_t cap = d->cap_seen ? 2 * d->cap_seen : 16;
                    void *s = realloc(d->seen, cap * sizeof *d->seen);
                    if (!s) {
                        p->oom = true;
                        return;
                    }
                    d->seen = s;
                    d->cap_seen = cap;
                }
                snprintf(d->seen[d->n_seen++], 64, "%s", d->event_id);
            }
            /* Event@id is an xs:unsignedInt, an emsg's id a uint32: "007" and 7 are one id. */
            uint64_t num;
            char key[24];
            const char *k = d->event_id;
            if (sb_uint(id, strlen(id), UINT32_MAX, &num)) snprintf(key, sizeof key, "%u", (unsigned)num), k = key;
            if (!d->dup && !sb_ids_add(&p->ids, d->scheme_uri, d->value, k)) p->oom = true;
        }
        const char *md = sb_xml_attr(a, "messageData");
        d->message_data[0] = 0;
        if (md) snprintf(d->message_data, sizeof d->message_data, "%s", md);
        return;
    }
    if (!d->in_event || d->scheme != SCHEME_XML) return;
    /* SCTE 35 XML (SCTE 35 Annex, SpliceInfoSection). */
    snapback_scte35 *s = &d->sec;
    if (strcmp(name, "SpliceInfoSection") == 0) {
        d->have_sec = true;
        attr_uint(a, "ptsAdjustment", (1ull << 33) - 1, &s->pts_adjustment);
    } else if (strcmp(name, "SpliceInsert") == 0 || strcmp(name, "SegmentationDescriptor") == 0) {
        bool insert = name[1] == 'p';
        if (s->n_events >= SNAPBACK_SCTE35_MAX_EVENTS) {
            s->n_other++;
            d->cur = NULL;
            return;
        }
        snapback_scte35_event *e = &s->events[s->n_events];
        memset(e, 0, sizeof *e);
        uint64_t v;
        if (!attr_uint(a, insert ? "spliceEventId" : "segmentationEventId", UINT32_MAX, &v)) {
            sb_reject(p, d->event_id, line, "Event %s: %s without a valid event id", d->event_id, name);
            d->sec_bad = true;
            return;
        }
        e->event_id = (uint32_t)v;
        e->cancel = xml_bool(sb_xml_attr(a, insert ? "spliceEventCancelIndicator" : "segmentationEventCancelIndicator"));
        if (insert) {
            s->command_type = SNAPBACK_SCTE35_SPLICE_INSERT;
            e->out = xml_bool(sb_xml_attr(a, "outOfNetworkIndicator"));
            e->immediate = xml_bool(sb_xml_attr(a, "spliceImmediateFlag"));
            if (attr_uint(a, "uniqueProgramId", 65535, &v)) e->unique_program_id = (uint16_t)v;
        } else {
            if (!s->command_type) s->command_type = SNAPBACK_SCTE35_TIME_SIGNAL;
            if (attr_uint(a, "segmentationDuration", (1ull << 40) - 1, &v)) e->has_duration = true, e->duration = v;
            if (!e->cancel) {
                if (!attr_uint(a, "segmentationTypeId", 255, &v) || !sb_scte35_is_break_type((unsigned)v, &e->out)) {
                    s->n_other++;
                    d->cur = NULL;
                    return;
                }
                e->segmentation_type = (uint8_t)v;
            }
        }
        d->cur = e;
        s->n_events++;
    } else if (strcmp(name, "BreakDuration") == 0 && d->cur) {
        uint64_t v;
        if (attr_uint(a, "duration", (1ull << 33) - 1, &v)) d->cur->has_duration = true, d->cur->duration = v;
        d->cur->auto_return = xml_bool(sb_xml_attr(a, "autoReturn"));
    }
}

static void dash_end(void *u, const char *name, const char *text, size_t len, unsigned depth) {
    struct dash *d = u;
    if (depth == 0 && !d->root) return;
    if (strcmp(name, "EventStream") == 0 && depth == 2) {
        d->scheme = SCHEME_NONE;
        return;
    }
    if (!d->in_event) return;
    if (strcmp(name, "Binary") == 0 && (d->scheme == SCHEME_XML_BIN || d->scheme == SCHEME_BIN)) {
        if (!d->have_sec && !d->sec_bad) dash_section_text(d, text, len);
        return;
    }
    if (strcmp(name, "Event") == 0 && depth == 3) {
        if (d->scheme == SCHEME_BIN && !d->have_sec && !d->sec_bad) {
            if (d->message_data[0]) dash_section_text(d, d->message_data, strlen(d->message_data));
            else dash_section_text(d, text, len);
        }
        dash_event_apply(d);
        d->in_event = false;
    }
}

int sb_parse_dash(struct sb_parse *p, const char *text, size_t len) {
    struct dash *d = calloc(1, sizeof *d);
    if (!d) return p->oom = true, SNAPBACK_E_NO_MEMORY;
    d->p = p;
    struct sb_xml_handler h = {d, dash_start, dash_end};
    int rc = sb_xml_parse(p, text, len, &h);
    if (rc == SNAPBACK_OK && !d->root) rc = sb_fail(p, "the root element is not MPD");
    if (rc == SNAPBACK_OK) {
        p->live = d->dynamic;
        p->refresh = d->refresh;
        /* A static MPD's break still open has no end to wait for. */
        for (size_t i = 0; i < p->found.n; i++)
            if (p->found.v[i].open && !d->dynamic) p->found.v[i].open = false;
        for (size_t i = 0; i < p->found.n; i++) {
            struct sb_cue *c = &p->found.v[i];
            if (c->open) c->duration = fmin(p->opt->max_open, fmax(c->duration, 1));
        }
    }
    free(d->seen);
    sb_index_free(&d->seen_index);
    free(d);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* VMAP                                                                                           */

struct vbreak {
    char offset[64], type[64], id[SB_MAX_ID + 1], repeat[64];
    bool has_offset, has_type, has_id, has_repeat;
    unsigned line;
    bool source, filled;
    unsigned ads;
    double durations[64];
    size_t n_durations;
    unsigned vast_depth; /* depth of VASTAdData, 0 outside */
};

/* A break of the VMAP by where it plays: the AdBreaks at one place and position are its pod. */
struct pod {
    int32_t position, zero; /* the key: these 16 bytes */
    double t;
    size_t found; /* its place in p->found */
};

struct vmap {
    struct sb_parse *p;
    bool root;
    bool in_break;
    struct vbreak b;
    struct pod *pods;
    size_t n_pods, cap_pods;
    struct sb_index pod_index;
};

static bool pod_key(const void *items, size_t i, const char **id, size_t *len) {
    *id = (const char *)&((const struct pod *)items)[i];
    *len = offsetof(struct pod, found);
    return true;
}

static void vmap_start(void *u, const char *name, const char **a, unsigned depth, unsigned line) {
    struct vmap *v = u;
    struct sb_parse *p = v->p;
    if (depth == 0) {
        v->root = strcmp(name, "VMAP") == 0;
        const char *ver = sb_xml_attr(a, "version");
        if (v->root && (!ver || strncmp(ver, "1.", 2) != 0))
            sb_reject(p, "", line, "VMAP version %s: read as 1.0", ver ? ver : "(none)");
        return;
    }
    if (!v->root) return;
    if (depth == 1 && strcmp(name, "AdBreak") == 0) {
        v->in_break = true;
        memset(&v->b, 0, sizeof v->b);
        v->b.line = line;
        const char *o = sb_xml_attr(a, "timeOffset"), *t = sb_xml_attr(a, "breakType"), *i = sb_xml_attr(a, "breakId"),
                   *r = sb_xml_attr(a, "repeatAfter");
        if (o) v->b.has_offset = snprintf(v->b.offset, sizeof v->b.offset, "%s", o) < (int)sizeof v->b.offset;
        if (t) v->b.has_type = snprintf(v->b.type, sizeof v->b.type, "%s", t) < (int)sizeof v->b.type;
        if (i && *i) v->b.has_id = snprintf(v->b.id, sizeof v->b.id, "%s", i) < (int)sizeof v->b.id;
        if (r) v->b.has_repeat = snprintf(v->b.repeat, sizeof v->b.repeat, "%s", r) < (int)sizeof v->b.repeat;
        return;
    }
    if (!v->in_break) return;
    if (depth == 2 && strcmp(name, "AdSource") == 0) v->b.source = true;
    else if (depth == 3 && strcmp(name, "VASTAdData") == 0) v->b.vast_depth = depth;
    else if (v->b.vast_depth && strcmp(name, "Ad") == 0) v->b.ads++, v->b.filled = true;
}

static void vmap_end(void *u, const char *name, const char *text, size_t len, unsigned depth);

int sb_parse_vmap(struct sb_parse *p, const char *text, size_t len) {
    struct vmap *v = calloc(1, sizeof *v);
    if (!v) return p->oom = true, SNAPBACK_E_NO_MEMORY;
    v->p = p;
    struct sb_xml_handler h = {v, vmap_start, vmap_end};
    int rc = sb_xml_parse(p, text, len, &h);
    if (rc == SNAPBACK_OK && !v->root) rc = sb_fail(p, "the root element is not VMAP");
    free(v->pods);
    sb_index_free(&v->pod_index);
    free(v);
    return rc;
}

/* One break at a content time (a pod: breaks at one offset are one, their ads in order). */
static void vmap_add(struct vmap *v, snapback_break_position pos, double t, const char *base_id) {
    struct sb_parse *p = v->p;
    const struct vbreak *b = &v->b;
    struct pod key;
    memset(&key, 0, sizeof key);
    key.position = (int32_t)pos;
    key.t = t == 0 ? 0 : t; /* -0 and 0 are one place */
    bool oom = false;
    long at = sb_index_find(&v->pod_index, v->pods, v->n_pods, pod_key, (const char *)&key,
                            offsetof(struct pod, found), &oom);
    if (oom) p->oom = true;
    if (at >= 0) {
        struct sb_cue *c = &p->found.v[v->pods[at].found];
        /* The pod: a filled part fills it; the ads and durations follow on. */
        if (b->filled) c->unfilled = false;
        if (b->n_durations && c->n_ads + b->n_durations <= SB_MAX_ADS) {
            double *n = realloc(c->ads, (c->n_ads + b->n_durations) * sizeof *n);
            if (!n) {
                p->oom = true;
                return;
            }
            memcpy(n + c->n_ads, b->durations, b->n_durations * sizeof *n);
            c->ads = n;
            c->n_ads += b->n_durations;
            for (size_t k = 0; k < b->n_durations; k++) c->duration += b->durations[k];
        }
        return;
    }
    char id[SB_MAX_ID + 40];
    snprintf(id, sizeof id, "%s", base_id);
    if (sb_found_find(p, id)) {
        char t2[32];
        sb_format_time(t, t2, sizeof t2);
        snprintf(id, sizeof id, "%s@%s", base_id, t2);
        if (sb_found_find(p, id)) {
            sb_reject(p, base_id, b->line, "AdBreak %s: a breakId used twice", base_id);
            return;
        }
    }
    if (!sb_grow((void **)&v->pods, &v->cap_pods, v->n_pods + 1, sizeof *v->pods)) {
        p->oom = true;
        return;
    }
    struct sb_cue *c = sb_found_add(p, id, strlen(id), "vmap", b->line);
    if (!c) return;
    key.found = p->found.n - 1;
    v->pods[v->n_pods++] = key;
    c->position = pos;
    c->start = t;
    c->unfilled = !b->filled;
    if (b->n_durations) {
        c->ads = malloc(b->n_durations * sizeof *c->ads);
        if (!c->ads) {
            p->oom = true;
            return;
        }
        memcpy(c->ads, b->durations, b->n_durations * sizeof *c->ads);
        c->n_ads = b->n_durations;
        for (size_t k = 0; k < b->n_durations; k++) c->duration += b->durations[k];
    }
}

static void vmap_end(void *u, const char *name, const char *text, size_t len, unsigned depth) {
    struct vmap *v = u;
    struct sb_parse *p = v->p;
    if (!v->in_break) return;
    struct vbreak *b = &v->b;
    if (b->vast_depth && depth > b->vast_depth && strcmp(name, "Duration") == 0) {
        double d;
        size_t n = len;
        const char *s = trim(text, &n);
        if (sb_clock(s, n, &d) && d <= SB_MAX_DURATION && b->n_durations < 64) b->durations[b->n_durations++] = d;
        return;
    }
    if (depth == 3 && strcmp(name, "VASTAdData") == 0) {
        b->vast_depth = 0;
        return;
    }
    if (depth == 3 && (strcmp(name, "AdTagURI") == 0 || strcmp(name, "CustomAdData") == 0)) {
        size_t n = len;
        trim(text, &n);
        if (n) b->filled = true;
        return;
    }
    if (depth != 1 || strcmp(name, "AdBreak") != 0) return;
    v->in_break = false;
    const char *rid = b->has_id ? b->id : "";
    if (!b->has_offset) {
        sb_reject(p, rid, b->line, "AdBreak %s: no timeOffset (IMA plays it as a pre-roll; snapback refuses it)", rid);
        return;
    }
    /* breakType: linear, nonlinear, display; only linear breaks take the content's place. */
    if (b->has_type) {
        bool linear = false;
        for (char *s = b->type, *tok; (tok = strtok_r(s, ",", &s));) {
            while (*tok == ' ') tok++;
            size_t n = strlen(tok);
            while (n && tok[n - 1] == ' ') tok[--n] = 0;
            if (strcasecmp(tok, "linear") == 0) linear = true;
        }
        if (!linear) {
            sb_reject(p, rid, b->line, "AdBreak %s: breakType %s is not linear: ignored", rid, v->b.type);
            return;
        }
    }
    double cd = p->opt->content_duration, t = 0;
    snapback_break_position pos = SNAPBACK_POSITION_MIDROLL;
    char base[SB_MAX_ID + 40];
    const char *o = b->offset;
    size_t on = strlen(o);
    bool timed = false;
    if (strcmp(o, "start") == 0) {
        pos = SNAPBACK_POSITION_PREROLL;
        snprintf(base, sizeof base, "%s", b->has_id ? b->id : "vmap@start");
    } else if (strcmp(o, "end") == 0) {
        pos = SNAPBACK_POSITION_POSTROLL;
        t = cd;
        snprintf(base, sizeof base, "%s", b->has_id ? b->id : "vmap@end");
    } else if (o[0] == '#') {
        sb_reject(p, rid, b->line, "AdBreak %s: timeOffset %s names a break opportunity, which a manifest does not "
                                   "give: ignored", rid, o);
        return;
    } else if (on > 1 && o[on - 1] == '%') {
        double pc;
        if (!sb_number(o, on - 1, 0, 100, &pc)) {
            sb_reject(p, rid, b->line, "AdBreak %s: timeOffset %s is not a percentage from 0 to 100", rid, o);
            return;
        }
        if (!(cd > 0)) {
            sb_reject(p, rid, b->line, "AdBreak %s: timeOffset %s needs the content duration (--content-duration; "
                                       "IMA ignores it too)", rid, o);
            return;
        }
        t = cd * pc / 100;
        timed = true;
    } else if (sb_clock(o, on, &t) && t <= SB_MAX_TIME) {
        timed = true;
    } else {
        sb_reject(p, rid, b->line, "AdBreak %s: timeOffset %s is not start, end, hh:mm:ss.mmm, n%% or #m (IMA plays "
                                   "it as a pre-roll; snapback refuses it)", rid, o);
        return;
    }
    if (timed) {
        if (t == 0) pos = SNAPBACK_POSITION_PREROLL;
        else if (cd > 0 && t >= cd) pos = SNAPBACK_POSITION_POSTROLL, t = cd;
        char ts[32];
        sb_format_time(t, ts, sizeof ts);
        if (pos == SNAPBACK_POSITION_PREROLL) snprintf(base, sizeof base, "%s", b->has_id ? b->id : "vmap@start");
        else snprintf(base, sizeof base, "%s%s", b->has_id ? b->id : "vmap@", b->has_id ? "" : ts);
    }
    vmap_add(v, pos, t, base);
    if (!b->has_repeat) return;
    double every;
    if (!timed) {
        sb_reject(p, rid, b->line, "AdBreak %s: repeatAfter on a %s break: ignored", rid, o);
        return;
    }
    if (!sb_clock(b->repeat, strlen(b->repeat), &every) || !(every > 0)) {
        sb_reject(p, rid, b->line, "AdBreak %s: repeatAfter %s is not a positive hh:mm:ss.mmm: ignored", rid, b->repeat);
        return;
    }
    if (!(cd > 0)) {
        sb_reject(p, rid, b->line, "AdBreak %s: repeatAfter needs the content duration: not repeated", rid);
        return;
    }
    for (double r = t + every; r < cd && !p->oom; r += every) {
        if (p->found.n >= p->opt->max_breaks) {
            sb_reject(p, rid, b->line, "AdBreak %s: repeatAfter stopped at %zu breaks", rid, p->opt->max_breaks);
            break;
        }
        char ts[32];
        sb_format_time(r, ts, sizeof ts);
        char id[SB_MAX_ID + 40];
        snprintf(id, sizeof id, "%s%s%s", b->has_id ? b->id : "vmap@", b->has_id ? "@" : "", ts);
        vmap_add(v, SNAPBACK_POSITION_MIDROLL, r, id);
    }
}
