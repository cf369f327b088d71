/* SPDX-License-Identifier: Apache-2.0 */
/* libsnapback internals shared by client.c (connection, queue, dispatch) and messages.c (the mapping
 * between the public structs and the protobuf-c messages). Nothing here is exported. */
#ifndef SNAPBACK_INTERNAL_H
#define SNAPBACK_INTERNAL_H

#include <protobuf-c/protobuf-c.h>

#include "break_flags.h"
#include "snapback/snapback.h"
#include "snapback/v1/bookmarks.pb-c.h"
#include "snapback/v1/control.pb-c.h"
#include "snapback/v1/policy.pb-c.h"
#include "snapback/v1/push.pb-c.h"
#include "snapback/v1/status.pb-c.h"
#include "snapback/v1/timeline.pb-c.h"

#define SB_HIDDEN __attribute__((visibility("hidden")))

/* Method ids (PROTOCOL.md, "Method ids"). */
enum {
    M_HELLO = 0x0000, M_GET_STATUS = 0x0001,
    M_OPEN_SESSION = 0x0100, M_REPORT_PLAYHEAD, M_SEEK_STARTED, M_SEEK_ENDED, M_AD_BREAK_STARTED,
    M_AD_BREAK_ENDED, M_AD_STARTED, M_AD_ENDED, M_TRICK_PLAY_STARTED, M_TRICK_PLAY_ENDED,
    M_CONTENT_COMPLETE, M_UPDATE_BREAKS, M_PAUSE, M_CLOSE_SESSION, M_CONTENT_TIME_FOR_STREAM_TIME,
    M_STREAM_TIME_FOR_CONTENT_TIME, M_BREAK_AT, M_GET_SESSION_STATE,
    M_BOOKMARK_GET = 0x0200, M_BOOKMARK_LIST, M_BOOKMARK_DELETE, M_BOOKMARK_CLEAR,
};

/* A break as the library keeps it for a session: to reopen it, with the watched marks and live updates
 * the daemon gave it. */
struct sb_break {
    char *id;
    double start, duration;
    double *ad_durations;
    size_t n_ad_durations;
    bool watched;
    bool has_content_resume_offset;
    double content_resume_offset;
    struct sb_break_flags flags;
};

/* Deep copies and frees of break lists. */
/* flags: beside `in`, or NULL. */
SB_HIDDEN int sb_breaks_copy(const snapback_break *in, const struct sb_break_flags *flags, size_t n,
                             struct sb_break **out);
SB_HIDDEN void sb_breaks_free(struct sb_break *b, size_t n);
/* protobuf-c views of a break list: the array and its elements are allocated; the strings and
 * doubles point into `b`. */
SB_HIDDEN Snapback__V1__AdBreak **sb_breaks_to_wire(const struct sb_break *b, size_t n);
SB_HIDDEN Snapback__V1__AdBreak **sb_public_breaks_to_wire(const snapback_break *b, const struct sb_break_flags *flags,
                                                           size_t n);
SB_HIDDEN void sb_wire_breaks_free(Snapback__V1__AdBreak **w, size_t n);

/* Fills an OpenSessionRequest from the public parameters; the sub-messages are stored in *scratch
 * and freed by sb_open_request_release. */
struct sb_open_scratch {
    Snapback__V1__PolicyOverrides overrides;
    Snapback__V1__ResumeOptions resume;
    Snapback__V1__AdRules ad_rules;
    Snapback__V1__AdBreak **breaks;
    size_t n_breaks;
};
SB_HIDDEN int sb_open_request_fill(Snapback__V1__OpenSessionRequest *req, const snapback_session_params *p,
                                   const struct sb_break_flags *flags, struct sb_open_scratch *scratch);
/* snapback_session_open and snapback_update_breaks with flags beside the breaks (a break source's). */
SB_HIDDEN int sb_session_open(snapback_client *client, const snapback_session_params *params,
                              const struct sb_break_flags *flags, snapback_reply_cb cb, void *user,
                              snapback_session **out);
SB_HIDDEN int sb_update_breaks(snapback_session *s, const snapback_break *breaks, const struct sb_break_flags *flags,
                               size_t n, snapback_reply_cb cb, void *user);
SB_HIDDEN void sb_open_request_release(struct sb_open_scratch *scratch);

/* Decodes an OK reply body of `method` into reply->u; *cleanup is what to free after the callback
 * (sb_reply_release). SNAPBACK_OK or SNAPBACK_E_PROTOCOL / SNAPBACK_E_NO_MEMORY. */
struct sb_reply_storage {
    ProtobufCMessage *message;
    snapback_break *breaks;
    snapback_bookmark *bookmarks;
    snapback_break_state *break_states;
};
SB_HIDDEN int sb_reply_decode(unsigned method, const uint8_t *body, size_t len, snapback_reply *reply,
                              struct sb_reply_storage *storage);
SB_HIDDEN void sb_reply_release(struct sb_reply_storage *storage);

/* A Push body into the public struct; *message is freed by the caller with protobuf_c_message_free_unpacked. */
SB_HIDDEN int sb_push_decode(const uint8_t *body, size_t len, snapback_push *push, Snapback__V1__Push **message);

#endif
