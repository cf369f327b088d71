/* SPDX-License-Identifier: Apache-2.0 */
/* libsnapback: the C client library of snapbackd, the ad-timeline daemon of the set-top box.
 *
 * A player links it (`pkg-config --cflags --libs libsnapback`) to talk to snapbackd over its Unix
 * socket: say Hello, open a session per stream with its ad breaks, report what the player does, and
 * obey what the daemon pushes back ("seek to 600: snapback").
 *
 * The library never blocks and never starts a thread. The player's own main loop (GLib, libuv, poll,
 * epoll) drives it:
 *
 *     for (;;) {
 *         struct pollfd p = { snapback_client_fd(c), snapback_client_events(c), 0 };
 *         poll(&p, p.fd >= 0 ? 1 : 0, snapback_client_next_timeout_ms(c));
 *         snapback_client_dispatch(c, p.revents);   // reads, writes, timers, callbacks
 *     }
 *
 * The descriptor, the events it wants (POLLIN always; POLLOUT while output is queued) and the timeout
 * can change after any call into the library: read all three again before each wait. While the
 * daemon is away the descriptor is -1 and the timeout says when the library wants to reconnect.
 *
 * Requests are queued and their replies delivered to a per-call callback (snapback_reply_cb) from
 * snapback_client_dispatch(), never from the call that queued them. Pushes (seek commands and the
 * rest) go to the client's on_push callback, in the daemon's order; the pushes an event causes are
 * delivered before that event's reply.
 *
 * Reconnection: when the daemon goes away (restart, upgrade), every call in flight completes with
 * SNAPBACK_E_DISCONNECTED, on_connection reports it, and the library reconnects with exponential
 * backoff, says Hello again and reopens every open session with its breaks (those the daemon said were
 * watched marked so), its policy and its last known position (sent as stream time: the daemon resumes
 * at its content time in those breaks, by its own rule). Session handles stay valid; the player is
 * told through on_session_restored but need not act.
 *
 * Threads: no global state. A client and its sessions may be used from one thread at a time (one
 * client per thread, or the caller's own lock); distinct clients are independent.
 *
 * Strings and arrays passed to the library are copied; those it passes to callbacks are valid only
 * while the callback runs.
 */
#ifndef SNAPBACK_SNAPBACK_H
#define SNAPBACK_SNAPBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SNAPBACK_API __attribute__((visibility("default")))
#else
#define SNAPBACK_API
#endif

/* The socket used when neither the options nor $SNAPBACK_SOCKET name one (snapbackd.socket's). */
#define SNAPBACK_DEFAULT_SOCKET "/run/snapback/snapbackd.sock"

/* ---------------------------------------------------------------------------------------------- */
/* Status codes                                                                                    */

/* 0 and the positive values are the daemon's (gRPC) status codes, as PROTOCOL.md lists them; the
 * negative values are the library's own. */
typedef enum snapback_status {
    SNAPBACK_OK = 0,
    SNAPBACK_CANCELLED = 1,
    SNAPBACK_UNKNOWN = 2,
    SNAPBACK_INVALID_ARGUMENT = 3,
    SNAPBACK_DEADLINE_EXCEEDED = 4,
    SNAPBACK_NOT_FOUND = 5,
    SNAPBACK_ALREADY_EXISTS = 6,
    SNAPBACK_PERMISSION_DENIED = 7,
    SNAPBACK_RESOURCE_EXHAUSTED = 8,
    SNAPBACK_FAILED_PRECONDITION = 9,
    SNAPBACK_ABORTED = 10,
    SNAPBACK_OUT_OF_RANGE = 11,
    SNAPBACK_UNIMPLEMENTED = 12,
    SNAPBACK_INTERNAL = 13,
    SNAPBACK_UNAVAILABLE = 14,
    SNAPBACK_DATA_LOSS = 15,
    SNAPBACK_UNAUTHENTICATED = 16,

    /* Not connected to the daemon (it went away, or is not reachable yet); the call was not made. */
    SNAPBACK_E_DISCONNECTED = -1,
    /* The output queue is at its bound (snapback_options.max_queue_bytes); nothing was queued. */
    SNAPBACK_E_QUEUE_FULL = -2,
    /* Out of memory. */
    SNAPBACK_E_NO_MEMORY = -3,
    /* A bad argument: NULL where a value is needed, a session that is closing, a path too long. */
    SNAPBACK_E_INVALID = -4,
    /* The daemon sent something this library cannot read (a bad frame or reply); the connection is
     * dropped and re-established. */
    SNAPBACK_E_PROTOCOL = -5,
    /* The call was pending when the client was freed. */
    SNAPBACK_E_CLIENT_CLOSED = -6,
    /* snapback_client_wait() reached its deadline. */
    SNAPBACK_E_TIMEOUT = -7,
    /* A system call failed; the message names it and errno's text. */
    SNAPBACK_E_SYSTEM = -8,
} snapback_status;

