/* SPDX-License-Identifier: Apache-2.0 */
/* The core: one thread and one libsnapback client for the process, a record per pipeline, the pad
 * probes. See core.h for the design. */
#define _GNU_SOURCE
#include "core.h"

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

#include <gst/mpegts/mpegts.h>
#include <snapback/snapback.h>

#include "json.h"
#include "media.h"
#include "scte.h"

GST_DEBUG_CATEGORY(sbg_debug);

/* Playhead reports while playing: every REPORT_MS, and at every break edge (the core wakes up when
 * the position reaches one). */
#define REPORT_MS 250
/* How long the start is held for the session's opening before playing anyway. */
#define DEFAULT_OPEN_TIMEOUT_MS 1500
/* A seek the daemon pushes while the viewer's own seek is still being carried out waits for it (the
 * viewer's SEEK may reach the demuxer again through another sink, with its seqnum), at most this. */
#define SETTLE_MS 1000
/* At most this many of the core's own seqnums are remembered per pipeline (a seek's echoes arrive
 * within milliseconds; a handful in flight at once is already many). */
#define OWN_SEQNUMS 16
/* At exit: how long the thread drives the connection for the sessions' closes (their bookmarks). */
#define CLOSE_FLUSH_MS 1500

/* ---------------------------------------------------------------------------------------------- */
/* Options                                                                                          */

struct options {
    char *socket, *content_id, *profile, *preset, *sidecar, *ad_chapters;
    gboolean resume, verbose;
    int open_timeout_ms;
};

static GMutex options_lock;
static struct options opts = {.resume = TRUE, .open_timeout_ms = DEFAULT_OPEN_TIMEOUT_MS};
static gboolean options_from_env_done;

static gboolean yes(const char *v) {
    return !g_ascii_strcasecmp(v, "yes") || !g_ascii_strcasecmp(v, "true") || !strcmp(v, "1");
}

static gboolean set_option(const char *key, const char *value, char **error) {
    char **slot = !strcmp(key, "socket")        ? &opts.socket
                : !strcmp(key, "content-id")    ? &opts.content_id
                : !strcmp(key, "profile")       ? &opts.profile
                : !strcmp(key, "preset")        ? &opts.preset
                : !strcmp(key, "sidecar")       ? &opts.sidecar
                : !strcmp(key, "ad-chapters")   ? &opts.ad_chapters
                                                : NULL;
    if (slot) {
        if (!g_utf8_validate(value, -1, NULL)) {
            *error = g_strdup_printf("%s: not valid UTF-8", key);
            return FALSE;
        }
        g_free(*slot);
        *slot = *value ? g_strdup(value) : NULL;
    } else if (!strcmp(key, "resume")) {
        opts.resume = yes(value);
    } else if (!strcmp(key, "verbose")) {
        opts.verbose = yes(value);
    } else if (!strcmp(key, "open-timeout")) {
        char *end;
        double secs = g_ascii_strtod(value, &end);
        if (end == value || *end || !(secs >= 0 && secs <= 60)) {
            *error = g_strdup_printf("open-timeout=%s: seconds from 0 to 60 expected", value);
            return FALSE;
        }
        opts.open_timeout_ms = (int)(secs * 1000);
    } else {
        *error = g_strdup_printf("unknown option %s", key);
        return FALSE;
    }
    return TRUE;
}

/* SNAPBACK_CONTENT_ID and its kin, once, before any explicit setting. */
static void options_from_env_locked(void) {
    if (options_from_env_done) return;
    options_from_env_done = TRUE;
    static const char *const keys[] = {"socket",  "content-id", "profile", "preset",      "sidecar",
                                       "ad-chapters", "resume", "verbose", "open-timeout"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        char *env = g_strdup_printf("SNAPBACK_%s", keys[i]);
        for (char *c = env; *c; c++) *c = *c == '-' ? '_' : g_ascii_toupper(*c);
        const char *v = g_getenv(env);
        char *error = NULL;
        /* SNAPBACK_SOCKET is libsnapback's own default: left to it. */
        if (v && strcmp(keys[i], "socket") != 0 && !set_option(keys[i], v, &error)) {
            g_printerr("[snapback] %s: %s\n", env, error);
            g_free(error);
        }
        g_free(env);
    }
}

gboolean sbg_core_configure(const char *key, const char *value, char **error) {
    g_mutex_lock(&options_lock);
    options_from_env_locked();
    gboolean ok = set_option(key, value, error);
    g_mutex_unlock(&options_lock);
    return ok;
}

static void sbg_log(gboolean verbose_only, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void sbg_log(gboolean verbose_only, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (verbose_only) GST_INFO("%s", text);
    else GST_WARNING("%s", text);
    if (!verbose_only || opts.verbose) g_printerr("[snapback] %s\n", text);
    g_free(text);
}

static guint64 now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (guint64)ts.tv_sec * 1000u + (guint64)ts.tv_nsec / 1000000u;
}

/* ---------------------------------------------------------------------------------------------- */
/* Records                                                                                          */

/* A pipeline's playback as the core follows it, and its session with snapbackd:
 *
 *                 its first buffer: open              its answer: OK
 *    STARTING ─────────────────────────► OPENING ──────────────────────► OPEN ─┐
 *       ▲                                 │  ▲  ▲                        │     │ SCTE-35 cues changed
 *       │                 answer: failed  │  │  └────────────────────────┼─────┘ an on-demand session's
 *       │                                 ▼  │ the library reconnects:   │       breaks: closed, open
 *       │                               AWAY ┘ open                      │
 *       └─── a STREAM_START of another URI (the next playlist item, gapless) in OPENING or OPEN: closed
 *
 * "open": the session is asked for; when that is refused at once (the daemon away) the state is AWAY
 * instead of OPENING. From any state: NOTE_STARTING → STARTING, NOTE_STOPPING → STOPPED (where a
 * record begins too), the pipeline gone → GONE (the record leaves the list); a session open or opening
 * is closed on the way.
 *
 * A start is held (`holding`) from sbg_pipe_starting while the daemon may be reachable, until the
 * session is open and its resume seek sent, its open failed, or the open timeout passed: only STARTING
 * and OPENING hold. The viewer's seeks (struct motion) are followed in every state. */
enum pipe_kind {
    PIPE_STOPPED,  /* not playing: before its first start, or stopped (PAUSED→READY) */
    PIPE_STARTING, /* started: the stream's first buffer is to come (where it starts, for the hold) */
    PIPE_AWAY,     /* playing with no session (the daemon was away, or refused it): opened when the
                    * library reconnects */
    PIPE_OPENING,  /* the session asked for, its answer to come */
    PIPE_OPEN,     /* the daemon holds the session */
    PIPE_GONE,     /* the pipeline is gone: the record leaves the list */
};
/* Where the stream began, when its first buffer told (a hold that ends without a resume goes back
 * there). */
struct stream_start {
    gboolean known;
    double pos;
};
/* What the last playhead report of an open session told the daemon. */
enum report_kind {
    REPORTED_NOTHING, /* nothing since the session opened or the viewer seeked: the next tick reports */
    REPORTED_PLAYING,
    REPORTED_PAUSED,
};
struct pipe_opening {
    snapback_session *session; /* the library's handle (it frees it after on_opened) */
    struct stream_start start;
    guint64 hold_deadline; /* when a held start is let go anyway */
};
struct pipe_open {
    snapback_session *session; /* the library's handle until CloseSession */
    gboolean completed;        /* ContentComplete sent (once; no final playhead at the close then) */
    enum report_kind reported;
    guint64 report_ms;
    double report_pos;
};
struct pipe_state {
    enum pipe_kind kind;
    union {
        struct {
            gboolean close_awaited; /* the stop waits for the session's close to be answered */
        } stopped;
        struct pipe_opening opening;
        struct pipe_open open;
    } u;
};

