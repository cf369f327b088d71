/* SPDX-License-Identifier: Apache-2.0 */
/* libsnapback against the real snapbackd: test_client SNAPBACKD [TEST...]. Each test starts its own
 * daemon in a temporary directory. Exit status 0 when every check passed. */
#include <sys/epoll.h>

#include "harness.h"
#include "snapback/cues.h"

static const snapback_break seed_breaks[] = {{.id = "b1", .start = 600, .duration = 60}};

static snapback_session_params seed_params(const char *content_id) {
    snapback_session_params p;
    memset(&p, 0, sizeof p);
    p.stream_id = "stream-seed";
    p.content_id = content_id;
    p.kind = SNAPBACK_SESSION_ON_DEMAND;
    p.breaks = seed_breaks;
    p.n_breaks = 1;
    p.has_content_duration = true;
    p.content_duration = 1800;
    p.policy_preset = "snapback";
    return p;
}

static snapback_session *open_session(struct player *pl, const snapback_session_params *p, struct res *x) {
    snapback_session *s = NULL;
    if (snapback_session_open(pl->c, p, on_reply, x, &s) != SNAPBACK_OK) return NULL;
    if (!pump_until(pl->c, &x->done, 1, 5000) || x->status != SNAPBACK_OK) return NULL;
    return s;
}

/* Seeds 000/001: 5:00 → 15:00 over the unwatched break at 10:00 snaps back to 10:00; once the break has
 * played the viewer is returned to 15:00, and the bookmark is content time (840). Then the queries and
 * the bookmark calls. */
static void test_seed_story(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    const snapback_hello *h = snapback_client_hello(pl.c);
    CHECK(h && h->protocol_version == 1 && strcmp(h->server_name, "snapbackd") == 0);
    bool has_snapback = false;
    for (size_t i = 0; i < h->n_policy_presets; i++) has_snapback |= strcmp(h->policy_presets[i], "snapback") == 0;
    CHECK(has_snapback && h->max_frame_size == 262144);

    snapback_session_params params = seed_params("seed");
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CHECK(opened.r.u.opened.session_id != 0 && snapback_session_id(s) == opened.r.u.opened.session_id);
    CHECK(strcmp(opened.text, "snapback") == 0);

    struct res r1 = RES(&pl);
    CALL(&pl, r1, snapback_report_playhead(s, 300, 1, true, on_reply, &r1));
    CHECK(r1.status == SNAPBACK_OK && r1.r.u.last_push_seq == 0 && r1.r.session == s);

    struct res seek = RES(&pl);
    CALL(&pl, seek, snapback_seek_ended(s, 300, 900, on_reply, &seek));
    CHECK(seek.status == SNAPBACK_OK && seek.r.u.last_push_seq == 1);
    CHECK(pl.n_pushes == 1 && seek.pushes_before == 1); /* the push came before the reply */
    CHECK(pl.pushes[0].kind == SNAPBACK_PUSH_SEEK && pl.pushes[0].session == s && pl.pushes[0].seq == 1);
    CHECK(pl.pushes[0].stream_time == 600 && pl.pushes[0].seek_reason == SNAPBACK_SEEK_SNAPBACK);
    CHECK(strcmp(pl.pushes[0].reason, "seek 300→900 skipped unwatched break b1 at 600") == 0);
    double pos = 0;
    CHECK(snapback_session_position(s, &pos) && pos == 600);

    struct res st = RES(&pl);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.status == SNAPBACK_OK && strcmp(st.text, "b1") == 0);
    CHECK(st.r.u.state.has_pending_return && st.r.u.state.pending_return == 900);
    CHECK(st.r.u.state.phase == SNAPBACK_PHASE_IN_BREAK && st.n == 1 && !st.watched[0]);

    struct res a = RES(&pl), b = RES(&pl), e = RES(&pl);
    CALL(&pl, a, snapback_ad_break_started(s, "b1", on_reply, &a));
    CALL(&pl, b, snapback_report_playhead(s, 630, 1, true, on_reply, &b));
    int before = pl.n_pushes;
    CALL(&pl, e, snapback_ad_break_ended(s, "b1", on_reply, &e));
    CHECK(a.status == 0 && b.status == 0 && e.status == 0);
    /* BreakWatched, like BookmarkSaved, is sent once the store committed it: it may follow the reply. */
    const struct pushed *w = wait_push(&pl, SNAPBACK_PUSH_BREAK_WATCHED, before, 5000);
    const struct pushed *back = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(w && strcmp(w->text, "b1") == 0);
    CHECK(back && back->stream_time == 900 && back->seek_reason == SNAPBACK_SEEK_RESUME_AFTER_SNAPBACK);
    /* BookmarkSaved may follow the reply: it is sent once the store committed. */
    const struct pushed *saved = wait_push(&pl, SNAPBACK_PUSH_BOOKMARK_SAVED, before, 5000);
    CHECK(saved && saved->content_time == 840 && saved->stream_time == 900);
    CHECK(saved->trigger == SNAPBACK_BOOKMARK_SNAPBACK_RETURN);
    for (int i = 1; i < pl.n_pushes; i++) CHECK(pl.pushes[i].seq == pl.pushes[i - 1].seq + 1);

    struct res c1 = RES(&pl), c2 = RES(&pl), c3 = RES(&pl), ba = RES(&pl);
    CALL(&pl, c1, snapback_content_time_for_stream_time(s, 1200, on_reply, &c1));
    CALL(&pl, c2, snapback_content_time_for_stream_time(s, 630, on_reply, &c2));
    CALL(&pl, c3, snapback_stream_time_for_content_time(s, 600, on_reply, &c3));
    CALL(&pl, ba, snapback_break_at(s, 700, on_reply, &ba));
    CHECK(c1.r.u.content_time == 1140 && c2.r.u.content_time == 600 && c3.r.u.stream_time == 660);
    CHECK(ba.r.u.break_at.has_previous && strcmp(ba.ids[0], "b1") == 0 && !ba.r.u.break_at.has_next);

    struct res bm = RES(&pl), list = RES(&pl), status = RES(&pl);
    CALL(&pl, bm, snapback_bookmark_get(pl.c, NULL, "seed", on_reply, &bm));
    CHECK(bm.status == SNAPBACK_OK && strcmp(bm.text, "seed") == 0);
    CHECK(bm.r.u.bookmark.content_time == 840 && bm.r.u.bookmark.stream_time == 900);
    CALL(&pl, list, snapback_bookmark_list(pl.c, "", 0, NULL, on_reply, &list));
    CHECK(list.status == SNAPBACK_OK && list.n == 1 && strcmp(list.ids[0], "seed") == 0);
    CALL(&pl, status, snapback_get_status(pl.c, on_reply, &status));
    CHECK(status.status == SNAPBACK_OK && status.r.u.status_info.sessions == 1);
    CHECK(status.r.u.status_info.protocol_version == 1 && status.text[0] != 0);

    struct res closed = RES(&pl);
    CALL(&pl, closed, snapback_session_close(s, on_reply, &closed));
    CHECK(closed.status == SNAPBACK_OK && closed.r.session == s); /* freed after this callback */
    s = NULL;

    /* A second bookmark (a pause saves one), then delete one, clear the profile. */
    snapback_session_params other = seed_params("other");
    struct res o2 = RES(&pl), pause = RES(&pl), close2 = RES(&pl);
    snapback_session *s2 = open_session(&pl, &other, &o2);
    CHECK(s2);
    before = pl.n_pushes;
    CALL(&pl, pause, snapback_pause(s2, 100, on_reply, &pause));
    saved = wait_push(&pl, SNAPBACK_PUSH_BOOKMARK_SAVED, before, 5000);
    CHECK(saved && saved->content_time == 100 && saved->trigger == SNAPBACK_BOOKMARK_PAUSED);
    CHECK(snapback_session_client(s2) == pl.c);
    CALL(&pl, close2, snapback_session_close(s2, on_reply, &close2));
    /* Two bookmarks, one per page: most recently updated first, then the last page's empty token. */
    struct res page1 = RES(&pl), page2 = RES(&pl);
    CALL(&pl, page1, snapback_bookmark_list(pl.c, NULL, 1, NULL, on_reply, &page1));
    CHECK(page1.status == SNAPBACK_OK && page1.n == 1 && strcmp(page1.ids[0], "other") == 0 && page1.text[0]);
    CALL(&pl, page2, snapback_bookmark_list(pl.c, NULL, 1, page1.text, on_reply, &page2));
    CHECK(page2.status == SNAPBACK_OK && page2.n == 1 && strcmp(page2.ids[0], "seed") == 0 && !page2.text[0]);
    struct res del = RES(&pl), del2 = RES(&pl), gone = RES(&pl), clear = RES(&pl);
    CALL(&pl, del, snapback_bookmark_delete(pl.c, "", "seed", on_reply, &del));
    CHECK(del.status == SNAPBACK_OK && del.r.u.deleted);
    CALL(&pl, gone, snapback_bookmark_get(pl.c, "", "seed", on_reply, &gone));
    CHECK(gone.status == SNAPBACK_NOT_FOUND && gone.message[0] != 0);
    CALL(&pl, clear, snapback_bookmark_clear(pl.c, "", on_reply, &clear));
    CHECK(clear.status == SNAPBACK_OK && clear.r.u.cleared == 1);
    CALL(&pl, del2, snapback_bookmark_delete(pl.c, "", "other", on_reply, &del2));
    CHECK(del2.status == SNAPBACK_OK && !del2.r.u.deleted);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* PlayBreak, BreakWatched, BookmarkCleared, AllAdsCompleted from an ad-rules session; SessionError when
 * the daemon stops (SIGTERM) with the session open. */
