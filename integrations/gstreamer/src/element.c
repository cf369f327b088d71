/* SPDX-License-Identifier: Apache-2.0 */
/* snapbacksink: a bin around a video sink ("sink", autovideosink by default) that puts the pipeline it
 * is in under snapback, for players that can choose their video sink (playbin's video-sink, a sink
 * name in a settings file) but cannot load a tracer:
 *
 *     gst-launch-1.0 playbin uri=file:///v/movie.mkv video-sink="snapbacksink sink=autovideosink"
 *
 * Its sink pad is the one the core watches (core.h): the stream's events, its buffers, and the SEEKs
 * the pipeline hands the video sink. Its own state changes follow the pipeline's: READY→PAUSED starts
 * a playback, PAUSED→READY ends it. It turns on SCTE-35 events on any tsdemux in the pipeline, as the
 * tracer does. */
#include "element.h"

#include "core.h"

struct _SnapbackSink {
    GstBin parent;
    GstPad *ghost;
    GstElement *sink;
    char *content_id;
    sbg_pipe *pipe;
    GstElement *top;
    gulong deep_added;
};

enum { PROP_0, PROP_SINK, PROP_CONTENT_ID };

G_DEFINE_TYPE(SnapbackSink, snapback_sink, GST_TYPE_BIN)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void set_sink(SnapbackSink *self, GstElement *sink) {
    if (self->sink) {
        gst_ghost_pad_set_target(GST_GHOST_PAD(self->ghost), NULL);
        gst_bin_remove(GST_BIN(self), self->sink);
        self->sink = NULL;
    }
    if (!sink) return;
    if (!gst_bin_add(GST_BIN(self), sink)) return;
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    if (!pad || !gst_ghost_pad_set_target(GST_GHOST_PAD(self->ghost), pad)) {
        GST_ELEMENT_WARNING(self, CORE, PAD, ("the sink %s has no \"sink\" pad", GST_OBJECT_NAME(sink)), (NULL));
        gst_bin_remove(GST_BIN(self), sink);
    } else {
        self->sink = sink;
    }
    if (pad) gst_object_unref(pad);
}

static void deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin;
    (void)sub;
    (void)data;
    sbg_enable_scte35(element);
}

static void enable_scte35_in(GstElement *top) {
    if (!GST_IS_BIN(top)) return;
    GstIterator *it = gst_bin_iterate_recurse(GST_BIN(top));
    GValue v = G_VALUE_INIT;
    while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
        sbg_enable_scte35(g_value_get_object(&v));
        g_value_reset(&v);
    }
    g_value_unset(&v);
    gst_iterator_free(it);
}

static void attach(SnapbackSink *self) {
    GstElement *top = sbg_toplevel(GST_OBJECT(self));
    if (!top) return;
    if (top != self->top) {
        if (self->top) {
            if (self->deep_added) g_signal_handler_disconnect(self->top, self->deep_added);
            gst_object_unref(self->top);
        }
        self->top = top;
        self->deep_added = GST_IS_BIN(top) ? g_signal_connect(top, "deep-element-added", G_CALLBACK(deep_element_added), NULL) : 0;
        self->pipe = sbg_pipe_for(top);
    } else {
        gst_object_unref(top);
    }
    enable_scte35_in(self->top);
    if (!self->pipe) return;
    sbg_pipe_set_content_id(self->pipe, self->content_id);
    sbg_pipe_attach_pad(self->pipe, self->ghost);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    SnapbackSink *self = SNAPBACK_SINK(element);
    switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
        if (!self->sink) {
            GstElement *sink = gst_element_factory_make("autovideosink", NULL);
            if (!sink) {
                GST_ELEMENT_ERROR(self, CORE, MISSING_PLUGIN, ("no sink set and no autovideosink"), (NULL));
                return GST_STATE_CHANGE_FAILURE;
            }
            set_sink(self, sink);
        }
        break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
        attach(self);
        if (self->pipe) sbg_pipe_starting(self->pipe);
        break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
        if (self->pipe) sbg_pipe_stopping(self->pipe);
        break;
    default: break;
    }
    GstStateChangeReturn ret = GST_ELEMENT_CLASS(snapback_sink_parent_class)->change_state(element, transition);
    if (self->pipe && (transition == GST_STATE_CHANGE_PAUSED_TO_PLAYING || transition == GST_STATE_CHANGE_PLAYING_TO_PAUSED))
        sbg_pipe_state_changed(self->pipe);
    return ret;
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    SnapbackSink *self = SNAPBACK_SINK(object);
    switch (id) {
    case PROP_SINK: {
        GST_OBJECT_LOCK(self);
        gboolean idle = GST_STATE(self) == GST_STATE_NULL;
        GST_OBJECT_UNLOCK(self);
        if (idle) set_sink(self, g_value_get_object(value));
        else g_warning("snapbacksink: the sink can only be changed in the NULL state");
        break;
    }
    case PROP_CONTENT_ID:
        g_free(self->content_id);
        self->content_id = g_value_dup_string(value);
        if (self->pipe) sbg_pipe_set_content_id(self->pipe, self->content_id);
        break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    SnapbackSink *self = SNAPBACK_SINK(object);
    switch (id) {
    case PROP_SINK: g_value_set_object(value, self->sink); break;
    case PROP_CONTENT_ID: g_value_set_string(value, self->content_id); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void dispose(GObject *object) {
    SnapbackSink *self = SNAPBACK_SINK(object);
    if (self->top) {
        if (self->deep_added) g_signal_handler_disconnect(self->top, self->deep_added);
        self->deep_added = 0;
        gst_clear_object(&self->top);
    }
    G_OBJECT_CLASS(snapback_sink_parent_class)->dispose(object);
}

static void finalize(GObject *object) {
    g_free(SNAPBACK_SINK(object)->content_id);
    G_OBJECT_CLASS(snapback_sink_parent_class)->finalize(object);
}

static void snapback_sink_class_init(SnapbackSinkClass *klass) {
    GObjectClass *o = G_OBJECT_CLASS(klass);
    GstElementClass *e = GST_ELEMENT_CLASS(klass);
    o->set_property = set_property;
    o->get_property = get_property;
    o->dispose = dispose;
    o->finalize = finalize;
    g_object_class_install_property(o, PROP_SINK,
                                    g_param_spec_object("sink", "Sink", "The video sink it wraps (default: autovideosink)",
                                                        GST_TYPE_ELEMENT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(
        o, PROP_CONTENT_ID,
        g_param_spec_string("content-id", "Content id",
                            "The content id of what plays (default: the sidecar's, the stream's content_id tag, else the "
                            "file name without its extension)",
                            NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    e->change_state = change_state;
    gst_element_class_add_static_pad_template(e, &sink_template);
    gst_element_class_set_static_metadata(e, "snapback video sink", "Sink/Video",
                                          "Puts the pipeline under snapbackd's ad timeline: snapback, bookmarks, ad policy",
                                          "snapback");
}

static void snapback_sink_init(SnapbackSink *self) {
    self->ghost = gst_ghost_pad_new_no_target_from_template("sink", gst_static_pad_template_get(&sink_template));
    gst_element_add_pad(GST_ELEMENT(self), self->ghost);
    GST_OBJECT_FLAG_SET(self, GST_ELEMENT_FLAG_SINK);
}
