/* SPDX-License-Identifier: Apache-2.0 */
/* snapback for mpv: a C plugin (`mpv --script=snapback.so`) that puts mpv under snapbackd's ad
 * timeline through libsnapback.
 *
 * mpv runs a C plugin's mpv_open_cplugin() on a thread of its own for as long as the plugin is
 * loaded; that thread is the plugin's main loop (the one other thread, a live manifest's refresher,
 * only fetches: refresh.h). The loop polls two
 * descriptors: an eventfd that mpv's wakeup callback writes when events are queued for the plugin
 * (mpv_get_wakeup_pipe() is the same mechanism, deprecated in client API 2.0), and libsnapback's
 * socket. mpv is only ever sent asynchronous commands, so the player never waits for the plugin; the
 * one wait the plugin imposes is the on_preloaded hook, held until the session is open (bounded by
 * snapback-open-timeout) so that a resume starts at the bookmark instead of jumping there.
 *
 * This file is mpv's side: the loop, the options, the file's breaks and ids, and mpv's events handed
 * to the state machine (session.c), which drives libsnapback and asks mpv through mpvio.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "json.h"
#include "manifest.h"
#include "snapback_fetch.h"
#include "session.h"

/* ---------------------------------------------------------------------------------------------- */
/* Options: --script-opts=snapback-KEY=VALUE, read again at every file.                             */

static bool yes(const char *v) {
    return !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1");
}

static void options_free(struct options *o) {
    free(o->content_id);
    free(o->profile);
    free(o->preset);
    free(o->sidecar);
    free(o->ad_chapters);
    free(o->vmap);
    memset(o, 0, sizeof *o);
}

/* Reads the options into p->opt; *socket (when not NULL) gets snapback-socket's value. */
static void read_options(struct plugin *p, char **socket) {
    options_free(&p->opt);
    p->opt.resume = true;
    p->opt.open_timeout_ms = DEFAULT_OPEN_TIMEOUT_MS;
    p->mpv.verbose = false;
    mpv_node node;
    if (mpv_get_property(p->mpv.handle, "options/script-opts", MPV_FORMAT_NODE, &node) < 0) return;
    if (node.format == MPV_FORMAT_NODE_MAP) {
        for (int i = 0; i < node.u.list->num; i++) {
            const char *k = node.u.list->keys[i];
            mpv_node *v = &node.u.list->values[i];
            if (strncmp(k, "snapback-", 9) != 0 || v->format != MPV_FORMAT_STRING) continue;
            k += 9;
            const char *s = v->u.string;
            char **slot = !strcmp(k, "content-id") ? &p->opt.content_id
                        : !strcmp(k, "profile")    ? &p->opt.profile
                        : !strcmp(k, "preset")     ? &p->opt.preset
                        : !strcmp(k, "sidecar")    ? &p->opt.sidecar
                        : !strcmp(k, "ad-chapters") ? &p->opt.ad_chapters
                        : !strcmp(k, "vmap")       ? &p->opt.vmap
                        : !strcmp(k, "socket")     ? socket
                                                   : NULL;
            if (slot) {
                free(*slot);
                *slot = *s ? strdup(s) : NULL;
            } else if (!strcmp(k, "resume")) {
                p->opt.resume = yes(s);
            } else if (!strcmp(k, "verbose")) {
                p->mpv.verbose = yes(s);
            } else if (!strcmp(k, "cues-refresh-interval")) {
                char *end;
                double secs = strtod(s, &end);
                if (end != s && !*end && (secs == 0 || (secs >= SBM_REFRESH_MIN && secs <= SBM_REFRESH_MAX))) {
                    p->opt.has_refresh_interval = true;
                    p->opt.refresh_interval = secs;
                } else {
                    sbmpv_log(&p->mpv, false, "snapback-cues-refresh-interval=%s: 0 (off), or seconds from %g to %g "
                              "expected: the manifest's own interval is used", s, SBM_REFRESH_MIN, SBM_REFRESH_MAX);
                }
            } else if (!strcmp(k, "open-timeout")) {
                char *end;
                double secs = strtod(s, &end);
                if (end != s && !*end && secs >= 0 && secs <= 60) p->opt.open_timeout_ms = (int)(secs * 1000);
                else sbmpv_log(&p->mpv, false, "snapback-open-timeout=%s: seconds from 0 to 60 expected", s);
            } else if (strcmp(k, "socket") != 0) {
                sbmpv_log(&p->mpv, false, "unknown option snapback-%s", k);
            }
        }
    }
    mpv_free_node_contents(&node);
}

