/* SPDX-License-Identifier: Apache-2.0 */
/* The stream's own manifest: fetched (a file, or libcurl), read by libsnapback's break sources. */
#define _GNU_SOURCE
#include "manifest.h"

#include <curl/curl.h>
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

struct body {
    char *data;
    size_t len;
    bool too_large;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user) {
    struct body *b = user;
    size_t n = size * nmemb;
    if (n > SBM_MAX_MANIFEST - b->len) {
        b->too_large = true;
        return 0; /* aborts the transfer */
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    return n;
}

static char *fetch_url(const char *url, size_t *len, char *err, size_t errlen) {
    struct body b = {.data = malloc(SBM_MAX_MANIFEST)};
    CURL *c = curl_easy_init();
    if (!b.data || !c) {
        snprintf(err, errlen, "out of memory");
        free(b.data);
        if (c) curl_easy_cleanup(c);
        return NULL;
    }
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)SBM_FETCH_SECONDS);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(c, CURLOPT_USERAGENT, "snapback-mpv");
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", b.too_large ? "larger than 8 MiB" : cerr[0] ? cerr : curl_easy_strerror(rc));
        free(b.data);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

char *sbm_fetch(const char *path, size_t *len, char *err, size_t errlen) {
    if (!strncasecmp(path, "http://", 7) || !strncasecmp(path, "https://", 8)) return fetch_url(path, len, err, errlen);
    if (!strncasecmp(path, "file://", 7)) path += 7;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    char *buf = malloc(SBM_MAX_MANIFEST + 1);
    size_t n = buf ? fread(buf, 1, SBM_MAX_MANIFEST + 1, f) : 0;
    fclose(f);
    if (!buf || n > SBM_MAX_MANIFEST) {
        snprintf(err, errlen, "%s", buf ? "larger than 8 MiB" : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int sbm_breaks_from_manifest(const char *text, size_t len, sbm_breaks *out, bool *live, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    snapback_cues *c = snapback_cues_new(NULL);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = snapback_cues_update(c, text, len);
    if (rc == SNAPBACK_OK && snapback_cues_format_of(c) == SNAPBACK_CUES_VMAP) {
        snprintf(err, errlen, "a VMAP is not a stream's manifest");
        rc = SNAPBACK_INVALID_ARGUMENT;
    }
    if (rc != SNAPBACK_OK) {
        snprintf(err, errlen, "%s", snapback_cues_error(c));
        snapback_cues_free(c);
        return -1;
    }
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
    *live = snapback_cues_is_live(c);
    snapback_cues_free(c);
    if (!out->items || out->n != n) {
        sbm_breaks_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