static void test_every_push_kind(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_ad_rules rules = {.preroll = true, .postroll = true, .has_break_duration = true, .break_duration = 30};
    snapback_session_params p;
    memset(&p, 0, sizeof p);
    p.content_id = "rules";
    p.has_content_duration = true;
    p.content_duration = 1800;
    p.ad_rules = &rules;
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s);
    const struct pushed *pre = find_push(&pl, SNAPBACK_PUSH_PLAY_BREAK, 0);
    CHECK(pre && strcmp(pre->text, "preroll") == 0 && opened.pushes_before >= 1);

    struct res a = RES(&pl), b = RES(&pl), ph = RES(&pl), cc = RES(&pl);
    CALL(&pl, a, snapback_ad_break_started(s, "preroll", on_reply, &a));
    CALL(&pl, b, snapback_ad_break_ended(s, "preroll", on_reply, &b));
    const struct pushed *w = wait_push(&pl, SNAPBACK_PUSH_BREAK_WATCHED, 0, 5000);
    CHECK(b.status == SNAPBACK_OK && w && strcmp(w->text, "preroll") == 0);
    CALL(&pl, ph, snapback_report_playhead(s, 1790, 1, true, on_reply, &ph));
    int before = pl.n_pushes;
    CALL(&pl, cc, snapback_content_complete(s, on_reply, &cc));
    CHECK(cc.status == SNAPBACK_OK);
    const struct pushed *post = find_push(&pl, SNAPBACK_PUSH_PLAY_BREAK, before);
    CHECK(post && strcmp(post->text, "postroll") == 0);
    CHECK(wait_push(&pl, SNAPBACK_PUSH_BOOKMARK_CLEARED, before, 5000));
    struct res a2 = RES(&pl), b2 = RES(&pl);
    before = pl.n_pushes;
    CALL(&pl, a2, snapback_ad_break_started(s, "postroll", on_reply, &a2));
    CALL(&pl, b2, snapback_ad_break_ended(s, "postroll", on_reply, &b2));
    CHECK(find_push(&pl, SNAPBACK_PUSH_ALL_ADS_COMPLETED, before));

    /* A second session, playing, when the daemon is told to stop: its bookmark, then SessionError. */
    snapback_session_params sp = seed_params("stopping");
    struct res o2 = RES(&pl), p2 = RES(&pl);
    snapback_session *s2 = open_session(&pl, &sp, &o2);
    CHECK(s2);
    CALL(&pl, p2, snapback_report_playhead(s2, 200, 1, true, on_reply, &p2));
    before = pl.n_pushes;
    kill(d.pid, SIGTERM);
    const struct pushed *err = wait_push(&pl, SNAPBACK_PUSH_SESSION_ERROR, before, 5000);
    CHECK(err && err->code == SNAPBACK_UNAVAILABLE && err->text[0] != 0);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    int status = daemon_stop(&d, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The daemon restarts under a playing session: calls fail DISCONNECTED meanwhile (the position the
 * player reports is still kept), the library reconnects on its own, reopens the session at its last
 * position with the watched break marked, and the same handle works on the new daemon. */
static void test_reconnect_restores_sessions(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_session_params params = seed_params("restart");
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    int marker = 42;
    snapback_session_set_user_data(s, &marker);
    struct res r[6] = {RES(&pl), RES(&pl), RES(&pl), RES(&pl), RES(&pl), RES(&pl)};
    CALL(&pl, r[0], snapback_report_playhead(s, 300, 1, true, on_reply, &r[0]));
    CALL(&pl, r[1], snapback_seek_ended(s, 300, 900, on_reply, &r[1]));
    CALL(&pl, r[2], snapback_ad_break_started(s, "b1", on_reply, &r[2]));
    CALL(&pl, r[3], snapback_report_playhead(s, 630, 1, true, on_reply, &r[3]));
    CALL(&pl, r[4], snapback_ad_break_ended(s, "b1", on_reply, &r[4]));
    CALL(&pl, r[5], snapback_report_playhead(s, 950, 1, true, on_reply, &r[5]));
    CHECK(wait_push(&pl, SNAPBACK_PUSH_BREAK_WATCHED, 0, 5000));
    CHECK(count_pushes(&pl, SNAPBACK_PUSH_BREAK_WATCHED) == 1);

    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(!snapback_client_is_connected(pl.c) && snapback_client_fd(pl.c) == -1);
    CHECK(snapback_client_next_timeout_ms(pl.c) >= 0); /* a reconnection timer */
    CHECK(snapback_session_id(s) == 0);
    CHECK(snapback_report_playhead(s, 960, 1, true, on_reply, NULL) == SNAPBACK_E_DISCONNECTED);
    CHECK(snapback_get_status(pl.c, on_reply, NULL) == SNAPBACK_E_DISCONNECTED);
    double pos = 0;
    CHECK(snapback_session_position(s, &pos) && pos == 960);
    /* Two backoff periods with no daemon: the library keeps trying and stays quiet. */
    int never = 0;
    pump_until(pl.c, &never, 1, 150);
    CHECK(pl.connected == 1 && pl.disconnected == 1);

    int pushes_before_restart = pl.n_pushes;
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000));
    CHECK(pl.connected == 2 && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 960); /* content 900 in the layout with b1 */
    /* The reopen's resume seek, and the breaks its resume goes past, are not the player's. */
    CHECK(pl.n_pushes == pushes_before_restart);
    CHECK(snapback_session_user_data(s) == &marker && snapback_session_id(s) != 0);

    struct res st = RES(&pl);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.status == SNAPBACK_OK && st.r.u.state.stream_time == 960);
    CHECK(st.n == 1 && st.watched[0]); /* the break stays watched: no second snapback to it */
    struct res back = RES(&pl), over = RES(&pl);
    CALL(&pl, back, snapback_seek_ended(s, 960, 100, on_reply, &back));
    CALL(&pl, over, snapback_seek_ended(s, 100, 1000, on_reply, &over));
    CHECK(back.status == SNAPBACK_OK && over.status == SNAPBACK_OK);
    CHECK(find_push(&pl, SNAPBACK_PUSH_SEEK, pushes_before_restart) == NULL);
    struct res closed = RES(&pl);
    CALL(&pl, closed, snapback_session_close(s, on_reply, &closed));
    CHECK(closed.status == SNAPBACK_OK);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The player closes its session the moment the connection is back, while the reopen is in flight:
 * the close waits for the reopened id, is answered, and the handle is freed (no restored callback). */
struct close_on_connect {
    struct player pl;
    snapback_session *s;
    struct res closed;
    int close_rc;
};
static void close_when_connected(snapback_client *c, snapback_connection_event ev, int status, const char *msg,
                                 void *user) {
    struct close_on_connect *x = user;
    on_connection(c, ev, status, msg, &x->pl);
    if (ev == SNAPBACK_CONNECTED && x->pl.connected == 2) x->close_rc = snapback_session_close(x->s, on_reply, &x->closed);
}
static void restored_into_player(snapback_client *c, snapback_session *s, int status, const char *msg, double start,
                                 void *user) {
    on_restored(c, s, status, msg, start, &((struct close_on_connect *)user)->pl);
}
static void test_close_during_reopen(void) {
    struct daemon d = {0};
    struct close_on_connect x;
    memset(&x, 0, sizeof x);
    x.close_rc = -100;
    CHECK(daemon_start(&d));
    snapback_options o = player_options(&x.pl, &d);
    o.callbacks.on_connection = close_when_connected;
    o.callbacks.on_session_restored = restored_into_player;
    o.callbacks.user_data = &x;
    x.pl.c = snapback_client_new(&o);
    CHECK(x.pl.c && snapback_client_connect(x.pl.c) == SNAPBACK_OK);
    CHECK(pump_until(x.pl.c, &x.pl.connected, 1, 5000));
    snapback_session_params params = seed_params("close-early");
    struct res opened = RES(&x.pl), ph = RES(&x.pl);
    x.s = open_session(&x.pl, &params, &opened);
    CHECK(x.s);
    CALL(&x.pl, ph, snapback_report_playhead(x.s, 120, 1, true, on_reply, &ph));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(x.pl.c, &x.pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(x.pl.c, &x.closed.done, 1, 5000));
    CHECK(x.close_rc == SNAPBACK_OK && x.closed.status == SNAPBACK_OK && x.pl.restored == 0);
    struct res status = RES(&x.pl);
    CALL(&x.pl, status, snapback_get_status(x.pl.c, on_reply, &status));
    CHECK(status.status == SNAPBACK_OK && status.r.u.status_info.sessions == 0);
out:
    snapback_client_free(x.pl.c);
    daemon_cleanup(&d);
}

/* Restarted while the player is inside an ad break: the reopen resumes at the break's content
 * position, which the daemon places after the break. */
static void test_restart_inside_a_break(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_session_params params = seed_params("in-break");
    struct res opened = RES(&pl), r[3] = {RES(&pl), RES(&pl), RES(&pl)};
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CALL(&pl, r[0], snapback_report_playhead(s, 300, 1, true, on_reply, &r[0]));
    CALL(&pl, r[1], snapback_seek_ended(s, 300, 900, on_reply, &r[1]));
    CALL(&pl, r[2], snapback_report_playhead(s, 630, 1, true, on_reply, &r[2]));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 660);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A break that replaces the content it covers (content_resume_offset = its duration): the daemon counts
 * no ad time after it, and so does the library when it reopens the session after a restart — stream 700
 * is content 700, resumed at stream 700 (an inserted break would have made it content 640). An offset
 * out of its range is refused. */
