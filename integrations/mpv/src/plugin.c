/* snapback for mpv: a C plugin (`mpv --script=snapback.so`) that puts mpv under snapbackd's ad
 * timeline through libsnapback.
 *
 * mpv runs a C plugin's mpv_open_cplugin() on a thread of its own for as long as the plugin is
 * loaded; that thread is the plugin's main loop, and the plugin starts none. The loop polls two
 * descriptors: an eventfd that mpv's wakeup callback writes when events are queued for the plugin
 * (mpv_get_wakeup_pipe() is the same mechanism, deprecated in client API 2.0), and libsnapback's
 * socket. mpv is only ever sent asynchronous commands, so the player never waits for the plugin; the
 * one wait the plugin imposes is the on_preloaded hook, held until the session is open (bounded by
 * snapback-open-timeout) so that a resume starts at the bookmark instead of jumping there. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "plugin.h"

#define REPLY_SEEK 1

uint64_t sbmpv_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The client API has no log call for C plugins: stderr, prefixed as mpv prefixes its modules. */
void sbmpv_log(struct plugin *p, bool verbose_only, const char *fmt, ...) {
    if (verbose_only && !p->opt.verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("[snapback] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

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
    memset(o, 0, sizeof *o);
}

/* Reads the options into p->opt; *socket (when not NULL) gets snapback-socket's value. */
static void read_options(struct plugin *p, char **socket) {
    options_free(&p->opt);
    p->opt.resume = true;
    p->opt.open_timeout_ms = DEFAULT_OPEN_TIMEOUT_MS;
    mpv_node node;
    if (mpv_get_property(p->mpv, "options/script-opts", MPV_FORMAT_NODE, &node) < 0) return;
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
                        : !strcmp(k, "socket")     ? socket
                                                   : NULL;
            if (slot) {
                free(*slot);
                *slot = *s ? strdup(s) : NULL;
            } else if (!strcmp(k, "resume")) {
                p->opt.resume = yes(s);
            } else if (!strcmp(k, "verbose")) {
                p->opt.verbose = yes(s);
            } else if (!strcmp(k, "open-timeout")) {
                char *end;
                double secs = strtod(s, &end);
                if (end != s && !*end && secs >= 0 && secs <= 60) p->opt.open_timeout_ms = (int)(secs * 1000);
                else sbmpv_log(p, false, "snapback-open-timeout=%s: seconds from 0 to 60 expected", s);
            } else if (strcmp(k, "socket") != 0) {
                sbmpv_log(p, false, "unknown option snapback-%s", k);
            }
        }
    }
    mpv_free_node_contents(&node);
}

/* ---------------------------------------------------------------------------------------------- */
/* What the session side asks of mpv.                                                               */

void sbmpv_seek(struct plugin *p, double t) {
    char target[64];
    snprintf(target, sizeof target, "%.6f", t);
    p->own_seek = true;
    p->own_target = t;
    if (p->hook_held) {
        /* Not playing yet: the file starts there (mpv's own start seek, exact). */
        if (mpv_set_property_string(p->mpv, "file-local-options/start", target) < 0) p->own_seek = false;
        return;
    }
    const char *cmd[] = {"seek", target, "absolute+exact", NULL};
    if (mpv_command_async(p->mpv, REPLY_SEEK, cmd) < 0) p->own_seek = false;
}

void sbmpv_osd(struct plugin *p, const char *text, int ms) {
    char duration[16];
    snprintf(duration, sizeof duration, "%d", ms);
    const char *cmd[] = {"show-text", text, duration, NULL};
    mpv_command_async(p->mpv, 0, cmd);
}

void sbmpv_continue_hook(struct plugin *p) {
    if (!p->hook_held) return;
    p->hook_held = false;
    mpv_hook_continue(p->mpv, p->hook_id);
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
    char *path = p->opt.sidecar ? strdup(p->opt.sidecar) : sbm_default_sidecar_path(p->path);
    if (!path) return 0;
    size_t len;
    char *text = read_small_file(path, &len), err[160];
    int rc = 0;
    if (!text) {
        if (p->opt.sidecar) sbmpv_log(p, false, "%s: %s", path, strerror(errno));
    } else if (sbm_breaks_from_sidecar(text, len, &p->breaks, content_id, err, sizeof err) != 0) {
        sbmpv_log(p, false, "%s: %s; the file's chapters are used", path, err);
        rc = -1;
    } else {
        rc = 1;
    }
    free(text);
    free(path);
    return rc;
}

