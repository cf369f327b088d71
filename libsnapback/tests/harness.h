/* SPDX-License-Identifier: Apache-2.0 */
/* The C tests' harness: the real snapbackd in a temporary directory (spawn, wait for its socket,
 * signal, restart on the same state), a player that records what the library delivers, and a poll
 * loop with a deadline that drives the library the way a player's main loop does. */
#ifndef SNAPBACK_TEST_HARNESS_H
#define SNAPBACK_TEST_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snapback/snapback.h"

static int failures;
static const char *snapbackd_bin;

/* Records a failed check and leaves the test through its `out:` label (its cleanup). */
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
            failures++;                                                               \
            goto out;                                                                 \
        }                                                                             \
    } while (0)

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------------------------------- */

struct daemon {
    pid_t pid;
    char dir[64];
    char socket[100]; /* fits sockaddr_un.sun_path */
};

static bool socket_accepts(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

/* Starts snapbackd on DIR/snapbackd.sock with its state in DIR/state (a new DIR the first time, the
 * same one on a restart) and waits up to 10 s for the socket to accept. */
static bool daemon_start(struct daemon *d) {
    if (!d->dir[0]) {
        snprintf(d->dir, sizeof d->dir, "/tmp/libsnapback-test.XXXXXX");
        if (!mkdtemp(d->dir)) return false;
        snprintf(d->socket, sizeof d->socket, "%s/snapbackd.sock", d->dir);
    }
    char state[160], log[160];
    snprintf(state, sizeof state, "%s/state", d->dir);
    snprintf(log, sizeof log, "%s/stderr.log", d->dir);
    d->pid = fork();
    if (d->pid < 0) return false;
    if (d->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) dup2(fd, 2);
        /* An empty configuration file: the built-in defaults, whatever the machine has configured. */
        execl(snapbackd_bin, "snapbackd", "--socket", d->socket, "--state-dir", state, "--config", "/dev/null",
              "--log-level", "info", (char *)NULL);
        _exit(127);
    }
    long long deadline = now_ms() + 10000;
    while (now_ms() < deadline) {
        if (socket_accepts(d->socket)) return true;
        int status;
        if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
            d->pid = 0;
            return false;
        }
        poll(NULL, 0, 10);
    }
    return false;
}

/* Sends `sig` and reaps the daemon; its wait status. */
static int daemon_stop(struct daemon *d, int sig) {
    int status = -1;
    if (d->pid > 0) {
        kill(d->pid, sig);
        if (sig == SIGSTOP || sig == SIGCONT) return 0;
        waitpid(d->pid, &status, 0);
        d->pid = 0;
    }
    return status;
}

static void daemon_cleanup(struct daemon *d) {
    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, NULL, 0);
        d->pid = 0;
    }
    if (d->dir[0]) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", d->dir);
        d->dir[0] = 0;
    }
}

/* ---------------------------------------------------------------------------------------------- */

struct pushed {
    snapback_session *session;
    int kind;
    uint64_t seq;
    char reason[200];
    double stream_time, content_time;
    int seek_reason, trigger, code, skip_reason;
    char text[128]; /* break id or error message */
};

struct player {
    snapback_client *c;
    struct pushed pushes[256];
    int n_pushes;
    int connected, disconnected, last_disconnect_status;
    int restored, restored_status;
    double restored_start;
};

static void on_push(snapback_client *c, snapback_session *s, const snapback_push *p, void *user) {
    (void)c;
    struct player *pl = user;
    if (pl->n_pushes >= 256) return;
    struct pushed *r = &pl->pushes[pl->n_pushes++];
    memset(r, 0, sizeof *r);
    r->session = s;
    r->kind = p->kind;
    r->seq = p->seq;
    snprintf(r->reason, sizeof r->reason, "%s", p->reason);
    switch (p->kind) {
    case SNAPBACK_PUSH_SEEK:
        r->stream_time = p->u.seek.stream_time;
        r->seek_reason = p->u.seek.reason;
        break;
    case SNAPBACK_PUSH_BREAK_WATCHED: snprintf(r->text, sizeof r->text, "%s", p->u.break_watched.break_id); break;
    case SNAPBACK_PUSH_PLAY_BREAK: snprintf(r->text, sizeof r->text, "%s", p->u.play_break.break_id); break;
    case SNAPBACK_PUSH_BREAK_SKIPPED:
        snprintf(r->text, sizeof r->text, "%s", p->u.break_skipped.break_id);
        r->skip_reason = p->u.break_skipped.reason;
        break;
    case SNAPBACK_PUSH_BOOKMARK_SAVED:
        r->content_time = p->u.bookmark_saved.content_time;
        r->stream_time = p->u.bookmark_saved.stream_time;
        r->trigger = p->u.bookmark_saved.trigger;
        break;
    case SNAPBACK_PUSH_SESSION_ERROR:
        r->code = p->u.session_error.code;
        snprintf(r->text, sizeof r->text, "%s", p->u.session_error.message);
        break;
    default: break;
    }
}

static void on_connection(snapback_client *c, snapback_connection_event ev, int status, const char *msg, void *user) {
    (void)c;
    (void)msg;
    struct player *pl = user;
    if (ev == SNAPBACK_CONNECTED) pl->connected++;
    else {
        pl->disconnected++;
        pl->last_disconnect_status = status;
    }
}

static void on_restored(snapback_client *c, snapback_session *s, int status, const char *msg, double start,
                        void *user) {
    (void)c;
    (void)s;
    (void)msg;
    struct player *pl = user;
    pl->restored++;
    pl->restored_status = status;
    pl->restored_start = start;
}