static void test_replacing_break_survives_restart(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_break replacing[] = {{.id = "r1", .start = 600, .duration = 60, .has_content_resume_offset = true,
                                   .content_resume_offset = 60}};
    snapback_session_params params = seed_params("replaced");
    params.breaks = replacing;
    struct res opened = RES(&pl), r[3] = {RES(&pl), RES(&pl), RES(&pl)};
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CALL(&pl, r[0], snapback_content_time_for_stream_time(s, 700, on_reply, &r[0]));
    CHECK(r[0].r.u.content_time == 700);
    /* The first report is where the player starts (a later one from before the break would be a jump over
     * it, snapped back). */
    CALL(&pl, r[1], snapback_report_playhead(s, 700, 1, true, on_reply, &r[1]));
    CALL(&pl, r[2], snapback_get_session_state(s, on_reply, &r[2]));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 700);

    snapback_break negative[] = {{.id = "x", .start = 600, .duration = 60, .has_content_resume_offset = true,
                                  .content_resume_offset = -1}};
    snapback_session_params bad = seed_params("negative");
    bad.breaks = negative;
    struct res refused = RES(&pl);
    CHECK(open_session(&pl, &bad, &refused) == NULL && refused.status == SNAPBACK_INVALID_ARGUMENT &&
          strstr(refused.message, "breaks[0].content_resume_offset"));
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* Breaks that cut more content than they last, back to back (30 s of ads cutting 120 s, then 20 s cutting
 * 200 s: the content stops at 600 and comes back at 920, at stream 650), across two restarts: the reopen
 * names the player's stream position and the daemon converts it with these breaks, or the reopened
 * session resumes elsewhere. Stream 700 is content 970 and resumes at 700; stream 640, inside the second break, is
 * content 600, which resumes after both breaks, at 650. */
static void test_breaks_cutting_more_than_they_last_survive_restarts(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_break cut[] = {
        {.id = "a", .start = 600, .duration = 30, .has_content_resume_offset = true, .content_resume_offset = 120},
        {.id = "b", .start = 630, .duration = 20, .has_content_resume_offset = true, .content_resume_offset = 200},
    };
    snapback_session_params params = seed_params("cut");
    params.breaks = cut;
    params.n_breaks = 2;
    struct res opened = RES(&pl), r[4] = {RES(&pl), RES(&pl), RES(&pl), RES(&pl)};
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CALL(&pl, r[0], snapback_content_time_for_stream_time(s, 700, on_reply, &r[0]));
    CHECK(r[0].r.u.content_time == 970);
    CALL(&pl, r[1], snapback_report_playhead(s, 700, 1, true, on_reply, &r[1]));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 700);

    /* Back inside the second break (a backward seek: not held), then a second restart. */
    CALL(&pl, r[2], snapback_seek_ended(s, 700, 640, on_reply, &r[2]));
    CALL(&pl, r[3], snapback_report_playhead(s, 640, 1, true, on_reply, &r[3]));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 2, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 2, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 650);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A cut of 990 s more than the break lasts puts stream 9,999,999,500 at content 1e10 + 490, past the last
 * content time a request may name: the library reopens at 1e10, as the daemon clamps it, and the session
 * comes back at its stream time (1e10 - 990) instead of being refused. */
static void test_content_past_the_last_content_time_resumes_at_it(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_break cut[] = {
        {.id = "cut", .start = 100, .duration = 10, .has_content_resume_offset = true, .content_resume_offset = 1000},
    };
    snapback_session_params params = seed_params("far");
    params.breaks = cut;
    params.has_content_duration = false;
    struct res opened = RES(&pl), r[2] = {RES(&pl), RES(&pl)};
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CALL(&pl, r[0], snapback_content_time_for_stream_time(s, 9999999500.0, on_reply, &r[0]));
    CHECK(r[0].r.u.content_time == 1e10);
    CALL(&pl, r[1], snapback_report_playhead(s, 9999999500.0, 1, true, on_reply, &r[1]));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 1e10 - 990);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* Edge-triggered epoll: dispatch reads until the socket is empty, so a reply larger than one read
 * (a session state listing 1,000 breaks with 60-character ids, about 100 KB) arrives without a second
 * edge. */
static void test_edge_triggered_epoll(void) {
    struct daemon d = {0};
    struct player pl = {0};
    snapback_break *many = NULL;
    char (*ids)[72] = NULL;
    int ep = -1;
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    enum { N = 1000 };  /* the daemon's default max-breaks-per-session */
    many = calloc(N, sizeof *many);
    ids = calloc(N, sizeof *ids);
    CHECK(many && ids);
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "k%d-%058d", i, i);
        many[i].id = ids[i];
        many[i].start = 10.0 * i;
        many[i].duration = 5;
    }
    snapback_session_params p = seed_params("many");
    p.breaks = many;
    p.n_breaks = N;
    p.content_duration = 100000;
    ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.fd = snapback_client_fd(pl.c)};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) == 0);
    struct res opened = RES(&pl), st = RES(&pl);
    snapback_session *s = NULL;
    CHECK(snapback_session_open(pl.c, &p, on_reply, &opened, &s) == SNAPBACK_OK);
    CHECK(snapback_get_session_state(s, on_reply, &st) == SNAPBACK_OK);
    long long deadline = now_ms() + 5000;
    while (!st.done && now_ms() < deadline) {
        struct epoll_event got;
        int n = epoll_wait(ep, &got, 1, (int)(deadline - now_ms()));
        if (n == 1) {
            short revents = (short)((got.events & EPOLLIN ? POLLIN : 0) | (got.events & EPOLLOUT ? POLLOUT : 0) |
                                    (got.events & EPOLLHUP ? POLLHUP : 0) | (got.events & EPOLLERR ? POLLERR : 0));
            snapback_client_dispatch(pl.c, revents);
        }
    }
    CHECK(opened.status == SNAPBACK_OK);
    CHECK(st.done && st.status == SNAPBACK_OK && st.n == N && strncmp(st.ids[1], ids[1], sizeof st.ids[1] - 1) == 0);
out:
    if (ep >= 0) close(ep);
    free(many);
    free(ids);
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* An ad-rules session (whose player time is content time) reopens where it was, without its pre-roll
 * again. */
static void test_ad_rules_session_restored(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_ad_rules rules = {.preroll = true, .postroll = true};
    snapback_session_params p;
    memset(&p, 0, sizeof p);
    p.content_id = "rules-restart";
    p.has_content_duration = true;
    p.content_duration = 1800;
    p.ad_rules = &rules;
    struct res opened = RES(&pl), a = RES(&pl), b = RES(&pl), ph = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s && count_pushes(&pl, SNAPBACK_PUSH_PLAY_BREAK) == 1);
    CALL(&pl, a, snapback_ad_break_started(s, "preroll", on_reply, &a));
    CALL(&pl, b, snapback_ad_break_ended(s, "preroll", on_reply, &b));
    CALL(&pl, ph, snapback_report_playhead(s, 300, 1, true, on_reply, &ph));
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    int before = pl.n_pushes;
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 300);
    struct res st = RES(&pl);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.r.u.state.stream_time == 300 && st.r.u.state.phase == SNAPBACK_PHASE_CONTENT);
    CHECK(find_push(&pl, SNAPBACK_PUSH_PLAY_BREAK, before) == NULL);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A live session's break list as last accepted by UpdateBreaks is what a reopen sends. */
static void test_live_breaks_survive_restart(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_break initial[] = {{.id = "a", .start = 100, .duration = 30}};
    snapback_break grown[] = {{.id = "a", .start = 100, .duration = 30}, {.id = "b", .start = 500, .duration = 30}};
    snapback_session_params p;
    memset(&p, 0, sizeof p);
    p.content_id = "live";
    p.kind = SNAPBACK_SESSION_LIVE;
    p.breaks = initial;
    p.n_breaks = 1;
    struct res opened = RES(&pl), up = RES(&pl), ph = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s);
    CALL(&pl, ph, snapback_report_playhead(s, 50, 1, true, on_reply, &ph));
    CALL(&pl, up, snapback_update_breaks(s, grown, 2, on_reply, &up));
    CHECK(up.status == SNAPBACK_OK);
    CHECK(daemon_stop(&d, SIGKILL) != -1);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 5000) && pl.restored_status == SNAPBACK_OK);
    struct res st = RES(&pl);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.status == SNAPBACK_OK && st.n == 2 && strcmp(st.ids[0], "a") == 0 && strcmp(st.ids[1], "b") == 0);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The player's loop is busy with other descriptors (a pipe that is always readable, drained a little
 * at a time): the daemon's pushed seek and the reply still arrive, in order, within the deadline. */
static void test_push_while_loop_is_busy(void) {
    struct daemon d = {0};
    struct player pl = {0};
    int pipefd[2] = {-1, -1};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_session_params params = seed_params("busy");
    struct res opened = RES(&pl), ph = RES(&pl);
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);
    CALL(&pl, ph, snapback_report_playhead(s, 300, 1, true, on_reply, &ph));
    CHECK(pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) == 0);
    char junk[4096];
    memset(junk, 'x', sizeof junk);
    CHECK(write(pipefd[1], junk, sizeof junk) == (ssize_t)sizeof junk);

    struct res seek = RES(&pl);
    CHECK(snapback_seek_ended(s, 300, 900, on_reply, &seek) == SNAPBACK_OK);
    long long deadline = now_ms() + 5000;
    long other_events = 0;
    while (!seek.done && now_ms() < deadline) {
        /* Keep the other descriptor readable every round: it never lets the loop sleep. */
        CHECK(write(pipefd[1], junk, 64) == 64);
        struct pollfd fds[2] = {{.fd = pipefd[0], .events = POLLIN},
                                {.fd = snapback_client_fd(pl.c), .events = snapback_client_events(pl.c)}};
        int n = poll(fds, 2, 1000);
        CHECK(n > 0);
        if (fds[0].revents & POLLIN) {
            char buf[64];
            CHECK(read(pipefd[0], buf, sizeof buf) > 0);
            other_events++;
        }
        if (fds[1].revents) snapback_client_dispatch(pl.c, fds[1].revents);
    }
    CHECK(seek.done && seek.status == SNAPBACK_OK && seek.pushes_before == 1);
    CHECK(pl.n_pushes == 1 && pl.pushes[0].kind == SNAPBACK_PUSH_SEEK && pl.pushes[0].stream_time == 600);
    CHECK(other_events > 0);
