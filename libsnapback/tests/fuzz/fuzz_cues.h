/* SPDX-License-Identifier: Apache-2.0 */
/* What every break-source fuzz target checks after each input: the reader's answers hold the
 * promises of snapback/cues.h (ids non-empty UTF-8 of bounded length, times and durations finite and
 * within the daemon's ranges, the session's breaks sorted and apart, every note and change with its
 * text), whatever the input. A broken promise aborts, which libFuzzer reports as a crash. */
#ifndef SNAPBACK_FUZZ_CUES_H
#define SNAPBACK_FUZZ_CUES_H

#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapback/cues.h"

#include "crc32_mpeg2.h"

#define FUZZ_ASSERT(cond)                                                         \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                              \
        }                                                                         \
    } while (0)

static void fuzz_check_string(const char *s, size_t max) {
    FUZZ_ASSERT(s);
    size_t n = strnlen(s, max + 1);
    FUZZ_ASSERT(n <= max);
}

static int fuzz_compare_ids(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void fuzz_check(const snapback_cues *c) {
    size_t n;
    const snapback_cue_break *b = snapback_cues_breaks(c, &n);
    FUZZ_ASSERT(n <= 1000);
    /* Distinct ids, found by sorting: comparing every pair was a million hooked strcmp calls on a
     * text of 1,000 breaks, most of each execution's time. */
    const char *ids[1000];
    for (size_t i = 0; i < n; i++) {
        fuzz_check_string(b[i].id, 400);
        FUZZ_ASSERT(b[i].id[0]);
        FUZZ_ASSERT(isfinite(b[i].start) && b[i].start >= 0 && b[i].start <= 1e10);
        FUZZ_ASSERT(isfinite(b[i].duration) && b[i].duration >= 0 && b[i].duration <= 1e8);
        FUZZ_ASSERT(b[i].position >= SNAPBACK_POSITION_PREROLL && b[i].position <= SNAPBACK_POSITION_POSTROLL);
        FUZZ_ASSERT(!b[i].has_content_resume_offset ||
                    (b[i].content_resume_offset >= 0 && b[i].content_resume_offset <= 1e8));
        for (size_t k = 0; k < b[i].n_ad_durations; k++) FUZZ_ASSERT(isfinite(b[i].ad_durations[k]));
        fuzz_check_string(b[i].source, 32);
        ids[i] = b[i].id;
    }
    qsort(ids, n, sizeof *ids, fuzz_compare_ids);
    for (size_t i = 1; i < n; i++) FUZZ_ASSERT(strcmp(ids[i], ids[i - 1]) != 0);
    const snapback_break *s = snapback_cues_session_breaks(c, &n);
    for (size_t i = 0; i < n; i++) {
        FUZZ_ASSERT(s[i].duration > 0 && s[i].start + s[i].duration <= 1e10 + 1e8);
        if (i) FUZZ_ASSERT(s[i].start >= s[i - 1].start + s[i - 1].duration - 1e-6);
    }
    const snapback_cue_note *r = snapback_cues_rejected(c, &n);
    FUZZ_ASSERT(n <= 1000);
    for (size_t i = 0; i < n; i++) fuzz_check_string(r[i].reason, 600), fuzz_check_string(r[i].id, 400);
    const snapback_cue_change *ch = snapback_cues_changes(c, &n);
    for (size_t i = 0; i < n; i++) {
        fuzz_check_string(ch[i].id, 400);
        FUZZ_ASSERT(ch[i].reason);
        FUZZ_ASSERT(ch[i].kind >= SNAPBACK_CUE_ADDED && ch[i].kind <= SNAPBACK_CUE_REMOVED);
    }
    fuzz_check_string(snapback_cues_error(c), 300);
    snapback_ad_rules rules;
    if (snapback_cues_ad_rules(c, &rules))
        for (size_t i = 0; i < rules.n_midroll_times; i++) FUZZ_ASSERT(isfinite(rules.midroll_times[i]));
}

/* The input as successive refreshes of one manifest, split at NUL bytes (which no text may hold). */
__attribute__((unused)) static int fuzz_refreshes(snapback_cues_format format, const uint8_t *data, size_t size) {
    snapback_cues_options o = {.format = format, .content_duration = size % 2 ? 3600 : 0, .max_bytes = 1u << 20};
    snapback_cues *c = snapback_cues_new(&o);
    if (!c) return 0;
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != 0) continue;
        int rc = snapback_cues_update(c, (const char *)data + start, i - start);
        FUZZ_ASSERT(rc == SNAPBACK_OK || rc == SNAPBACK_INVALID_ARGUMENT || rc == SNAPBACK_E_NO_MEMORY);
        if (rc != SNAPBACK_OK) FUZZ_ASSERT(snapback_cues_error(c)[0]);
        fuzz_check(c);
        start = i + 1;
    }
    snapback_cues_free(c);
    return 0;
}

#endif