/* The viewer's seek being carried out, until its SEGMENT comes: a seek the daemon pushes meanwhile
 * waits for it (bounded by its deadline), and copies of its SEEK (the viewer's seek reaches the
 * demuxer through every sink, with one seqnum) are not taken for new seeks. */
enum motion_kind {
    MOTION_STEADY,
    MOTION_VIEWER_SEEK,  /* the viewer's seek is under way */
    MOTION_OWN_WAITING,  /* …and a seek of the daemon's waits for it */
};
struct viewer_seek {
    guint32 seqnum;
    guint64 deadline;
};
struct motion {
    enum motion_kind kind;
    union {
        struct viewer_seek seeking;
        struct {
            struct viewer_seek viewer;
            double target;
        } own_waiting;
    } u;
};

struct sbg_pipe {
    gint refs;
    GWeakRef pipeline;
    /* Read by the probes in streaming threads. */
    gint holding;         /* buffers reaching the sinks are dropped */
    gint viewer_seqnum;   /* the viewer's seek being carried out (its SEGMENT settles it) */
    GMutex lock;          /* own[] and element options */
    guint32 own[OWN_SEQNUMS];
    guint n_own;
    char *element_content_id;

    /* The core's thread only. */
    struct sbg_pipe *next;
    struct pipe_state state;
    struct motion motion;
    guint stop_acks; /* under core.lock: stops acknowledged */
    /* The stream, as the probes saw it since it started. */
    char *uri, *tag_content_id;
    GstToc *toc;
    sbm_breaks cues; /* breaks from SCTE-35 cues so far */
    sbg_cue_state cue_state;
    /* The session's stream, as it was last opened (meaningful in OPENING and OPEN). */
    char *content_id;
    sbm_breaks breaks;
    const char *breaks_from;
    gboolean live;
    /* The position as last queried or sought, and the viewer's rate. */
    gboolean have_pos;
    double pos, rate;
    guint64 pos_at, next_tick;
};

typedef enum note_kind {
    NOTE_STARTING,
    NOTE_STOPPING,
    NOTE_STATE,
    NOTE_STREAM_START,
    NOTE_TAGS,
    NOTE_TOC,
    NOTE_FIRST_BUFFER,
    NOTE_SEEK,
    NOTE_SETTLED,
    NOTE_EOS,
    NOTE_CUE,
} note_kind;

typedef struct note {
    note_kind kind;
    sbg_pipe *pipe;
    gboolean has_t, has_to;
    double t, to, rate;
    guint32 seqnum;
    char *str;
    GstToc *toc;
    sbg_cue cue;
    struct note *next;
} note;

static struct core {
    gboolean started;
    GThread *thread;
    int wake_fd;
    snapback_client *client;
    gint reachable; /* 1 connected, 0 away, 2 not known yet (connecting) */
    GMutex lock; /* the queue, the list of records, stop_acks */
    GCond stopped;
    note *head, *tail;
    sbg_pipe *pipes;
} core;

static GQuark pipe_quark, pad_quark;

static sbg_pipe *pipe_ref(sbg_pipe *p) {
    g_atomic_int_inc(&p->refs);
    return p;
}

static void pipe_unref(sbg_pipe *p) {
    if (!g_atomic_int_dec_and_test(&p->refs)) return;
    g_weak_ref_clear(&p->pipeline);
    g_mutex_clear(&p->lock);
    g_free(p->element_content_id);
    g_free(p->uri);
    g_free(p->tag_content_id);
    g_free(p->content_id);
    if (p->toc) gst_toc_unref(p->toc);
    sbm_breaks_free(&p->cues);
    sbm_breaks_free(&p->breaks);
    sbg_cue_state_clear(&p->cue_state);
    g_free(p);
}

static void post(note_kind kind, sbg_pipe *p, note *n) {
    n->kind = kind;
    n->pipe = pipe_ref(p);
    g_mutex_lock(&core.lock);
    if (core.tail) core.tail->next = n;
    else core.head = n;
    core.tail = n;
    g_mutex_unlock(&core.lock);
    guint64 one = 1;
    ssize_t w = write(core.wake_fd, &one, sizeof one);
    (void)w;
}

static void post_simple(note_kind kind, sbg_pipe *p) {
    post(kind, p, g_new0(note, 1));
}

static void note_free(note *n) {
    g_free(n->str);
    if (n->toc) gst_toc_unref(n->toc);
    pipe_unref(n->pipe);
    g_free(n);
}

GstElement *sbg_toplevel(GstObject *object) {
    GstObject *top = gst_object_ref(object), *parent;
    while ((parent = gst_object_get_parent(top))) {
        gst_object_unref(top);
        top = parent;
    }
    if (!GST_IS_ELEMENT(top)) {
        gst_object_unref(top);
        return NULL;
    }
    return GST_ELEMENT(top);
}

sbg_pipe *sbg_pipe_lookup(GstElement *pipeline) {
    return pipe_quark ? g_object_get_qdata(G_OBJECT(pipeline), pipe_quark) : NULL;
}

sbg_pipe *sbg_pipe_for(GstElement *pipeline) {
    if (!sbg_core_ensure()) return NULL;
    g_mutex_lock(&core.lock);
    sbg_pipe *p = g_object_get_qdata(G_OBJECT(pipeline), pipe_quark);
    if (!p) {
        p = g_new0(sbg_pipe, 1);
        p->refs = 1; /* the core's list */
        g_weak_ref_init(&p->pipeline, pipeline);
        g_mutex_init(&p->lock);
        p->rate = 1;
        p->next = core.pipes;
        core.pipes = p;
        /* The qdata holds no reference: the record outlives the pipeline, which only points at it. */
        g_object_set_qdata(G_OBJECT(pipeline), pipe_quark, p);
        GST_INFO_OBJECT(pipeline, "under snapback");
    }
    g_mutex_unlock(&core.lock);
    return p;
}

void sbg_pipe_set_content_id(sbg_pipe *p, const char *content_id) {
    if (content_id && !g_utf8_validate(content_id, -1, NULL)) {
        sbg_log(FALSE, "content-id: not valid UTF-8, left out");
        content_id = NULL;
    }
    g_mutex_lock(&p->lock);
    g_free(p->element_content_id);
    p->element_content_id = content_id && *content_id ? g_strdup(content_id) : NULL;
    g_mutex_unlock(&p->lock);
}

static void remember_own(sbg_pipe *p, guint32 seqnum) {
    g_mutex_lock(&p->lock);
    p->own[p->n_own++ % OWN_SEQNUMS] = seqnum;
    g_mutex_unlock(&p->lock);
}

static gboolean is_own(sbg_pipe *p, guint32 seqnum) {
    gboolean own = FALSE;
    g_mutex_lock(&p->lock);
    for (guint i = 0; i < MIN(p->n_own, OWN_SEQNUMS); i++) own |= p->own[i] == seqnum;
    g_mutex_unlock(&p->lock);
    return own;
}

/* ---------------------------------------------------------------------------------------------- */
/* The probes: streaming threads (and the viewer's thread for upstream SEEKs). They copy and post.  */

typedef struct padwatch {
    sbg_pipe *pipe;
    GstSegment segment;
    gboolean have_segment, first_seen;
} padwatch;

static void padwatch_free(gpointer data) {
    padwatch *w = data;
    pipe_unref(w->pipe);
    g_free(w);
}

