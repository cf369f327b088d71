/* SPDX-License-Identifier: Apache-2.0 */
/* The breaks of the HLS or DASH stream mpv plays, from its own manifest (libsnapback's break sources,
 * snapback/cues.h): the manifest's text from a local file, or from http(s) through libcurl. */
#ifndef SNAPBACK_MPV_MANIFEST_H
#define SNAPBACK_MPV_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include <snapback/cues.h>

#include "media.h"

/* Whether mpv's path names an HLS playlist or a DASH MPD (.m3u8, .m3u, .mpd, any case, before a query
 * or fragment), local or http(s). */
bool sbm_is_manifest(const char *path);

/* The manifest's breaks for the session into *out (copies: sbm_breaks_free), and whether it is live.
 * 0, or -1 with err set (the manifest refused). */
int sbm_breaks_from_manifest(const char *text, size_t len, sbm_breaks *out, bool *live, char *err, size_t errlen);

#endif