/* A constant English name and description of a status, e.g. "NOT_FOUND: not found". Never NULL. */
SNAPBACK_API const char *snapback_strerror(int status);

/* ---------------------------------------------------------------------------------------------- */
/* Values of the protocol (the .proto files under proto/snapback/v1); enum values equal the wire's.  */

typedef enum snapback_session_kind {
    SNAPBACK_SESSION_ON_DEMAND = 1, /* 0 reads as on-demand too */
    SNAPBACK_SESSION_LIVE = 2,
} snapback_session_kind;

typedef enum snapback_seek_reason {
    SNAPBACK_SEEK_UNSPECIFIED = 0, /* also any reason newer than this library: still seek */
    SNAPBACK_SEEK_SNAPBACK = 1,
    SNAPBACK_SEEK_RESUME_AFTER_SNAPBACK = 2,
    SNAPBACK_SEEK_RESUME_FROM_BOOKMARK = 3,
    SNAPBACK_SEEK_BREAK_BEFORE_RESUME = 4,
    SNAPBACK_SEEK_SKIP_WATCHED_BREAK = 5,
    SNAPBACK_SEEK_SKIP_DURING_COOLDOWN = 6,
    SNAPBACK_SEEK_SKIP_DISABLED_BREAK = 7,
    SNAPBACK_SEEK_START_OF_BREAK = 8,
    SNAPBACK_SEEK_SEEK_REFUSED_DURING_AD = 9,
} snapback_seek_reason;

typedef enum snapback_bookmark_trigger {
    SNAPBACK_BOOKMARK_UNSPECIFIED = 0,
    SNAPBACK_BOOKMARK_PAUSED = 1,
    SNAPBACK_BOOKMARK_CLOSED = 2,
    SNAPBACK_BOOKMARK_DISCONNECTED = 3,
    SNAPBACK_BOOKMARK_SEEK = 4,
    SNAPBACK_BOOKMARK_PERIODIC = 5,
    SNAPBACK_BOOKMARK_SNAPBACK_RETURN = 6,
} snapback_bookmark_trigger;

/* Why a break was not played where the viewer met it (BreakSkipReason; the BreakSkipped push and the
 * session state's break_states). A reason newer than this library reads as SNAPBACK_SKIP_UNSPECIFIED. */
typedef enum snapback_skip_reason {
    SNAPBACK_SKIP_UNSPECIFIED = 0,  /* in a break state: never skipped */
    SNAPBACK_SKIP_TRICK_PLAY = 1,   /* trick play went over it; another break, or none, plays instead */
    SNAPBACK_SKIP_RESUME_PLAN = 2,  /* a resume from a bookmark went past it (it is exempt from then on) */
    SNAPBACK_SKIP_COOLDOWN = 3,     /* reached during the cooldown after a break */
    SNAPBACK_SKIP_EXEMPT = 4,       /* a seek went over it unwatched, and it is exempt */
    SNAPBACK_SKIP_WATCHED = 5,      /* reached while watched, under a policy that skips watched breaks */
    SNAPBACK_SKIP_DISABLED = 6,     /* disabled for this session (pre-roll or mid-rolls disabled) */
} snapback_skip_reason;

