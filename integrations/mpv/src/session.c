/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's state machine (session.h): the session of the file mpv plays, opened with its resume,
 * what mpv does turned into snapback events, and the daemon's pushes carried out in mpv. Every change
 * of p->session and p->motion is made here. */
#define _GNU_SOURCE
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The current file's live session (held, opening or open), NULL when it has none. */
static struct live_session *live(struct plugin *p) {
    switch (p->session.kind) {
    case SESSION_HELD: return &p->session.u.held.live;
    case SESSION_OPENING: return &p->session.u.opening;
    case SESSION_OPEN: return &p->session.u.open;
    case SESSION_NONE:
    case SESSION_AWAY: break;
    }
    return NULL;
}

/* Its handle, NULL when it has none. */
static snapback_session *current(struct plugin *p) {
    struct live_session *l = live(p);
    return l ? l->handle : NULL;
}

/* A failed call is logged; the session goes on (a refused event changes nothing in the daemon). */
static void on_event_reply(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct plugin *p = user;
    if (r->status != SNAPBACK_OK && r->status != SNAPBACK_E_CLIENT_CLOSED)
        sbmpv_log(&p->mpv, false, "call 0x%04x failed: %s (%s)", r->method, snapback_strerror(r->status),
                  r->message);
}

static void check(struct plugin *p, const char *what, int rc) {
    if (rc != SNAPBACK_OK) sbmpv_log(&p->mpv, false, "%s: %s", what, snapback_strerror(rc));
}

/* Lets the file start if the session held it: SESSION_HELD becomes SESSION_OPENING. */
static void release_hold(struct plugin *p) {
    if (p->session.kind != SESSION_HELD) return;
    uint64_t hook_id = p->session.u.held.hook_id;
    struct live_session l = p->session.u.held.live;
    p->session.kind = SESSION_OPENING;
    p->session.u.opening = l;
    sbmpv_hook_continue(&p->mpv, hook_id);
}

/* ---------------------------------------------------------------------------------------------- */
/* Reports                                                                                          */

/* The position as it stands (playing or paused): a ReportPlayhead, or a Pause when paused. */
static void report_state(struct plugin *p) {
    snapback_session *s = current(p);
    if (!s || !p->have_pos) return;
    int rc = p->paused ? snapback_pause(s, p->pos, on_event_reply, p)
                       : snapback_report_playhead(s, p->pos, p->speed, true, on_event_reply, p);
    check(p, p->paused ? "Pause" : "ReportPlayhead", rc);
    p->last_report_ms = sbmpv_now_ms();
    p->last_report_pos = p->pos;
}

static void seek_ended(struct plugin *p, double from, double to) {
    snapback_session *s = current(p);
    if (!s) return;
    sbmpv_log(&p->mpv, true, "the viewer seeked %.3f → %.3f", from, to);
    check(p, "SeekEnded", snapback_seek_ended(s, from, to, on_event_reply, p));
    p->last_report_ms = sbmpv_now_ms();
    p->last_report_pos = to;
}

/* Whether [from, to] holds the start or the end of a break. */
static bool crosses_break_edge(const sbm_breaks *b, double from, double to) {
    for (size_t i = 0; i < b->n; i++) {
        double start = b->items[i].start, end = start + b->items[i].duration;
        if ((from < start && start <= to) || (from < end && end <= to)) return true;
    }
    return false;
}

/* ---------------------------------------------------------------------------------------------- */
/* The daemon's side: the client's callbacks                                                       */

/* A seek the daemon commanded: before the file plays (its start held), where it starts; after, an
 * exact seek. Either way an own seek, not reported back. */
static void command_seek(struct plugin *p, double t) {
    bool ok = p->session.kind == SESSION_HELD ? sbmpv_set_start(&p->mpv, t) : sbmpv_seek_command(&p->mpv, t);
    if (!ok) return;
    struct motion m = p->motion;
    if (m.kind == MOTION_OWN_SEEK) {
        p->motion.u.own_seek.target = t; /* a newer command: what it overrode stays the same */
        return;
    }
    p->motion.kind = MOTION_OWN_SEEK;
    p->motion.u.own_seek.target = t;
    p->motion.u.own_seek.before = m.kind;
    if (m.kind == MOTION_SEEKING) p->motion.u.own_seek.before_seeking = m.u.seeking;
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
    sbmpv_osd(&p->mpv, text, 4000);
}

/* The length of an ad-rules session's break `id` as the VMAP says it (its inline VAST durations): the
 * daemon names them preroll, midroll-T (T its content time, to the millisecond) and postroll. */
