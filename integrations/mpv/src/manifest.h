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

/* The stream's manifest read into a new reader, kept for the live refreshes (snapback_cues_update);
 * NULL with err set when refused (a VMAP too: it is no stream's manifest). */
snapback_cues *sbm_manifest_read(const char *text, size_t len, char *err, size_t errlen);

/* The reader's breaks with a known end into *out, replacing what it held (copies: sbm_breaks_free): what
 * the plugin times its reports by. The session gets them from the reader itself, open ones too
 * (snapback_session_open_cues, _update_cues). 0, or -1 when out of memory (*out empty then). */
int sbm_breaks_from_cues(const snapback_cues *cues, sbm_breaks *out);

#endif
