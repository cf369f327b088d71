/* The mpv plugin's state, shared by its two halves: plugin.c (mpv's side: the loop, mpv's events and
 * properties, commands) and session.c (snapbackd's side: opening the session, reports, pushes). */
#ifndef SNAPBACK_MPV_PLUGIN_H
#define SNAPBACK_MPV_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include <mpv/client.h>
#include <snapback/snapback.h>

#include "media.h"

/* Playhead reports while playing: at most every REPORT_MS of wall time, and at once when the position
 * crosses a break's start or end (so the return after a break is not late by a report interval). */
#define REPORT_MS 250
/* How long the on_preloaded hook holds a file's start for the session's opening (and its resume
 * seek) before playing anyway: a daemon that is slow or away never holds playback longer. */
#define DEFAULT_OPEN_TIMEOUT_MS 1500
/* An own seek counts as carried out when mpv lands this close to its target (exact seeks land on
 * it; a seek of the viewer that overrode ours lands elsewhere). */
#define OWN_SEEK_TOLERANCE 1.0
/* At quit: how long the plugin drives the connection for the session's close (its final bookmark). */
#define CLOSE_FLUSH_MS 1500

struct options {
    char *content_id, *profile, *preset, *sidecar, *ad_chapters;
    bool resume, verbose;
    int open_timeout_ms;
};

struct plugin {
    mpv_handle *mpv;
    int wake_fd; /* eventfd written by mpv's wakeup callback */
    snapback_client *client;
    struct options opt;

    /* The file. */
    bool file_loaded; /* its breaks and ids are known (from on_preloaded) */
    char *path, *content_id, *stream_id;
    double duration;
    sbm_breaks breaks;
    const char *breaks_from; /* "chapters", "sidecar" or "none", for the log */

    /* The session: NULL when none; `open` once the daemon answered the open. */
    snapback_session *session;
    bool open, closing, completed;
    snapback_session *orphan; /* a session whose file ended before it was open */
    bool close_pending;       /* a CloseSession not answered yet (quit waits for it, bounded) */
    uint64_t hook_id;
    bool hook_held;
    uint64_t hook_deadline_ms;

    /* Playback as mpv reported it. */
    bool have_pos, paused, seeking, started;
    double pos, speed;
    bool have_seek_from;
    double seek_from;
    bool own_seek; /* a seek the daemon commanded is under way */
    double own_target;
    uint64_t last_report_ms;
    double last_report_pos;
};

uint64_t sbmpv_now_ms(void);
void sbmpv_log(struct plugin *p, bool verbose_only, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* plugin.c: what the session side asks of mpv. */
void sbmpv_seek(struct plugin *p, double stream_time);
void sbmpv_osd(struct plugin *p, const char *text, int ms);
void sbmpv_continue_hook(struct plugin *p);

/* session.c */
snapback_client *sbmpv_client_new(struct plugin *p, const char *socket_path);
void sbmpv_open_session(struct plugin *p, bool resume);
/* The position as it stands (playing or paused): a ReportPlayhead, or a Pause when paused. */
void sbmpv_report_state(struct plugin *p);
/* A time-pos change while playing: reported when due. */
void sbmpv_position_changed(struct plugin *p);
void sbmpv_seek_ended(struct plugin *p, double from, double to);
void sbmpv_content_complete(struct plugin *p);
void sbmpv_close_session(struct plugin *p, bool final_report);

#endif
