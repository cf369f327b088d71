/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal player on a GLib main loop. The library is one GSource: prepare() gives GLib the
 * library's timeout, the descriptor is watched with the events the library wants (updated every
 * iteration, since they change with the output queue and across reconnections), and dispatch() hands
 * what poll reported to snapback_client_dispatch(). The playback clock is an ordinary g_timeout.
 *
 *   SNAPBACK_SOCKET=/path/to/snapbackd.sock ./player_glib [--content-id ID] [--profile NAME] [--b1-watched] */
#include <glib.h>
#include <poll.h>

#include "scripted_player.h"

typedef struct {
    GSource source;
    snapback_client *client;
    gpointer tag; /* the descriptor's tag, NULL while there is none */
    int fd;
} SnapbackSource;

static GIOCondition to_glib(short events) {
    return (events & POLLIN ? G_IO_IN : 0) | (events & POLLOUT ? G_IO_OUT : 0);
}

/* Follows the library's descriptor and events; called before each poll. */
static void sync_fd(SnapbackSource *s) {
    int fd = snapback_client_fd(s->client);
    if (fd != s->fd) {
        if (s->tag) g_source_remove_unix_fd(&s->source, s->tag);
        s->tag = fd >= 0 ? g_source_add_unix_fd(&s->source, fd, to_glib(snapback_client_events(s->client))) : NULL;
        s->fd = fd;
    } else if (s->tag) {
        g_source_modify_unix_fd(&s->source, s->tag, to_glib(snapback_client_events(s->client)));
    }
}

static gboolean source_prepare(GSource *source, gint *timeout) {
    SnapbackSource *s = (SnapbackSource *)source;
    sync_fd(s);
    *timeout = snapback_client_next_timeout_ms(s->client);
    return *timeout == 0;
}

static gboolean source_check(GSource *source) {
    SnapbackSource *s = (SnapbackSource *)source;
    return (s->tag && g_source_query_unix_fd(source, s->tag)) || snapback_client_next_timeout_ms(s->client) == 0;
}

static gboolean source_dispatch(GSource *source, GSourceFunc callback, gpointer user_data) {
    (void)callback;
    (void)user_data;
    SnapbackSource *s = (SnapbackSource *)source;
    GIOCondition c = s->tag ? g_source_query_unix_fd(source, s->tag) : 0;
    short revents = (short)((c & G_IO_IN ? POLLIN : 0) | (c & G_IO_OUT ? POLLOUT : 0) | (c & G_IO_HUP ? POLLHUP : 0) |
                            (c & G_IO_ERR ? POLLERR : 0));
    snapback_client_dispatch(s->client, revents);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs snapback_source_funcs = {source_prepare, source_check, source_dispatch, NULL, NULL, NULL};

struct app {
    struct player player;
    GMainLoop *loop;
    int idle_ticks;
};

static gboolean on_tick(gpointer data) {
    struct app *a = data;
    a->idle_ticks = a->player.in_flight ? a->idle_ticks + 1 : 0;
    player_tick(&a->player);
    if (a->player.done || a->idle_ticks >= 500) { /* 5 s without progress: give up */
        g_main_loop_quit(a->loop);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv) {
    struct player_args args;
    int parsed = player_parse_args("player_glib", argc, argv, &args);
    if (parsed) return parsed == 1 ? 0 : 2;
    struct app a = {0};
    int rc = player_start(&a.player, &args);
    if (rc != SNAPBACK_OK) {
        fprintf(stderr, "player_glib: %s\n", snapback_strerror(rc));
        snapback_client_free(a.player.client);
        return 1;
    }
    a.loop = g_main_loop_new(NULL, FALSE);
    GSource *source = g_source_new(&snapback_source_funcs, sizeof(SnapbackSource));
    SnapbackSource *s = (SnapbackSource *)source;
    s->client = a.player.client;
    s->fd = -1;
    g_source_attach(source, NULL);
    g_timeout_add(10, on_tick, &a);
    g_main_loop_run(a.loop);
    g_source_destroy(source);
    g_source_unref(source);
    g_main_loop_unref(a.loop);
    return player_finish(&a.player);
}
