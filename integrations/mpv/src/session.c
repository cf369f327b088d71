/* snapbackd's side of the plugin: the client's callbacks, the session's opening with its resume,
 * what mpv does turned into snapback events, and the daemon's pushes carried out in mpv. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"

/* A failed call is logged; the session goes on (a refused event changes nothing in the daemon). */
static void on_event_reply(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct plugin *p = user;
    if (r->status != SNAPBACK_OK && r->status != SNAPBACK_E_CLIENT_CLOSED)
        sbmpv_log(p, false, "call 0x%04x failed: %s (%s)", r->method, snapback_strerror(r->status), r->message);
}

static void check(struct plugin *p, const char *what, int rc) {
    if (rc != SNAPBACK_OK) sbmpv_log(p, false, "%s: %s", what, snapback_strerror(rc));
}

/* The daemon's answer to a snapback: where the viewer goes back to once the break has played. */
static void on_state_for_osd(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct plugin *p = user;
    if (r->status != SNAPBACK_OK) return;
    const snapback_session_state *st = &r->u.state;
    char text[96], clock[32];
    if (st->has_pending_return) {
        sbm_format_clock(st->pending_return, clock, sizeof clock);
        snprintf(text, sizeof text, "Ad break — you will return to %s", clock);
    } else {
        snprintf(text, sizeof text, "Ad break");
    }
    sbmpv_osd(p, text, 4000);
}

static void on_push(snapback_client *c, snapback_session *s, const snapback_push *push, void *user) {
    (void)c;
    struct plugin *p = user;
    if (s != p->session) return; /* a session closed since: its file is gone */
    switch (push->kind) {
    case SNAPBACK_PUSH_SEEK: {
        double t = push->u.seek.stream_time;
        sbmpv_log(p, true, "seek to %.3f (%s)", t, push->reason);
        sbmpv_seek(p, t);
        char text[96], clock[32];
        sbm_format_clock(t, clock, sizeof clock);
        switch (push->u.seek.reason) {
        case SNAPBACK_SEEK_SNAPBACK:
            /* Where the viewer returns is the daemon's to say (the policy may not return at all). */
            check(p, "GetSessionState", snapback_get_session_state(p->session, on_state_for_osd, p));
            break;
        case SNAPBACK_SEEK_SEEK_REFUSED_DURING_AD: sbmpv_osd(p, "Ad break — seeking is back when it ends", 3000); break;
        case SNAPBACK_SEEK_RESUME_FROM_BOOKMARK:
            snprintf(text, sizeof text, "Resuming at %s", clock);
            sbmpv_osd(p, text, 3000);
            break;
        case SNAPBACK_SEEK_BREAK_BEFORE_RESUME: sbmpv_osd(p, "Ad break — then back to where you were", 4000); break;
        default: break;
        }
        break;
    }
    case SNAPBACK_PUSH_BOOKMARK_SAVED:
        sbmpv_log(p, true, "bookmark saved at content %.3f (stream %.3f)", push->u.bookmark_saved.content_time,
                  push->u.bookmark_saved.stream_time);
        break;
    case SNAPBACK_PUSH_SESSION_ERROR:
        sbmpv_log(p, false, "session error %d: %s", push->u.session_error.code, push->u.session_error.message);
        break;
    case SNAPBACK_PUSH_BREAK_WATCHED:
        sbmpv_log(p, true, "break %s watched (%s)", push->u.break_watched.break_id, push->reason);
        break;
    default: sbmpv_log(p, true, "push %d (%s)", push->kind, push->reason); break;
    }
}

static void on_connection(snapback_client *c, snapback_connection_event ev, int status, const char *msg, void *user) {
    (void)c;
    (void)status;
    struct plugin *p = user;
    if (ev == SNAPBACK_DISCONNECTED) {
        sbmpv_log(p, false, "snapbackd went away: %s", msg);
        return;
    }
    sbmpv_log(p, true, "connected to %s", snapback_client_socket_path(p->client));
    /* The daemon was away when the file started: a session now, from where mpv is (no resume jump
     * in the middle of playback). */
    if (p->file_loaded && !p->session && p->started) sbmpv_open_session(p, false);
}

static void on_session_restored(snapback_client *c, snapback_session *s, int status, const char *msg,
                                double start, void *user) {
    (void)c;
    (void)s;
    struct plugin *p = user;
    if (status == SNAPBACK_OK) sbmpv_log(p, true, "session reopened after a daemon restart, at %.3f", start);
    else sbmpv_log(p, false, "session not reopened: %s", msg);
}

snapback_client *sbmpv_client_new(struct plugin *p, const char *socket_path) {
    snapback_options o;
    memset(&o, 0, sizeof o);
    o.socket_path = socket_path && *socket_path ? socket_path : NULL;
    o.client_name = "mpv";
    o.callbacks.on_push = on_push;
    o.callbacks.on_connection = on_connection;
    o.callbacks.on_session_restored = on_session_restored;
    o.callbacks.user_data = p;
    return snapback_client_new(&o);
}

static void on_closed(snapback_client *c, const snapback_reply *r, void *user) {
    struct plugin *p = user;
    p->close_pending = false;
    on_event_reply(c, r, user);
}