static double client_break_seconds(const struct plugin *p, const char *id) {
    size_t n;
    const snapback_cue_break *b = snapback_cues_breaks(p->file.cues, &n);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        if (b[i].position == SNAPBACK_POSITION_PREROLL) snprintf(name, sizeof name, "preroll");
        else if (b[i].position == SNAPBACK_POSITION_POSTROLL) snprintf(name, sizeof name, "postroll");
        else {
            snprintf(name, sizeof name, "midroll-%.3f", b[i].start);
            char *e = name + strlen(name);
            while (e[-1] == '0') *--e = 0;
            if (e[-1] == '.') e[-1] = 0;
        }
        if (!strcmp(name, id) && b[i].duration > 0) return b[i].duration;
    }
    return AD_BREAK_DEFAULT_SECONDS;
}

/* PlayBreak: the content held paused for the break (session.h, struct client_break). */
static void play_client_break(struct plugin *p, snapback_session *s, const char *id) {
    if (p->ad.playing || strlen(id) >= sizeof p->ad.id) {
        sbmpv_log(&p->mpv, false, "PlayBreak %s: %s", id, p->ad.playing ? "a break already plays" : "an id too long");
        return;
    }
    double secs = p->file.cues ? client_break_seconds(p, id) : AD_BREAK_DEFAULT_SECONDS;
    p->ad.playing = true;
    snprintf(p->ad.id, sizeof p->ad.id, "%s", id);
    p->ad.until_ms = sbmpv_now_ms() + (uint64_t)(secs * 1000);
    p->ad.was_paused = p->paused;
    sbmpv_log(&p->mpv, true, "PlayBreak %s: the content held for %g s", id, secs);
    if (!p->paused) sbmpv_set_pause(&p->mpv, true);
    char text[96];
    snprintf(text, sizeof text, "Ad break — the content goes on in %.0f s", secs);
    sbmpv_osd(&p->mpv, text, (int)(secs * 1000));
    check(p, "AdBreakStarted", snapback_ad_break_started(s, id, on_event_reply, p));
}

static void end_client_break(struct plugin *p) {
    if (!p->ad.playing) return;
    p->ad.playing = false;
    snapback_session *s = current(p);
    sbmpv_log(&p->mpv, true, "break %s played", p->ad.id);
    /* Ended before the daemon's seek push (the resume target) is carried out, then the content plays. */
    if (s) check(p, "AdBreakEnded", snapback_ad_break_ended(s, p->ad.id, on_event_reply, p));
    if (!p->ad.was_paused) sbmpv_set_pause(&p->mpv, false);
}

int sbmpv_ad_timeout_ms(struct plugin *p) {
    if (!p->ad.playing) return -1;
    uint64_t now = sbmpv_now_ms();
    if (now < p->ad.until_ms) return (int)(p->ad.until_ms - now);
    end_client_break(p);
    return -1;
}

static void on_push(snapback_client *c, snapback_session *s, const snapback_push *push, void *user) {
    (void)c;
    struct plugin *p = user;
    if (!s || s != current(p)) return; /* a session closed since: its file is gone */
    switch (push->kind) {
    case SNAPBACK_PUSH_SEEK: {
        double t = push->u.seek.stream_time;
        sbmpv_log(&p->mpv, true, "seek to %.3f (%s)", t, push->reason);
        command_seek(p, t);
        char text[96], clock[32];
        sbm_format_clock(t, clock, sizeof clock);
        switch (push->u.seek.reason) {
        case SNAPBACK_SEEK_SNAPBACK:
            /* Where the viewer returns is the daemon's to say (the policy may not return at all). */
            check(p, "GetSessionState", snapback_get_session_state(s, on_state_for_osd, p));
            break;
        case SNAPBACK_SEEK_SEEK_REFUSED_DURING_AD:
            sbmpv_osd(&p->mpv, "Ad break — seeking is back when it ends", 3000);
            break;
        case SNAPBACK_SEEK_RESUME_FROM_BOOKMARK:
            snprintf(text, sizeof text, "Resuming at %s", clock);
            sbmpv_osd(&p->mpv, text, 3000);
            break;
        case SNAPBACK_SEEK_BREAK_BEFORE_RESUME: sbmpv_osd(&p->mpv, "Ad break — then back to where you were", 4000); break;
        default: break;
        }
        break;
    }
    case SNAPBACK_PUSH_BOOKMARK_SAVED:
        sbmpv_log(&p->mpv, true, "bookmark saved at content %.3f (stream %.3f)", push->u.bookmark_saved.content_time,
                  push->u.bookmark_saved.stream_time);
        break;
    case SNAPBACK_PUSH_SESSION_ERROR:
        sbmpv_log(&p->mpv, false, "session error %d: %s", push->u.session_error.code, push->u.session_error.message);
        break;
    case SNAPBACK_PUSH_BREAK_WATCHED:
        sbmpv_log(&p->mpv, true, "break %s watched (%s)", push->u.break_watched.break_id, push->reason);
        break;
    case SNAPBACK_PUSH_PLAY_BREAK: play_client_break(p, s, push->u.play_break.break_id); break;
    default: sbmpv_log(&p->mpv, true, "push %d (%s)", push->kind, push->reason); break;
    }
}