out:
    if (pipefd[0] >= 0) close(pipefd[0]);
    if (pipefd[1] >= 0) close(pipefd[1]);
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The daemon vanishes with calls in flight: each callback gets SNAPBACK_E_DISCONNECTED exactly once,
 * the connection callback says so, nothing is left behind (LeakSanitizer in the sanitizer run). And a
 * client freed with calls pending answers them SNAPBACK_E_CLIENT_CLOSED. */
static void test_daemon_disappears_mid_call(void) {
    struct daemon d = {0};
    struct player pl = {0};
    memset(&pl, 0, sizeof pl);
    CHECK(daemon_start(&d));
    snapback_options o = player_options(&pl, &d);
    o.no_reconnect = true;
    pl.c = snapback_client_new(&o);
    CHECK(pl.c && snapback_client_connect(pl.c) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &pl.connected, 1, 5000));
    snapback_session_params params = seed_params("vanish");
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &params, &opened);
    CHECK(s);

    daemon_stop(&d, SIGSTOP); /* it reads nothing more and answers nothing */
    struct res status = RES(&pl), seek = RES(&pl), state = RES(&pl);
    CHECK(snapback_get_status(pl.c, on_reply, &status) == SNAPBACK_OK);
    CHECK(snapback_seek_ended(s, 300, 900, on_reply, &seek) == SNAPBACK_OK);
    CHECK(snapback_get_session_state(s, on_reply, &state) == SNAPBACK_OK);
    CHECK(snapback_client_events(pl.c) == POLLIN); /* all three are written: nothing left queued */
    CHECK(!status.done && !seek.done && !state.done);
    daemon_stop(&d, SIGKILL);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    CHECK(status.done && seek.done && state.done);
    CHECK(status.status == SNAPBACK_E_DISCONNECTED && seek.status == SNAPBACK_E_DISCONNECTED);
    CHECK(state.status == SNAPBACK_E_DISCONNECTED && seek.r.session == s && seek.message[0] != 0);
    CHECK(pl.last_disconnect_status == SNAPBACK_E_DISCONNECTED);
    CHECK(snapback_client_fd(pl.c) == -1 && snapback_client_next_timeout_ms(pl.c) == -1); /* no_reconnect */
    CHECK(snapback_pause(s, 10, on_reply, NULL) == SNAPBACK_E_DISCONNECTED);
    CHECK(snapback_session_close(s, on_reply, NULL) == SNAPBACK_OK); /* freed at once, no callback */
    snapback_client_free(pl.c);
    pl.c = NULL;

    /* Freed with calls pending. */
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    daemon_stop(&d, SIGSTOP);
    struct res pending = RES(NULL), opening = RES(NULL);
    snapback_session *s2 = NULL;
    CHECK(snapback_get_status(pl.c, on_reply, &pending) == SNAPBACK_OK);
    CHECK(snapback_session_open(pl.c, &params, on_reply, &opening, &s2) == SNAPBACK_OK && s2);
    snapback_client_free(pl.c);
    pl.c = NULL;
    CHECK(pending.done && pending.status == SNAPBACK_E_CLIENT_CLOSED);
    CHECK(opening.done && opening.status == SNAPBACK_E_CLIENT_CLOSED);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The bound of the output queue: calls waiting behind an unanswered Hello count against it; the one
 * that would pass it is refused SNAPBACK_E_QUEUE_FULL, the others are answered once the daemon runs. */
static void test_queue_bound(void) {
    struct daemon d = {0};
    struct player pl = {0};
    memset(&pl, 0, sizeof pl);
    CHECK(daemon_start(&d));
    daemon_stop(&d, SIGSTOP);
    snapback_options o = player_options(&pl, &d);
    o.max_queue_bytes = 200; /* a GetStatus frame is at most 23 bytes: 8 fit */
    pl.c = snapback_client_new(&o);
    CHECK(pl.c && snapback_client_connect(pl.c) == SNAPBACK_OK);
    struct res r[16];
    int queued = 0, rc = SNAPBACK_OK;
    for (int i = 0; i < 16; i++) {
        memset(&r[i], 0, sizeof r[i]);
        rc = snapback_get_status(pl.c, on_reply, &r[i]);
        if (rc != SNAPBACK_OK) break;
        queued++;
    }
    CHECK(queued == 8 && rc == SNAPBACK_E_QUEUE_FULL);
    daemon_stop(&d, SIGCONT);
    CHECK(pump_until(pl.c, &r[7].done, 1, 5000));
    for (int i = 0; i < queued; i++) CHECK(r[i].done && r[i].status == SNAPBACK_OK);
    CHECK(pl.connected == 1);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A callback that tries to run the loop from inside it is refused, not re-entered. */
static int reentered_dispatch;
static void on_reply_reenter(snapback_client *c, const snapback_reply *r, void *user) {
    struct res *x = user;
    reentered_dispatch = snapback_client_dispatch(c, POLLIN);
    int never = 0;
    x->status = r->status == SNAPBACK_OK ? snapback_client_wait(c, &never, 10) : r->status;
    x->done = 1;
}

/* The daemon's refusals reach the callbacks with their codes and messages; a refused open frees its
 * handle; overrides and resume options reach the daemon. */
static void test_errors_policy_and_resume(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));

    snapback_session_params bad = seed_params("bad");
    bad.policy_preset = "no-such-preset";
    struct res refused = RES(&pl);
    snapback_session *gone = NULL;
    CHECK(snapback_session_open(pl.c, &bad, on_reply, &refused, &gone) == SNAPBACK_OK && gone);
    /* Queued on the handle before the reply: failed with the open's status. */
    struct res early = RES(&pl);
    CHECK(snapback_report_playhead(gone, 1, 1, true, on_reply, &early) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &refused.done, 1, 5000));
    CHECK(refused.status == SNAPBACK_INVALID_ARGUMENT && strstr(refused.message, "no-such-preset"));
    CHECK(early.done && early.status == SNAPBACK_INVALID_ARGUMENT);

    snapback_break overlapping[] = {{.id = "a", .start = 100, .duration = 60}, {.id = "b", .start = 130, .duration = 30}};
    snapback_session_params bad2 = seed_params("bad2");
    bad2.breaks = overlapping;
    bad2.n_breaks = 2;
    struct res refused2 = RES(&pl);
    CHECK(open_session(&pl, &bad2, &refused2) == NULL && refused2.status == SNAPBACK_INVALID_ARGUMENT);

    /* IMA bookmarks (seed 002): a bookmark taken with one ad layout resumes at the same content time
     * with another. */
    snapback_break first[] = {{.id = "pre", .start = 0, .duration = 30}, {.id = "b1", .start = 630, .duration = 60}};
    snapback_session_params p1 = seed_params("movie");
    p1.profile = "anna";
    p1.breaks = first;
    p1.n_breaks = 2;
    struct res o1 = RES(&pl), ph = RES(&pl), pause = RES(&pl), close1 = RES(&pl);
    snapback_session *s1 = open_session(&pl, &p1, &o1);
    CHECK(s1);
    CALL(&pl, ph, snapback_report_playhead(s1, 1000, 1, true, on_reply, &ph));
    int before = pl.n_pushes;
    CALL(&pl, pause, snapback_pause(s1, 1000, on_reply, &pause));
    const struct pushed *saved = wait_push(&pl, SNAPBACK_PUSH_BOOKMARK_SAVED, before, 5000);
    CHECK(saved && saved->content_time == 910);
    CALL(&pl, close1, snapback_session_close(s1, on_reply, &close1));

    snapback_break second[] = {{.id = "pre", .start = 0, .duration = 15}, {.id = "b1", .start = 615, .duration = 120}};
    snapback_policy_overrides no_break_first = {.resume_breaks = 1 /* NONE */};
    snapback_resume from_bookmark = {.use_bookmark = true};
    snapback_session_params p2 = seed_params("movie");
    p2.profile = "anna";
    p2.breaks = second;
    p2.n_breaks = 2;
    p2.overrides = &no_break_first;
    p2.resume = &from_bookmark;
    struct res o2 = RES(&pl);
    before = pl.n_pushes;
    snapback_session *s2 = open_session(&pl, &p2, &o2);
    CHECK(s2);
    CHECK(o2.r.u.opened.resumed_from_bookmark && o2.r.u.opened.resume_content_time == 910);
    CHECK(o2.r.u.opened.has_start_stream_time && o2.r.u.opened.start_stream_time == 1045);
    const struct pushed *resume = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(resume && resume->stream_time == 1045 && resume->seek_reason == SNAPBACK_SEEK_RESUME_FROM_BOOKMARK);
    CHECK(o2.r.u.opened.last_push_seq == resume->seq);

    /* An override: return_to_target NEVER (hls.js) — after the snapback break, no seek on to 900. */
    snapback_policy_overrides never_return = {.return_to_target = 3};
    snapback_session_params p3 = seed_params("never");
    p3.overrides = &never_return;
    p3.policy_preset = "ima";
    struct res o3 = RES(&pl), x[5] = {RES(&pl), RES(&pl), RES(&pl), RES(&pl), RES(&pl)};
    snapback_session *s3 = open_session(&pl, &p3, &o3);
    CHECK(s3 && strcmp(o3.text, "ima") == 0);
    CALL(&pl, x[0], snapback_report_playhead(s3, 300, 1, true, on_reply, &x[0]));
    before = pl.n_pushes;
    CALL(&pl, x[1], snapback_seek_ended(s3, 300, 900, on_reply, &x[1]));
    const struct pushed *snap = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(snap && snap->stream_time == 600);
    CALL(&pl, x[2], snapback_ad_break_started(s3, "b1", on_reply, &x[2]));
    CALL(&pl, x[3], snapback_report_playhead(s3, 630, 1, true, on_reply, &x[3]));
    before = pl.n_pushes;
    CALL(&pl, x[4], snapback_ad_break_ended(s3, "b1", on_reply, &x[4]));
    CHECK(x[4].status == SNAPBACK_OK && find_push(&pl, SNAPBACK_PUSH_SEEK, before) == NULL);

    /* A second end only confirms what the daemon concluded: OK, nothing of its own pushed. Out of
     * order (a trick play that never started): FAILED_PRECONDITION, the session goes on. */
    struct res again = RES(&pl), unknown = RES(&pl), trick = RES(&pl);
    before = pl.n_pushes;
    CALL(&pl, again, snapback_ad_break_ended(s3, "b1", on_reply, &again));
    CHECK(again.status == SNAPBACK_OK);
    /* (The earlier events' BookmarkSaved and BreakWatched may arrive meanwhile: they follow a commit.) */
    CHECK(!find_push(&pl, SNAPBACK_PUSH_SEEK, before) && !find_push(&pl, SNAPBACK_PUSH_BREAK_SKIPPED, before));
    CALL(&pl, trick, snapback_trick_play_ended(s3, 700, on_reply, &trick));
    CHECK(trick.status == SNAPBACK_FAILED_PRECONDITION && trick.message[0] != 0);
    CALL(&pl, unknown, snapback_ad_break_started(s3, "zz", on_reply, &unknown));
    CHECK(unknown.status == SNAPBACK_NOT_FOUND);
    CHECK(snapback_session_close(s3, NULL, NULL) == SNAPBACK_OK);
    CHECK(snapback_session_close(s3, NULL, NULL) == SNAPBACK_E_INVALID); /* already closing */
    CHECK(snapback_session_close(s2, NULL, NULL) == SNAPBACK_OK);

    struct res inner = RES(&pl);
    CALL(&pl, inner, snapback_get_status(pl.c, on_reply_reenter, &inner));
    CHECK(reentered_dispatch == SNAPBACK_E_INVALID && inner.status == SNAPBACK_E_INVALID);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* ---------------------------------------------------------------------------------------------- */
