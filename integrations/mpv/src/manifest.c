/* SPDX-License-Identifier: Apache-2.0 */
/* The stream's own manifest: fetched (Sources/CSnapbackFetch: a file, or libcurl), read by libsnapback's
 * break sources. */
#define _GNU_SOURCE
#include "manifest.h"

#include "snapback_fetch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool sbm_is_manifest(const char *path) {
    if (!path) return false;
    size_t n = strcspn(path, "?#");
    if (strstr(path, "://") && strncasecmp(path, "http://", 7) != 0 && strncasecmp(path, "https://", 8) != 0 &&
        strncasecmp(path, "file://", 7) != 0)
        return false;
    static const char *const ext[] = {".m3u8", ".m3u", ".mpd"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t e = strlen(ext[i]);
        if (n >= e && strncasecmp(path + n - e, ext[i], e) == 0) return true;
    }
    return false;
}

snapback_cues *sbm_manifest_read(const char *text, size_t len, char *err, size_t errlen) {
    snapback_cues *c = snapback_cues_new(NULL);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (snapback_cues_update(c, text, len) != SNAPBACK_OK) {
        snprintf(err, errlen, "%s", snapback_cues_error(c));
    } else if (snapback_cues_format_of(c) == SNAPBACK_CUES_VMAP) {
        snprintf(err, errlen, "a VMAP is not a stream's manifest (give it as snapback-vmap)");
    } else {
        return c;
    }
    snapback_cues_free(c);
    return NULL;
}

int sbm_breaks_from_cues(const snapback_cues *c, sbm_breaks *out) {
    sbm_breaks_free(out);
    size_t n;
    const snapback_break *b = snapback_cues_session_breaks(c, &n);
    out->items = calloc(n ? n : 1, sizeof *out->items);
    for (size_t i = 0; out->items && i < n; i++) {
        out->items[i] = b[i];
        out->items[i].id = strdup(b[i].id);
        out->items[i].ad_durations = NULL;
        out->items[i].n_ad_durations = 0;
        if (b[i].n_ad_durations) {
            double *a = malloc(b[i].n_ad_durations * sizeof *a);
            if (a) {
                memcpy(a, b[i].ad_durations, b[i].n_ad_durations * sizeof *a);
                out->items[i].ad_durations = a;
                out->items[i].n_ad_durations = b[i].n_ad_durations;
            }
        }
        out->n = i + 1;
        if (!out->items[i].id) break;
    }
    if (!out->items || out->n != n) {
        sbm_breaks_free(out);
        return -1;
    }
    return 0;
}
