/* SPDX-License-Identifier: Apache-2.0 */
/* What the plugin asks of mpv: its log lines, asynchronous commands, the start of a file and the
 * on_preloaded hook. Thin calls of mpv's client API that know nothing of the plugin's state. */
#ifndef SNAPBACK_MPV_MPVIO_H
#define SNAPBACK_MPV_MPVIO_H

#include <stdbool.h>
#include <stdint.h>

#include <mpv/client.h>

/* mpv as the plugin drives it: its handle, and whether the verbose lines are logged. */
struct sbmpv_mpv {
    mpv_handle *handle;
    bool verbose;
};

/* Milliseconds of the monotonic clock. */
uint64_t sbmpv_now_ms(void);
/* One line on stderr, "[snapback] ..." (the client API has no log call for C plugins); a verbose_only
 * line only with verbose set. */
void sbmpv_log(const struct sbmpv_mpv *m, bool verbose_only, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An exact seek to stream time t, asynchronous: its reply comes as MPV_EVENT_COMMAND_REPLY with
 * SBMPV_REPLY_SEEK. false when mpv refused to queue it. */
#define SBMPV_REPLY_SEEK 1
bool sbmpv_seek_command(const struct sbmpv_mpv *m, double t);
/* Where the file, not playing yet, starts (mpv's own start seek, exact). false when refused. */
bool sbmpv_set_start(const struct sbmpv_mpv *m, double t);
/* Pauses or plays mpv (asynchronous). */
void sbmpv_set_pause(const struct sbmpv_mpv *m, bool pause);
/* Text on mpv's OSD for ms milliseconds. */
void sbmpv_osd(const struct sbmpv_mpv *m, const char *text, int ms);
/* Lets mpv go on past a hook the plugin held. */
void sbmpv_hook_continue(const struct sbmpv_mpv *m, uint64_t hook_id);

#endif