/* Where a break sits in the content (BreakPosition). A position newer than this library reads as
 * SNAPBACK_POSITION_UNSPECIFIED. */
typedef enum snapback_break_position {
    SNAPBACK_POSITION_UNSPECIFIED = 0,
    SNAPBACK_POSITION_PREROLL = 1,  /* at content time 0 */
    SNAPBACK_POSITION_MIDROLL = 2,
    SNAPBACK_POSITION_POSTROLL = 3, /* at the content's end (ad rules: their post-roll) */
} snapback_break_position;

/* Constant names as the daemon's logs and the CLI print them: "trick-play", "resume-plan", "cooldown",
 * "exempt", "watched", "disabled" ("unspecified" for 0 and any other value); "preroll", "midroll",
 * "postroll" ("unspecified"). Never NULL. */
SNAPBACK_API const char *snapback_skip_reason_name(snapback_skip_reason reason);
SNAPBACK_API const char *snapback_break_position_name(snapback_break_position position);

typedef enum snapback_session_phase {
    SNAPBACK_PHASE_UNSPECIFIED = 0,
    SNAPBACK_PHASE_CONTENT = 1,
    SNAPBACK_PHASE_IN_BREAK = 2,
    SNAPBACK_PHASE_SEEKING = 3,
    SNAPBACK_PHASE_TRICK_PLAY = 4,
    SNAPBACK_PHASE_FINISHED = 5,
    SNAPBACK_PHASE_CLOSED = 6,
} snapback_session_phase;

/* One ad break (AdBreak). Times in seconds. */
typedef struct snapback_break {
    const char *id;             /* non-empty, unique within the session */
    double start;               /* stream time (ad-rules sessions: content time) */
    double duration;            /* seconds of stream time, its ads included */
    const double *ad_durations; /* per ad, in play order; NULL/0 when unknown */
    size_t n_ad_durations;
    bool watched;
    /* Seconds of content the break replaces (AdBreak.content_resume_offset), 0 to 1e8: above duration the
     * break cuts more content than it lasts. Counts only with has_content_resume_offset set. Unset:
     * inserted on demand, replacing (duration) live. */
    bool has_content_resume_offset;
    double content_resume_offset;
} snapback_break;

/* PolicyOverrides. An enum field left 0 keeps the preset's value (see docs/policy.md for each value:
 * they are the wire's, e.g. resume_breaks 1 = NONE); a scalar counts only with its has_ flag set.
 * PolicyOverrides.trick_play_skipped_breaks is not here (a field added to this struct, which the player
 * fills, would change the soname): it follows the preset (every-passed under "tvsdk"). */
typedef struct snapback_policy_overrides {
    int skipped_break_choice;       /* 1 LAST_UNWATCHED, 2 NEAREST_ONLY, 3 FIRST */
    int seek_gate;                  /* 1 CROSSED_BREAKS, 2 ALL_BREAKS_BEFORE_TARGET */
    int return_to_target;           /* 1 IF_BEYOND_BREAK, 2 ALWAYS, 3 NEVER */
    int landing_in_unwatched_break; /* 1 BREAK_START, 2 AD_START */
    int watched_when;               /* 1 ON_BEGIN, 2 ON_END, 3 NEVER */
    int watched_break_on_playback;  /* 1 REPLAY, 2 SKIP */
    int resume_breaks;              /* 1 NONE, 2 PREROLL, 3 LAST_BEFORE, 4 PREROLL_AND_LAST_BEFORE */
    bool has_enforce_backward_seeks, enforce_backward_seeks;
    bool has_skip_watched_break_on_landing, skip_watched_break_on_landing;
    bool has_refuse_seeks_during_unwatched_break, refuse_seeks_during_unwatched_break;
    bool has_snapback_landing_offset;
    double snapback_landing_offset;
    bool has_cooldown;
    double cooldown;
    bool has_trick_play_as_seek, trick_play_as_seek;
    bool has_preroll_disabled, preroll_disabled;
    bool has_midrolls_disabled, midrolls_disabled;
    bool has_live_snapback, live_snapback;
    bool has_live_bookmarks, live_bookmarks;
    bool has_max_snapbacks_per_break;
    uint32_t max_snapbacks_per_break;
    bool has_coverage_tolerance;
    double coverage_tolerance;
    bool has_bookmark_interval;
    double bookmark_interval;
    bool has_finished_margin;
    double finished_margin;
} snapback_policy_overrides;