/* A scripted fake daemon, for what the real one cannot be made to do: a Push of a kind newer than
 * this library, and a refusal of the connection. */

static bool read_full(int fd, uint8_t *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k <= 0) return false;
        got += (size_t)k;
    }
    return true;
}

static bool read_frame(int fd, uint8_t *h, uint8_t *body, size_t cap, uint32_t *len) {
    if (!read_full(fd, h, 12)) return false;
    *len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    return *len <= cap && read_full(fd, body, *len);
}

static bool write_frame(int fd, const uint8_t *h4to12, const uint8_t *body, uint32_t len) {
    uint8_t h[12] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    memcpy(h + 4, h4to12, 8);
    return write(fd, h, 12) == 12 && (len == 0 || write(fd, body, len) == (ssize_t)len);
}

/* The child: one connection. mode 0: Hello, OpenSession answered after a push of unknown kind 12 and a
 * seek; then checks the next request carries session id 7 and answers it. mode 1: refuses at once. */
static int fake_daemon(int listener, int mode) {
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) return 10;
    uint8_t h[12], body[4096];
    uint32_t len;
    if (mode == 1) {
        static const uint8_t refusal[] = {0x08, 0x07, 0x12, 0x06, 'n', 'o', ' ', 'w', 'a', 'y'};
        const uint8_t hdr[8] = {0, 0, 0, 0, 2, 7, 0, 0};
        return write_frame(fd, hdr, refusal, sizeof refusal) ? 0 : 11;
    }
    if (!read_frame(fd, h, body, sizeof body, &len) || h[10] != 0 || h[11] != 0) return 12;
    static const uint8_t hello[] = {0x08, 0x01, 0x12, 0x04, 'f', 'a', 'k', 'e'};
    uint8_t hdr[8] = {h[4], h[5], h[6], h[7], 2, 0, 0, 0};
    if (!write_frame(fd, hdr, hello, sizeof hello)) return 13;
    if (!read_frame(fd, h, body, sizeof body, &len) || h[10] != 1 || h[11] != 0) return 14;
    /* Push{session_id 7, seq 1, reason "future", field 12 (a kind this library does not know)}. */
    static const uint8_t unknown[] = {0x08, 0x07, 0x10, 0x01, 0x1a, 0x06, 'f', 'u', 't', 'u', 'r', 'e', 0x62, 0x00};
    /* Push{session_id 7, seq 2, seek{stream_time 42.0, reason SNAPBACK}}. */
    static const uint8_t seek[] = {0x08, 0x07, 0x10, 0x02, 0x22, 0x0b, 0x09, 0, 0, 0, 0, 0, 0, 0x45, 0x40, 0x10, 0x01};
    uint8_t push_hdr[8] = {h[4], h[5], h[6], h[7], 3, 0, 1, 0};
    if (!write_frame(fd, push_hdr, unknown, sizeof unknown) || !write_frame(fd, push_hdr, seek, sizeof seek)) return 15;
    static const uint8_t opened[] = {0x08, 0x07, 0x38, 0x02};
    uint8_t open_hdr[8] = {h[4], h[5], h[6], h[7], 2, 0, 1, 0};
    if (!write_frame(fd, open_hdr, opened, sizeof opened)) return 16;
    if (!read_frame(fd, h, body, sizeof body, &len) || h[11] != 0x03) return 17;
    if (len < 2 || body[0] != 0x08 || body[1] != 0x07) return 18; /* the session id was filled in */
    static const uint8_t event[] = {0x08, 0x00};
    uint8_t ev_hdr[8] = {h[4], h[5], h[6], h[7], 2, 0, 1, 3};
    if (!write_frame(fd, ev_hdr, event, sizeof event)) return 19;
    return read_frame(fd, h, body, sizeof body, &len) ? 20 : 0; /* then the client hangs up */
}

static pid_t spawn_fake(struct daemon *d, int mode) {
    snprintf(d->dir, sizeof d->dir, "/tmp/libsnapback-fake.XXXXXX");
    if (!mkdtemp(d->dir)) return -1;
    snprintf(d->socket, sizeof d->socket, "%s/fake.sock", d->dir);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", d->socket);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 4) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) _exit(fake_daemon(l, mode));
    close(l);
    return pid;
}

static void test_unknown_push_kind_and_refusal(void) {
    struct daemon d = {0};
    struct player pl = {0};
    memset(&pl, 0, sizeof pl);
    pid_t child = spawn_fake(&d, 0);
    CHECK(child > 0);
    snapback_options o = player_options(&pl, &d);
    o.no_reconnect = true;
    pl.c = snapback_client_new(&o);
    CHECK(pl.c && snapback_client_connect(pl.c) == SNAPBACK_OK);
    snapback_session_params params = seed_params("fake");
    struct res opened = RES(&pl), seek = RES(&pl);
    snapback_session *s = NULL;
    CHECK(snapback_session_open(pl.c, &params, on_reply, &opened, &s) == SNAPBACK_OK);
    /* Queued before the open reply: sent with the session id the reply brings. */
    CHECK(snapback_seek_ended(s, 10, 50, on_reply, &seek) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &seek.done, 1, 5000));
    CHECK(opened.status == SNAPBACK_OK && opened.r.u.opened.session_id == 7 && opened.pushes_before == 2);
    CHECK(strcmp(snapback_client_hello(pl.c)->server_name, "fake") == 0);
    CHECK(pl.n_pushes == 2);
    CHECK(pl.pushes[0].kind == SNAPBACK_PUSH_UNKNOWN && pl.pushes[0].seq == 1 && strcmp(pl.pushes[0].reason, "future") == 0);
    CHECK(pl.pushes[1].kind == SNAPBACK_PUSH_SEEK && pl.pushes[1].seq == 2 && pl.pushes[1].stream_time == 42);
    CHECK(seek.status == SNAPBACK_OK);
    snapback_client_free(pl.c);
    pl.c = NULL;
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fprintf(stderr, "fake daemon exit %d\n", WEXITSTATUS(status));
    CHECK(WEXITSTATUS(status) == 0);
    daemon_cleanup(&d);

    /* A refused connection: RESPONSE with call id 0, PERMISSION_DENIED, then closed. */
    child = spawn_fake(&d, 1);
    CHECK(child > 0);
    memset(&pl, 0, sizeof pl);
    o = player_options(&pl, &d);
    o.no_reconnect = true;
    pl.c = snapback_client_new(&o);
    CHECK(pl.c && snapback_client_connect(pl.c) == SNAPBACK_OK);
    struct res st = RES(&pl);
    CHECK(snapback_get_status(pl.c, on_reply, &st) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &st.done, 1, 5000));
    CHECK(st.status == SNAPBACK_PERMISSION_DENIED && strcmp(st.message, "no way") == 0);
    CHECK(pl.disconnected == 1 && pl.last_disconnect_status == SNAPBACK_PERMISSION_DENIED && pl.connected == 0);
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* No daemon at all: connect reports it, the library asks for a timer to retry, SNAPBACK_SOCKET is read. */
static void test_connect_without_daemon(void) {
    snapback_client *c = NULL, *e = NULL;
    setenv("SNAPBACK_SOCKET", "/nonexistent/snapbackd.sock", 1);
    e = snapback_client_new(NULL);
    CHECK(e && strcmp(snapback_client_socket_path(e), "/nonexistent/snapbackd.sock") == 0);
    unsetenv("SNAPBACK_SOCKET");
    c = snapback_client_new(NULL);
    CHECK(c && strcmp(snapback_client_socket_path(c), SNAPBACK_DEFAULT_SOCKET) == 0);
    CHECK(snapback_client_connect(e) == SNAPBACK_E_DISCONNECTED);
    CHECK(snapback_client_fd(e) == -1 && snapback_client_events(e) == 0);
    int t = snapback_client_next_timeout_ms(e);
    CHECK(t >= 0 && t <= 125); /* 100 ms ± 25% */
    /* The retry fails too (no daemon): the next delay doubles. */
    int never = 0;
    pump_until(e, &never, 1, t + 5);
    t = snapback_client_next_timeout_ms(e);
    CHECK(t > 100 && t <= 250); /* 200 ms ± 25%, less the 5 ms waited past the retry */
    CHECK(snapback_get_status(e, on_reply, NULL) == SNAPBACK_E_DISCONNECTED);
    long long t0 = now_ms();
    int nothing = 0;
    CHECK(snapback_client_wait(e, &nothing, 30) == SNAPBACK_E_TIMEOUT && now_ms() - t0 >= 30);
    snapback_session *s = NULL;
    snapback_session_params p = seed_params("x");
    CHECK(snapback_session_open(e, &p, on_reply, NULL, &s) == SNAPBACK_E_DISCONNECTED && s == NULL);
    for (int code = -8; code <= 16; code++) CHECK(snapback_strerror(code) && snapback_strerror(code)[0]);
    CHECK(strncmp(snapback_strerror(SNAPBACK_E_QUEUE_FULL), "QUEUE_FULL", 10) == 0);
out:
    snapback_client_free(c);
    snapback_client_free(e);
}