static void load_chapters(struct plugin *p) {
    mpv_node node;
    if (mpv_get_property(p->mpv, "chapter-list", MPV_FORMAT_NODE, &node) < 0) return;
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
    if (ch && sbm_breaks_from_chapters(ch, n, p->duration, p->opt.ad_chapters, &p->breaks, err, sizeof err) != 0)
        sbmpv_log(p, false, "chapters: %s", err);
    free(ch);
    mpv_free_node_contents(&node);
}

/* The file's own content id: a "content_id" tag in its metadata, any case. */
static char *metadata_content_id(struct plugin *p) {
    mpv_node node;
    char *id = NULL;
    if (mpv_get_property(p->mpv, "metadata", MPV_FORMAT_NODE, &node) < 0) return NULL;
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
    char *v = mpv_get_property_string(p->mpv, name), *copy = v ? strdup(v) : NULL;
    mpv_free(v);
    return copy;
}

static void file_reset(struct plugin *p) {
    sbm_breaks_free(&p->breaks);
    free(p->path);
    free(p->content_id);
    free(p->stream_id);
    p->path = p->content_id = p->stream_id = NULL;
    p->file_loaded = p->started = p->have_pos = p->seeking = p->own_seek = p->have_seek_from = false;
    p->duration = 0;
}

/* on_preloaded: the file is open, not playing. Its breaks and ids, then the session. */
static void file_preloaded(struct plugin *p) {
    file_reset(p);
    read_options(p, NULL);
    p->path = string_property(p, "path");
    p->stream_id = string_property(p, "filename");
    if (mpv_get_property(p->mpv, "duration", MPV_FORMAT_DOUBLE, &p->duration) < 0 || !isfinite(p->duration))
        p->duration = 0;
    char *sidecar_id = NULL;
    int sidecar = load_sidecar(p, &sidecar_id);
    p->breaks_from = sidecar == 1 ? "sidecar" : "chapters";
    if (sidecar != 1) load_chapters(p);
    if (!p->breaks.n) p->breaks_from = "none";
    char *id = p->opt.content_id ? strdup(p->opt.content_id) : sidecar_id ? sidecar_id : metadata_content_id(p);
    if (id != sidecar_id) free(sidecar_id);
    p->content_id = id ? id : string_property(p, "filename/no-ext");
    if (!p->content_id || !p->stream_id) {
        sbmpv_log(p, false, "no file name: not under snapback");
        return;
    }
    p->file_loaded = true;
    /* A start the viewer asked for (--start) wins over the bookmark. */
    char *start = string_property(p, "start");
    bool asked = start && strcmp(start, "none") != 0;
    free(start);
    sbmpv_open_session(p, p->opt.resume && !asked);
}

/* ---------------------------------------------------------------------------------------------- */
/* mpv's events.                                                                                    */

static void playback_restart(struct plugin *p) {
    bool first = !p->started;
    p->started = true;
    p->seeking = false;
    double t;
    if (mpv_get_property(p->mpv, "time-pos", MPV_FORMAT_DOUBLE, &t) >= 0) {
        p->pos = t;
        p->have_pos = true;
    }
    if (!p->session && p->file_loaded && !p->closing) {
        sbmpv_open_session(p, false); /* the daemon came back between the file's start and now */
    } else if (p->own_seek) {
        p->own_seek = false;
        /* Ours, carried out: the daemon holds the session there already; a report confirms it. A
         * viewer's seek that overrode ours: reported as a seek from our target. */
        if (fabs(p->pos - p->own_target) <= OWN_SEEK_TOLERANCE) sbmpv_report_state(p);
        else sbmpv_seek_ended(p, p->own_target, p->pos);
    } else if (!first && p->have_seek_from) {
        sbmpv_seek_ended(p, p->seek_from, p->pos);
    } else {
        sbmpv_report_state(p);
    }
    p->have_seek_from = false;
}

