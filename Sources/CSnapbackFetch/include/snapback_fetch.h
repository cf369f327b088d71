/* SPDX-License-Identifier: Apache-2.0 */
/* A manifest's text from a local file or an http(s) URL (fetch.c, libcurl). */
#ifndef SNAPBACK_FETCH_H
#define SNAPBACK_FETCH_H

#include <stdbool.h>
#include <stddef.h>

/* At most this many bytes (libsnapback's break sources' default bound); http(s) gives up after
 * SNAPBACK_FETCH_SECONDS. */
#define SNAPBACK_FETCH_MAX (8u << 20)
#define SNAPBACK_FETCH_SECONDS 10

/* The text at `path`: a local file (or file://), or an http(s) URL (redirects followed up to 5 times,
 * http and https only, a non-2xx status an error). Owned by the caller (free). NULL with err set. */
char *snapback_fetch(const char *path, size_t *len, char *err, size_t errlen);
/* The same, given up when `stop(user)` says so (asked by libcurl while an http(s) transfer runs, at
 * least once a second): the mpv plugin's live refreshes end with the file. err is then "stopped". */
char *snapback_fetch_stoppable(const char *path, size_t *len, char *err, size_t errlen, bool (*stop)(void *user),
                               void *user);

/* POSTs `len` bytes of `body` to an http(s) URL with `content_type` (snapback-fleet's writes to the
 * metrics store's import API), giving up after `timeout_ms`. Returns the HTTP status (a 2xx is success),
 * or 0 with err set when no answer came; the answer's body is not kept. */
long snapback_post(const char *url, const char *content_type, const void *body, size_t len, long timeout_ms, char *err,
                   size_t errlen);

#endif
