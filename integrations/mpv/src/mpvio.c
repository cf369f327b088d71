/* SPDX-License-Identifier: Apache-2.0 */
/* What the plugin asks of mpv (mpvio.h). */
#define _GNU_SOURCE
#include "mpvio.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

uint64_t sbmpv_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Prefixed as mpv prefixes its modules. */
void sbmpv_log(const struct sbmpv_mpv *m, bool verbose_only, const char *fmt, ...) {
    if (verbose_only && !m->verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("[snapback] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void format_time(double t, char *buf, size_t size) { snprintf(buf, size, "%.6f", t); }

bool sbmpv_seek_command(const struct sbmpv_mpv *m, double t) {
    char target[64];
    format_time(t, target, sizeof target);
    const char *cmd[] = {"seek", target, "absolute+exact", NULL};
    return mpv_command_async(m->handle, SBMPV_REPLY_SEEK, cmd) >= 0;
}

bool sbmpv_set_start(const struct sbmpv_mpv *m, double t) {
    char target[64];
    format_time(t, target, sizeof target);
    return mpv_set_property_string(m->handle, "file-local-options/start", target) >= 0;
}

void sbmpv_set_pause(const struct sbmpv_mpv *m, bool pause) {
    const char *cmd[] = {"set", "pause", pause ? "yes" : "no", NULL};
    mpv_command_async(m->handle, 0, cmd);
}

void sbmpv_osd(const struct sbmpv_mpv *m, const char *text, int ms) {
    char duration[16];
    snprintf(duration, sizeof duration, "%d", ms);
    const char *cmd[] = {"show-text", text, duration, NULL};
    mpv_command_async(m->handle, 0, cmd);
}

void sbmpv_hook_continue(const struct sbmpv_mpv *m, uint64_t hook_id) { mpv_hook_continue(m->handle, hook_id); }