/* ---------------------------------------------------------------------------------------------- */
/* The file: its breaks and ids.                                                                    */

static char *read_small_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(SBJ_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, SBJ_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (buf && n > SBJ_MAX_BYTES) n = SBJ_MAX_BYTES + 1; /* refused by the parser as too large */
    *len = n;
    return buf;
}

/* The sidecar's breaks: 1 when read, 0 when there is none, -1 when it is bad (logged). */
static int load_sidecar(struct plugin *p, char **content_id) {
    char *path = p->opt.sidecar ? strdup(p->opt.sidecar) : sbm_default_sidecar_path(p->file.path);
    if (!path) return 0;
    size_t len;
    char *text = read_small_file(path, &len), err[160];
    int rc = 0;
    if (!text) {
        if (p->opt.sidecar) sbmpv_log(&p->mpv, false, "%s: %s", path, strerror(errno));
    } else if (sbm_breaks_from_sidecar(text, len, &p->file.breaks, content_id, err, sizeof err) != 0) {
        sbmpv_log(&p->mpv, false, "%s: %s; the file's chapters are used", path, err);
        rc = -1;
    } else {
        rc = 1;
    }
    free(text);
    free(path);
    return rc;
}

/* The breaks of an HLS or DASH stream from its manifest (the path mpv plays, a file or http(s)), its
 * reader kept in p->file.cues: 1 when read, 0 when mpv plays no manifest, -1 when it could not be read
 * or was refused (logged). */
static int load_manifest(struct plugin *p) {
    if (!sbm_is_manifest(p->file.path)) return 0;
    size_t len = 0;
    char err[256];
    char *text = snapback_fetch(p->file.path, &len, err, sizeof err);
    snapback_cues *c = text ? sbm_manifest_read(text, len, err, sizeof err) : NULL;
    free(text);
    if (c && sbm_breaks_from_cues(c, &p->file.breaks) != 0) {
        snprintf(err, sizeof err, "out of memory");
        snapback_cues_free(c);
        c = NULL;
    }
    if (!c) {
        sbmpv_log(&p->mpv, false, "%s: %s; the stream's chapters are used", p->file.path, err);
        return -1;
    }
    p->file.cues = c;
    p->file.live = snapback_cues_is_live(c);
    return 1;
}

/* A VMAP's ad rules: snapback-vmap (a path or an http(s) URL), else NAME.vmap.xml beside a local file
 * (`sidecar_only`: that one only). Read with mpv's duration as the content's (for n% and "end"); its
 * reader in p->file.cues, the session then an ad-rules one. 1 when read, 0 when there is none, -1
 * when it could not be read or was refused (logged). */
static int load_vmap(struct plugin *p, bool sidecar_only) {
    if (sidecar_only == (p->opt.vmap != NULL)) return 0;
    char *path = p->opt.vmap ? strdup(p->opt.vmap) : sbm_sidecar_path(p->file.path, ".vmap.xml");
    if (!path) return 0;
    size_t len = 0;
    char err[256];
    char *text = NULL;
    if (p->opt.vmap || access(path, F_OK) == 0) text = snapback_fetch(path, &len, err, sizeof err);
    else {
        free(path);
        return 0;
    }
    snapback_cues_options o = {.format = SNAPBACK_CUES_VMAP, .content_duration = p->file.duration};
    snapback_cues *c = text ? snapback_cues_new(&o) : NULL;
    int rc = -1;
    if (!text) sbmpv_log(&p->mpv, false, "%s: %s", path, err);
    else if (!c) sbmpv_log(&p->mpv, false, "%s: out of memory", path);
    else if (snapback_cues_update(c, text, len) != SNAPBACK_OK)
        sbmpv_log(&p->mpv, false, "%s: %s", path, snapback_cues_error(c));
    else rc = 1;
    size_t n;
    const snapback_cue_note *bad = rc == 1 ? snapback_cues_rejected(c, &n) : NULL;
    for (size_t i = 0; bad && i < n; i++) sbmpv_log(&p->mpv, false, "%s:%u: %s", path, bad[i].line, bad[i].reason);
    if (rc == 1) p->file.cues = c;
    else snapback_cues_free(c);
    free(text);
    free(path);
    return rc;
}

/* A live manifest is read again on a timer (refresh.h): snapback-cues-refresh-interval, else the
 * interval the manifest says (an HLS playlist's target duration), bounded. */