static double seconds(GstClockTime t) {
    return (double)t / GST_SECOND;
}

/* A "content_id=…" extended comment (Matroska's CONTENT_ID simple tag, ffmpeg's -metadata content_id=…). */
static char *tag_content_id(const GstTagList *tags) {
    guint n = gst_tag_list_get_tag_size(tags, GST_TAG_EXTENDED_COMMENT);
    for (guint i = 0; i < n; i++) {
        const char *c;
        if (!gst_tag_list_peek_string_index(tags, GST_TAG_EXTENDED_COMMENT, i, &c)) continue;
        if (!g_ascii_strncasecmp(c, "content_id=", 11) && c[11] && g_utf8_validate(c, -1, NULL)) return g_strdup(c + 11);
    }
    return NULL;
}

static void probe_seek(sbg_pipe *p, GstEvent *event) {
    double rate;
    GstFormat format;
    GstSeekFlags flags;
    GstSeekType start_type, stop_type;
    gint64 start, stop;
    gst_event_parse_seek(event, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
    if (format != GST_FORMAT_TIME) return;
    note *n = g_new0(note, 1);
    n->seqnum = gst_event_get_seqnum(event);
    n->rate = rate;
    /* Where playback goes on: the start, or playing backwards, the stop. */
    if (rate < 0 && stop_type == GST_SEEK_TYPE_SET && stop >= 0) {
        n->has_to = TRUE;
        n->to = seconds((GstClockTime)stop);
    } else if (rate >= 0 && start_type == GST_SEEK_TYPE_SET && start >= 0) {
        n->has_to = TRUE;
        n->to = seconds((GstClockTime)start);
    }
    post(NOTE_SEEK, p, n);
}

static void probe_section(padwatch *w, GstEvent *event) {
    GstMpegtsSection *section = gst_event_parse_mpegts_section(event);
    if (!section) return;
    if (section->section_type == GST_MPEGTS_SECTION_SCTE_SIT && w->have_segment) {
        /* tsdemux's running times count from its own segment, whose base is 0 (from every flushing seek
         * on); by the sink, playbin has added the running time of the items played before this one
         * (gapless playback) to the base: taken off again. */
        GstSegment demuxed = w->segment;
        demuxed.base = 0;
        sbg_cue cues[SBG_MAX_CUES_PER_SECTION];
        size_t n = sbg_cues_from_section(section, gst_event_get_structure(event), &demuxed, cues, G_N_ELEMENTS(cues));
        for (size_t i = 0; i < n; i++) {
            note *x = g_new0(note, 1);
            x->cue = cues[i];
            post(NOTE_CUE, w->pipe, x);
        }
    }
    gst_mpegts_section_unref(section);
}

static GstPadProbeReturn probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    padwatch *w = data;
    sbg_pipe *p = w->pipe;
    if (info->type & (GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST)) {
        if (!w->first_seen) {
            w->first_seen = TRUE;
            GstBuffer *b = (info->type & GST_PAD_PROBE_TYPE_BUFFER) ? GST_PAD_PROBE_INFO_BUFFER(info)
                           : gst_buffer_list_length(GST_PAD_PROBE_INFO_BUFFER_LIST(info))
                               ? gst_buffer_list_get(GST_PAD_PROBE_INFO_BUFFER_LIST(info), 0)
                               : NULL;
            note *n = g_new0(note, 1);
            if (b && w->have_segment && GST_BUFFER_PTS_IS_VALID(b)) {
                guint64 st = gst_segment_to_stream_time(&w->segment, GST_FORMAT_TIME, GST_BUFFER_PTS(b));
                if (st != GST_CLOCK_TIME_NONE) {
                    n->has_t = TRUE;
                    n->t = seconds(st);
                }
            }
            post(NOTE_FIRST_BUFFER, p, n);
        }
        return g_atomic_int_get(&p->holding) ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
    }
    if (!(info->type & GST_PAD_PROBE_TYPE_EVENT_BOTH)) return GST_PAD_PROBE_OK;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_STREAM_START:
        w->first_seen = FALSE;
        post_simple(NOTE_STREAM_START, p);
        break;
    case GST_EVENT_SEGMENT: {
        const GstSegment *s;
        gst_event_parse_segment(event, &s);
        if (s->format == GST_FORMAT_TIME) {
            gst_segment_copy_into(s, &w->segment);
            w->have_segment = TRUE;
        }
        guint32 seqnum = gst_event_get_seqnum(event);
        if ((gint)seqnum == g_atomic_int_get(&p->viewer_seqnum)) {
            note *n = g_new0(note, 1);
            n->seqnum = seqnum;
            post(NOTE_SETTLED, p, n);
        }
        break;
    }
    case GST_EVENT_GAP:
        /* A gap prerolls a sink as a buffer does: held back with them. */
        if (g_atomic_int_get(&p->holding)) return GST_PAD_PROBE_DROP;
        break;
    case GST_EVENT_TAG: {
        GstTagList *tags;
        gst_event_parse_tag(event, &tags);
        char *id = tag_content_id(tags);
        if (id) {
            note *n = g_new0(note, 1);
            n->str = id;
            post(NOTE_TAGS, p, n);
        }
        break;
    }
    case GST_EVENT_TOC: {
        GstToc *toc;
        gst_event_parse_toc(event, &toc, NULL);
        note *n = g_new0(note, 1);
        n->toc = toc;
        post(NOTE_TOC, p, n);
        break;
    }
    case GST_EVENT_EOS: post_simple(NOTE_EOS, p); break;
    case GST_EVENT_SEEK: probe_seek(p, event); break;
    case GST_EVENT_CUSTOM_DOWNSTREAM: probe_section(w, event); break;
    default: break;
    }
    return GST_PAD_PROBE_OK;
}

void sbg_pipe_attach_pad(sbg_pipe *p, GstPad *pad) {
    GST_OBJECT_LOCK(pad);
    gboolean attached = g_object_get_qdata(G_OBJECT(pad), pad_quark) != NULL;
    if (!attached) g_object_set_qdata(G_OBJECT(pad), pad_quark, p);
    GST_OBJECT_UNLOCK(pad);
    if (attached) return;
    padwatch *w = g_new0(padwatch, 1);
    w->pipe = pipe_ref(p);
    gst_segment_init(&w->segment, GST_FORMAT_TIME);
    gst_pad_add_probe(pad,
                      GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
                          GST_PAD_PROBE_TYPE_EVENT_UPSTREAM,
                      probe, w, padwatch_free);
    GST_INFO_OBJECT(pad, "watched");
}

void sbg_pipe_starting(sbg_pipe *p) {
    /* Held unless the daemon is known to be away (at a process's start the connection may still be on
     * its way): with no daemon, the pipeline plays as if we were not here. */
    g_atomic_int_set(&p->holding, g_atomic_int_get(&core.reachable) != 0 && opts.resume);
    post_simple(NOTE_STARTING, p);
}