static void property_changed(struct plugin *p, const mpv_event_property *e) {
    if (!strcmp(e->name, "time-pos")) {
        if (e->format != MPV_FORMAT_DOUBLE) return; /* no file: the last position stays for the close */
        p->pos = *(double *)e->data;
        p->have_pos = true;
        sbmpv_position_changed(p);
    } else if (!strcmp(e->name, "pause") && e->format == MPV_FORMAT_FLAG) {
        bool paused = *(int *)e->data;
        if (paused == p->paused) return;
        p->paused = paused;
        if (p->started && !p->seeking && !p->own_seek) sbmpv_report_state(p);
    } else if (!strcmp(e->name, "speed") && e->format == MPV_FORMAT_DOUBLE) {
        p->speed = *(double *)e->data;
        if (p->started && !p->seeking && !p->own_seek) sbmpv_report_state(p);
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
        if (strcmp(h->name, "on_preloaded") != 0) {
            mpv_hook_continue(p->mpv, h->id);
            break;
        }
        p->hook_id = h->id;
        p->hook_held = true;
        p->hook_deadline_ms = sbmpv_now_ms() + (uint64_t)p->opt.open_timeout_ms;
        file_preloaded(p);
        if (!p->session) sbmpv_continue_hook(p);
        break;
    }
    case MPV_EVENT_SEEK:
        if (!p->seeking && !p->own_seek && p->started) {
            p->seek_from = p->pos;
            p->have_seek_from = p->have_pos;
        }
        p->seeking = true;
        break;
    case MPV_EVENT_PLAYBACK_RESTART: playback_restart(p); break;
    case MPV_EVENT_PROPERTY_CHANGE: property_changed(p, ev->data); break;
    case MPV_EVENT_COMMAND_REPLY:
        if (ev->reply_userdata == REPLY_SEEK && ev->error < 0) {
            sbmpv_log(p, false, "seek refused by mpv: %s", mpv_error_string(ev->error));
            p->own_seek = false;
        }
        break;
    case MPV_EVENT_END_FILE: {
        mpv_event_end_file *e = ev->data;
        if (e->reason == MPV_END_FILE_REASON_EOF) sbmpv_content_complete(p);
        sbmpv_close_session(p, e->reason != MPV_END_FILE_REASON_EOF);
        sbmpv_continue_hook(p);
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
    p->mpv = mpv;
    p->speed = 1;
    char *socket = NULL;
    read_options(p, &socket);
    p->client = sbmpv_client_new(p, socket);
    free(socket);
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!p->client || p->wake_fd < 0) {
        sbmpv_log(p, false, "cannot start: %s", p->client ? strerror(errno) : "out of memory");
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
    if (rc != SNAPBACK_OK) sbmpv_log(p, false, "snapbackd not reachable yet (%s): retrying", snapback_strerror(rc));

    for (;;) {
        mpv_event *ev;
        bool running = true;
        while (running && (ev = mpv_wait_event(mpv, 0))->event_id != MPV_EVENT_NONE) running = handle_event(p, ev);
        if (!running) break;
        int max_ms = -1;
        if (p->hook_held) {
            uint64_t now = sbmpv_now_ms();
            if (now >= p->hook_deadline_ms) {
                sbmpv_log(p, false, "the session did not open within %d ms: playing without waiting",
                          p->opt.open_timeout_ms);
                sbmpv_continue_hook(p);
            } else {
                max_ms = (int)(p->hook_deadline_ms - now);
            }
        }
        wait_and_dispatch(p, max_ms);
    }

    /* Quit: the session closes with mpv's last position, and the close is waited for (bounded) so
     * that the bookmark is saved before the connection goes. */
    sbmpv_close_session(p, true);
    uint64_t until = sbmpv_now_ms() + CLOSE_FLUSH_MS;
    while ((p->close_pending || p->orphan) && snapback_client_fd(p->client) >= 0) {
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
