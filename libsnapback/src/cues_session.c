/* SPDX-License-Identifier: Apache-2.0 */
/* The break sources' session calls: a manifest's breaks into OpenSession and UpdateBreaks. Apart from
 * cues.c so that the readers build without the client (the snapback CLI links them alone). */
#include <string.h>

#include "cues_internal.h"

int snapback_session_open_cues(snapback_client *client, const snapback_session_params *params,
                               const snapback_cues *cues, snapback_reply_cb callback, void *user,
                               snapback_session **out) {
    if (!params || !cues || !snapback_cues_format_of(cues)) return SNAPBACK_E_INVALID;
    snapback_session_params p = *params;
    snapback_ad_rules rules;
    if (snapback_cues_format_of(cues) == SNAPBACK_CUES_VMAP) {
        snapback_cues_ad_rules(cues, &rules);
        p.ad_rules = &rules;
        p.breaks = NULL;
        p.n_breaks = 0;
    } else {
        p.breaks = snapback_cues_session_breaks(cues, &p.n_breaks);
        p.ad_rules = NULL;
        if (snapback_cues_is_live(cues)) p.kind = SNAPBACK_SESSION_LIVE;
    }
    return snapback_session_open(client, &p, callback, user, out);
}

int snapback_session_update_cues(snapback_session *session, const snapback_cues *cues, snapback_reply_cb callback,
                                 void *user) {
    snapback_cues_format f = snapback_cues_format_of(cues);
    if (!cues || !f || f == SNAPBACK_CUES_VMAP) return SNAPBACK_E_INVALID;
    size_t n;
    const snapback_break *b = snapback_cues_session_breaks(cues, &n);
    return snapback_update_breaks(session, b, n, callback, user);
}