void sbg_pipe_stopping(sbg_pipe *p) {
    if (!sbg_core_ensure()) return;
    g_mutex_lock(&core.lock);
    guint acks = p->stop_acks;
    g_mutex_unlock(&core.lock);
    note *n = g_new0(note, 1);
    GstElement *pipeline = g_weak_ref_get(&p->pipeline);
    gint64 pos;
    if (pipeline && gst_element_query_position(pipeline, GST_FORMAT_TIME, &pos) && pos >= 0) {
        n->has_t = TRUE;
        n->t = seconds((GstClockTime)pos);
    }
    if (pipeline) gst_object_unref(pipeline);
    g_atomic_int_set(&p->holding, 0);
    post(NOTE_STOPPING, p, n);
    /* The session's close carries the bookmark: waited for (bounded), as a player that exits right after
     * stopping would otherwise lose it. This thread is the application's, never a streaming one. */
    gint64 until = g_get_monotonic_time() + CLOSE_FLUSH_MS * G_TIME_SPAN_MILLISECOND;
    g_mutex_lock(&core.lock);
    while (p->stop_acks == acks && g_cond_wait_until(&core.stopped, &core.lock, until)) {
    }
    g_mutex_unlock(&core.lock);
}

static void ack_stop(sbg_pipe *p) {
    if (p->state.kind == PIPE_STOPPED) p->state.u.stopped.close_awaited = FALSE;
    g_mutex_lock(&core.lock);
    p->stop_acks++;
    g_cond_broadcast(&core.stopped);
    g_mutex_unlock(&core.lock);
}

void sbg_pipe_state_changed(sbg_pipe *p) {
    post_simple(NOTE_STATE, p);
}

gboolean sbg_is_tsdemux(GstElement *element) {
    GstElementFactory *f = gst_element_get_factory(element);
    return f && !strcmp(GST_OBJECT_NAME(f), "tsdemux");
}

