/* SPDX-License-Identifier: Apache-2.0 */
/* A live manifest's refreshes: a thread of the plugin's that sleeps on a condition variable until the
 * next refresh is due, fetches the manifest (snapback_fetch: a file, or libcurl), leaves the text for
 * the plugin's loop and wakes it through its eventfd. The loop reads the text (libsnapback is driven
 * from that one thread); the refresher never touches the cues or the session. */
#ifndef SNAPBACK_MPV_REFRESH_H
#define SNAPBACK_MPV_REFRESH_H

#include <stdbool.h>
#include <stddef.h>

/* The script option's bounds, seconds (0 is off). */
#define SBM_REFRESH_MIN 0.1
#define SBM_REFRESH_MAX 3600.0

struct sbm_refresher;

/* Starts refreshing `path` every `interval` seconds (SBM_REFRESH_MIN to SBM_REFRESH_MAX), the first
 * an interval from now; each fetch done writes 1 to `wake_fd`. NULL with err set. */
struct sbm_refresher *sbm_refresher_start(const char *path, double interval, int wake_fd, char *err, size_t errlen);

/* The latest fetch, if one finished since the last call: true, with *text (owned by the caller, free)
 * or NULL and err set (the fetch failed). false when none is waiting. A fetch the loop has not taken
 * yet is replaced by the next (only the newest text matters). */
bool sbm_refresher_take(struct sbm_refresher *r, char **text, size_t *len, char *err, size_t errlen);

/* Stops the thread (a fetch under way is given up within a second), joins it and frees everything.
 * NULL is fine. */
void sbm_refresher_stop(struct sbm_refresher *r);

#endif