/* ResumeOptions: where an opening session starts. */
typedef struct snapback_resume {
    bool use_bookmark; /* resume from the daemon's bookmark of (profile, content_id), if any */
    bool has_resume_content_time;
    double resume_content_time; /* wins over use_bookmark */
} snapback_resume;

/* AdRules: client-side ads (PlayBreak pushes). */
typedef struct snapback_ad_rules {
    bool preroll;
    const double *midroll_times;
    size_t n_midroll_times;
    double midroll_every; /* 0 = none */
    bool postroll;
    bool has_break_duration;
    double break_duration; /* absent = 30 */
} snapback_ad_rules;

/* OpenSessionRequest. Zero-initialise, then set what applies. */
typedef struct snapback_session_params {
    const char *stream_id;  /* NULL = "" */
    const char *content_id; /* NULL = "" */
    const char *profile;    /* NULL = the default profile */
    snapback_session_kind kind;
    const snapback_break *breaks;
    size_t n_breaks;
    bool has_content_duration;
    double content_duration;
    const char *policy_preset;                   /* NULL or "" = the daemon's default */
    const snapback_policy_overrides *overrides;  /* NULL = none */
    const snapback_resume *resume;               /* NULL = from the start, no bookmark */
    const snapback_ad_rules *ad_rules;           /* NULL = stitched stream */
} snapback_session_params;

/* HelloReply, kept by the client once the Hello exchange succeeded. */
typedef struct snapback_hello {
    uint32_t protocol_version;
    const char *server_name;
    const char *server_version;
    uint32_t max_frame_size;
    uint64_t max_outbound_queue_bytes;
    const char *const *policy_presets;
    size_t n_policy_presets;
    const char *default_policy_preset;
    uint32_t max_breaks_per_session;
} snapback_hello;

typedef struct snapback_bookmark {
    const char *content_id;
    const char *profile;
    double content_time; /* ads excluded */
    double stream_time;
    const char *stream_id;
    double updated_at; /* unix seconds */
    bool finished;
} snapback_bookmark;

/* ---------------------------------------------------------------------------------------------- */
/* Client and sessions                                                                              */

typedef struct snapback_client snapback_client;
typedef struct snapback_session snapback_session;

typedef enum snapback_push_kind {
    /* A kind newer than this library: only seq and reason are set. A player compiled against an older
     * header may also receive a value it has no name for (a kind this library added since): it treats
     * it like SNAPBACK_PUSH_UNKNOWN. */
    SNAPBACK_PUSH_UNKNOWN = 0,
    SNAPBACK_PUSH_SEEK = 4,
    SNAPBACK_PUSH_BREAK_WATCHED = 5,
    SNAPBACK_PUSH_BOOKMARK_SAVED = 6,
    SNAPBACK_PUSH_BOOKMARK_CLEARED = 7,
    SNAPBACK_PUSH_PLAY_BREAK = 8,
    SNAPBACK_PUSH_ALL_ADS_COMPLETED = 9,
    SNAPBACK_PUSH_SESSION_ERROR = 10,
    /* A break was not played where the viewer met it, and why; sent before the seek (if any) that
     * skips it. Informational: the player need not act (TVSDK's AD_BREAK_SKIPPED). Since 0.2.0. */
    SNAPBACK_PUSH_BREAK_SKIPPED = 11,
} snapback_push_kind;