static void close_handle(struct plugin *p, snapback_session *s) {
    int rc = snapback_session_close(s, on_closed, p);
    check(p, "CloseSession", rc);
    /* Disconnected, the library frees the handle at once with no callback: nothing to wait for. */
    p->close_pending = rc == SNAPBACK_OK && snapback_client_is_connected(p->client);
}

static void on_opened(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct plugin *p = user;
    if (r->session && r->session == p->orphan) {
        /* Its file ended while it was opening: closed now, its bookmark where mpv stopped. */
        p->orphan = NULL;
        if (r->status == SNAPBACK_OK) close_handle(p, r->session);
        return;
    }
    if (r->status != SNAPBACK_OK) {
        sbmpv_log(p, false, "session for \"%s\" not opened: %s (%s)", p->content_id, snapback_strerror(r->status),
                  r->message);
        p->session = NULL; /* the library frees the handle after this callback */
    } else {
        p->open = true;
        const snapback_opened *o = &r->u.opened;
        sbmpv_log(p, true, "session %llu for \"%s\" (%s, %zu breaks from %s)%s", (unsigned long long)o->session_id,
                  p->content_id, o->policy_preset, p->breaks.n, p->breaks_from,
                  o->resumed_from_bookmark ? ", resumed from its bookmark" : "");
        /* Opened once playback had begun (the hold timed out, or a late connection): tell the daemon
         * where mpv is, unless a resume seek is on its way there. */
        if (p->started && !p->own_seek) sbmpv_report_state(p);
    }
    sbmpv_continue_hook(p);
}

void sbmpv_open_session(struct plugin *p, bool resume) {
    snapback_session_params sp;
    memset(&sp, 0, sizeof sp);
    sp.stream_id = p->stream_id;
    sp.content_id = p->content_id;
    sp.profile = p->opt.profile;
    sp.kind = SNAPBACK_SESSION_ON_DEMAND;
    sp.breaks = p->breaks.items;
    sp.n_breaks = p->breaks.n;
    double ads = 0;
    for (size_t i = 0; i < p->breaks.n; i++) ads += p->breaks.items[i].duration;
    if (p->duration > ads) {
        sp.has_content_duration = true;
        sp.content_duration = p->duration - ads;
    }
    sp.policy_preset = p->opt.preset;
    snapback_resume r = {.use_bookmark = true};
    if (resume) sp.resume = &r;
    p->open = p->closing = p->completed = false;
    int rc = snapback_session_open(p->client, &sp, on_opened, p, &p->session);
    if (rc != SNAPBACK_OK) {
        /* Away: the session opens when the library has reconnected (on_connection). */
        sbmpv_log(p, rc == SNAPBACK_E_DISCONNECTED, "no session for \"%s\" yet: %s", p->content_id,
                  snapback_strerror(rc));
        p->session = NULL;
        return;
    }
    if (!p->started) {
        p->hook_held = p->hook_id != 0;
        p->hook_deadline_ms = sbmpv_now_ms() + (uint64_t)p->opt.open_timeout_ms;
    }
}

void sbmpv_report_state(struct plugin *p) {
    if (!p->session || p->closing || !p->have_pos) return;
    int rc = p->paused ? snapback_pause(p->session, p->pos, on_event_reply, p)
                       : snapback_report_playhead(p->session, p->pos, p->speed, true, on_event_reply, p);
    check(p, p->paused ? "Pause" : "ReportPlayhead", rc);
    p->last_report_ms = sbmpv_now_ms();
    p->last_report_pos = p->pos;
}

/* Whether [from, to] holds the start or the end of a break. */
static bool crosses_break_edge(const sbm_breaks *b, double from, double to) {
    for (size_t i = 0; i < b->n; i++) {
        double start = b->items[i].start, end = start + b->items[i].duration;
        if ((from < start && start <= to) || (from < end && end <= to)) return true;
    }
    return false;
}

void sbmpv_position_changed(struct plugin *p) {
    if (!p->session || p->closing || p->paused || p->seeking || p->own_seek || !p->started) return;
    if (sbmpv_now_ms() - p->last_report_ms >= REPORT_MS ||
        crosses_break_edge(&p->breaks, p->last_report_pos, p->pos))
        sbmpv_report_state(p);
}

void sbmpv_seek_ended(struct plugin *p, double from, double to) {
    if (!p->session || p->closing) return;
    sbmpv_log(p, true, "the viewer seeked %.3f → %.3f", from, to);
    check(p, "SeekEnded", snapback_seek_ended(p->session, from, to, on_event_reply, p));
    p->last_report_ms = sbmpv_now_ms();
    p->last_report_pos = to;
}

void sbmpv_content_complete(struct plugin *p) {
    if (!p->session || p->closing || p->completed) return;
    p->completed = true;
    check(p, "ContentComplete", snapback_content_complete(p->session, on_event_reply, p));
}

void sbmpv_close_session(struct plugin *p, bool final_report) {
    if (!p->session || p->closing) return;
    if (!p->open) {
        /* Still opening: the library closes nothing before the daemon answered; on_opened does. */
        p->orphan = p->session;
        p->session = NULL;
        return;
    }
    /* The last position mpv showed, stopped: the close saves the bookmark there. */
    if (final_report && p->have_pos && !p->completed)
        check(p, "ReportPlayhead", snapback_report_playhead(p->session, p->pos, p->speed, false, on_event_reply, p));
    close_handle(p, p->session);
    p->closing = true;
    p->session = NULL; /* freed by the library after its callback */
    p->open = false;
}
