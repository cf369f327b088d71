/* SPDX-License-Identifier: Apache-2.0 */
/* Ad breaks from chapters or a sidecar file, and the small conversions the plugin shows. */
#define _POSIX_C_SOURCE 200809L
#include "media.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

static int fail(char *err, size_t errlen, const char *what) {
    snprintf(err, errlen, "%s", what);
    return -1;
}

bool sbm_is_ad_title(const char *title, const char *prefix) {
    if (!title) return false;
    if (prefix && *prefix) return strncasecmp(title, prefix, strlen(prefix)) == 0;
    while (*title == ' ') title++;
    size_t n = 0;
    while (isalpha((unsigned char)title[n])) n++;
    static const char *const words[] = {"ad", "ads", "advert", "advertisement", "commercial"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && strncasecmp(title, words[i], n) == 0) return true;
    return false;
}

void sbm_breaks_free(sbm_breaks *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) {
        free((char *)b->items[i].id);
        free((double *)b->items[i].ad_durations);
    }
    free(b->items);
    b->items = NULL;
    b->n = 0;
}

/* "ad@<content position>" in seconds, to the millisecond, without trailing zeros: "ad@600", "ad@12.5". */
static void make_id(const sbm_breaks *b, double start, char *out, size_t size) {
    snprintf(out, size, "ad@%.3f", start - sbm_ads_before(b, start));
    char *end = out + strlen(out);
    while (end[-1] == '0') *--end = '\0';
    if (end[-1] == '.') end[-1] = '\0';
}

/* Appends a break; its id is `id` or, when NULL, "ad@<content position>". */
static int add_break(sbm_breaks *b, const char *id, double start, double duration) {
    if (b->n >= SBM_MAX_BREAKS) return -1;
    snapback_break *items = realloc(b->items, (b->n + 1) * sizeof *items);
    if (!items) return -1;
    b->items = items;
    char made[48];
    if (!id) {
        make_id(b, start, made, sizeof made);
        id = made;
    }
    snapback_break *x = &b->items[b->n];
    memset(x, 0, sizeof *x);
    x->id = strdup(id);
    if (!x->id) return -1;
    x->start = start;
    x->duration = duration;
    b->n++;
    return 0;
}

static int add_ad(snapback_break *x, double duration) {
    double *ads = realloc((double *)x->ad_durations, (x->n_ad_durations + 1) * sizeof *ads);
    if (!ads) return -1;
    ads[x->n_ad_durations++] = duration;
    x->ad_durations = ads;
    return 0;
}

int sbm_breaks_from_chapters(const sbm_chapter *chapters, size_t n, double duration, const char *prefix,
                             sbm_breaks *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (!sbm_is_ad_title(chapters[i].title, prefix)) continue;
        double start = chapters[i].time, end = i + 1 < n ? chapters[i + 1].time : duration;
        if (!isfinite(start)) continue; /* a chapter without a time */
        if (start < 0) start = 0;     /* mpv may place the first a little before the file's start */
        if (!isfinite(end) || end <= start) continue; /* empty, or its end unknown */
        if (start > SBM_MAX_TIME || end - start > SBM_MAX_DURATION) {
            sbm_breaks_free(out);
            return fail(err, errlen, "an ad chapter lies beyond the daemon's time range");
        }
        snapback_break *last = out->n ? &out->items[out->n - 1] : NULL;
        bool joins = last && fabs(last->start + last->duration - start) < 1e-6;
        if (!joins && add_break(out, NULL, start, 0) != 0) {
            sbm_breaks_free(out);
            return fail(err, errlen, "out of memory, or too many ad chapters");
        }
        snapback_break *x = &out->items[out->n - 1];
        x->duration = end - x->start;
        if (add_ad(x, end - start) != 0) {
            sbm_breaks_free(out);
            return fail(err, errlen, "out of memory");
        }
    }
    return 0;
}

static int by_start(const void *a, const void *b) {
    double x = ((const snapback_break *)a)->start, y = ((const snapback_break *)b)->start;
    return (x > y) - (x < y);
}

/* A number member within [min, max]; absent is an error unless `optional`. */
static int number_member(const sbj_value *o, const char *key, double min, double max, bool optional,
                         double *out, size_t index, char *err, size_t errlen) {
    const sbj_value *v = sbj_get(o, key);
    if (!v && optional) return 1;
    if (!v || v->type != SBJ_NUMBER) {
        snprintf(err, errlen, "breaks[%zu].%s: a number is required", index, key);
        return -1;
    }
    if (!(v->number >= min && v->number <= max)) {
        snprintf(err, errlen, "breaks[%zu].%s must be from %g to %g (got %g)", index, key, min, max, v->number);
        return -1;
    }
    *out = v->number;
    return 0;
}