/* A Push: what the daemon sends a session unasked. */
typedef struct snapback_push {
    snapback_push_kind kind;
    uint64_t seq;       /* 1, 2, 3, ... per daemon session; starts again at 1 after a reopen */
    const char *reason; /* for logs: "seek 300→900 skipped unwatched break b1 at 600" */
    union {
        struct { double stream_time; snapback_seek_reason reason; } seek;            /* SEEK: do it */
        struct { const char *break_id; } break_watched;                             /* BREAK_WATCHED */
        struct { double content_time, stream_time; snapback_bookmark_trigger trigger; } bookmark_saved;
        struct { const char *break_id; } play_break;                                /* PLAY_BREAK */
        struct { int code; const char *message; } session_error;                    /* SESSION_ERROR */
        struct { const char *break_id; snapback_skip_reason reason; } break_skipped; /* BREAK_SKIPPED */
    } u;
} snapback_push;

typedef enum snapback_connection_event {
    /* Connected and the Hello exchange succeeded (snapback_client_hello() is set). */
    SNAPBACK_CONNECTED = 1,
    /* The connection went away (or the daemon refused it); status and message say why. Every call
     * in flight has had its callback (SNAPBACK_E_DISCONNECTED, or the refusal's status). If
     * reconnecting is on, the library tries again when snapback_client_next_timeout_ms() says; failed
     * attempts are not reported one by one, the next SNAPBACK_CONNECTED is. */
    SNAPBACK_DISCONNECTED = 2,
} snapback_connection_event;

typedef struct snapback_callbacks {
    /* A push for `session`. */
    void (*on_push)(snapback_client *client, snapback_session *session, const snapback_push *push,
                    void *user_data);
    /* Connection state changes. The descriptor changes with them. */
    void (*on_connection)(snapback_client *client, snapback_connection_event event, int status,
                          const char *message, void *user_data);
    /* After a reconnect: `session` was reopened (status SNAPBACK_OK; start_stream_time is where the
     * daemon placed it) or could not be (then the handle is still valid but its calls fail with
     * SNAPBACK_E_DISCONNECTED until the next reconnect retries it). The reopen resumes at the content
     * time of the last position (snapback_session_position) with no break played before it, so
     * start_stream_time is that position, except inside an ad break, where it is the break's end. What
     * the daemon held only in memory (a pending return after a snapback, trick play) is not restored;
     * watched breaks and the break list are. The reopen's own pushes are not delivered (its resume
     * seek, and a BreakSkipped with SNAPBACK_SKIP_RESUME_PLAN for each unwatched break before the
     * position);
     * the session state then shows the unwatched breaks before the position as exempt. */
    void (*on_session_restored)(snapback_client *client, snapback_session *session, int status,
                                const char *message, double start_stream_time, void *user_data);
    void *user_data;
} snapback_callbacks;

typedef struct snapback_options {
    /* NULL: $SNAPBACK_SOCKET if set and non-empty, else SNAPBACK_DEFAULT_SOCKET. */
    const char *socket_path;
    /* Sent in Hello, for the daemon's logs. NULL = "libsnapback". */
    const char *client_name;
    /* Bound of the bytes queued for the daemon and not yet written (0 = 1 MiB). A call beyond it
     * fails with SNAPBACK_E_QUEUE_FULL. */
    size_t max_queue_bytes;
    /* Reconnection backoff: first delay and ceiling, milliseconds (0 = 100 and 5000). Each failed
     * attempt doubles the delay; a successful Hello resets it. */
    unsigned reconnect_min_ms, reconnect_max_ms;
    /* true: never reconnect (simple tools); the client stays disconnected once the daemon is gone. */
    bool no_reconnect;
    snapback_callbacks callbacks;
} snapback_options;

/* A new client (not yet connected). options may be NULL (defaults, no callbacks); it is copied.
 * NULL when out of memory. */
SNAPBACK_API snapback_client *snapback_client_new(const snapback_options *options);