static const snapback_break two_breaks[] = {{.id = "b1", .start = 600, .duration = 60},
                                           {.id = "b2", .start = 1000, .duration = 60}};

/* Trick play from 5:00 to 23:20 over two unwatched breaks: BreakSkipped for b1 (trick play) reaches
 * on_push before the seek to b2, the break that plays; b2 played with the ad events carrying the
 * position (the late AdBreakEnded is OK), and the state shows b1 skipped, b2 watched, both mid-rolls. */
static void test_break_skipped_by_trick_play(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_session_params p = seed_params("trick");
    p.breaks = two_breaks;
    p.n_breaks = 2;
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s);
    struct res ph = RES(&pl), ts = RES(&pl), te = RES(&pl);
    CALL(&pl, ph, snapback_report_playhead(s, 300, 1, true, on_reply, &ph));
    CALL(&pl, ts, snapback_trick_play_started(s, 300, 8, on_reply, &ts));
    int before = pl.n_pushes;
    CALL(&pl, te, snapback_trick_play_ended(s, 1400, on_reply, &te));
    CHECK(te.status == SNAPBACK_OK);
    const struct pushed *skip = find_push(&pl, SNAPBACK_PUSH_BREAK_SKIPPED, before);
    CHECK(skip && strcmp(skip->text, "b1") == 0 && skip->skip_reason == SNAPBACK_SKIP_TRICK_PLAY);
    CHECK(count_pushes(&pl, SNAPBACK_PUSH_BREAK_SKIPPED) == 1);
    const struct pushed *seek = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(seek && seek->stream_time == 1000 && skip < seek && te.pushes_before > (int)(seek - pl.pushes));
    CHECK(strstr(skip->reason, "b1") != NULL);

    struct res as = RES(&pl), ph2 = RES(&pl), ae = RES(&pl), st = RES(&pl);
    CALL(&pl, as, snapback_ad_break_started_at(s, "b2", 1000, on_reply, &as));
    CHECK(as.status == SNAPBACK_OK);
    CALL(&pl, ph2, snapback_report_playhead(s, 1060.5, 1, true, on_reply, &ph2));
    /* The SDK's end after the playhead left the break: it confirms, and its position is kept. */
    CALL(&pl, ae, snapback_ad_break_ended_at(s, "b2", 1061, on_reply, &ae));
    CHECK(ae.status == SNAPBACK_OK);
    double position = 0;
    CHECK(snapback_session_position(s, &position) && position == 1061);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.status == SNAPBACK_OK && st.n_states == 2);
    CHECK(strcmp(st.state_ids[0], "b1") == 0 && strcmp(st.state_ids[1], "b2") == 0);
    CHECK(st.skip_reasons[0] == SNAPBACK_SKIP_TRICK_PLAY && st.skip_reasons[1] == SNAPBACK_SKIP_UNSPECIFIED);
    CHECK(!st.state_watched[0] && st.state_watched[1] && !st.exempt[0] && !st.exempt[1]);
    CHECK(st.positions[0] == SNAPBACK_POSITION_MIDROLL && st.positions[1] == SNAPBACK_POSITION_MIDROLL);
    /* A position without a break is refused, as before. */
    struct res bad = RES(&pl);
    CALL(&pl, bad, snapback_ad_started_at(s, "nope", 0, 1100, on_reply, &bad));
    CHECK(bad.status == SNAPBACK_NOT_FOUND);
    CHECK(snapback_ad_ended_at(NULL, "b1", 0, 1, on_reply, &bad) == SNAPBACK_E_INVALID);
    CHECK(snapback_ad_break_started_at(s, NULL, 1, on_reply, &bad) == SNAPBACK_E_INVALID);
    CHECK(strcmp(snapback_skip_reason_name(SNAPBACK_SKIP_TRICK_PLAY), "trick-play") == 0);
    CHECK(strcmp(snapback_skip_reason_name(SNAPBACK_SKIP_RESUME_PLAN), "resume-plan") == 0);
    CHECK(strcmp(snapback_skip_reason_name((snapback_skip_reason)99), "unspecified") == 0);
    CHECK(strcmp(snapback_break_position_name(SNAPBACK_POSITION_POSTROLL), "postroll") == 0);
    CHECK(strcmp(snapback_break_position_name((snapback_break_position)-1), "unspecified") == 0);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A resume past two breaks that plays none of them (IMA's resume plan): a BreakSkipped for each before
 * the open's reply, both exempt in the state, the pre-roll and post-roll placed; a seek back and over
 * one of them again says it is exempt. A restart keeps the session (the reopen is unaffected). */
static void test_break_states_after_a_resume(void) {
    static const snapback_break breaks[] = {{.id = "pre", .start = 0, .duration = 30},
                                            {.id = "m1", .start = 630, .duration = 60},
                                            {.id = "m2", .start = 1260, .duration = 60},
                                            {.id = "post", .start = 1950, .duration = 30}};
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_resume resume = {.has_resume_content_time = true, .resume_content_time = 1500};
    snapback_session_params p = seed_params("resumed");
    p.breaks = breaks;
    p.n_breaks = 4;
    p.policy_preset = "ima";
    p.resume = &resume;
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s);
    int skipped = 0;
    for (int i = 0; i < opened.pushes_before; i++) {
        const struct pushed *x = &pl.pushes[i];
        if (x->kind != SNAPBACK_PUSH_BREAK_SKIPPED) continue;
        CHECK(x->skip_reason == SNAPBACK_SKIP_RESUME_PLAN);
        skipped++;
    }
    CHECK(skipped >= 2);
    struct res st = RES(&pl);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.n_states == 4 && st.n == 4);
    CHECK(st.positions[0] == SNAPBACK_POSITION_PREROLL && st.positions[1] == SNAPBACK_POSITION_MIDROLL
          && st.positions[2] == SNAPBACK_POSITION_MIDROLL && st.positions[3] == SNAPBACK_POSITION_POSTROLL);
    CHECK(st.exempt[1] && st.exempt[2] && !st.exempt[3]);
    CHECK(st.skip_reasons[1] == SNAPBACK_SKIP_RESUME_PLAN && st.skip_reasons[2] == SNAPBACK_SKIP_RESUME_PLAN);
    CHECK(st.skip_reasons[3] == SNAPBACK_SKIP_UNSPECIFIED && !st.state_watched[1] && !st.state_watched[2]);

    /* Back before m1, then over it: it is exempt, so the seek stands and says why. */
    double start = opened.r.u.opened.start_stream_time;
    struct res ph = RES(&pl), back = RES(&pl), over = RES(&pl);
    CALL(&pl, ph, snapback_report_playhead(s, start, 1, true, on_reply, &ph));
    CALL(&pl, back, snapback_seek_ended(s, start, 100, on_reply, &back));
    int before = pl.n_pushes;
    CALL(&pl, over, snapback_seek_ended(s, 100, 900, on_reply, &over));
    const struct pushed *exempt = find_push(&pl, SNAPBACK_PUSH_BREAK_SKIPPED, before);
    CHECK(exempt && strcmp(exempt->text, "m1") == 0 && exempt->skip_reason == SNAPBACK_SKIP_EXEMPT);
    CHECK(find_push(&pl, SNAPBACK_PUSH_SEEK, before) == NULL);

    /* The daemon restarts: the session is reopened where the player was, as before. */
    CHECK(daemon_stop(&d, SIGTERM) >= 0);
    CHECK(pump_until(pl.c, &pl.disconnected, 1, 5000));
    int skips_before_restart = count_pushes(&pl, SNAPBACK_PUSH_BREAK_SKIPPED);
    CHECK(daemon_start(&d));
    CHECK(pump_until(pl.c, &pl.restored, 1, 10000) && pl.restored_status == SNAPBACK_OK);
    CHECK(pl.restored_start == 900);
    struct res st2 = RES(&pl);
    CALL(&pl, st2, snapback_get_session_state(s, on_reply, &st2));
    CHECK(st2.status == SNAPBACK_OK && st2.n_states == 4 && strcmp(st2.state_ids[3], "post") == 0);
    /* The reopen's resume went past pre and m1: not the player's skips (none delivered), but the daemon
     * holds them exempt, as the header says. */
    CHECK(count_pushes(&pl, SNAPBACK_PUSH_BREAK_SKIPPED) == skips_before_restart);
    CHECK(st2.exempt[0] && st2.exempt[1] && !st2.exempt[2] && !st2.exempt[3]);
    CHECK(st2.skip_reasons[1] == SNAPBACK_SKIP_RESUME_PLAN);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The per-ad events with the position: the daemon takes it as a playhead report (the state is at 615
 * at once, not where the last report left it), and the library keeps it for a reopen. */