void sbg_enable_scte35(GstElement *element) {
    if (!sbg_is_tsdemux(element)) return;
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(element), "send-scte35-events")) {
        g_object_set(element, "send-scte35-events", TRUE, NULL);
        GST_INFO_OBJECT(element, "SCTE-35 sections sent downstream");
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* The core's thread: sessions.                                                                     */

static struct pipe_state plain_state(enum pipe_kind kind) {
    return (struct pipe_state){.kind = kind};
}

/* The session of the pipeline, opening or open, or NULL. */
static snapback_session *session_of(const sbg_pipe *p) {
    switch (p->state.kind) {
    case PIPE_OPENING: return p->state.u.opening.session;
    case PIPE_OPEN: return p->state.u.open.session;
    case PIPE_STOPPED:
    case PIPE_STARTING:
    case PIPE_AWAY:
    case PIPE_GONE: break;
    }
    return NULL;
}

/* Fast forward and rewind are trick play, which the daemon holds to the breaks it went over. */
static gboolean is_trick(double rate) {
    return rate > 1.0 || rate < 0.0;
}

/* The viewer's seek under way, or NULL. */
static struct viewer_seek *viewer_seek_of(struct motion *m) {
    switch (m->kind) {
    case MOTION_VIEWER_SEEK: return &m->u.seeking;
    case MOTION_OWN_WAITING: return &m->u.own_waiting.viewer;
    case MOTION_STEADY: break;
    }
    return NULL;
}

static void on_event_reply(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    (void)user;
    if (r->status != SNAPBACK_OK && r->status != SNAPBACK_E_CLIENT_CLOSED)
        sbg_log(FALSE, "call 0x%04x failed: %s (%s)", r->method, snapback_strerror(r->status), r->message);
}

static void check(const char *what, int rc) {
    if (rc != SNAPBACK_OK) sbg_log(rc == SNAPBACK_E_DISCONNECTED, "%s: %s", what, snapback_strerror(rc));
}

static gboolean pipeline_state(sbg_pipe *p, GstElement *pipeline, gboolean *playing, gboolean *paused) {
    (void)p;
    GST_OBJECT_LOCK(pipeline);
    GstState cur = GST_STATE(pipeline), target = GST_STATE_TARGET(pipeline);
    GST_OBJECT_UNLOCK(pipeline);
    *playing = cur == GST_STATE_PLAYING && target == GST_STATE_PLAYING;
    *paused = target == GST_STATE_PAUSED && cur >= GST_STATE_PAUSED;
    return cur >= GST_STATE_PAUSED;
}

static gboolean query_position(GstElement *pipeline, double *out) {
    gint64 pos;
    if (!gst_element_query_position(pipeline, GST_FORMAT_TIME, &pos) || pos < 0) return FALSE;
    *out = seconds((GstClockTime)pos);
    return *out <= SBM_MAX_TIME;
}

static double bounded_rate(double r) {
    return isfinite(r) ? CLAMP(r, -1000.0, 1000.0) : 1.0;
}

static double projected_position(sbg_pipe *p, gboolean playing) {
    double t = p->pos;
    if (playing) t += (double)(now_ms() - p->pos_at) / 1000.0 * p->rate;
    return CLAMP(t, 0.0, SBM_MAX_TIME);
}

static void report_state(sbg_pipe *p, double pos, gboolean playing) {
    if (p->state.kind != PIPE_OPEN) return;
    struct pipe_open *o = &p->state.u.open;
    int rc = playing ? snapback_report_playhead(o->session, pos, bounded_rate(p->rate), TRUE, on_event_reply, p)
                     : snapback_pause(o->session, pos, on_event_reply, p);
    check(playing ? "ReportPlayhead" : "Pause", rc);
    o->reported = playing ? REPORTED_PLAYING : REPORTED_PAUSED;
    o->report_ms = now_ms();
    o->report_pos = pos;
}

static gboolean crosses_edge(const sbm_breaks *b, double from, double to) {
    for (size_t i = 0; i < b->n; i++) {
        double s = b->items[i].start, e = s + b->items[i].duration;
        if ((from < s && s <= to) || (from < e && e <= to)) return TRUE;
    }
    return FALSE;
}

/* Milliseconds until playback at `rate` from `pos` reaches the next break edge (G_MAXINT64: none). */
static gint64 ms_to_edge(const sbm_breaks *b, double pos, double rate) {
    if (!(rate > 0)) return G_MAXINT64;
    double best = INFINITY;
    for (size_t i = 0; i < b->n; i++) {
        double s = b->items[i].start, e = s + b->items[i].duration;
        if (s > pos) best = MIN(best, s - pos);
        if (e > pos) best = MIN(best, e - pos);
    }
    double ms = ceil(best / rate * 1000.0);
    return ms < (double)G_MAXINT32 ? (gint64)ms : G_MAXINT64; /* also when there is no edge (infinite) */
}

/* A seek of the core's own: flushing and accurate, its seqnum remembered so that its echo in the
 * probes is not taken for the viewer's. */
static void send_seek(sbg_pipe *p, double t) {
    GstElement *pipeline = g_weak_ref_get(&p->pipeline);
    if (!pipeline) return;
    /* Forward at the viewer's rate (backwards, a seek to a start makes no sense: forward at 1x). The
     * daemon's times go to 1e10 s, past what a gint64 of nanoseconds holds (9.2e9 s). */
    double rate = p->rate > 0 ? p->rate : 1.0;
    gint64 ns = (gint64)(CLAMP(t, 0.0, 9.0e9) * GST_SECOND);
    GstEvent *seek = gst_event_new_seek(rate, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
                                        GST_SEEK_TYPE_SET, ns, GST_SEEK_TYPE_NONE, -1);
    remember_own(p, gst_event_get_seqnum(seek));
    gboolean ok = gst_element_send_event(pipeline, seek);
    /* Once a flushing seek returns, what reaches the sinks is from its target: the hold is over. */
    g_atomic_int_set(&p->holding, 0);
    gst_object_unref(pipeline);
    sbg_log(!ok ? FALSE : TRUE, "seek to %.3f %s", t, ok ? "sent" : "refused by the pipeline");
    p->pos = t;
    p->have_pos = TRUE;
    p->pos_at = now_ms();
    /* The next report's edge crossing counts from here, not from before the seek. */
    if (p->state.kind == PIPE_OPEN) p->state.u.open.report_pos = t;
    p->next_tick = 0;
}

static void do_seek(sbg_pipe *p, double t) {
    struct viewer_seek *v = viewer_seek_of(&p->motion);
    if (v) {
        struct viewer_seek viewer = *v;
        if (!g_atomic_int_get(&p->holding) && now_ms() < viewer.deadline) {
            /* The viewer's seek is still under way: ours goes after it. */
            p->motion = (struct motion){.kind = MOTION_OWN_WAITING, .u.own_waiting = {.viewer = viewer, .target = t}};
            return;
        }
        p->motion = (struct motion){.kind = MOTION_VIEWER_SEEK, .u.seeking = viewer};
    }
    send_seek(p, t);
}

/* The hold ends without a resume: back to where the stream began, since its first buffers were dropped
 * (a live stream, which cannot go back, just goes on). */
static void release_hold(sbg_pipe *p, struct stream_start start) {
    if (!g_atomic_int_get(&p->holding)) return;
    if (start.known && !p->live) send_seek(p, start.pos);
    else g_atomic_int_set(&p->holding, 0);
}

static void on_state_for_log(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    (void)user;
    if (r->status == SNAPBACK_OK && r->u.state.has_pending_return)
        sbg_log(TRUE, "ad break: the viewer returns to %.3f after it", r->u.state.pending_return);
}

static void on_push(snapback_client *c, snapback_session *s, const snapback_push *push, void *user) {
    (void)c;
    (void)user;
    sbg_pipe *p = snapback_session_user_data(s);
    if (!p || s != session_of(p)) return; /* a session closed since */
    switch (push->kind) {
    case SNAPBACK_PUSH_SEEK:
        sbg_log(TRUE, "seek to %.3f (%s)", push->u.seek.stream_time, push->reason);
        do_seek(p, push->u.seek.stream_time);
        if (push->u.seek.reason == SNAPBACK_SEEK_SNAPBACK) check("GetSessionState", snapback_get_session_state(s, on_state_for_log, p));
        break;
    case SNAPBACK_PUSH_SESSION_ERROR:
        sbg_log(FALSE, "session error %d: %s", push->u.session_error.code, push->u.session_error.message);
        break;
    case SNAPBACK_PUSH_BOOKMARK_SAVED:
        sbg_log(TRUE, "bookmark saved at content %.3f (stream %.3f)", push->u.bookmark_saved.content_time,
                push->u.bookmark_saved.stream_time);
        break;
    default: sbg_log(TRUE, "push %d (%s)", push->kind, push->reason); break;
    }
}

static void on_closed(snapback_client *c, const snapback_reply *r, void *user) {
    sbg_pipe *p = user;
    on_event_reply(c, r, NULL);
    if (p->state.kind == PIPE_STOPPED && p->state.u.stopped.close_awaited) ack_stop(p);
    pipe_unref(p);
}

/* The pipeline goes to `next`; an open session closes (the library frees its handle), with a last
 * stopped report at `pos`. TRUE when its close is under way (on_closed will run). */
static gboolean close_session(sbg_pipe *p, gboolean have_pos, double pos, struct pipe_state next) {
    struct pipe_state was = p->state;
    p->state = next;
    if (was.kind != PIPE_OPEN) return FALSE; /* none, or still opening: on_opened closes it */
    snapback_session *s = was.u.open.session;
    if (have_pos && !was.u.open.completed)
        check("ReportPlayhead", snapback_report_playhead(s, pos, bounded_rate(p->rate), FALSE, on_event_reply, p));
    int rc = snapback_session_close(s, on_closed, p);
    check("CloseSession", rc);
    /* Disconnected (or refused), the library frees the handle at once, with no callback. */
    if (rc != SNAPBACK_OK || !snapback_client_is_connected(core.client)) {
        pipe_unref(p);
        return FALSE;
    }
    return TRUE;
}

static void on_opened(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    sbg_pipe *p = user;
    snapback_session *s = r->session;
    gboolean current = p->state.kind == PIPE_OPENING && p->state.u.opening.session == s;
    if (r->status != SNAPBACK_OK) {
        if (current) {
            sbg_log(FALSE, "session for \"%s\" not opened: %s (%s)", p->content_id, snapback_strerror(r->status),
                    r->message);
            struct stream_start start = p->state.u.opening.start;
            p->state = plain_state(PIPE_AWAY);
            release_hold(p, start);
        }
        pipe_unref(p); /* the library frees the handle after this callback */
        return;
    }
    if (!current) {
        /* Its stream ended while it was opening. */
        int rc = snapback_session_close(s, on_closed, p);
        if (rc != SNAPBACK_OK || !snapback_client_is_connected(core.client)) pipe_unref(p);
        return;
    }
    struct stream_start start = p->state.u.opening.start;
    p->state = (struct pipe_state){.kind = PIPE_OPEN, .u.open = {.session = s, .reported = REPORTED_NOTHING}};
    const snapback_opened *o = &r->u.opened;
    sbg_log(TRUE, "session %llu for \"%s\" (%s, %zu breaks from %s)%s", (unsigned long long)o->session_id,
            p->content_id, o->policy_preset, p->breaks.n, p->breaks_from,
            o->resumed_from_bookmark ? ", resumed from its bookmark" : "");
    /* No resume seek came before the reply: the start goes back to where the stream began. */
    release_hold(p, start);
    p->next_tick = 0;
}

static char *uri_of(GstElement *pipeline) {
    char *uri = NULL;
    GObjectClass *k = G_OBJECT_GET_CLASS(pipeline);
    if (g_object_class_find_property(k, "current-uri")) g_object_get(pipeline, "current-uri", &uri, NULL);
    if (!uri && g_object_class_find_property(k, "uri")) g_object_get(pipeline, "uri", &uri, NULL);
    if (!uri) {
        GstQuery *q = gst_query_new_uri();
        if (gst_element_query(pipeline, q)) gst_query_parse_uri(q, &uri);
        gst_query_unref(q);
    }
    if (uri && !g_utf8_validate(uri, -1, NULL)) g_clear_pointer(&uri, g_free);
    return uri;
}

static char *read_small_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = g_malloc(SBJ_MAX_BYTES + 1);
    size_t n = fread(buf, 1, SBJ_MAX_BYTES + 1, f);
    fclose(f);
    *len = n > SBJ_MAX_BYTES ? SBJ_MAX_BYTES + 1 : n; /* refused by the parser as too large */
    return buf;
}

/* The sidecar beside a local file: 1 read, 0 none, -1 bad (logged). */
static int load_sidecar(const char *sidecar_opt, const char *filename, sbm_breaks *out, char **content_id) {
    char *path = sidecar_opt ? g_strdup(sidecar_opt) : filename ? sbm_default_sidecar_path(filename) : NULL;
    if (!path) return 0;
    size_t len;
    char *text = read_small_file(path, &len), err[160];
    int rc = 0;
    if (!text) {
        if (sidecar_opt) sbg_log(FALSE, "%s: %s", path, strerror(errno));
    } else if (sbm_breaks_from_sidecar(text, len, out, content_id, err, sizeof err) != 0) {
        sbg_log(FALSE, "%s: %s; the stream's chapters are used", path, err);
        rc = -1;
    } else {
        rc = 1;
    }
    g_free(text);
    free(path);
    return rc;
}

/* The stream's name, valid UTF-8: the file's name, or the last segment of the URI's path (its query and
 * fragment left out: "http://cdn/ch/movie.ts?token=1" → "movie.ts"); "stream" when there is none. */
