/* SPDX-License-Identifier: Apache-2.0 */
/* The snapback GStreamer plugin: the "snapback" tracer and the "snapbacksink" element. */
#include <gst/gst.h>

#include "core.h"
#include "element.h"
#include "tracer.h"

#define PACKAGE "snapback"

static gboolean plugin_init(GstPlugin *plugin) {
    sbg_debug_init();
    return gst_tracer_register(plugin, "snapback", SNAPBACK_TYPE_TRACER) &&
           gst_element_register(plugin, "snapbacksink", GST_RANK_NONE, SNAPBACK_TYPE_SINK);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, snapback, "Puts GStreamer players under snapbackd's ad timeline",
                  plugin_init, SNAPBACK_GST_VERSION, "unknown", "snapback", "snapback")