static void test_ad_events_with_position(void) {
    struct daemon d = {0};
    struct player pl = {0};
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    snapback_session_params p = seed_params("positions");
    struct res opened = RES(&pl);
    snapback_session *s = open_session(&pl, &p, &opened);
    CHECK(s);
    struct res ph = RES(&pl), as = RES(&pl), ae = RES(&pl), st = RES(&pl);
    CALL(&pl, ph, snapback_report_playhead(s, 590, 1, true, on_reply, &ph));
    CALL(&pl, as, snapback_ad_started_at(s, "b1", 0, 600.5, on_reply, &as));
    CHECK(as.status == SNAPBACK_OK);
    CALL(&pl, ae, snapback_ad_ended_at(s, "b1", 0, 615, on_reply, &ae));
    CHECK(ae.status == SNAPBACK_OK);
    double position = 0;
    CHECK(snapback_session_position(s, &position) && position == 615);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.status == SNAPBACK_OK && strcmp(st.text, "b1") == 0);
    CHECK(st.r.u.state.stream_time >= 615 && st.r.u.state.stream_time < 616);
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* Random timelines across restarts: inserted, replacing and cutting breaks (content_resume_offset unset,
 * 0, the duration, or up to 400 s whatever the duration), apart or back to back, a pre-roll at 0 or not,
 * times to the millisecond; each session at a random position, inside a break or not. After each
 * restart every reopened session must start where the daemon's own rule put its position before the
 * restart: StreamTimeForContentTime(ContentTimeForStreamTime(position)), the resume's target, asked of
 * the daemon before it went (a position at content 0 resumes nowhere: start 0). The library carries no
 * copy of that rule; this keeps it so. SNAPBACK_TEST_SEED replays another set of timelines. */
#define RANDOM_SESSIONS 60
#define RANDOM_ROUNDS 5
#define RANDOM_BREAKS 5
struct random_session {
    snapback_session *s;
    snapback_break breaks[RANDOM_BREAKS];
    char ids[RANDOM_BREAKS][8];
    size_t n;
    double position, content, expect_start, start;
    int restored, status;
};
static uint64_t random_state;
static uint32_t random_below(uint32_t n) {
    random_state = random_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(random_state >> 33) % n;
}
/* Milliseconds from 0 to max_ms, in seconds: sums of them are rarely exact in binary. */
static double random_seconds(uint32_t max_ms) { return random_below(max_ms + 1) / 1000.0; }
static void random_timeline(struct random_session *r) {
    r->n = 1 + random_below(RANDOM_BREAKS);
    double t = random_below(5) == 0 ? 0 : random_seconds(900000);
    for (size_t i = 0; i < r->n; i++) {
        snapback_break *b = &r->breaks[i];
        memset(b, 0, sizeof *b);
        snprintf(r->ids[i], sizeof r->ids[i], "r%u", (unsigned)(i % 10));
        b->id = r->ids[i];
        if (i > 0 && random_below(3) != 0) t += 1 + random_seconds(600000); /* else back to back */
        b->start = t;
        b->duration = 1 + random_seconds(120000);
        switch (random_below(4)) {
        case 0: break; /* inserted */
        case 1: b->has_content_resume_offset = true; break;
        case 2:
            b->has_content_resume_offset = true;
            b->content_resume_offset = b->duration;
            break;
        default:
            b->has_content_resume_offset = true;
            b->content_resume_offset = random_seconds(400000);
            break;
        }
        t = b->start + b->duration;
    }
    if (random_below(3) == 0) {
        const snapback_break *b = &r->breaks[random_below((uint32_t)r->n)];
        r->position = b->start + b->duration * random_below(1000) / 1000.0;
    } else {
        r->position = random_seconds((uint32_t)((t + 300) * 1000));
    }
}
static void restored_each(snapback_client *c, snapback_session *s, int status, const char *msg, double start,
                          void *user) {
    on_restored(c, s, status, msg, start, user);
    struct random_session *r = snapback_session_user_data(s);
    r->restored++;
    r->status = status;
    r->start = start;
}
static void test_random_timelines_resume_by_the_daemons_rule(void) {
    static struct random_session rs[RANDOM_SESSIONS];
    struct daemon d = {0};
    struct player pl = {0};
    const char *seed = getenv("SNAPBACK_TEST_SEED");
    random_state = seed ? strtoull(seed, NULL, 0) : 0x5eed;
    CHECK(daemon_start(&d));
    snapback_options o = player_options(&pl, &d);
    o.callbacks.on_session_restored = restored_each;
    pl.c = snapback_client_new(&o);
    CHECK(pl.c && snapback_client_connect(pl.c) == SNAPBACK_OK && pump_until(pl.c, &pl.connected, 1, 5000));
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        for (int i = 0; i < RANDOM_SESSIONS; i++) {
            struct random_session *r = &rs[i];
            memset(r, 0, sizeof *r);
            random_timeline(r);
            snapback_session_params p;
            memset(&p, 0, sizeof p);
            p.stream_id = "random";
            p.kind = SNAPBACK_SESSION_ON_DEMAND;
            p.breaks = r->breaks;
            p.n_breaks = r->n;
            struct res opened = RES(&pl), report = RES(&pl), content = RES(&pl), stream = RES(&pl);
            r->s = open_session(&pl, &p, &opened);
            CHECK(r->s);
            snapback_session_set_user_data(r->s, r);
            CALL(&pl, report, snapback_report_playhead(r->s, r->position, 1, true, on_reply, &report));
            /* Where the library reopens: the report, or a seek the daemon pushed in answer. */
            CHECK(snapback_session_position(r->s, &r->position));
            CALL(&pl, content, snapback_content_time_for_stream_time(r->s, r->position, on_reply, &content));
            CHECK(content.status == SNAPBACK_OK);
            r->content = content.r.u.content_time;
            CALL(&pl, stream, snapback_stream_time_for_content_time(r->s, r->content, on_reply, &stream));
            CHECK(stream.status == SNAPBACK_OK);
            r->expect_start = r->content > 0 ? stream.r.u.stream_time : 0;
        }
        CHECK(daemon_stop(&d, SIGKILL) != -1);
        CHECK(pump_until(pl.c, &pl.disconnected, round + 1, 5000));
        int before = pl.restored;
        CHECK(daemon_start(&d));
        CHECK(pump_until(pl.c, &pl.restored, before + RANDOM_SESSIONS, 10000));
        for (int i = 0; i < RANDOM_SESSIONS; i++) {
            const struct random_session *r = &rs[i];
            if (r->restored == 1 && r->status == SNAPBACK_OK && r->start == r->expect_start) continue;
            fprintf(stderr, "round %d session %d: position %.17g (content %.17g) restored %d status %d at %.17g, "
                    "expected %.17g; breaks:", round, i, r->position, r->content, r->restored, r->status, r->start,
                    r->expect_start);
            for (size_t k = 0; k < r->n; k++)
                fprintf(stderr, " {%.17g, %.17g, %s%.17g}", r->breaks[k].start, r->breaks[k].duration,
                        r->breaks[k].has_content_resume_offset ? "" : "unset ", r->breaks[k].content_resume_offset);
            fprintf(stderr, "\n");
            failures++;
        }
        for (int i = 0; i < RANDOM_SESSIONS; i++) {
            struct res closed = RES(&pl);
            CALL(&pl, closed, snapback_session_close(rs[i].s, on_reply, &closed));
            CHECK(closed.status == SNAPBACK_OK);
        }
    }
out:
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* The manifests' breaks through the real daemon: a DASH MPD's SCTE-35 EventStream (xml and xml+bin)
 * opened with snapback_session_open_cues snaps a seek back to its break; a VMAP's filled breaks become
 * the session's ad rules, its empty one none. */
