/* SPDX-License-Identifier: Apache-2.0 */
/* The scripted player both examples run: a stitched on-demand stream of 30 minutes of content with
 * two 60-second ad breaks (b1 at 600 s, b2 at 1200 s of stream time), played fast (10 s of stream per
 * tick). At 300 s the scripted viewer seeks to 900, over the unwatched b1: snapbackd pushes a seek
 * back to 600 (snapback), the player obeys, plays b1, and is pushed on to 900 when the break ends.
 *
 * One event is in flight at a time: the player's clock holds until the daemon answered it, so every
 * push the event caused (they come before its reply) has been obeyed before the next report. The
 * main loops (GLib or poll) only differ in how they wait; they call player_tick() on a timer and
 * drive the client with its descriptor, events and timeout.
 *
 * Options (both examples): --content-id ID and --profile NAME open the session on that content and
 * viewer profile (defaults "example-content" and the default profile), so another player, a web page
 * through snapback-web say, can share its watched breaks; --b1-watched tells the player that b1 of
 * the content was watched before: then the seek over it must not be snapped back (b2 is still played). */
#ifndef SNAPBACK_SCRIPTED_PLAYER_H
#define SNAPBACK_SCRIPTED_PLAYER_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <snapback/snapback.h>

#define STEP 10.0
#define STREAM_END 1920.0 /* 1800 s of content + 2 × 60 s of ads */

static const snapback_break script_breaks[] = {
    {.id = "b1", .start = 600, .duration = 60},
    {.id = "b2", .start = 1200, .duration = 60},
};

struct player_args {
    const char *content_id;
    const char *profile; /* NULL: the default profile */
    bool b1_watched;
};

/* 0: run; 1: exit 0 (--help); 2: exit 2 (a bad argument, told on stderr). */
static int player_parse_args(const char *name, int argc, char **argv, struct player_args *a) {
    a->content_id = "example-content";
    a->profile = NULL;
    a->b1_watched = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--content-id") && i + 1 < argc) {
            a->content_id = argv[++i];
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            a->profile = argv[++i];
        } else if (!strcmp(argv[i], "--b1-watched")) {
            a->b1_watched = true;
        } else {
            bool help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fprintf(help ? stdout : stderr,
                    "usage: SNAPBACK_SOCKET=/path/to/snapbackd.sock %s [--content-id ID] [--profile NAME] [--b1-watched]\n"
                    "Plays a scripted 30-minute stream with breaks b1 (600 s) and b2 (1200 s); the viewer seeks\n"
                    "300 -> 900 over b1. Exits 0 when the story went as scripted.\n"
                    "  --content-id ID  the session's content id (default example-content)\n"
                    "  --profile NAME   the viewer profile (default: the default profile)\n"
                    "  --b1-watched     b1 of this content was watched before: the seek must not snap back\n"
                    "                   (without it the seek must snap back to 600 and return to 900)\n",
                    name);
            if (!help) fprintf(stderr, "%s: bad argument '%s'\n", name, argv[i]);
            return help ? 1 : 2;
        }
    }
    return 0;
}

struct player {
    snapback_client *client;
    snapback_session *session;
    double position;
    int in_break; /* index + 1 of the break playing, 0 for none */
    bool viewer_seeked, in_flight, closing, done;
    bool snapped_back, returned, played_b2;
    bool b1_watched; /* the story expected: b1 watched before, no snapback */
    int failures;
};

static void on_reply(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    struct player *p = user;
    p->in_flight = false;
    if (r->status != SNAPBACK_OK) {
        fprintf(stderr, "player: call 0x%04x failed: %s (%s)\n", r->method, snapback_strerror(r->status), r->message);
        p->failures++;
        p->done = true;
        return;
    }
    if (r->method == 0x0100) printf("player: session %llu open\n", (unsigned long long)r->u.opened.session_id);
    if (p->closing) {
        printf("player: session closed\n");
        p->session = NULL;
        p->done = true;
    }
}