/* Starts connecting: the Hello exchange is queued and completes in snapback_client_dispatch().
 * SNAPBACK_OK when the socket connected; otherwise the error (SNAPBACK_E_DISCONNECTED with the
 * system's reason) and, if reconnecting is on, the library retries after the backoff. Calls made
 * before the Hello reply are queued behind it. */
SNAPBACK_API int snapback_client_connect(snapback_client *client);

/* Frees the client: closes the connection (the daemon then closes its sessions, saving their
 * bookmarks), calls every pending reply callback with SNAPBACK_E_CLIENT_CLOSED and frees every
 * session handle. Must not be called from one of the client's callbacks. NULL is ignored. */
SNAPBACK_API void snapback_client_free(snapback_client *client);

/* The descriptor to watch, or -1 while not connected. */
SNAPBACK_API int snapback_client_fd(const snapback_client *client);
/* The poll(2) events to watch it for: POLLIN, plus POLLOUT while output is queued. */
SNAPBACK_API short snapback_client_events(const snapback_client *client);
/* Milliseconds until the library wants snapback_client_dispatch() called even if the descriptor is
 * quiet (a reconnection attempt), 0 for at once, -1 for no timer. */
SNAPBACK_API int snapback_client_next_timeout_ms(const snapback_client *client);
/* Does the work: reads and delivers what arrived (pushes, replies), writes queued output, runs due
 * timers. revents: what poll(2) reported for the descriptor (0 after a timeout). Returns SNAPBACK_OK,
 * or SNAPBACK_E_DISCONNECTED when the connection is down after the call. It reads until the socket is
 * empty, so edge-triggered epoll works too. Callbacks run inside it; they may make any call except
 * snapback_client_dispatch() and snapback_client_wait() (SNAPBACK_E_INVALID) and
 * snapback_client_free(). */
SNAPBACK_API int snapback_client_dispatch(snapback_client *client, short revents);

/* The synchronous convenience for simple tools: runs its own poll(2) on the client until *done is
 * non-zero (a callback sets it) or timeout_ms passed (-1 = no limit). SNAPBACK_OK or
 * SNAPBACK_E_TIMEOUT. Not for a player that has a main loop. */
SNAPBACK_API int snapback_client_wait(snapback_client *client, const int *done, int timeout_ms);

/* The daemon's HelloReply on the current connection; NULL while not connected. */
SNAPBACK_API const snapback_hello *snapback_client_hello(const snapback_client *client);
/* The socket path in use. */
SNAPBACK_API const char *snapback_client_socket_path(const snapback_client *client);
/* Whether the Hello exchange succeeded on the current connection. */
SNAPBACK_API bool snapback_client_is_connected(const snapback_client *client);

/* ---------------------------------------------------------------------------------------------- */
/* Replies                                                                                          */

typedef struct snapback_opened {
    uint64_t session_id; /* the daemon's id (changes after a reopen; the handle does not) */
    bool has_start_stream_time;
    double start_stream_time;
    const char *const *breaks_before_resume;
    size_t n_breaks_before_resume;
    const char *policy_preset;
    bool has_resume_content_time;
    double resume_content_time;
    bool resumed_from_bookmark;
    uint64_t last_push_seq;
} snapback_opened;

typedef struct snapback_break_at_reply {
    bool has_previous, has_next;
    snapback_break previous, next;
} snapback_break_at_reply;

/* One break of a session as the viewer left it (BreakState). */
typedef struct snapback_break_state {
    const char *break_id;
    snapback_break_position position;
    bool watched;                    /* counts as watched (this session, or an earlier one of the content) */
    bool exempt;                     /* later seeks are never held to it (a resume skipped it, or the loop
                                      * guard gave it up) */
    snapback_skip_reason skip_reason; /* why it was last skipped; SNAPBACK_SKIP_UNSPECIFIED = never */
} snapback_break_state;

/* GetSessionState's answer. The library fills it and the player only reads it, so fields are only
 * ever appended (a player built against an older header reads the fields it knows). */