static snapback_options player_options(struct player *pl, const struct daemon *d) {
    snapback_options o;
    memset(&o, 0, sizeof o);
    o.socket_path = d->socket;
    o.client_name = "libsnapback-test";
    o.reconnect_min_ms = 20;
    o.reconnect_max_ms = 200;
    o.callbacks.on_push = on_push;
    o.callbacks.on_connection = on_connection;
    o.callbacks.on_session_restored = on_restored;
    o.callbacks.user_data = pl;
    return o;
}

/* Drives the client as a main loop would until *counter reaches target or ms pass. */
static bool pump_until(snapback_client *c, const int *counter, int target, int ms) {
    long long deadline = now_ms() + ms;
    while (*counter < target) {
        long long left = deadline - now_ms();
        if (left <= 0) return false;
        int timeout = snapback_client_next_timeout_ms(c);
        if (timeout < 0 || timeout > left) timeout = (int)left;
        struct pollfd p = {.fd = snapback_client_fd(c), .events = snapback_client_events(c)};
        int n = poll(&p, p.fd >= 0 ? 1 : 0, timeout);
        snapback_client_dispatch(c, n > 0 ? p.revents : 0);
    }
    return true;
}

static bool connect_player(struct player *pl, const struct daemon *d) {
    memset(pl, 0, sizeof *pl);
    snapback_options o = player_options(pl, d);
    pl->c = snapback_client_new(&o);
    return pl->c && snapback_client_connect(pl->c) == SNAPBACK_OK && pump_until(pl->c, &pl->connected, 1, 5000);
}

static int count_pushes(const struct player *pl, int kind) {
    int n = 0;
    for (int i = 0; i < pl->n_pushes; i++) n += pl->pushes[i].kind == kind;
    return n;
}

static const struct pushed *find_push(const struct player *pl, int kind, int from) {
    for (int i = from; i < pl->n_pushes; i++)
        if (pl->pushes[i].kind == kind) return &pl->pushes[i];
    return NULL;
}

/* Waits until a push of `kind` is recorded at index >= from. */
static const struct pushed *wait_push(struct player *pl, int kind, int from, int ms) {
    long long deadline = now_ms() + ms;
    for (;;) {
        const struct pushed *p = find_push(pl, kind, from);
        if (p) return p;
        long long left = deadline - now_ms();
        if (left <= 0) return NULL;
        int target = pl->n_pushes + 1;
        pump_until(pl->c, &pl->n_pushes, target, (int)left);
    }
}

/* ---------------------------------------------------------------------------------------------- */

/* One call's result, copied out of the callback (its pointers die with it). */
struct res {
    struct player *pl;
    int done, status;
    char message[256];
    int pushes_before; /* pushes delivered before this reply */
    snapback_reply r;  /* scalars only are meaningful after the callback */
    char text[128];    /* opened.policy_preset, state.current_break_id, bookmark content id */
    size_t n;          /* breaks, bookmarks */
    bool watched[8];
    char ids[8][32];
    double durations[8];
    /* state.break_states */
    size_t n_states;
    char state_ids[8][32];
    int positions[8], skip_reasons[8];
    bool state_watched[8], exempt[8];
};

static void on_reply(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct res *x = user;
    x->done = 1;
    x->status = r->status;
    snprintf(x->message, sizeof x->message, "%s", r->message);
    x->pushes_before = x->pl ? x->pl->n_pushes : 0;
    x->r = *r;
    if (r->status != SNAPBACK_OK) return;
    switch (r->method) {
    case 0x0100:
        snprintf(x->text, sizeof x->text, "%s", r->u.opened.policy_preset);
        x->n = r->u.opened.n_breaks_before_resume;
        break;
    case 0x0111:
        snprintf(x->text, sizeof x->text, "%s", r->u.state.current_break_id);
        x->n = r->u.state.n_breaks;
        for (size_t i = 0; i < x->n && i < 8; i++) {
            x->watched[i] = r->u.state.breaks[i].watched;
            x->durations[i] = r->u.state.breaks[i].duration;
            snprintf(x->ids[i], sizeof x->ids[i], "%s", r->u.state.breaks[i].id);
        }
        x->n_states = r->u.state.n_break_states;
        for (size_t i = 0; i < x->n_states && i < 8; i++) {
            const snapback_break_state *b = &r->u.state.break_states[i];
            snprintf(x->state_ids[i], sizeof x->state_ids[i], "%s", b->break_id);
            x->positions[i] = b->position;
            x->skip_reasons[i] = b->skip_reason;
            x->state_watched[i] = b->watched;
            x->exempt[i] = b->exempt;
        }
        break;
    case 0x0110:
        if (r->u.break_at.has_previous) snprintf(x->ids[0], sizeof x->ids[0], "%s", r->u.break_at.previous.id);
        if (r->u.break_at.has_next) snprintf(x->ids[1], sizeof x->ids[1], "%s", r->u.break_at.next.id);
        break;
    case 0x0200: snprintf(x->text, sizeof x->text, "%s", r->u.bookmark.content_id); break;
    case 0x0201:
        x->n = r->u.list.n_bookmarks;
        snprintf(x->text, sizeof x->text, "%s", r->u.list.next_page_token);
        for (size_t i = 0; i < x->n && i < 8; i++)
            snprintf(x->ids[i], sizeof x->ids[i], "%s", r->u.list.bookmarks[i].content_id);
        break;
    case 0x0001: snprintf(x->text, sizeof x->text, "%s", r->u.status_info.server_version); break;
    default: break;
    }
}

#define RES(player) {.pl = (player)}

/* Makes a call and waits for its reply: CALL(pl, res, snapback_xxx(args..., on_reply, &res)). */
#define CALL(pl, x, expr)                                   \
    do {                                                    \
        CHECK((expr) == SNAPBACK_OK);                       \
        CHECK(pump_until((pl)->c, &(x).done, 1, 5000));    \
    } while (0)

#endif