static void open_session(struct plugin *p, bool resume, bool hold, uint64_t hook_id);

static void on_connection(snapback_client *c, snapback_connection_event ev, int status, const char *msg, void *user) {
    (void)c;
    (void)status;
    struct plugin *p = user;
    if (ev == SNAPBACK_DISCONNECTED) {
        sbmpv_log(&p->mpv, false, "snapbackd went away: %s", msg);
        return;
    }
    sbmpv_log(&p->mpv, true, "connected to %s", snapback_client_socket_path(p->client));
    /* The daemon was away when the file started: a session now, from where mpv is (no resume jump
     * in the middle of playback). */
    if (p->session.kind == SESSION_AWAY && p->motion.kind != MOTION_NOT_STARTED) open_session(p, false, false, 0);
}

static void on_session_restored(snapback_client *c, snapback_session *s, int status, const char *msg,
                                double start, void *user) {
    (void)c;
    struct plugin *p = user;
    if (status != SNAPBACK_OK) {
        sbmpv_log(&p->mpv, false, "session not reopened: %s", msg);
        return;
    }
    sbmpv_log(&p->mpv, true, "session reopened after a daemon restart, at %.3f", start);
    /* A live manifest's refresh that came while the daemon was away. */
    if (s == current(p) && p->session.kind == SESSION_OPEN && p->session.u.open.breaks_changed) {
        p->session.u.open.breaks_changed = false;
        sbmpv_breaks_changed(p);
    }
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

/* ---------------------------------------------------------------------------------------------- */
/* Opening and closing                                                                              */

static void on_closed(snapback_client *c, const snapback_reply *r, void *user) {
    struct plugin *p = user;
    p->retiring--;
    on_event_reply(c, r, user);
}

/* CloseSession; counted in p->retiring until answered. Disconnected, the library frees the handle at
 * once with no callback: nothing to wait for. */
static void close_handle(struct plugin *p, snapback_session *s) {
    int rc = snapback_session_close(s, on_closed, p);
    check(p, "CloseSession", rc);
    if (rc == SNAPBACK_OK && snapback_client_is_connected(p->client)) p->retiring++;
}

static void on_opened(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct plugin *p = user;
    bool mine = (p->session.kind == SESSION_HELD || p->session.kind == SESSION_OPENING) && r->session &&
                r->session == current(p);
    if (!mine) {
        /* The session of a file that ended while it was opening: closed now, its bookmark where mpv
         * stopped. */
        p->retiring--;
        if (r->status == SNAPBACK_OK && r->session) close_handle(p, r->session);
        return;
    }
    if (r->status != SNAPBACK_OK) {
        sbmpv_log(&p->mpv, false, "session for \"%s\" not opened: %s (%s)", p->file.content_id,
                  snapback_strerror(r->status), r->message);
        /* The library frees the handle after this callback; playback restarting or the library
         * reconnecting opens another. */
        release_hold(p);
        p->session.kind = SESSION_AWAY;
        return;
    }
    const snapback_opened *o = &r->u.opened;
    size_t n = p->file.breaks.n;
    if (p->file.cues) snapback_cues_breaks(p->file.cues, &n); /* open ones too */
    sbmpv_log(&p->mpv, true, "session %llu for \"%s\" (%s, %zu breaks from %s)%s",
              (unsigned long long)o->session_id, p->file.content_id, o->policy_preset, n,
              p->file.breaks_from, o->resumed_from_bookmark ? ", resumed from its bookmark" : "");
    release_hold(p);
    struct live_session l = p->session.u.opening;
    p->session.kind = SESSION_OPEN;
    p->session.u.open = l;
    if (l.breaks_changed) {
        p->session.u.open.breaks_changed = false;
        sbmpv_breaks_changed(p);
    }
    /* Opened once playback had begun (the hold timed out, or a late connection): tell the daemon
     * where mpv is, unless a resume seek is on its way there. */
    if (p->motion.kind == MOTION_STEADY || p->motion.kind == MOTION_SEEKING) report_state(p);
}

/* Opens the file's session; `hold`: the file has not started and its on_preloaded hook `hook_id` is
 * held until the session is open (bounded by snapback-open-timeout). The daemon away: SESSION_AWAY. */
static void open_session(struct plugin *p, bool resume, bool hold, uint64_t hook_id) {
    snapback_session_params sp;
    memset(&sp, 0, sizeof sp);
    sp.stream_id = p->file.stream_id;
    sp.content_id = p->file.content_id;
    sp.profile = p->opt.profile;
    sp.kind = p->file.live ? SNAPBACK_SESSION_LIVE : SNAPBACK_SESSION_ON_DEMAND;
    sp.breaks = p->file.breaks.items;
    sp.n_breaks = p->file.breaks.n;
    double ads = 0;
    for (size_t i = 0; i < p->file.breaks.n; i++) ads += p->file.breaks.items[i].duration;
    /* A live stream's duration is its window so far, not the content's. */
    if (!p->file.live && p->file.duration > ads) {
        sp.has_content_duration = true;
        sp.content_duration = p->file.duration - ads;
    }
    sp.policy_preset = p->opt.preset;
    snapback_resume r = {.use_bookmark = true};
    if (resume) sp.resume = &r;
    snapback_session *handle = NULL;
    /* From a manifest: its breaks as it says them (open ones at once, unfilled ones marked, restrictions). */
    int rc = p->file.cues ? snapback_session_open_cues(p->client, &sp, p->file.cues, on_opened, p, &handle)
                          : snapback_session_open(p->client, &sp, on_opened, p, &handle);
    if (rc != SNAPBACK_OK) {
        /* Away: the session opens when the library has reconnected (on_connection). */
        sbmpv_log(&p->mpv, rc == SNAPBACK_E_DISCONNECTED, "no session for \"%s\" yet: %s", p->file.content_id,
                  snapback_strerror(rc));
        p->session.kind = SESSION_AWAY;
        if (hold) sbmpv_hook_continue(&p->mpv, hook_id);
        return;
    }
    struct live_session l = {.handle = handle, .completed = false, .breaks_changed = false};
    if (hold) {
        p->session.kind = SESSION_HELD;
        p->session.u.held.live = l;
        p->session.u.held.hook_id = hook_id;
        p->session.u.held.deadline_ms = sbmpv_now_ms() + (uint64_t)p->opt.open_timeout_ms;
    } else {
        p->session.kind = SESSION_OPENING;
        p->session.u.opening = l;
    }
}

/* Ends the file's session: an open one closes (with mpv's last position, stopped, when
 * `final_report`: the close saves the bookmark there); one still opening is closed by on_opened (the
 * library closes nothing before the daemon answered). SESSION_NONE after it. */
static void close_session(struct plugin *p, bool final_report) {
    switch (p->session.kind) {
    case SESSION_HELD:
    case SESSION_OPENING: p->retiring++; break;
    case SESSION_OPEN: {
        snapback_session *s = p->session.u.open.handle;
        if (final_report && p->have_pos && !p->session.u.open.completed)
            check(p, "ReportPlayhead", snapback_report_playhead(s, p->pos, p->speed, false, on_event_reply, p));
        close_handle(p, s);
        break;
    }
    case SESSION_NONE:
    case SESSION_AWAY: break;
    }
    p->session.kind = SESSION_NONE;
}

/* ---------------------------------------------------------------------------------------------- */
/* The file                                                                                         */

void sbmpv_file_preloaded(struct plugin *p, uint64_t hook_id, bool resume) {
    close_session(p, true); /* a file not ended first (mpv ends each before the next): ended now */
    p->motion.kind = MOTION_NOT_STARTED;
    p->have_pos = false;
    if (!p->file.content_id || !p->file.stream_id) {
        sbmpv_log(&p->mpv, false, "no file name: not under snapback");
        p->session.kind = SESSION_NONE;
        sbmpv_hook_continue(&p->mpv, hook_id);
        return;
    }
    open_session(p, resume, true, hook_id);
}

void sbmpv_file_ended(struct plugin *p, bool eof) {
    p->ad.playing = false; /* its session closes: nothing to report */
    if (eof) sbmpv_content_complete(p);
    release_hold(p);
    close_session(p, !eof);
    p->motion.kind = MOTION_NOT_STARTED;
    p->have_pos = false;
}

void sbmpv_quit(struct plugin *p) { close_session(p, true); }

int sbmpv_hold_timeout_ms(struct plugin *p) {
    if (p->session.kind != SESSION_HELD) return -1;
    uint64_t now = sbmpv_now_ms(), deadline = p->session.u.held.deadline_ms;
    if (now < deadline) return deadline - now > 1000000000u ? 1000000000 : (int)(deadline - now);
    sbmpv_log(&p->mpv, false, "the session did not open within %d ms: playing without waiting",
              p->opt.open_timeout_ms);
    release_hold(p);
    return -1;
}

/* ---------------------------------------------------------------------------------------------- */
/* mpv's events                                                                                     */

void sbmpv_seek_event(struct plugin *p) {
    /* Before the file plays, and during a seek or our own, a seek changes nothing here. */
    if (p->motion.kind != MOTION_STEADY) return;
    p->motion.kind = MOTION_SEEKING;
    p->motion.u.seeking.known = p->have_pos;
    p->motion.u.seeking.from = p->pos;
}

void sbmpv_playback_restart(struct plugin *p, bool have_pos, double pos) {
    struct motion m = p->motion;
    p->motion.kind = MOTION_STEADY;
    if (have_pos) {
        p->pos = pos;
        p->have_pos = true;
    }
    if (p->session.kind == SESSION_AWAY) {
        open_session(p, false, false, 0); /* the daemon came back between the file's start and now */
    } else if (m.kind == MOTION_OWN_SEEK) {
        /* Ours, carried out: the daemon holds the session there already; a report confirms it. A
         * viewer's seek that overrode ours: reported as a seek from our target. */
        if (fabs(p->pos - m.u.own_seek.target) <= OWN_SEEK_TOLERANCE) report_state(p);
        else seek_ended(p, m.u.own_seek.target, p->pos);
    } else if (m.kind == MOTION_SEEKING && m.u.seeking.known) {
        seek_ended(p, m.u.seeking.from, p->pos);
    } else {
        report_state(p);
    }
}

void sbmpv_position_changed(struct plugin *p, double pos) {
    p->pos = pos;
    p->have_pos = true;
    if (!current(p) || p->paused || p->motion.kind != MOTION_STEADY) return;
    if (sbmpv_now_ms() - p->last_report_ms >= REPORT_MS || crosses_break_edge(&p->file.breaks, p->last_report_pos, pos))
        report_state(p);
}

void sbmpv_pause_changed(struct plugin *p, bool paused) {
    if (paused == p->paused) return;
    p->paused = paused;
    /* The content held for a client-side break is the break playing, not the viewer's pause. */
    if (p->motion.kind == MOTION_STEADY && !p->ad.playing) report_state(p);
}

void sbmpv_speed_changed(struct plugin *p, double speed) {
    p->speed = speed;
    if (p->motion.kind == MOTION_STEADY) report_state(p);
}

static void on_breaks_updated(snapback_client *c, const snapback_reply *r, void *user) {
    struct plugin *p = user;
    if (r->status == SNAPBACK_OK) sbmpv_log(&p->mpv, true, "UpdateBreaks: the daemon took the refreshed breaks");
    else on_event_reply(c, r, user);
}

void sbmpv_breaks_changed(struct plugin *p) {
    struct live_session *l = live(p);
    if (!l || !p->file.cues) return;
    if (p->session.kind != SESSION_OPEN) {
        l->breaks_changed = true;
        return;
    }
    int rc = snapback_session_update_cues(l->handle, p->file.cues, on_breaks_updated, p);
    /* Away: the library reopens the session with the breaks it last sent; these go once it has. */
    if (rc == SNAPBACK_E_DISCONNECTED) l->breaks_changed = true;
    else check(p, "UpdateBreaks", rc);
}

void sbmpv_content_complete(struct plugin *p) {
    struct live_session *l = live(p);
    if (!l || l->completed) return;
    l->completed = true;
    check(p, "ContentComplete", snapback_content_complete(l->handle, on_event_reply, p));
}

void sbmpv_seek_refused(struct plugin *p, int error) {
    sbmpv_log(&p->mpv, false, "seek refused by mpv: %s", mpv_error_string(error));
    if (p->motion.kind != MOTION_OWN_SEEK) return;
    struct motion m = p->motion;
    p->motion.kind = m.u.own_seek.before;
    if (m.u.own_seek.before == MOTION_SEEKING) p->motion.u.seeking = m.u.own_seek.before_seeking;
}
