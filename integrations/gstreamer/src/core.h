/* SPDX-License-Identifier: Apache-2.0 */
/* The core of the GStreamer integration, shared by its two front ends: the tracer (every playbin and
 * playbin3 of the process, no application change) and the snapbacksink element (a bin around the
 * video sink, for players that can insert one).
 *
 * Both front ends do the same two things: they hand the core the sink pads of a pipeline (a pad
 * probe there sees every downstream event — STREAM_START, TAG, TOC, SEGMENT, EOS, MPEG-TS sections —,
 * every buffer, and the upstream SEEKs the viewer sends), and they tell it when the pipeline starts
 * (READY→PAUSED), stops (PAUSED→READY) or changes state. Everything else happens on the core's own
 * thread, which owns the libsnapback client: the probes and the hooks only copy what they saw into a
 * queue and wake that thread, so no streaming thread ever waits for the daemon. The core's thread
 * queries the pipeline's position, opens one session per played URI, reports the playhead, pause,
 * rate, the viewer's seeks and the end of the content, and carries out the daemon's seeks (flushing,
 * accurate) with its own seqnums, by which it tells its own seeks from the viewer's.
 *
 * Resume before the first frame: when the pipeline starts with the daemon reachable, the probes drop
 * every buffer that reaches a sink (dropping never blocks the streaming thread) until the core has
 * opened the session and sent the resume seek — to the bookmark, or back to where the stream began
 * when there is none — so the first frame that prerolls is the right one. The hold is bounded by
 * the open timeout; with no daemon there is no hold at all. */
#ifndef SNAPBACK_GST_CORE_H
#define SNAPBACK_GST_CORE_H

#include <gst/gst.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(sbg_debug);
#define GST_CAT_DEFAULT sbg_debug

typedef struct sbg_pipe sbg_pipe;

/* Options, from the environment (SNAPBACK_SOCKET, SNAPBACK_CONTENT_ID, SNAPBACK_PROFILE,
 * SNAPBACK_PRESET, SNAPBACK_SIDECAR, SNAPBACK_AD_CHAPTERS, SNAPBACK_RESUME, SNAPBACK_OPEN_TIMEOUT,
 * SNAPBACK_VERBOSE), overridden by the tracer's parameters ("socket=…,verbose=yes"). Applied when the
 * core starts; the socket only then. Returns FALSE with a message on a bad key or value. */
gboolean sbg_core_configure(const char *key, const char *value, char **error);

/* The process's core: started (its thread, its client) on first use. NULL only when out of memory or
 * the thread cannot start (logged). */
gboolean sbg_core_ensure(void);

/* The core's record of `pipeline` (created on first call; the core keeps a weak reference only). */
sbg_pipe *sbg_pipe_for(GstElement *pipeline);
/* The record of a pipeline already under the core, or NULL. */
sbg_pipe *sbg_pipe_lookup(GstElement *pipeline);

/* Watches one of the pipeline's sink pads (idempotent per pad). */
void sbg_pipe_attach_pad(sbg_pipe *pipe, GstPad *pad);

/* The pipeline is about to go READY→PAUSED: a new playback starts (the hold begins if the daemon is
 * reachable). Called before the transition, in the thread that changes the state. */
void sbg_pipe_starting(sbg_pipe *pipe);
/* The pipeline is about to go PAUSED→READY: the session closes at its position now. */
void sbg_pipe_stopping(sbg_pipe *pipe);
/* Any other state change: the core reads the pipeline's state again. */
void sbg_pipe_state_changed(sbg_pipe *pipe);

/* Per-element options (snapbacksink's properties), for the session of this pipeline; NULL keeps
 * the core's. */
void sbg_pipe_set_content_id(sbg_pipe *pipe, const char *content_id);

/* The top-level element above `object` (itself if it has no parent), with a reference. */
GstElement *sbg_toplevel(GstObject *object);

/* tsdemux sends SCTE-35 sections downstream only when asked: the front ends turn it on (on the tsdemux
 * of the pipelines they watch only). */
gboolean sbg_is_tsdemux(GstElement *element);
void sbg_enable_scte35(GstElement *element);

/* The "snapback" debug category (GST_DEBUG=snapback:5), registered when the plugin loads. */
void sbg_debug_init(void);

G_END_DECLS

#endif
