/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin's state and its state machine (session.c): the file mpv plays, its session with snapbackd,
 * and mpv's playback as the plugin follows it. plugin.c (mpv's loop, events, options and the file's
 * breaks) calls the functions below; session.c drives libsnapback and asks mpv through mpvio.h only,
 * never back into plugin.c. */
#ifndef SNAPBACK_MPV_SESSION_H
#define SNAPBACK_MPV_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <snapback/cues.h>
#include <snapback/snapback.h>

#include "media.h"
#include "mpvio.h"
#include "refresh.h"

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
    char *vmap; /* snapback-vmap: a VMAP's path or URL, the file's ad rules */
    bool resume;
    int open_timeout_ms;
    /* snapback-cues-refresh-interval: seconds between a live manifest's refreshes, 0 = none; unset: what
     * the manifest says (snapback_cues_refresh_interval). */
    bool has_refresh_interval;
    double refresh_interval;
};

/* The file under snapback: its ids and breaks, read by plugin.c when mpv has opened it. */
struct file {
    char *path, *content_id, *stream_id;
    double duration;
    sbm_breaks breaks;
    bool live;               /* a live manifest: the session is live */
    const char *breaks_from; /* "chapters", "sidecar", "manifest", "VMAP" or "none", for the log */
    /* The breaks came from the stream's manifest: its reader, kept across a live one's refreshes so that
     * each refresh's changes are computed; the session is opened and updated from it. Or from a VMAP:
     * the session is an ad-rules one (client-side breaks, PlayBreak). NULL otherwise. */
    snapback_cues *cues;
    struct sbm_refresher *refresher; /* a live manifest's, while it is refreshed */
};

/* The session of the file mpv plays. The handle of a live session is the library's until CloseSession
 * (or a failed open) gives it back. */
enum session_kind {
    SESSION_NONE,    /* no file, or a file not under snapback */
    SESSION_AWAY,    /* a file under snapback without a session (the daemon was away): opened once the
                      * library reconnects or playback restarts */
    SESSION_HELD,    /* opening, the file's start held (mpv's on_preloaded hook) until it is open */
    SESSION_OPENING, /* opening, the file playing (the hold timed out, or opened after the start) */
    SESSION_OPEN,    /* the daemon holds it */
};
/* What every live session (held, opening or open) has. */
struct live_session {
    snapback_session *handle;
    bool completed; /* ContentComplete sent (once; no final playhead at the close then) */
    /* The manifest's breaks changed while the session was opening: UpdateBreaks once it is open. */
    bool breaks_changed;
};
struct session {
    enum session_kind kind;
    union {
        struct {
            struct live_session live;
            uint64_t hook_id, deadline_ms; /* the hook, and when it is let go anyway */
        } held;
        struct live_session opening;
        struct live_session open;
    } u;
};

/* What mpv's playback is doing, as its events tell. */
enum motion_kind {
    MOTION_NOT_STARTED, /* the file has not played yet (its first playback-restart is to come) */
    MOTION_STEADY,      /* playing or paused where mpv says */
    MOTION_SEEKING,     /* the viewer seeks; reported as SeekEnded when playback restarts */
    MOTION_OWN_SEEK,    /* a seek the daemon commanded is under way (not the viewer's: not reported) */
};
/* Where the viewer's seek began: mpv's position then, when it had one. */
struct seek_origin {
    bool known;
    double from;
};
struct motion {
    enum motion_kind kind;
    union {
        struct seek_origin seeking;
        struct {
            double target;
            enum motion_kind before;           /* back to it if mpv refuses the seek */
            struct seek_origin before_seeking; /* with the viewer's seek it overrode (before SEEKING) */
        } own_seek;
    } u;
};

/* The break of an ad-rules session (a VMAP's) the daemon asked to play (PlayBreak). mpv has no ad
 * player: the content is held paused for the break's length (its inline VAST durations, else AdRules'
 * default of 30 s), the OSD saying so, between AdBreakStarted and AdBreakEnded; the daemon's seek
 * push then says where the content goes on (the target of the seek that went over it). */
#define AD_BREAK_DEFAULT_SECONDS 30
struct client_break {
    bool playing;
    char id[64]; /* the daemon's generated ids: preroll, midroll-T, postroll */
    uint64_t until_ms;
    bool was_paused; /* mpv's pause before the break, restored after it */
};

struct plugin {
    struct sbmpv_mpv mpv;
    int wake_fd; /* eventfd written by mpv's wakeup callback */
    snapback_client *client;
    struct options opt;
    struct file file; /* meaningful unless session.kind is SESSION_NONE */
    struct session session;
    struct motion motion;
    /* mpv's properties as it last reported them. */
    bool have_pos, paused;
    double pos, speed;
    uint64_t last_report_ms;
    double last_report_pos;
    /* Sessions of files that ended whose answer (the open's, then the close's) has not come yet: quit
     * waits for them, bounded. */
    unsigned retiring;
    struct client_break ad;
};

snapback_client *sbmpv_client_new(struct plugin *p, const char *socket_path);

/* mpv has opened the file (on_preloaded hook `hook_id`, held) and p->file is read: the session opens,
 * with the bookmark if `resume`, and the hook is held until it is open (or let go at once when no
 * session could be asked for). */
void sbmpv_file_preloaded(struct plugin *p, uint64_t hook_id, bool resume);
/* The file ended (`eof`: played to its end): ContentComplete then, and the session closes, with mpv's
 * last position unless at the end. The state is SESSION_NONE after it; p->file is plugin.c's to free. */
void sbmpv_file_ended(struct plugin *p, bool eof);
/* mpv quits: the session closes with mpv's last position. Then p->retiring counts what to wait for. */
void sbmpv_quit(struct plugin *p);
/* Milliseconds until a held start must be let go, -1 when none is held; one that is due is let go
 * here (logged), and -1 returned. */
int sbmpv_hold_timeout_ms(struct plugin *p);
/* Milliseconds until a client-side break being played ends, -1 when none plays; one that is due ends
 * here (AdBreakEnded), and -1 returned. */
int sbmpv_ad_timeout_ms(struct plugin *p);

/* mpv's events. */
void sbmpv_seek_event(struct plugin *p);
/* Playback (re)started after the file's start or a seek; `pos` is time-pos, when mpv has one. */
void sbmpv_playback_restart(struct plugin *p, bool have_pos, double pos);
void sbmpv_position_changed(struct plugin *p, double pos);
void sbmpv_pause_changed(struct plugin *p, bool paused);
void sbmpv_speed_changed(struct plugin *p, double speed);
/* A live manifest's refresh changed p->file.cues (and p->file.breaks): UpdateBreaks, now if the session
 * is open, else once it is (a session opened later takes the breaks as they are then). */
void sbmpv_breaks_changed(struct plugin *p);
/* The content ended (eof-reached with --keep-open, or the file's end). */
void sbmpv_content_complete(struct plugin *p);
/* mpv refused the seek the plugin asked for (SBMPV_REPLY_SEEK's error). */
void sbmpv_seek_refused(struct plugin *p, int error);

#endif