static void start_refreshes(struct plugin *p) {
    double every = p->opt.has_refresh_interval ? p->opt.refresh_interval : snapback_cues_refresh_interval(p->file.cues);
    if (!(every > 0)) {
        sbmpv_log(&p->mpv, true, "%s: live, not refreshed (%s)", p->file.path,
                  p->opt.has_refresh_interval ? "snapback-cues-refresh-interval=0" : "the manifest says no interval");
        return;
    }
    every = every < SBM_REFRESH_MIN ? SBM_REFRESH_MIN : every > SBM_REFRESH_MAX ? SBM_REFRESH_MAX : every;
    char err[160];
    p->file.refresher = sbm_refresher_start(p->file.path, every, p->wake_fd, err, sizeof err);
    if (!p->file.refresher) sbmpv_log(&p->mpv, false, "%s: live, not refreshed: %s", p->file.path, err);
    else sbmpv_log(&p->mpv, true, "%s: live, refreshed every %g s", p->file.path, every);
}

/* A refresh the refresher left (if any) read into the manifest's reader, its changes sent to the
 * daemon. A refresh that failed or was refused changes nothing: the session goes on with what it has. */
static void take_refresh(struct plugin *p) {
    char *text = NULL, err[256];
    size_t len = 0;
    if (!sbm_refresher_take(p->file.refresher, &text, &len, err, sizeof err)) return;
    if (!text) {
        sbmpv_log(&p->mpv, false, "%s: refresh failed: %s; the breaks known are kept", p->file.path, err);
        return;
    }
    int rc = snapback_cues_update(p->file.cues, text, len);
    free(text);
    if (rc != SNAPBACK_OK) {
        sbmpv_log(&p->mpv, false, "%s: refresh refused: %s; the breaks known are kept", p->file.path,
                  snapback_cues_error(p->file.cues));
        return;
    }
    size_t n;
    const snapback_cue_change *ch = snapback_cues_changes(p->file.cues, &n);
    for (size_t i = 0; i < n; i++)
        sbmpv_log(&p->mpv, true, "refresh: break %s %s%s%s", ch[i].id,
                  ch[i].kind == SNAPBACK_CUE_ADDED ? "added" : ch[i].kind == SNAPBACK_CUE_CHANGED ? "changed" : "removed",
                  *ch[i].reason ? ": " : "", ch[i].reason);
    if (!snapback_cues_is_live(p->file.cues)) {
        sbmpv_log(&p->mpv, true, "%s: the stream has ended: no more refreshes", p->file.path);
        sbm_refresher_stop(p->file.refresher);
        p->file.refresher = NULL;
    }
    if (!n) return;
    if (sbm_breaks_from_cues(p->file.cues, &p->file.breaks) != 0) sbmpv_log(&p->mpv, false, "refresh: out of memory");
    sbmpv_breaks_changed(p);
}

static void load_chapters(struct plugin *p) {
    mpv_node node;
    if (mpv_get_property(p->mpv.handle, "chapter-list", MPV_FORMAT_NODE, &node) < 0) return;
    size_t n = node.format == MPV_FORMAT_NODE_ARRAY ? (size_t)node.u.list->num : 0;
    sbm_chapter *ch = calloc(n ? n : 1, sizeof *ch);
    for (size_t i = 0; ch && i < n; i++) {
        mpv_node *c = &node.u.list->values[i];
        ch[i].time = NAN;
        if (c->format != MPV_FORMAT_NODE_MAP) continue;
        for (int k = 0; k < c->u.list->num; k++) {
            mpv_node *v = &c->u.list->values[k];
            if (!strcmp(c->u.list->keys[k], "title") && v->format == MPV_FORMAT_STRING) ch[i].title = v->u.string;
            if (!strcmp(c->u.list->keys[k], "time") && v->format == MPV_FORMAT_DOUBLE) ch[i].time = v->u.double_;
        }
    }
    char err[160];
    if (ch && sbm_breaks_from_chapters(ch, n, p->file.duration, p->opt.ad_chapters, &p->file.breaks, err, sizeof err) != 0)
        sbmpv_log(&p->mpv, false, "chapters: %s", err);
    free(ch);
    mpv_free_node_contents(&node);
}

/* The file's own content id: a "content_id" tag in its metadata, any case. */
static char *metadata_content_id(struct plugin *p) {
    mpv_node node;
    char *id = NULL;
    if (mpv_get_property(p->mpv.handle, "metadata", MPV_FORMAT_NODE, &node) < 0) return NULL;
    if (node.format == MPV_FORMAT_NODE_MAP)
        for (int i = 0; i < node.u.list->num; i++)
            if (!strcasecmp(node.u.list->keys[i], "content_id") && node.u.list->values[i].format == MPV_FORMAT_STRING &&
                *node.u.list->values[i].u.string) {
                free(id);
                id = strdup(node.u.list->values[i].u.string);
            }
    mpv_free_node_contents(&node);
    return id;
}

