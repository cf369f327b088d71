/* SPDX-License-Identifier: Apache-2.0 */
/* The one view of a reader that its session calls send, outside the installed API: libsnapback's
 * session calls use it, and so do the Swift programs that link the readers alone (snapback cues, the
 * web bridge), so that every one sends the same list. Not installed, not exported from the .so. */
#ifndef SNAPBACK_CUES_WIRE_H
#define SNAPBACK_CUES_WIRE_H

#include <stddef.h>

#include "break_flags.h"
#include "snapback/cues.h"

/* The breaks snapback_session_open_cues and _update_cues send (a stitched stream's, open and unfilled
 * ones included), with their flags beside them. Valid until the next update or free. */
__attribute__((visibility("hidden"))) const snapback_break *sb_cues_wire_breaks(const snapback_cues *c, size_t *n,
                                                                               const struct sb_break_flags **flags);

#endif