typedef struct snapback_session_state {
    snapback_session_phase phase;
    const char *current_break_id; /* "" when not in a break */
    double stream_time, content_time;
    bool playing;
    double rate;
    bool has_pending_return;
    double pending_return;
    const snapback_break *breaks; /* sorted by start */
    size_t n_breaks;
    bool has_cooldown_until;
    double cooldown_until;
    bool has_last_bookmark_content_time;
    double last_bookmark_content_time;
    /* Since 0.2.0: per break, in the order of `breaks` (n_break_states == n_breaks from a daemon that
     * sends them; 0 from an older daemon). */
    const snapback_break_state *break_states;
    size_t n_break_states;
} snapback_session_state;

typedef struct snapback_status_info {
    double uptime;
    const char *server_version;
    uint32_t protocol_version, connections, sessions;
    uint64_t requests, pushes;
    const char *store_kind, *store_path, *store_error;
    uint64_t store_bookmarks;
} snapback_status_info;

typedef struct snapback_bookmark_page {
    const snapback_bookmark *bookmarks;
    size_t n_bookmarks;
    const char *next_page_token; /* "" on the last page */
} snapback_bookmark_page;

/* What a call's callback receives. When status is not SNAPBACK_OK only status, message, method and
 * session are set. Which member of u is set follows from the call made. */
typedef struct snapback_reply {
    int status;
    const char *message;        /* "" on success */
    unsigned method;            /* the wire method id, e.g. 0x0103 for SeekEnded */
    snapback_session *session;  /* the session called, NULL for client calls or once it was freed */
    union {
        snapback_opened opened;            /* snapback_session_open */
        uint64_t last_push_seq;            /* every event and snapback_session_close */
        double content_time;               /* snapback_content_time_for_stream_time */
        double stream_time;                /* snapback_stream_time_for_content_time */
        snapback_break_at_reply break_at;  /* snapback_break_at */
        snapback_session_state state;      /* snapback_get_session_state */
        snapback_status_info status_info;  /* snapback_get_status */
        snapback_bookmark bookmark;        /* snapback_bookmark_get */
        snapback_bookmark_page list;       /* snapback_bookmark_list */
        bool deleted;                      /* snapback_bookmark_delete */
        uint32_t cleared;                  /* snapback_bookmark_clear: how many were deleted */
    } u;
} snapback_reply;

/* Every call below queues one request and returns SNAPBACK_OK, after which `callback` (may be NULL)
 * is called exactly once from snapback_client_dispatch() (or snapback_client_free()); or it returns
 * an error, and the callback is never called. */
typedef void (*snapback_reply_cb)(snapback_client *client, const snapback_reply *reply, void *user);

/* Opens a session. *out is its handle at once: events may be queued on it before the reply (they
 * are sent when it arrives). When the open fails, the calls queued on it fail with the same status,
 * then the open's callback runs, and the handle is freed after it returns. If the connection drops
 * before the reply, the open fails SNAPBACK_E_DISCONNECTED (it is not retried). */
SNAPBACK_API int snapback_session_open(snapback_client *client, const snapback_session_params *params,
                                       snapback_reply_cb callback, void *user, snapback_session **out);
/* Closes a session (CloseSession; its final bookmark is pushed first). The handle is freed after the
 * callback returns (also when the connection drops first: SNAPBACK_E_DISCONNECTED). If the client is
 * disconnected the handle is freed at once and SNAPBACK_OK returned without a callback: the daemon
 * closed the session when the connection went (saving its bookmark). SNAPBACK_E_INVALID while the
 * session is still opening (wait for the open's callback) or already closing. */
SNAPBACK_API int snapback_session_close(snapback_session *session, snapback_reply_cb callback, void *user);

