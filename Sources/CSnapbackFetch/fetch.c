/* SPDX-License-Identifier: Apache-2.0 */
/* A manifest's text from a local file or an http(s) URL, through libcurl (never an HTTP client of our
 * own): the mpv plugin's and the snapback CLI's one fetch; and snapback-fleet's one POST. */
#define _GNU_SOURCE
#include "snapback_fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct body {
    char *data;
    size_t len;
    bool too_large;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user) {
    struct body *b = user;
    size_t n = size * nmemb;
    if (n > SNAPBACK_FETCH_MAX - b->len) {
        b->too_large = true;
        return 0; /* aborts the transfer */
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    return n;
}

struct stopper {
    bool (*stop)(void *user);
    void *user;
};

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const struct stopper *s = user;
    return s->stop(s->user) ? 1 : 0; /* non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK) */
}

/* http and https only, for a fetch and its redirects or a POST. */
static void only_http(CURL *c) {
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *user) {
    (void)ptr;
    (void)user;
    return size * nmemb;
}

long snapback_post(const char *url, const char *content_type, const void *body, size_t len, long timeout_ms, char *err,
                   size_t errlen) {
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    char header[256];
    snprintf(header, sizeof header, "Content-Type: %s", content_type);
    struct curl_slist *headers = curl_slist_append(NULL, header);
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    only_http(c);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "snapback");
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    else snprintf(err, errlen, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    return status;
}

static char *fetch_url(const char *url, size_t *len, char *err, size_t errlen, const struct stopper *stop) {
    struct body b = {.data = malloc(SNAPBACK_FETCH_MAX)};
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
    curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)SNAPBACK_FETCH_SECONDS);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    only_http(c);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "snapback");
    if (stop->stop) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)stop);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", b.too_large                       ? "larger than 8 MiB"
                                    : rc == CURLE_ABORTED_BY_CALLBACK ? "stopped"
                                    : cerr[0]                         ? cerr
                                                                      : curl_easy_strerror(rc));
        free(b.data);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

char *snapback_fetch(const char *path, size_t *len, char *err, size_t errlen) {
    return snapback_fetch_stoppable(path, len, err, errlen, NULL, NULL);
}

char *snapback_fetch_stoppable(const char *path, size_t *len, char *err, size_t errlen, bool (*stop)(void *user),
                               void *user) {
    const struct stopper s = {stop, user};
    if (!strncasecmp(path, "http://", 7) || !strncasecmp(path, "https://", 8)) return fetch_url(path, len, err, errlen, &s);
    if (!strncasecmp(path, "file://", 7)) path += 7;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    char *buf = malloc(SNAPBACK_FETCH_MAX + 1);
    size_t n = buf ? fread(buf, 1, SNAPBACK_FETCH_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || n > SNAPBACK_FETCH_MAX) {
        snprintf(err, errlen, "%s", buf ? "larger than 8 MiB" : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}