/* A string property in memory of our own (mpv's must go back through mpv_free). */
static char *string_property(struct plugin *p, const char *name) {
    char *v = mpv_get_property_string(p->mpv.handle, name), *copy = v ? strdup(v) : NULL;
    mpv_free(v);
    return copy;
}

static void file_reset(struct plugin *p) {
    sbm_refresher_stop(p->file.refresher);
    snapback_cues_free(p->file.cues);
    sbm_breaks_free(&p->file.breaks);
    free(p->file.path);
    free(p->file.content_id);
    free(p->file.stream_id);
    memset(&p->file, 0, sizeof p->file);
}

/* on_preloaded (hook `hook_id`, held): the file is open, not playing. Its breaks and ids, then the
 * session. */
static void file_preloaded(struct plugin *p, uint64_t hook_id) {
    file_reset(p);
    read_options(p, NULL);
    p->file.path = string_property(p, "path");
    p->file.stream_id = string_property(p, "filename");
    if (mpv_get_property(p->mpv.handle, "duration", MPV_FORMAT_DOUBLE, &p->file.duration) < 0 ||
        !isfinite(p->file.duration))
        p->file.duration = 0;
    /* The first that has breaks: snapback-vmap, the JSON sidecar, a VMAP sidecar, the stream's manifest,
     * the chapters. */
    char *sidecar_id = NULL;
    int vmap = load_vmap(p, false), sidecar = vmap == 1 ? 0 : load_sidecar(p, &sidecar_id);
    if (vmap != 1 && sidecar != 1) vmap = load_vmap(p, true);
    int manifest = vmap == 1 || sidecar == 1 ? 0 : load_manifest(p);
    p->file.breaks_from = vmap == 1 ? "VMAP" : sidecar == 1 ? "sidecar" : manifest == 1 ? "manifest" : "chapters";
    if (vmap != 1 && sidecar != 1 && manifest != 1) load_chapters(p);
    if (p->file.live) start_refreshes(p);
    if (!p->file.breaks.n && !p->file.cues) p->file.breaks_from = "none"; /* a live one may have open breaks */
    char *id = p->opt.content_id ? strdup(p->opt.content_id) : sidecar_id ? sidecar_id : metadata_content_id(p);
    if (id != sidecar_id) free(sidecar_id);
    p->file.content_id = id ? id : string_property(p, "filename/no-ext");
    /* A start the viewer asked for (--start) wins over the bookmark. */
    char *start = string_property(p, "start");
    bool asked = start && strcmp(start, "none") != 0;
    free(start);
    sbmpv_file_preloaded(p, hook_id, p->opt.resume && !asked);
}

/* ---------------------------------------------------------------------------------------------- */
/* mpv's events, handed to the state machine.                                                       */

static void property_changed(struct plugin *p, const mpv_event_property *e) {
    if (!strcmp(e->name, "time-pos")) {
        /* No file: the last position stays for the close. */
        if (e->format == MPV_FORMAT_DOUBLE) sbmpv_position_changed(p, *(double *)e->data);
    } else if (!strcmp(e->name, "pause") && e->format == MPV_FORMAT_FLAG) {
        sbmpv_pause_changed(p, *(int *)e->data);
    } else if (!strcmp(e->name, "speed") && e->format == MPV_FORMAT_DOUBLE) {
        sbmpv_speed_changed(p, *(double *)e->data);
    } else if (!strcmp(e->name, "eof-reached") && e->format == MPV_FORMAT_FLAG) {
        /* With --keep-open the file does not end at its end: this is the end of the content. */
        if (*(int *)e->data) sbmpv_content_complete(p);
    }
}