static char *stream_name(const char *uri, const char *filename) {
    if (filename) return g_filename_display_basename(filename);
    char *base = NULL;
    GUri *u = uri ? g_uri_parse(uri, G_URI_FLAGS_NONE, NULL) : NULL;
    if (u && *g_uri_get_path(u)) base = g_path_get_basename(g_uri_get_path(u));
    if (u) g_uri_unref(u);
    if (!base || !*base || !strcmp(base, "/") || !strcmp(base, ".") || !g_utf8_validate(base, -1, NULL)) {
        g_free(base);
        base = g_strdup("stream");
    }
    return base;
}

static void breaks_from_toc(const GstToc *toc, double duration, const char *prefix, sbm_breaks *out) {
    GArray *chapters = g_array_new(FALSE, TRUE, sizeof(sbm_chapter));
    for (GList *e = gst_toc_get_entries(toc); e; e = e->next) {
        GstTocEntry *entry = e->data;
        GList *subs = gst_toc_entry_get_entry_type(entry) == GST_TOC_ENTRY_TYPE_EDITION ? gst_toc_entry_get_sub_entries(entry)
                                                                                         : NULL;
        GList *list = subs ? subs : g_list_prepend(NULL, entry);
        for (GList *c = list; c; c = c->next) {
            gint64 start, stop;
            if (!gst_toc_entry_get_start_stop_times(c->data, &start, &stop) || start < 0) continue;
            sbm_chapter ch = {.title = NULL, .time = seconds((GstClockTime)start)};
            GstTagList *tags = gst_toc_entry_get_tags(c->data);
            if (tags) gst_tag_list_peek_string_index(tags, GST_TAG_TITLE, 0, &ch.title);
            g_array_append_val(chapters, ch);
        }
        if (!subs) g_list_free(list);
    }
    char err[160];
    if (sbm_breaks_from_chapters((sbm_chapter *)(void *)chapters->data, chapters->len, duration, prefix, out, err,
                                 sizeof err) != 0)
        sbg_log(FALSE, "chapters: %s", err);
    g_array_free(chapters, TRUE);
}

static void copy_breaks(const sbm_breaks *from, sbm_breaks *to) {
    memset(to, 0, sizeof *to);
    to->items = g_new0(snapback_break, from->n ? from->n : 1);
    for (size_t i = 0; i < from->n; i++) {
        snapback_break *x = &to->items[i];
        *x = from->items[i];
        x->id = strdup(from->items[i].id);
        double *ads = malloc((from->items[i].n_ad_durations + 1) * sizeof *ads);
        if (from->items[i].n_ad_durations) memcpy(ads, from->items[i].ad_durations, from->items[i].n_ad_durations * sizeof *ads);
        x->ad_durations = ads;
    }
    to->n = from->n;
}

/* Asks for the session of the stream playing (→ OPENING, or AWAY when refused at once), with the
 * bookmark if `resume`; `start` is where a held start goes back to without one. */
static void open_session(sbg_pipe *p, GstElement *pipeline, gboolean resume, struct stream_start start) {
    guint64 hold_deadline = now_ms() + (guint64)opts.open_timeout_ms;
    g_mutex_lock(&options_lock);
    struct options o = opts; /* strings stay valid: options change only before the core starts */
    g_mutex_unlock(&options_lock);
    if (!p->uri) p->uri = uri_of(pipeline);
    sbm_breaks_free(&p->breaks);
    g_clear_pointer(&p->content_id, g_free);
    gint64 dur = -1;
    double duration = gst_element_query_duration(pipeline, GST_FORMAT_TIME, &dur) && dur > 0 ? seconds((GstClockTime)dur) : 0;
    p->live = duration <= 0;

    char *filename = p->uri && g_str_has_prefix(p->uri, "file:") ? g_filename_from_uri(p->uri, NULL, NULL) : NULL;
    char *sidecar_id = NULL;
    int sidecar = load_sidecar(o.sidecar, filename, &p->breaks, &sidecar_id);
    p->breaks_from = sidecar == 1 ? "sidecar" : "chapters";
    if (sidecar != 1 && p->toc) breaks_from_toc(p->toc, duration, o.ad_chapters, &p->breaks);
    if (sidecar != 1 && !p->breaks.n && p->cues.n) {
        copy_breaks(&p->cues, &p->breaks);
        p->breaks_from = "SCTE-35 cues";
    }
    if (!p->breaks.n) p->breaks_from = "none";

    g_mutex_lock(&p->lock);
    char *element_id = g_strdup(p->element_content_id);
    g_mutex_unlock(&p->lock);
    char *id = element_id ? element_id : o.content_id ? g_strdup(o.content_id) : NULL;
    if (!id && sidecar_id) id = g_strdup(sidecar_id);
    if (!id && p->tag_content_id) id = g_strdup(p->tag_content_id);
    char *base = stream_name(p->uri, filename);
    if (!id) {
        id = g_strdup(base);
        char *dot = strrchr(id, '.');
        if (dot && dot != id) *dot = '\0';
    }
    free(sidecar_id);
    g_free(filename);
    p->content_id = id;

    snapback_session_params sp;
    memset(&sp, 0, sizeof sp);
    sp.stream_id = base;
    sp.content_id = p->content_id;
    sp.profile = o.profile;
    sp.kind = p->live ? SNAPBACK_SESSION_LIVE : SNAPBACK_SESSION_ON_DEMAND;
    sp.breaks = p->breaks.items;
    sp.n_breaks = p->breaks.n;
    double ads = 0;
    for (size_t i = 0; i < p->breaks.n; i++) ads += p->breaks.items[i].duration;
    if (duration > ads && duration - ads <= SBM_MAX_DURATION) {
        sp.has_content_duration = TRUE;
        sp.content_duration = duration - ads;
    }
    sp.policy_preset = o.preset;
    snapback_resume r = {.use_bookmark = true};
    if (resume && !p->live) sp.resume = &r;
    snapback_session *s;
    int rc = snapback_session_open(core.client, &sp, on_opened, pipe_ref(p), &s);
    g_free(base);
    if (rc != SNAPBACK_OK) {
        sbg_log(rc == SNAPBACK_E_DISCONNECTED, "no session for \"%s\" yet: %s", p->content_id, snapback_strerror(rc));
        pipe_unref(p);
        p->state = plain_state(PIPE_AWAY);
        release_hold(p, start);
        return;
    }
    snapback_session_set_user_data(s, p);
    p->state = (struct pipe_state){.kind = PIPE_OPENING,
                                   .u.opening = {.session = s, .start = start, .hold_deadline = hold_deadline}};
}

/* The breaks changed while the session is open (SCTE-35 cues): a live session is told, an on-demand
 * one (whose breaks are fixed when it opens) is opened again with them, from where it is. */
static void breaks_changed(sbg_pipe *p, GstElement *pipeline) {
    if (p->state.kind != PIPE_OPEN || !strcmp(p->breaks_from, "sidecar") ||
        (!strcmp(p->breaks_from, "chapters") && p->breaks.n))
        return;
    if (p->live) {
        sbm_breaks_free(&p->breaks);
        copy_breaks(&p->cues, &p->breaks);
        p->breaks_from = "SCTE-35 cues";
        check("UpdateBreaks",
              snapback_update_breaks(p->state.u.open.session, p->breaks.items, p->breaks.n, on_event_reply, p));
        return;
    }
    double pos;
    gboolean have = query_position(pipeline, &pos);
    close_session(p, have, have ? pos : 0, plain_state(PIPE_AWAY));
    open_session(p, pipeline, FALSE, (struct stream_start){.known = FALSE});
}

