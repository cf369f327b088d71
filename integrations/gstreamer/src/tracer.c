/* SPDX-License-Identifier: Apache-2.0 */
/* The snapback tracer: GST_TRACERS="snapback" (parameters: "snapback(socket=…,verbose=yes)") with the
 * plugin on GST_PLUGIN_PATH puts every playbin and playbin3 of the process under snapback, with no
 * change to the application.
 *
 * Its hooks only find things and hand them to the core (core.h): a playbin being created, its state
 * changes, and the sink pads its streams reach (seen as a STREAM_START pushed into a sink element
 * inside it), where the core's probe then watches the stream. It also turns on SCTE-35 events on the
 * tsdemux such a playbin adds. The hooks run in whatever thread GStreamer runs them in and never wait
 * for the daemon. */
#include "tracer.h"

#include <string.h>

#include "core.h"

struct _SnapbackTracer {
    GstTracer parent;
};

G_DEFINE_TYPE(SnapbackTracer, snapback_tracer, GST_TYPE_TRACER)

static gboolean is_playbin(GstElement *element) {
    const char *type = G_OBJECT_TYPE_NAME(element);
    return !strcmp(type, "GstPlayBin") || !strcmp(type, "GstPlayBin3");
}

static void element_new(GObject *self, GstClockTime ts, GstElement *element) {
    (void)self;
    (void)ts;
    if (is_playbin(element)) sbg_pipe_for(element);
}

/* A tsdemux added inside a watched playbin (decodebin adds it once the stream is typefound, before
 * data flows) sends SCTE-35 sections downstream; one elsewhere in the process is left as it is. */
static void bin_add_post(GObject *self, GstClockTime ts, GstBin *bin, GstElement *element, gboolean result) {
    (void)self;
    (void)ts;
    if (!result || !sbg_is_tsdemux(element)) return;
    GstElement *top = sbg_toplevel(GST_OBJECT(bin));
    if (top && sbg_pipe_lookup(top)) sbg_enable_scte35(element);
    if (top) gst_object_unref(top);
}

/* A STREAM_START on its way into a sink element of a watched pipeline: that pad is watched from now on
 * (the probe sees this STREAM_START too: it is added before the event is delivered). */
static void pad_push_event_pre(GObject *self, GstClockTime ts, GstPad *pad, GstEvent *event) {
    (void)self;
    (void)ts;
    if (GST_EVENT_TYPE(event) != GST_EVENT_STREAM_START) return;
    GstPad *peer = gst_pad_get_peer(pad);
    if (!peer) return;
    GstElement *sink = gst_pad_get_parent_element(peer);
    if (sink && GST_OBJECT_FLAG_IS_SET(sink, GST_ELEMENT_FLAG_SINK) && !GST_IS_BIN(sink)) {
        GstElement *top = sbg_toplevel(GST_OBJECT(sink));
        sbg_pipe *p = top ? sbg_pipe_lookup(top) : NULL;
        if (p) sbg_pipe_attach_pad(p, peer);
        if (top) gst_object_unref(top);
    }
    if (sink) gst_object_unref(sink);
    gst_object_unref(peer);
}

static void change_state_pre(GObject *self, GstClockTime ts, GstElement *element, GstStateChange transition) {
    (void)self;
    (void)ts;
    sbg_pipe *p = sbg_pipe_lookup(element);
    if (!p) return;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) sbg_pipe_starting(p);
    else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) sbg_pipe_stopping(p);
}

static void change_state_post(GObject *self, GstClockTime ts, GstElement *element, GstStateChange transition,
                              GstStateChangeReturn result) {
    (void)self;
    (void)ts;
    (void)transition;
    (void)result;
    sbg_pipe *p = sbg_pipe_lookup(element);
    if (p) sbg_pipe_state_changed(p);
}

/* "key=value,key=value": the core's options. */
static void apply_params(SnapbackTracer *self) {
    char *params = NULL;
    g_object_get(self, "params", &params, NULL);
    if (!params || !*params) {
        g_free(params);
        return;
    }
    char **pairs = g_strsplit(params, ",", -1);
    for (char **kv = pairs; *kv; kv++) {
        char *eq = strchr(*kv, '=');
        if (!eq) {
            g_printerr("[snapback] tracer parameter \"%s\": key=value expected\n", *kv);
            continue;
        }
        *eq = '\0';
        char *error = NULL;
        if (!sbg_core_configure(g_strstrip(*kv), g_strstrip(eq + 1), &error)) {
            g_printerr("[snapback] tracer parameter: %s\n", error);
            g_free(error);
        }
    }
    g_strfreev(pairs);
    g_free(params);
}

static void snapback_tracer_constructed(GObject *object) {
    SnapbackTracer *self = SNAPBACK_TRACER(object);
    G_OBJECT_CLASS(snapback_tracer_parent_class)->constructed(object);
    apply_params(self);
    /* The core (its thread, its connection) starts with the first playbin: a process that never makes
     * one (gst-inspect-1.0, the plugin scanner) never connects to the daemon. */
    GstTracer *t = GST_TRACER(self);
    gst_tracing_register_hook(t, "element-new", G_CALLBACK(element_new));
    gst_tracing_register_hook(t, "bin-add-post", G_CALLBACK(bin_add_post));
    gst_tracing_register_hook(t, "pad-push-event-pre", G_CALLBACK(pad_push_event_pre));
    gst_tracing_register_hook(t, "element-change-state-pre", G_CALLBACK(change_state_pre));
    gst_tracing_register_hook(t, "element-change-state-post", G_CALLBACK(change_state_post));
}

static void snapback_tracer_class_init(SnapbackTracerClass *klass) {
    G_OBJECT_CLASS(klass)->constructed = snapback_tracer_constructed;
}

static void snapback_tracer_init(SnapbackTracer *self) {
    (void)self;
}
