/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_GST_ELEMENT_H
#define SNAPBACK_GST_ELEMENT_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define SNAPBACK_TYPE_SINK (snapback_sink_get_type())
G_DECLARE_FINAL_TYPE(SnapbackSink, snapback_sink, SNAPBACK, SINK, GstBin)

G_END_DECLS

#endif