static int sidecar_break(const sbj_value *o, size_t i, sbm_breaks *out, char *err, size_t errlen) {
    if (o->type != SBJ_OBJECT) {
        snprintf(err, errlen, "breaks[%zu]: an object is required", i);
        return -1;
    }
    double start, duration;
    if (number_member(o, "start", 0, SBM_MAX_TIME, false, &start, i, err, errlen) != 0) return -1;
    if (number_member(o, "duration", 0, SBM_MAX_DURATION, false, &duration, i, err, errlen) != 0) return -1;
    const sbj_value *id = sbj_get(o, "id"), *ads = sbj_get(o, "ads");
    if (id && (id->type != SBJ_STRING || !*id->string)) {
        snprintf(err, errlen, "breaks[%zu].id: a non-empty string is required", i);
        return -1;
    }
    if (ads && ads->type != SBJ_ARRAY) {
        snprintf(err, errlen, "breaks[%zu].ads: an array of durations is required", i);
        return -1;
    }
    /* Ids made from content positions need the breaks before in place: made after sorting. */
    if (add_break(out, id ? id->string : "", start, duration) != 0) return fail(err, errlen, "out of memory");
    for (size_t k = 0; ads && k < ads->n; k++) {
        const sbj_value *a = &ads->items[k];
        if (a->type != SBJ_NUMBER || !(a->number >= 0 && a->number <= SBM_MAX_DURATION)) {
            snprintf(err, errlen, "breaks[%zu].ads[%zu] must be a duration from 0 to %g", i, k, SBM_MAX_DURATION);
            return -1;
        }
        if (add_ad(&out->items[out->n - 1], a->number) != 0) return fail(err, errlen, "out of memory");
    }
    return 0;
}

int sbm_breaks_from_sidecar(const char *json, size_t len, sbm_breaks *out, char **content_id, char *err,
                            size_t errlen) {
    memset(out, 0, sizeof *out);
    *content_id = NULL;
    sbj_value doc;
    if (sbj_parse(json, len, &doc, err, errlen) != 0) return -1;
    int rc = -1;
    const sbj_value *id = sbj_get(&doc, "content_id"), *breaks = sbj_get(&doc, "breaks");
    if (doc.type != SBJ_OBJECT) fail(err, errlen, "the document must be an object");
    else if (id && (id->type != SBJ_STRING || !*id->string)) fail(err, errlen, "content_id: a non-empty string is required");
    else if (!breaks || breaks->type != SBJ_ARRAY) fail(err, errlen, "breaks: an array is required");
    else if (breaks->n > SBM_MAX_BREAKS) fail(err, errlen, "breaks: too many");
    else {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < breaks->n; i++) rc = sidecar_break(&breaks->items[i], i, out, err, errlen);
    }
    if (rc == 0 && out->n) {
        qsort(out->items, out->n, sizeof *out->items, by_start);
        for (size_t i = 0; rc == 0 && i < out->n; i++) {
            if (*out->items[i].id) continue;
            char made[48];
            make_id(out, out->items[i].start, made, sizeof made);
            free((char *)out->items[i].id);
            out->items[i].id = strdup(made);
            if (!out->items[i].id) rc = fail(err, errlen, "out of memory");
        }
    }
    if (rc == 0 && id && !(*content_id = strdup(id->string))) rc = fail(err, errlen, "out of memory");
    if (rc != 0) sbm_breaks_free(out);
    sbj_free(&doc);
    return rc;
}

double sbm_ads_before(const sbm_breaks *b, double t) {
    double ads = 0;
    for (size_t i = 0; i < b->n && b->items[i].start < t; i++) {
        double end = b->items[i].start + b->items[i].duration;
        ads += t < end ? t - b->items[i].start : b->items[i].duration;
    }
    return ads;
}

long sbm_break_at(const sbm_breaks *b, double t) {
    for (size_t i = 0; i < b->n; i++)
        if (t >= b->items[i].start && t < b->items[i].start + b->items[i].duration) return (long)i;
    return -1;
}

void sbm_format_clock(double seconds, char *buf, size_t size) {
    if (!isfinite(seconds) || seconds < 0) seconds = 0;
    if (seconds > SBM_MAX_TIME) seconds = SBM_MAX_TIME;
    unsigned long long s = (unsigned long long)seconds;
    if (s >= 3600) snprintf(buf, size, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, size, "%llu:%02llu", s / 60, s % 60);
}

char *sbm_sidecar_path(const char *path, const char *suffix) {
    if (!path || !*path || strstr(path, "://")) return NULL;
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && dot > (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path);
    size_t n = strlen(suffix) + 1;
    char *out = malloc(stem + n);
    if (!out) return NULL;
    memcpy(out, path, stem);
    memcpy(out + stem, suffix, n);
    return out;
}

char *sbm_default_sidecar_path(const char *path) { return sbm_sidecar_path(path, ".snapback.json"); }