SNAPBACK_API snapback_client *snapback_session_client(const snapback_session *session);
SNAPBACK_API void snapback_session_set_user_data(snapback_session *session, void *user_data);
SNAPBACK_API void *snapback_session_user_data(const snapback_session *session);
/* The daemon's id for the session now, 0 while it is not open. */
SNAPBACK_API uint64_t snapback_session_id(const snapback_session *session);
/* The last position the library was told or commanded (playhead, pause, seek end, trick-play end,
 * pushed seek): where a reopen after a reconnect resumes. false when there is none yet. */
SNAPBACK_API bool snapback_session_position(const snapback_session *session, double *stream_time);

/* Player events. Each answers EventReply (reply->u.last_push_seq). */
SNAPBACK_API int snapback_report_playhead(snapback_session *s, double stream_time, double rate, bool playing,
                                          snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_seek_started(snapback_session *s, double from_stream_time, snapback_reply_cb cb, void *user);
/* The viewer's own seek only; never one the daemon pushed. */
SNAPBACK_API int snapback_seek_ended(snapback_session *s, double from_stream_time, double to_stream_time,
                                     snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_break_started(snapback_session *s, const char *break_id, snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_break_ended(snapback_session *s, const char *break_id, snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_started(snapback_session *s, const char *break_id, uint32_t index,
                                     snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_ended(snapback_session *s, const char *break_id, uint32_t index,
                                   snapback_reply_cb cb, void *user);
/* The ad events with the player's position (stream_time, seconds of stream time), since 0.2.0: the
 * daemon takes it as a snapback_report_playhead(stream_time, rate 1, playing) made just before the
 * event, so the player need not send one of its own, and the library keeps it as the session's last
 * position (snapback_session_position, where a reopen resumes). The calls above send no position. An
 * ad event that only confirms what the daemon already concluded (an AdBreakEnded after the playhead
 * left the break, a repeated AdBreakStarted) is answered SNAPBACK_OK and has no effect. */
SNAPBACK_API int snapback_ad_break_started_at(snapback_session *s, const char *break_id, double stream_time,
                                              snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_break_ended_at(snapback_session *s, const char *break_id, double stream_time,
                                            snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_started_at(snapback_session *s, const char *break_id, uint32_t index, double stream_time,
                                        snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_ad_ended_at(snapback_session *s, const char *break_id, uint32_t index, double stream_time,
                                      snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_trick_play_started(snapback_session *s, double stream_time, double rate,
                                             snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_trick_play_ended(snapback_session *s, double stream_time, snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_content_complete(snapback_session *s, snapback_reply_cb cb, void *user);
/* Live sessions: the full new break list (kept for a reopen once the daemon accepted it). */
SNAPBACK_API int snapback_update_breaks(snapback_session *s, const snapback_break *breaks, size_t n_breaks,
                                        snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_pause(snapback_session *s, double stream_time, snapback_reply_cb cb, void *user);

/* Session queries. */
SNAPBACK_API int snapback_content_time_for_stream_time(snapback_session *s, double stream_time,
                                                       snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_stream_time_for_content_time(snapback_session *s, double content_time,
                                                       snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_break_at(snapback_session *s, double stream_time, snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_get_session_state(snapback_session *s, snapback_reply_cb cb, void *user);

/* Daemon status (GetStatus). */
SNAPBACK_API int snapback_get_status(snapback_client *c, snapback_reply_cb cb, void *user);

/* Bookmarks, per (profile, content_id); NULL profile = the default profile. */
SNAPBACK_API int snapback_bookmark_get(snapback_client *c, const char *profile, const char *content_id,
                                       snapback_reply_cb cb, void *user);
/* page_size 0 = the daemon's default; page_token NULL or "" = the first page. */
SNAPBACK_API int snapback_bookmark_list(snapback_client *c, const char *profile, uint32_t page_size,
                                        const char *page_token, snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_bookmark_delete(snapback_client *c, const char *profile, const char *content_id,
                                          snapback_reply_cb cb, void *user);
SNAPBACK_API int snapback_bookmark_clear(snapback_client *c, const char *profile, snapback_reply_cb cb, void *user);

#ifdef __cplusplus
}
#endif

#endif
