/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_GST_TRACER_H
#define SNAPBACK_GST_TRACER_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define SNAPBACK_TYPE_TRACER (snapback_tracer_get_type())
G_DECLARE_FINAL_TYPE(SnapbackTracer, snapback_tracer, SNAPBACK, TRACER, GstTracer)

G_END_DECLS

#endif