/* ---------------------------------------------------------------------------------------------- */
/* The core's thread: notes and ticks.                                                              */

/* The stream's facts start again (a new playback, or the next item of a playlist). */
static void reset_stream(sbg_pipe *p) {
    g_clear_pointer(&p->uri, g_free);
    g_clear_pointer(&p->tag_content_id, g_free);
    if (p->toc) gst_toc_unref(p->toc);
    p->toc = NULL;
    sbm_breaks_free(&p->cues);
    sbg_cue_state_clear(&p->cue_state);
    p->have_pos = FALSE;
    p->motion = (struct motion){.kind = MOTION_STEADY};
    g_atomic_int_set(&p->viewer_seqnum, 0);
}

/* What a note told, beyond the facts observe() keeps, for the session to act on. */
struct seen {
    double from, to; /* NOTE_SEEK: where the viewer's seek went from, and where playback goes on */
    gboolean has_to, was_trick, trick;
    gboolean breaks_changed; /* NOTE_CUE */
};

/* The facts a note brings about the stream, kept in every state: its tags, table of contents and
 * cues, the viewer's rate, seeks and position. FALSE when the note is to be ignored (a SEEK of the
 * core's own, or a copy of one already seen). */
static gboolean observe(sbg_pipe *p, note *n, GstElement *pipeline, struct seen *seen) {
    switch (n->kind) {
    case NOTE_TAGS:
        g_free(p->tag_content_id);
        p->tag_content_id = n->str;
        n->str = NULL;
        break;
    case NOTE_TOC:
        if (p->toc) gst_toc_unref(p->toc);
        p->toc = n->toc;
        n->toc = NULL;
        break;
    case NOTE_SEEK: {
        struct viewer_seek *v = viewer_seek_of(&p->motion);
        if (is_own(p, n->seqnum) || (v && n->seqnum == v->seqnum)) return FALSE; /* ours, or a copy already seen */
        gboolean playing, paused;
        pipeline_state(p, pipeline, &playing, &paused);
        seen->from = projected_position(p, p->have_pos && !paused);
        seen->has_to = n->has_to;
        seen->to = n->has_to ? CLAMP(n->to, 0.0, SBM_MAX_TIME) : seen->from;
        seen->was_trick = is_trick(p->rate);
        p->rate = bounded_rate(n->rate);
        seen->trick = is_trick(p->rate);
        if (n->has_to) {
            struct viewer_seek viewer = {.seqnum = n->seqnum, .deadline = now_ms() + SETTLE_MS};
            if (p->motion.kind == MOTION_OWN_WAITING) p->motion.u.own_waiting.viewer = viewer;
            else p->motion = (struct motion){.kind = MOTION_VIEWER_SEEK, .u.seeking = viewer};
            g_atomic_int_set(&p->viewer_seqnum, (gint)n->seqnum);
            p->pos = seen->to;
            p->have_pos = TRUE;
            p->pos_at = now_ms();
        }
        break;
    }
    case NOTE_SETTLED: {
        struct viewer_seek *v = viewer_seek_of(&p->motion);
        if (!v || n->seqnum != v->seqnum) break;
        struct motion was = p->motion;
        p->motion = (struct motion){.kind = MOTION_STEADY};
        if (was.kind == MOTION_OWN_WAITING) send_seek(p, was.u.own_waiting.target);
        break;
    }
    case NOTE_CUE: {
        double pos;
        if (!query_position(pipeline, &pos)) pos = p->pos;
        seen->breaks_changed = sbg_cue_apply(&p->cue_state, &n->cue, pos, &p->cues);
        if (seen->breaks_changed) sbg_log(TRUE, "SCTE-35 cue %u: %zu breaks", n->cue.event_id, p->cues.n);
        break;
    }
    case NOTE_STARTING:
    case NOTE_STOPPING:
    case NOTE_STATE:
    case NOTE_STREAM_START:
    case NOTE_FIRST_BUFFER:
    case NOTE_EOS: break;
    }
    return TRUE;
}

/* The viewer's seek, told the open session: trick play's end, or a seek (and trick play's start). */
static void tell_seek(sbg_pipe *p, const struct seen *seen) {
    struct pipe_open *o = &p->state.u.open;
    if (seen->was_trick && !seen->trick) {
        sbg_log(TRUE, "trick play ended at %.3f", seen->to);
        check("TrickPlayEnded", snapback_trick_play_ended(o->session, seen->to, on_event_reply, p));
    } else {
        if (seen->has_to && fabs(seen->to - seen->from) > 0.001) {
            sbg_log(TRUE, "the viewer seeked %.3f → %.3f", seen->from, seen->to);
            check("SeekEnded", snapback_seek_ended(o->session, seen->from, seen->to, on_event_reply, p));
        }
        if (seen->trick && !seen->was_trick) {
            sbg_log(TRUE, "trick play at rate %g from %.3f", p->rate, seen->to);
            check("TrickPlayStarted", snapback_trick_play_started(o->session, seen->to, p->rate, on_event_reply, p));
        }
    }
    /* The next tick reports the position at the new rate. */
    o->reported = REPORTED_NOTHING;
    o->report_ms = now_ms();
    o->report_pos = seen->to;
}

/* The next item of a playlist (gapless: a STREAM_START of another URI): its own session, from its
 * start. */
static void next_item(sbg_pipe *p, GstElement *pipeline) {
    char *uri = uri_of(pipeline);
    if (uri && p->uri && strcmp(uri, p->uri) != 0) {
        close_session(p, p->have_pos, p->pos, plain_state(PIPE_STARTING));
        reset_stream(p);
        p->uri = uri;
        uri = NULL;
    }
    g_free(uri);
}

static void handle_note(note *n) {
    sbg_pipe *p = n->pipe;
    GstElement *pipeline = g_weak_ref_get(&p->pipeline);
    if (!pipeline) {
        if (n->kind == NOTE_STOPPING) ack_stop(p);
        return;
    }
    struct seen seen = {0};
    switch (n->kind) {
    /* From any state. */
    case NOTE_STARTING:
        close_session(p, p->have_pos, p->pos, plain_state(PIPE_STARTING));
        reset_stream(p);
        p->rate = 1;
        break;
    case NOTE_STOPPING:
        if (n->has_t) {
            p->pos = n->t;
            p->have_pos = TRUE;
        }
        if (close_session(p, p->have_pos, p->pos, plain_state(PIPE_STOPPED))) p->state.u.stopped.close_awaited = TRUE;
        else ack_stop(p);
        break;
    case NOTE_STATE: p->next_tick = 0; break;
    default:
        if (!observe(p, n, pipeline, &seen)) break;
        switch (p->state.kind) {
        case PIPE_STARTING:
            if (n->kind != NOTE_FIRST_BUFFER) break;
            /* Queued behind the Hello if the connection is still being made; refused at once if away. */
            open_session(p, pipeline, g_atomic_int_get(&p->holding),
                         (struct stream_start){.known = n->has_t, .pos = n->has_t ? n->t : 0});
            break;
        case PIPE_OPENING:
            if (n->kind == NOTE_STREAM_START) next_item(p, pipeline);
            break;
        case PIPE_OPEN:
            if (n->kind == NOTE_STREAM_START) {
                next_item(p, pipeline);
            } else if (n->kind == NOTE_SEEK) {
                tell_seek(p, &seen);
            } else if (n->kind == NOTE_EOS && !p->state.u.open.completed) {
                p->state.u.open.completed = TRUE;
                sbg_log(TRUE, "end of the stream: content complete");
                check("ContentComplete", snapback_content_complete(p->state.u.open.session, on_event_reply, p));
            } else if (n->kind == NOTE_CUE && seen.breaks_changed) {
                breaks_changed(p, pipeline);
            }
            break;
        case PIPE_STOPPED:
        case PIPE_AWAY:
        case PIPE_GONE: break; /* the facts only */
        }
        break;
    }
    gst_object_unref(pipeline);
}