static void test_manifest_sessions(void) {
    struct daemon d = {0};
    struct player pl = {0};
    snapback_cues *mpd = snapback_cues_new(NULL), *vmap = NULL;
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    static const char mpd_text[] =
        "<?xml version=\"1.0\"?><MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\">"
        "<Period id=\"p0\" duration=\"PT10M\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"90000\">"
        "<Event presentationTime=\"54000000\" duration=\"5400000\" id=\"1\"><scte35:SpliceInfoSection "
        "xmlns:scte35=\"http://www.scte.org/schemas/35/2016\"><scte35:SpliceInsert spliceEventId=\"100\" "
        "outOfNetworkIndicator=\"true\"/></scte35:SpliceInfoSection></Event></EventStream></Period>"
        "<Period id=\"p1\"><EventStream schemeIdUri=\"urn:scte:scte35:2014:xml+bin\"><Event presentationTime=\"300\">"
        "<Signal><Binary>/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg==</Binary></Signal>"
        "</Event></EventStream></Period></MPD>";
    CHECK(mpd && snapback_cues_update(mpd, mpd_text, sizeof mpd_text - 1) == SNAPBACK_OK);
    snapback_session_params p = seed_params("dash-movie");
    struct res opened = RES(&pl), r1 = RES(&pl), seek = RES(&pl), st = RES(&pl);
    snapback_session *s = NULL;
    CHECK(snapback_session_open_cues(pl.c, &p, mpd, on_reply, &opened, &s) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &opened.done, 1, 5000) && opened.status == SNAPBACK_OK);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.n == 2 && strcmp(st.ids[0], "scte35-100") == 0 && strcmp(st.ids[1], "scte35-1207959694") == 0);
    CALL(&pl, r1, snapback_report_playhead(s, 300, 1, true, on_reply, &r1));
    int before = pl.n_pushes;
    CALL(&pl, seek, snapback_seek_ended(s, 300, 700, on_reply, &seek));
    const struct pushed *back = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(back && back->stream_time == 600 && back->seek_reason == SNAPBACK_SEEK_SNAPBACK);

    /* VMAP: pre-roll, a mid-roll at 15 s, an empty break at 30 s, a post-roll. */
    static const char vmap_text[] =
        "<vmap:VMAP xmlns:vmap=\"http://www.iab.net/vmap-1.0\" version=\"1.0\">"
        "<vmap:AdBreak timeOffset=\"start\" breakType=\"linear\" breakId=\"preroll\"><vmap:AdSource>"
        "<vmap:AdTagURI templateType=\"vast3\">https://ads.example/pre</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>"
        "<vmap:AdBreak timeOffset=\"00:00:15.000\" breakType=\"linear\" breakId=\"midroll-1\"><vmap:AdSource>"
        "<vmap:AdTagURI templateType=\"vast3\">https://ads.example/mid</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>"
        "<vmap:AdBreak timeOffset=\"00:00:30.000\" breakType=\"linear\" breakId=\"empty\"/>"
        "<vmap:AdBreak timeOffset=\"end\" breakType=\"linear\" breakId=\"postroll\"><vmap:AdSource>"
        "<vmap:AdTagURI templateType=\"vast3\">https://ads.example/post</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>"
        "</vmap:VMAP>";
    snapback_cues_options vo = {.content_duration = 120};
    vmap = snapback_cues_new(&vo);
    CHECK(vmap && snapback_cues_update(vmap, vmap_text, sizeof vmap_text - 1) == SNAPBACK_OK);
    snapback_session_params vp = seed_params("vmap-movie");
    vp.content_duration = 120;
    struct res vopened = RES(&pl), vst = RES(&pl);
    snapback_session *vs = NULL;
    before = pl.n_pushes;
    CHECK(snapback_session_open_cues(pl.c, &vp, vmap, on_reply, &vopened, &vs) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &vopened.done, 1, 5000) && vopened.status == SNAPBACK_OK);
    const struct pushed *pre = find_push(&pl, SNAPBACK_PUSH_PLAY_BREAK, before);
    CHECK(pre && strcmp(pre->text, "preroll") == 0);
    CALL(&pl, vst, snapback_get_session_state(vs, on_reply, &vst));
    CHECK(vst.n == 3); /* pre-roll, the mid-roll at 15 s, post-roll: the empty break is none of them */
out:
    snapback_cues_free(mpd);
    snapback_cues_free(vmap);
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

/* A live HLS playlist refreshed three times — a CUE-OUT opened, extended, closed by its CUE-IN — drives
 * UpdateBreaks (the break reaches the daemon with its end); a seek over it then snaps back to it. */
static void test_live_manifest_refreshes(void) {
    struct daemon d = {0};
    struct player pl = {0};
    snapback_cues *c = snapback_cues_new(NULL);
    static char text[4096];
    CHECK(daemon_start(&d));
    CHECK(connect_player(&pl, &d));
    char *q = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n");
    for (int i = 0; i < 3; i++) q += sprintf(q, "#EXTINF:10,\ns%d.ts\n", i);
    sprintf(q, "#EXT-X-CUE-OUT:DURATION=30\n#EXTINF:10,\ns3.ts\n");
    CHECK(c && snapback_cues_update(c, text, strlen(text)) == SNAPBACK_OK && snapback_cues_is_live(c));
    snapback_policy_overrides ov;
    memset(&ov, 0, sizeof ov);
    ov.has_live_snapback = ov.live_snapback = true;
    snapback_session_params p = seed_params("live-channel");
    p.has_content_duration = false;
    p.overrides = &ov;
    struct res opened = RES(&pl), u2 = RES(&pl), u3 = RES(&pl), st = RES(&pl), ph = RES(&pl), seek = RES(&pl);
    snapback_session *s = NULL;
    CHECK(snapback_session_open_cues(pl.c, &p, c, on_reply, &opened, &s) == SNAPBACK_OK);
    CHECK(pump_until(pl.c, &opened.done, 1, 5000) && opened.status == SNAPBACK_OK);
    /* Extended: the break runs on past its planned 30 s. */
    q = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:2\n#EXTINF:10,\ns2.ts\n"
                             "#EXT-X-CUE-OUT:DURATION=30\n");
    for (int i = 3; i < 8; i++) q += sprintf(q, "#EXTINF:10,\ns%d.ts\n", i);
    CHECK(snapback_cues_update(c, text, strlen(text)) == SNAPBACK_OK);
    const snapback_cue_break *b = snapback_cues_breaks(c, NULL);
    CHECK(b && b[0].open && b[0].duration == 50);
    CALL(&pl, u2, snapback_session_update_cues(s, c, on_reply, &u2));
    CHECK(u2.status == SNAPBACK_OK);
    struct res st2 = RES(&pl);
    CALL(&pl, st2, snapback_get_session_state(s, on_reply, &st2));
    CHECK(st2.n == 0); /* open: the daemon gets it with its end */
    /* Closed at 90 s. */
    q = text + sprintf(text, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:6\n"
                             "#EXT-X-CUE-OUT-CONT:ElapsedTime=30,Duration=30\n");
    for (int i = 6; i < 9; i++) q += sprintf(q, "#EXTINF:10,\ns%d.ts\n", i);
    q += sprintf(q, "#EXT-X-CUE-IN\n");
    for (int i = 9; i < 12; i++) q += sprintf(q, "#EXTINF:10,\ns%d.ts\n", i);
    CHECK(snapback_cues_update(c, text, strlen(text)) == SNAPBACK_OK);
    b = snapback_cues_breaks(c, NULL);
    CHECK(b && !b[0].open && b[0].start == 30 && b[0].duration == 60);
    CALL(&pl, u3, snapback_session_update_cues(s, c, on_reply, &u3));
    CHECK(u3.status == SNAPBACK_OK);
    CALL(&pl, st, snapback_get_session_state(s, on_reply, &st));
    CHECK(st.n == 1 && strcmp(st.ids[0], "cue-out@30") == 0);
    CALL(&pl, ph, snapback_report_playhead(s, 10, 1, true, on_reply, &ph));
    int before = pl.n_pushes;
    CALL(&pl, seek, snapback_seek_ended(s, 10, 110, on_reply, &seek));
    const struct pushed *back = find_push(&pl, SNAPBACK_PUSH_SEEK, before);
    CHECK(back && back->stream_time == 30 && back->seek_reason == SNAPBACK_SEEK_SNAPBACK);
out:
    snapback_cues_free(c);
    snapback_client_free(pl.c);
    daemon_cleanup(&d);
}

static const struct {
    const char *name;
    void (*fn)(void);
} tests[] = {
    {"seed_story", test_seed_story},
    {"every_push_kind", test_every_push_kind},
    {"reconnect_restores_sessions", test_reconnect_restores_sessions},
    {"restart_inside_a_break", test_restart_inside_a_break},
    {"close_during_reopen", test_close_during_reopen},
    {"ad_rules_session_restored", test_ad_rules_session_restored},
    {"edge_triggered_epoll", test_edge_triggered_epoll},
    {"live_breaks_survive_restart", test_live_breaks_survive_restart},
    {"push_while_loop_is_busy", test_push_while_loop_is_busy},
    {"daemon_disappears_mid_call", test_daemon_disappears_mid_call},
    {"queue_bound", test_queue_bound},
    {"errors_policy_and_resume", test_errors_policy_and_resume},
    {"replacing_break_survives_restart", test_replacing_break_survives_restart},
    {"breaks_cutting_more_than_they_last_survive_restarts", test_breaks_cutting_more_than_they_last_survive_restarts},
    {"content_past_the_last_content_time_resumes_at_it", test_content_past_the_last_content_time_resumes_at_it},
    {"unknown_push_kind_and_refusal", test_unknown_push_kind_and_refusal},
    {"connect_without_daemon", test_connect_without_daemon},
    {"break_skipped_by_trick_play", test_break_skipped_by_trick_play},
    {"break_states_after_a_resume", test_break_states_after_a_resume},
    {"ad_events_with_position", test_ad_events_with_position},
    {"random_timelines_resume_by_the_daemons_rule", test_random_timelines_resume_by_the_daemons_rule},
    {"manifest_sessions", test_manifest_sessions},
    {"live_manifest_refreshes", test_live_manifest_refreshes},
};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SNAPBACKD [TEST...]\n", argv[0]);
        return 2;
    }
    snapbackd_bin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    int run = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        bool selected = argc == 2;
        for (int a = 2; a < argc; a++) selected |= strcmp(argv[a], tests[i].name) == 0;
        if (!selected) continue;
        int before = failures;
        long long t0 = now_ms();
        tests[i].fn();
        run++;
        printf("%s %s (%lld ms)\n", failures == before ? "ok  " : "FAIL", tests[i].name, now_ms() - t0);
    }
    printf("test_client: %d tests, %d failed checks\n", run, failures);
    return failures == 0 && run > 0 ? 0 : 1;
}