/* false on shutdown. */
static bool handle_event(struct plugin *p, mpv_event *ev) {
    switch (ev->event_id) {
    case MPV_EVENT_SHUTDOWN: return false;
    case MPV_EVENT_HOOK: {
        mpv_event_hook *h = ev->data;
        if (strcmp(h->name, "on_preloaded") != 0) mpv_hook_continue(p->mpv.handle, h->id);
        else file_preloaded(p, h->id);
        break;
    }
    case MPV_EVENT_SEEK: sbmpv_seek_event(p); break;
    case MPV_EVENT_PLAYBACK_RESTART: {
        double t;
        bool known = mpv_get_property(p->mpv.handle, "time-pos", MPV_FORMAT_DOUBLE, &t) >= 0;
        sbmpv_playback_restart(p, known, known ? t : 0);
        break;
    }
    case MPV_EVENT_PROPERTY_CHANGE: property_changed(p, ev->data); break;
    case MPV_EVENT_COMMAND_REPLY:
        if (ev->reply_userdata == SBMPV_REPLY_SEEK && ev->error < 0) sbmpv_seek_refused(p, ev->error);
        break;
    case MPV_EVENT_END_FILE: {
        mpv_event_end_file *e = ev->data;
        sbmpv_file_ended(p, e->reason == MPV_END_FILE_REASON_EOF);
        file_reset(p);
        break;
    }
    default: break;
    }
    return true;
}

/* ---------------------------------------------------------------------------------------------- */

static void wakeup(void *d) {
    struct plugin *p = d;
    uint64_t one = 1;
    /* A full counter (never, in practice) still leaves the descriptor readable. */
    ssize_t n = write(p->wake_fd, &one, sizeof one);
    (void)n;
}

/* One wait on both descriptors, at most max_ms, then the client's work. */
static void wait_and_dispatch(struct plugin *p, int max_ms) {
    int timeout = snapback_client_next_timeout_ms(p->client);
    if (timeout < 0 || (max_ms >= 0 && timeout > max_ms)) timeout = max_ms;
    struct pollfd fds[2] = {{.fd = p->wake_fd, .events = POLLIN},
                            {.fd = snapback_client_fd(p->client), .events = snapback_client_events(p->client)}};
    int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, timeout);
    if (n > 0 && (fds[0].revents & POLLIN)) {
        uint64_t count;
        ssize_t r = read(p->wake_fd, &count, sizeof count);
        (void)r;
    }
    snapback_client_dispatch(p->client, n > 0 && fds[1].fd >= 0 ? fds[1].revents : 0);
}

__attribute__((visibility("default"))) int mpv_open_cplugin(mpv_handle *mpv) {
    struct plugin *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->mpv.handle = mpv;
    p->speed = 1;
    char *socket = NULL;
    read_options(p, &socket);
    p->client = sbmpv_client_new(p, socket);
    free(socket);
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!p->client || p->wake_fd < 0) {
        sbmpv_log(&p->mpv, false, "cannot start: %s", p->client ? strerror(errno) : "out of memory");
        snapback_client_free(p->client);
        if (p->wake_fd >= 0) close(p->wake_fd);
        options_free(&p->opt);
        free(p);
        return -1;
    }
    mpv_set_wakeup_callback(mpv, wakeup, p);
    mpv_observe_property(mpv, 0, "time-pos", MPV_FORMAT_DOUBLE);
    mpv_observe_property(mpv, 0, "pause", MPV_FORMAT_FLAG);
    mpv_observe_property(mpv, 0, "speed", MPV_FORMAT_DOUBLE);
    mpv_observe_property(mpv, 0, "eof-reached", MPV_FORMAT_FLAG);
    mpv_hook_add(mpv, 0, "on_preloaded", 50);
    int rc = snapback_client_connect(p->client);
    if (rc != SNAPBACK_OK) sbmpv_log(&p->mpv, false, "snapbackd not reachable yet (%s): retrying", snapback_strerror(rc));

    for (;;) {
        mpv_event *ev;
        bool running = true;
        while (running && (ev = mpv_wait_event(mpv, 0))->event_id != MPV_EVENT_NONE) running = handle_event(p, ev);
        if (!running) break;
        if (p->file.refresher) take_refresh(p);
        int hold = sbmpv_hold_timeout_ms(p), ad = sbmpv_ad_timeout_ms(p);
        wait_and_dispatch(p, hold < 0 ? ad : ad < 0 ? hold : hold < ad ? hold : ad);
    }

    /* Quit: the session closes with mpv's last position, and the close is waited for (bounded) so
     * that the bookmark is saved before the connection goes. */
    sbmpv_quit(p);
    uint64_t until = sbmpv_now_ms() + CLOSE_FLUSH_MS;
    while (p->retiring > 0 && snapback_client_fd(p->client) >= 0) {
        uint64_t now = sbmpv_now_ms();
        if (now >= until) break;
        wait_and_dispatch(p, (int)(until - now));
    }
    mpv_set_wakeup_callback(mpv, NULL, NULL);
    snapback_client_free(p->client);
    close(p->wake_fd);
    file_reset(p);
    options_free(&p->opt);
    free(p);
    return 0;
}