static void on_push(snapback_client *c, snapback_session *s, const snapback_push *push, void *user) {
    (void)c;
    (void)s;
    struct player *p = user;
    switch (push->kind) {
    case SNAPBACK_PUSH_SEEK:
        /* Obey at once: the daemon holds the session at the target already. */
        printf("player: seek to %.0f (%s)\n", push->u.seek.stream_time, push->reason);
        if (push->u.seek.reason == SNAPBACK_SEEK_SNAPBACK && push->u.seek.stream_time == 600) p->snapped_back = true;
        if (push->u.seek.reason == SNAPBACK_SEEK_RESUME_AFTER_SNAPBACK && push->u.seek.stream_time == 900)
            p->returned = true;
        p->position = push->u.seek.stream_time;
        p->in_break = 0;
        break;
    case SNAPBACK_PUSH_BREAK_WATCHED: printf("player: break %s watched\n", push->u.break_watched.break_id); break;
    case SNAPBACK_PUSH_BREAK_SKIPPED: /* informational: nothing to do */
        printf("player: break %s skipped (%s)\n", push->u.break_skipped.break_id,
               snapback_skip_reason_name(push->u.break_skipped.reason));
        break;
    case SNAPBACK_PUSH_BOOKMARK_SAVED:
        printf("player: bookmark at content %.0f\n", push->u.bookmark_saved.content_time);
        break;
    default: printf("player: push kind %d (%s)\n", push->kind, push->reason); break;
    }
}

static void on_connection(snapback_client *c, snapback_connection_event ev, int status, const char *msg, void *user) {
    (void)c;
    (void)user;
    printf("player: %s %s\n", ev == SNAPBACK_CONNECTED ? "connected" : "disconnected:",
           ev == SNAPBACK_CONNECTED ? "" : msg);
    (void)status;
}

static int player_start(struct player *p, const struct player_args *a) {
    memset(p, 0, sizeof *p);
    p->b1_watched = a->b1_watched;
    snapback_options o;
    memset(&o, 0, sizeof o); /* socket: $SNAPBACK_SOCKET, else the system's */
    o.client_name = "example-player";
    o.callbacks.on_push = on_push;
    o.callbacks.on_connection = on_connection;
    o.callbacks.user_data = p;
    p->client = snapback_client_new(&o);
    if (!p->client) return SNAPBACK_E_NO_MEMORY;
    int rc = snapback_client_connect(p->client);
    if (rc != SNAPBACK_OK) return rc;
    snapback_session_params sp;
    memset(&sp, 0, sizeof sp);
    sp.stream_id = "example-stream";
    sp.content_id = a->content_id;
    sp.profile = a->profile;
    sp.breaks = script_breaks;
    sp.n_breaks = 2;
    sp.has_content_duration = true;
    sp.content_duration = 1800;
    p->in_flight = true;
    return snapback_session_open(p->client, &sp, on_reply, p, &p->session);
}

/* One step of the script: at most one event. */
static void player_tick(struct player *p) {
    if (p->done || p->in_flight || !p->session) return;
    int rc;
    p->in_flight = true;
    const snapback_break *b = p->in_break ? &script_breaks[p->in_break - 1] : NULL;
    int entering = 0;
    for (int i = 0; i < 2; i++)
        if (!p->in_break && p->position >= script_breaks[i].start &&
            p->position < script_breaks[i].start + script_breaks[i].duration)
            entering = i + 1;
    if (entering) {
        p->in_break = entering;
        if (entering == 2) p->played_b2 = true;
        printf("player: ad break %s starts at %.0f\n", script_breaks[entering - 1].id, p->position);
        /* With the position: the daemon takes it as a playhead report, no separate one needed. */
        rc = snapback_ad_break_started_at(p->session, script_breaks[entering - 1].id, p->position, on_reply, p);
    } else if (b && p->position >= b->start + b->duration) {
        p->in_break = 0;
        printf("player: ad break %s ends\n", b->id);
        rc = snapback_ad_break_ended_at(p->session, b->id, p->position, on_reply, p);
    } else if (!p->viewer_seeked && p->position >= 300) {
        p->viewer_seeked = true;
        printf("player: the viewer seeks 300 → 900\n");
        p->position = 900;
        rc = snapback_seek_ended(p->session, 300, 900, on_reply, p);
    } else if (p->position >= STREAM_END) {
        p->closing = true;
        rc = snapback_session_close(p->session, on_reply, p);
    } else {
        rc = snapback_report_playhead(p->session, p->position, 1, true, on_reply, p);
        p->position += STEP;
    }
    if (rc != SNAPBACK_OK) {
        fprintf(stderr, "player: %s\n", snapback_strerror(rc));
        p->failures++;
        p->done = true;
    }
}

/* 0 when the story went as scripted. */
static int player_finish(struct player *p) {
    bool story = p->b1_watched ? !p->snapped_back && !p->returned : p->snapped_back && p->returned;
    int ok = p->failures == 0 && story && p->played_b2 && p->done;
    printf("player: %s (b1 %s, snapback %s, return %s, b2 %s)\n", ok ? "done" : "FAILED",
           p->b1_watched ? "watched before" : "unwatched", p->snapped_back ? "yes" : "no", p->returned ? "yes" : "no",
           p->played_b2 ? "played" : "not played");
    snapback_client_free(p->client);
    return ok ? 0 : 1;
}

#endif