/* Per record: reports due, the hold's deadline. Returns ms until it wants to run again. */
static gint64 tick(sbg_pipe *p, guint64 now) {
    GstElement *pipeline = g_weak_ref_get(&p->pipeline);
    if (!pipeline) return -2; /* gone */
    gint64 wait = REPORT_MS;
    if (p->state.kind == PIPE_OPENING && g_atomic_int_get(&p->holding)) {
        if (now >= p->state.u.opening.hold_deadline) {
            sbg_log(FALSE, "the session did not open within %d ms: playing without waiting", opts.open_timeout_ms);
            release_hold(p, p->state.u.opening.start);
        } else {
            wait = (gint64)(p->state.u.opening.hold_deadline - now);
        }
    }
    if (p->motion.kind == MOTION_OWN_WAITING) {
        guint64 deadline = p->motion.u.own_waiting.viewer.deadline;
        if (now >= deadline) do_seek(p, p->motion.u.own_waiting.target);
        else wait = MIN(wait, (gint64)(deadline - now));
    }
    gboolean playing, paused;
    if (p->state.kind == PIPE_OPEN && pipeline_state(p, pipeline, &playing, &paused) &&
        !g_atomic_int_get(&p->holding) && (playing || paused)) {
        struct pipe_open *o = &p->state.u.open;
        double pos;
        if (query_position(pipeline, &pos)) {
            gboolean moved = !p->have_pos || fabs(pos - o->report_pos) > 0.001;
            p->pos = pos;
            p->have_pos = TRUE;
            p->pos_at = now;
            if (paused) {
                if (o->reported != REPORTED_PAUSED || moved) report_state(p, pos, FALSE);
            } else if (o->reported != REPORTED_PLAYING || now - o->report_ms >= REPORT_MS ||
                       crosses_edge(&p->breaks, o->report_pos, pos)) {
                report_state(p, pos, TRUE);
            }
            if (playing) wait = MIN(wait, ms_to_edge(&p->breaks, pos, p->rate));
        }
    }
    gst_object_unref(pipeline);
    return CLAMP(wait, 5, REPORT_MS);
}

static void on_connection(snapback_client *c, snapback_connection_event ev, int status, const char *msg, void *user) {
    (void)c;
    (void)status;
    (void)user;
    g_atomic_int_set(&core.reachable, ev == SNAPBACK_CONNECTED);
    if (ev == SNAPBACK_DISCONNECTED) {
        sbg_log(FALSE, "snapbackd went away: %s", msg);
        return;
    }
    sbg_log(TRUE, "connected to %s", snapback_client_socket_path(core.client));
    /* Streams that began while the daemon was away: a session now, from where they are. */
    g_mutex_lock(&core.lock);
    sbg_pipe *head = core.pipes;
    g_mutex_unlock(&core.lock);
    for (sbg_pipe *p = head; p; p = p->next) {
        if (p->state.kind != PIPE_AWAY) continue;
        GstElement *pipeline = g_weak_ref_get(&p->pipeline);
        if (!pipeline) continue;
        open_session(p, pipeline, FALSE, (struct stream_start){.known = FALSE});
        gst_object_unref(pipeline);
    }
}

static void on_session_restored(snapback_client *c, snapback_session *s, int status, const char *msg, double start,
                                void *user) {
    (void)c;
    (void)s;
    (void)user;
    if (status == SNAPBACK_OK) sbg_log(TRUE, "session reopened after a daemon restart, at %.3f", start);
    else sbg_log(FALSE, "session not reopened: %s", msg);
}

static gpointer run(gpointer data) {
    (void)data;
    int rc = snapback_client_connect(core.client);
    if (rc != SNAPBACK_OK) {
        g_atomic_int_set(&core.reachable, 0);
        sbg_log(TRUE, "snapbackd not reachable yet (%s): retrying", snapback_strerror(rc));
    }
    for (;;) {
        g_mutex_lock(&core.lock);
        note *n = core.head;
        core.head = core.tail = NULL;
        g_mutex_unlock(&core.lock);
        while (n) {
            note *next = n->next;
            handle_note(n);
            note_free(n);
            n = next;
        }
        /* Ticks. A record whose pipeline is gone closes its session and leaves the list. */
        guint64 now = now_ms();
        gint64 wait = REPORT_MS;
        g_mutex_lock(&core.lock);
        sbg_pipe *head = core.pipes;
        g_mutex_unlock(&core.lock);
        for (sbg_pipe *p = head; p; p = p->next) {
            if (p->next_tick > now) {
                wait = MIN(wait, (gint64)(p->next_tick - now));
                continue;
            }
            gint64 w = tick(p, now);
            if (w == -2) {
                close_session(p, p->have_pos, p->pos, plain_state(PIPE_GONE));
                continue;
            }
            p->next_tick = now + (guint64)w;
            wait = MIN(wait, w);
        }
        g_mutex_lock(&core.lock);
        for (sbg_pipe **link = &core.pipes; *link;) {
            sbg_pipe *p = *link;
            if (p->state.kind == PIPE_GONE) {
                *link = p->next;
                pipe_unref(p);
            } else {
                link = &p->next;
            }
        }
        g_mutex_unlock(&core.lock);
        int timeout = snapback_client_next_timeout_ms(core.client);
        if (timeout < 0 || timeout > wait) timeout = (int)wait;
        struct pollfd fds[2] = {{.fd = core.wake_fd, .events = POLLIN},
                                {.fd = snapback_client_fd(core.client), .events = snapback_client_events(core.client)}};
        int np = poll(fds, fds[1].fd >= 0 ? 2 : 1, timeout);
        if (np > 0 && (fds[0].revents & POLLIN)) {
            guint64 count;
            ssize_t r = read(core.wake_fd, &count, sizeof count);
            (void)r;
        }
        snapback_client_dispatch(core.client, np > 0 && fds[1].fd >= 0 ? fds[1].revents : 0);
    }
    return NULL;
}

void sbg_debug_init(void) {
    GST_DEBUG_CATEGORY_INIT(sbg_debug, "snapback", 0, "snapback ad timeline");
}

gboolean sbg_core_ensure(void) {
    static gsize once;
    if (g_once_init_enter(&once)) {
        pipe_quark = g_quark_from_static_string("snapback-pipe");
        pad_quark = g_quark_from_static_string("snapback-pad");
        g_mutex_lock(&options_lock);
        options_from_env_locked();
        snapback_options o;
        memset(&o, 0, sizeof o);
        o.socket_path = opts.socket;
        o.client_name = "gstreamer";
        o.callbacks.on_push = on_push;
        o.callbacks.on_connection = on_connection;
        o.callbacks.on_session_restored = on_session_restored;
        core.client = snapback_client_new(&o);
        g_mutex_unlock(&options_lock);
        core.reachable = 2;
        core.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (core.client && core.wake_fd >= 0) {
            core.thread = g_thread_try_new("snapback", run, NULL, NULL);
            core.started = core.thread != NULL;
        }
        if (!core.started) sbg_log(FALSE, "cannot start: %s", core.client ? strerror(errno) : "out of memory");
        g_once_init_leave(&once, 1);
    }
    return core.started;
}
