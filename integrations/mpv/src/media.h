/* SPDX-License-Identifier: Apache-2.0 */
/* What the plugin learns from the file before it opens a session: the ad breaks (from chapters whose
 * title marks them as ads, or from a sidecar JSON file) and the content id. Pure functions of their
 * inputs (no mpv calls), so that they are tested without a player. */
#ifndef SNAPBACK_MPV_MEDIA_H
#define SNAPBACK_MPV_MEDIA_H

#include <stdbool.h>
#include <stddef.h>

#include <snapback/snapback.h>

/* At most this many breaks are read from a file; the daemon refuses more than its own limit anyway
 * (HelloReply.max_breaks_per_session, 100,000 by default). */
#define SBM_MAX_BREAKS 100000
/* The daemon's ranges (PROTOCOL.md, Ranges): stream times and durations. */
#define SBM_MAX_TIME 1e10
#define SBM_MAX_DURATION 1e8

typedef struct sbm_chapter {
    const char *title; /* NULL = untitled */
    double time;       /* stream time of its start */
} sbm_chapter;

/* The breaks in stream order, each with its own id and ad durations (owned: sbm_breaks_free). */
typedef struct sbm_breaks {
    snapback_break *items;
    size_t n;
} sbm_breaks;

/* Whether a chapter title marks an ad. With `prefix` NULL or empty: the title's first word (letters)
 * is "ad", "ads", "advert", "advertisement" or "commercial", case-insensitively ("AD", "Ad 2",
 * "ad: brand", "Commercial break"; not "Adventure"). With a prefix: the title starts with it,
 * case-insensitively. */
bool sbm_is_ad_title(const char *title, const char *prefix);

/* The breaks of a stitched file from its chapters: every ad chapter runs to the next chapter (the
 * last to `duration`), and ad chapters that follow each other make one break, one ad each. A break's
 * id is "ad@" and its content position in seconds ("ad@600", "ad@12.5"): the same break keeps its id in
 * another stitching of the same content, with ads of other lengths, so the daemon's memory of
 * watched breaks carries over. An ad chapter whose end is unknown (duration <= 0, last chapter) is
 * left out. 0, or -1 with err set. */
int sbm_breaks_from_chapters(const sbm_chapter *chapters, size_t n, double duration, const char *prefix,
                             sbm_breaks *out, char *err, size_t errlen);

/* The sidecar file's breaks and content id:
 *   {"content_id": "movie-42",
 *    "breaks": [{"id": "b1", "start": 600, "duration": 30, "ads": [15, 15]}, ...]}
 * "start" is stream time; "content_id", "id" (default "ad@<content position>") and "ads" are optional.
 * Unknown members are ignored. *content_id is NULL when absent, else owned by the caller. 0, or -1
 * with err set ("breaks[2].duration: ..."). */
int sbm_breaks_from_sidecar(const char *json, size_t len, sbm_breaks *out, char **content_id, char *err,
                            size_t errlen);

/* Total duration of the breaks that end at or before `stream_time`, plus the part of a break it is in:
 * stream_time minus this is its content time. */
double sbm_ads_before(const sbm_breaks *b, double stream_time);
/* The index of the break holding stream_time, or -1. */
long sbm_break_at(const sbm_breaks *b, double stream_time);

void sbm_breaks_free(sbm_breaks *b);

/* "9:05", "15:00", "1:02:03": a clock as mpv's OSD shows one. Negative and non-finite read as 0. */
void sbm_format_clock(double seconds, char *buf, size_t size);

/* The sidecar path for a local file: the path without its extension, plus ".snapback.json"
 * ("/v/movie.mkv" → "/v/movie.snapback.json"). NULL for URLs ("scheme://") or when out of memory. */
char *sbm_default_sidecar_path(const char *path);
/* The same with another suffix: "/v/movie.mkv", ".vmap.xml" → "/v/movie.vmap.xml" (a VMAP sidecar). */
char *sbm_sidecar_path(const char *path, const char *suffix);

#endif
