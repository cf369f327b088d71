/* SPDX-License-Identifier: Apache-2.0 */
/* The mapping between libsnapback's public structs and the protobuf-c messages generated from
 * proto/snapback/v1 (the same generated code the daemon uses). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

void sb_breaks_free(struct sb_break *b, size_t n) {
    if (!b) return;
    for (size_t i = 0; i < n; i++) {
        free(b[i].id);
        free(b[i].ad_durations);
    }
    free(b);
}

int sb_breaks_copy(const snapback_break *in, const struct sb_break_flags *flags, size_t n, struct sb_break **out) {
    *out = NULL;
    if (n == 0) return SNAPBACK_OK;
    if (!in) return SNAPBACK_E_INVALID;
    struct sb_break *b = calloc(n, sizeof *b);
    if (!b) return SNAPBACK_E_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        b[i].id = dup_or_empty(in[i].id);
        b[i].start = in[i].start;
        b[i].duration = in[i].duration;
        b[i].watched = in[i].watched;
        b[i].has_content_resume_offset = in[i].has_content_resume_offset;
        b[i].content_resume_offset = in[i].has_content_resume_offset ? in[i].content_resume_offset : 0;
        if (flags) b[i].flags = flags[i];
        if (!b[i].id) goto nomem;
        if (in[i].n_ad_durations) {
            if (!in[i].ad_durations) {
                sb_breaks_free(b, n);
                return SNAPBACK_E_INVALID;
            }
            b[i].ad_durations = malloc(in[i].n_ad_durations * sizeof(double));
            if (!b[i].ad_durations) goto nomem;
            memcpy(b[i].ad_durations, in[i].ad_durations, in[i].n_ad_durations * sizeof(double));
            b[i].n_ad_durations = in[i].n_ad_durations;
        }
    }
    *out = b;
    return SNAPBACK_OK;
nomem:
    sb_breaks_free(b, n);
    return SNAPBACK_E_NO_MEMORY;
}

/* One allocation holds the pointer array and the messages. */
static Snapback__V1__AdBreak **wire_alloc(size_t n) {
    if (n == 0) n = 1;
    void *block = calloc(1, n * (sizeof(Snapback__V1__AdBreak *) + sizeof(Snapback__V1__AdBreak)));
    if (!block) return NULL;
    Snapback__V1__AdBreak **ptrs = block;
    Snapback__V1__AdBreak *msgs = (Snapback__V1__AdBreak *)(ptrs + n);
    for (size_t i = 0; i < n; i++) {
        Snapback__V1__AdBreak init = SNAPBACK__V1__AD_BREAK__INIT;
        msgs[i] = init;
        ptrs[i] = &msgs[i];
    }
    return ptrs;
}

static void set_resume_offset(Snapback__V1__AdBreak *w, bool has, double offset) {
    if (!has) return;
    w->_content_resume_offset_case = SNAPBACK__V1__AD_BREAK___CONTENT_RESUME_OFFSET_CONTENT_RESUME_OFFSET;
    w->content_resume_offset = offset;
}

static void set_flags(Snapback__V1__AdBreak *w, const struct sb_break_flags *f) {
    if (!f) return;
    w->open = f->open;
    w->unfilled = f->unfilled;
    w->restrict_skip = f->restrict_skip;
    w->restrict_jump = f->restrict_jump;
}

Snapback__V1__AdBreak **sb_breaks_to_wire(const struct sb_break *b, size_t n) {
    Snapback__V1__AdBreak **w = wire_alloc(n);
    if (!w) return NULL;
    for (size_t i = 0; i < n; i++) {
        w[i]->id = b[i].id;
        w[i]->start = b[i].start;
        w[i]->duration = b[i].duration;
        w[i]->n_ad_durations = b[i].n_ad_durations;
        w[i]->ad_durations = b[i].ad_durations;
        w[i]->watched = b[i].watched;
        set_resume_offset(w[i], b[i].has_content_resume_offset, b[i].content_resume_offset);
        set_flags(w[i], &b[i].flags);
    }
    return w;
}

Snapback__V1__AdBreak **sb_public_breaks_to_wire(const snapback_break *b, const struct sb_break_flags *flags,
                                                 size_t n) {
    Snapback__V1__AdBreak **w = wire_alloc(n);
    if (!w) return NULL;
    for (size_t i = 0; i < n; i++) {
        w[i]->id = (char *)(b[i].id ? b[i].id : "");
        w[i]->start = b[i].start;
        w[i]->duration = b[i].duration;
        w[i]->n_ad_durations = b[i].ad_durations ? b[i].n_ad_durations : 0;
        w[i]->ad_durations = (double *)b[i].ad_durations;
        w[i]->watched = b[i].watched;
        set_resume_offset(w[i], b[i].has_content_resume_offset, b[i].content_resume_offset);
        set_flags(w[i], flags ? &flags[i] : NULL);
    }
    return w;
}

void sb_wire_breaks_free(Snapback__V1__AdBreak **w, size_t n) {
    (void)n;
    free(w);
}

#define OPT(field, CASE)                           \
    do {                                           \
        if (o->has_##field) {                      \
            w->_##field##_case = CASE;             \
            w->field = o->field;                   \
        }                                          \
    } while (0)

static void overrides_fill(Snapback__V1__PolicyOverrides *w, const snapback_policy_overrides *o) {
    w->skipped_break_choice = o->skipped_break_choice;
    w->seek_gate = o->seek_gate;
    w->return_to_target = o->return_to_target;
    w->landing_in_unwatched_break = o->landing_in_unwatched_break;
    w->watched_when = o->watched_when;
    w->watched_break_on_playback = o->watched_break_on_playback;
    w->resume_breaks = o->resume_breaks;
    OPT(enforce_backward_seeks, SNAPBACK__V1__POLICY_OVERRIDES___ENFORCE_BACKWARD_SEEKS_ENFORCE_BACKWARD_SEEKS);
    OPT(skip_watched_break_on_landing,
        SNAPBACK__V1__POLICY_OVERRIDES___SKIP_WATCHED_BREAK_ON_LANDING_SKIP_WATCHED_BREAK_ON_LANDING);
    OPT(refuse_seeks_during_unwatched_break,
        SNAPBACK__V1__POLICY_OVERRIDES___REFUSE_SEEKS_DURING_UNWATCHED_BREAK_REFUSE_SEEKS_DURING_UNWATCHED_BREAK);
    OPT(snapback_landing_offset, SNAPBACK__V1__POLICY_OVERRIDES___SNAPBACK_LANDING_OFFSET_SNAPBACK_LANDING_OFFSET);
    OPT(cooldown, SNAPBACK__V1__POLICY_OVERRIDES___COOLDOWN_COOLDOWN);
    OPT(trick_play_as_seek, SNAPBACK__V1__POLICY_OVERRIDES___TRICK_PLAY_AS_SEEK_TRICK_PLAY_AS_SEEK);
    OPT(preroll_disabled, SNAPBACK__V1__POLICY_OVERRIDES___PREROLL_DISABLED_PREROLL_DISABLED);
    OPT(midrolls_disabled, SNAPBACK__V1__POLICY_OVERRIDES___MIDROLLS_DISABLED_MIDROLLS_DISABLED);
    OPT(live_snapback, SNAPBACK__V1__POLICY_OVERRIDES___LIVE_SNAPBACK_LIVE_SNAPBACK);
    OPT(live_bookmarks, SNAPBACK__V1__POLICY_OVERRIDES___LIVE_BOOKMARKS_LIVE_BOOKMARKS);
    OPT(max_snapbacks_per_break, SNAPBACK__V1__POLICY_OVERRIDES___MAX_SNAPBACKS_PER_BREAK_MAX_SNAPBACKS_PER_BREAK);
    OPT(coverage_tolerance, SNAPBACK__V1__POLICY_OVERRIDES___COVERAGE_TOLERANCE_COVERAGE_TOLERANCE);
    OPT(bookmark_interval, SNAPBACK__V1__POLICY_OVERRIDES___BOOKMARK_INTERVAL_BOOKMARK_INTERVAL);
    OPT(finished_margin, SNAPBACK__V1__POLICY_OVERRIDES___FINISHED_MARGIN_FINISHED_MARGIN);
}
#undef OPT

int sb_open_request_fill(Snapback__V1__OpenSessionRequest *req, const snapback_session_params *p,
                         const struct sb_break_flags *flags,
                         struct sb_open_scratch *s) {
    Snapback__V1__PolicyOverrides o = SNAPBACK__V1__POLICY_OVERRIDES__INIT;
    Snapback__V1__ResumeOptions r = SNAPBACK__V1__RESUME_OPTIONS__INIT;
    Snapback__V1__AdRules a = SNAPBACK__V1__AD_RULES__INIT;
    s->overrides = o;
    s->resume = r;
    s->ad_rules = a;
    s->breaks = NULL;
    s->n_breaks = 0;
    req->stream_id = (char *)(p->stream_id ? p->stream_id : "");
    req->content_id = (char *)(p->content_id ? p->content_id : "");
    req->profile = (char *)(p->profile ? p->profile : "");
    req->kind = (Snapback__V1__SessionKind)p->kind;
    req->policy_preset = (char *)(p->policy_preset ? p->policy_preset : "");
    if (p->has_content_duration) {
        req->_content_duration_case = SNAPBACK__V1__OPEN_SESSION_REQUEST___CONTENT_DURATION_CONTENT_DURATION;
        req->content_duration = p->content_duration;
    }
    if (p->n_breaks) {
        if (!p->breaks) return SNAPBACK_E_INVALID;
        s->breaks = sb_public_breaks_to_wire(p->breaks, flags, p->n_breaks);
        if (!s->breaks) return SNAPBACK_E_NO_MEMORY;
        s->n_breaks = p->n_breaks;
        req->breaks = s->breaks;
        req->n_breaks = p->n_breaks;
    }
    if (p->overrides) {
        overrides_fill(&s->overrides, p->overrides);
        req->policy_overrides = &s->overrides;
    }
    if (p->resume) {
        s->resume.use_bookmark = p->resume->use_bookmark;
        if (p->resume->has_resume_content_time) {
            s->resume._resume_content_time_case = SNAPBACK__V1__RESUME_OPTIONS___RESUME_CONTENT_TIME_RESUME_CONTENT_TIME;
            s->resume.resume_content_time = p->resume->resume_content_time;
        }
        req->resume = &s->resume;
    }
    if (p->ad_rules) {
        const snapback_ad_rules *ar = p->ad_rules;
        if (ar->n_midroll_times && !ar->midroll_times) return SNAPBACK_E_INVALID;
        s->ad_rules.preroll = ar->preroll;
        s->ad_rules.n_midroll_times = ar->n_midroll_times;
        s->ad_rules.midroll_times = (double *)ar->midroll_times;
        s->ad_rules.midroll_every = ar->midroll_every;
        s->ad_rules.postroll = ar->postroll;
        if (ar->has_break_duration) {
            s->ad_rules._break_duration_case = SNAPBACK__V1__AD_RULES___BREAK_DURATION_BREAK_DURATION;
            s->ad_rules.break_duration = ar->break_duration;
        }
        req->ad_rules = &s->ad_rules;
    }
    return SNAPBACK_OK;
}

void sb_open_request_release(struct sb_open_scratch *s) {
    sb_wire_breaks_free(s->breaks, s->n_breaks);
    s->breaks = NULL;
}

/* ---------------------------------------------------------------------------------------------- */

static void break_view(snapback_break *out, const Snapback__V1__AdBreak *in) {
    out->id = in->id;
    out->start = in->start;
    out->duration = in->duration;
    out->ad_durations = in->ad_durations;
    out->n_ad_durations = in->n_ad_durations;
    out->watched = in->watched;
    out->has_content_resume_offset = in->_content_resume_offset_case != 0;
    out->content_resume_offset = out->has_content_resume_offset ? in->content_resume_offset : 0;
}

/* Values newer than this library read as UNSPECIFIED (the header's promise). */
static snapback_skip_reason skip_reason_view(int reason) {
    return reason >= 0 && reason <= SNAPBACK_SKIP_DISABLED ? (snapback_skip_reason)reason : SNAPBACK_SKIP_UNSPECIFIED;
}

static void break_state_view(snapback_break_state *out, const Snapback__V1__BreakState *in) {
    out->break_id = in->break_id;
    out->position = (int)in->position >= 0 && (int)in->position <= SNAPBACK_POSITION_POSTROLL
                        ? (snapback_break_position)in->position : SNAPBACK_POSITION_UNSPECIFIED;
    out->watched = in->watched;
    out->exempt = in->exempt;
    out->skip_reason = skip_reason_view((int)in->skip_reason);
}

static void bookmark_view(snapback_bookmark *out, const Snapback__V1__Bookmark *in) {
    out->content_id = in->content_id;
    out->profile = in->profile;
    out->content_time = in->content_time;
    out->stream_time = in->stream_time;
    out->stream_id = in->stream_id;
    out->updated_at = in->updated_at;
    out->finished = in->finished;
}

static const ProtobufCMessageDescriptor *reply_descriptor(unsigned method) {
    switch (method) {
    case M_HELLO: return &snapback__v1__hello_reply__descriptor;
    case M_GET_STATUS: return &snapback__v1__status_reply__descriptor;
    case M_OPEN_SESSION: return &snapback__v1__open_session_reply__descriptor;
    case M_CONTENT_TIME_FOR_STREAM_TIME: return &snapback__v1__content_time_reply__descriptor;
    case M_STREAM_TIME_FOR_CONTENT_TIME: return &snapback__v1__stream_time_reply__descriptor;
    case M_BREAK_AT: return &snapback__v1__break_at_reply__descriptor;
    case M_GET_SESSION_STATE: return &snapback__v1__session_state_reply__descriptor;
    case M_BOOKMARK_GET: return &snapback__v1__bookmark__descriptor;
    case M_BOOKMARK_LIST: return &snapback__v1__list_bookmarks_reply__descriptor;
    case M_BOOKMARK_DELETE: return &snapback__v1__delete_bookmark_reply__descriptor;
    case M_BOOKMARK_CLEAR: return &snapback__v1__clear_bookmarks_reply__descriptor;
    default:
        if (method >= M_REPORT_PLAYHEAD && method <= M_CLOSE_SESSION) return &snapback__v1__event_reply__descriptor;
        return NULL;
    }
}

int sb_reply_decode(unsigned method, const uint8_t *body, size_t len, snapback_reply *reply,
                    struct sb_reply_storage *st) {
    memset(st, 0, sizeof *st);
    const ProtobufCMessageDescriptor *d = reply_descriptor(method);
    if (!d) return SNAPBACK_E_PROTOCOL;
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, body);
    if (!m) return SNAPBACK_E_PROTOCOL;
    st->message = m;
    switch (method) {
    case M_GET_STATUS: {
        const Snapback__V1__StatusReply *r = (const void *)m;
        snapback_status_info *o = &reply->u.status_info;
        o->uptime = r->uptime;
        o->server_version = r->server_version;
        o->protocol_version = r->protocol_version;
        o->connections = r->connections;
        o->sessions = r->sessions;
        o->requests = r->requests;
        o->pushes = r->pushes;
        o->store_kind = r->store ? r->store->kind : "";
        o->store_path = r->store ? r->store->path : "";
        o->store_error = r->store ? r->store->error : "";
        o->store_bookmarks = r->store ? r->store->bookmarks : 0;
        break;
    }
    case M_OPEN_SESSION: {
        const Snapback__V1__OpenSessionReply *r = (const void *)m;
        snapback_opened *o = &reply->u.opened;
        o->session_id = r->session_id;
        o->has_start_stream_time = r->_start_stream_time_case != 0;
        o->start_stream_time = o->has_start_stream_time ? r->start_stream_time : 0;
        o->breaks_before_resume = (const char *const *)r->breaks_before_resume;
        o->n_breaks_before_resume = r->n_breaks_before_resume;
        o->policy_preset = r->policy_preset;
        o->has_resume_content_time = r->_resume_content_time_case != 0;
        o->resume_content_time = o->has_resume_content_time ? r->resume_content_time : 0;
        o->resumed_from_bookmark = r->resumed_from_bookmark;
        o->last_push_seq = r->last_push_seq;
        break;
    }
    case M_CONTENT_TIME_FOR_STREAM_TIME:
        reply->u.content_time = ((const Snapback__V1__ContentTimeReply *)(const void *)m)->content_time;
        break;
    case M_STREAM_TIME_FOR_CONTENT_TIME:
        reply->u.stream_time = ((const Snapback__V1__StreamTimeReply *)(const void *)m)->stream_time;
        break;
    case M_BREAK_AT: {
        const Snapback__V1__BreakAtReply *r = (const void *)m;
        snapback_break_at_reply *o = &reply->u.break_at;
        o->has_previous = r->previous != NULL;
        o->has_next = r->next != NULL;
        if (r->previous) break_view(&o->previous, r->previous);
        if (r->next) break_view(&o->next, r->next);
        break;
    }
    case M_GET_SESSION_STATE: {
        const Snapback__V1__SessionStateReply *r = (const void *)m;
        snapback_session_state *o = &reply->u.state;
        o->phase = (snapback_session_phase)r->phase;
        if ((unsigned)o->phase > SNAPBACK_PHASE_CLOSED) o->phase = SNAPBACK_PHASE_UNSPECIFIED;
        o->current_break_id = r->current_break_id;
        o->stream_time = r->stream_time;
        o->content_time = r->content_time;
        o->playing = r->playing;
        o->rate = r->rate;
        o->has_pending_return = r->_pending_return_case != 0;
        o->pending_return = o->has_pending_return ? r->pending_return : 0;
        o->has_cooldown_until = r->_cooldown_until_case != 0;
        o->cooldown_until = o->has_cooldown_until ? r->cooldown_until : 0;
        o->has_last_bookmark_content_time = r->_last_bookmark_content_time_case != 0;
        o->last_bookmark_content_time = o->has_last_bookmark_content_time ? r->last_bookmark_content_time : 0;
        if (r->n_breaks) {
            st->breaks = calloc(r->n_breaks, sizeof *st->breaks);
            if (!st->breaks) return SNAPBACK_E_NO_MEMORY;
            for (size_t i = 0; i < r->n_breaks; i++) break_view(&st->breaks[i], r->breaks[i]);
        }
        o->breaks = st->breaks;
        o->n_breaks = r->n_breaks;
        if (r->n_break_states) {
            st->break_states = calloc(r->n_break_states, sizeof *st->break_states);
            if (!st->break_states) return SNAPBACK_E_NO_MEMORY;
            for (size_t i = 0; i < r->n_break_states; i++) break_state_view(&st->break_states[i], r->break_states[i]);
        }
        o->break_states = st->break_states;
        o->n_break_states = r->n_break_states;
        break;
    }
    case M_BOOKMARK_GET:
        bookmark_view(&reply->u.bookmark, (const Snapback__V1__Bookmark *)(const void *)m);
        break;
    case M_BOOKMARK_LIST: {
        const Snapback__V1__ListBookmarksReply *r = (const void *)m;
        if (r->n_bookmarks) {
            st->bookmarks = calloc(r->n_bookmarks, sizeof *st->bookmarks);
            if (!st->bookmarks) return SNAPBACK_E_NO_MEMORY;
            for (size_t i = 0; i < r->n_bookmarks; i++) bookmark_view(&st->bookmarks[i], r->bookmarks[i]);
        }
        reply->u.list.bookmarks = st->bookmarks;
        reply->u.list.n_bookmarks = r->n_bookmarks;
        reply->u.list.next_page_token = r->next_page_token;
        break;
    }
    case M_BOOKMARK_DELETE:
        reply->u.deleted = ((const Snapback__V1__DeleteBookmarkReply *)(const void *)m)->deleted;
        break;
    case M_BOOKMARK_CLEAR:
        reply->u.cleared = ((const Snapback__V1__ClearBookmarksReply *)(const void *)m)->deleted;
        break;
    case M_HELLO:
        break; /* the client keeps the message itself */
    default:
        reply->u.last_push_seq = ((const Snapback__V1__EventReply *)(const void *)m)->last_push_seq;
        break;
    }
    return SNAPBACK_OK;
}

void sb_reply_release(struct sb_reply_storage *st) {
    if (st->message) protobuf_c_message_free_unpacked(st->message, NULL);
    free(st->breaks);
    free(st->bookmarks);
    free(st->break_states);
    memset(st, 0, sizeof *st);
}

int sb_push_decode(const uint8_t *body, size_t len, snapback_push *p, Snapback__V1__Push **out) {
    Snapback__V1__Push *m = snapback__v1__push__unpack(NULL, len, body);
    *out = m;
    if (!m) return SNAPBACK_E_PROTOCOL;
    memset(p, 0, sizeof *p);
    p->seq = m->seq;
    p->reason = m->reason;
    switch (m->kind_case) {
    case SNAPBACK__V1__PUSH__KIND_SEEK:
        p->kind = SNAPBACK_PUSH_SEEK;
        p->u.seek.stream_time = m->seek->stream_time;
        /* An unknown reason reads as UNSPECIFIED; the player still seeks (PROTOCOL.md). */
        p->u.seek.reason = (unsigned)m->seek->reason <= SNAPBACK_SEEK_SEEK_REFUSED_DURING_AD
                               ? (snapback_seek_reason)m->seek->reason : SNAPBACK_SEEK_UNSPECIFIED;
        break;
    case SNAPBACK__V1__PUSH__KIND_BREAK_WATCHED:
        p->kind = SNAPBACK_PUSH_BREAK_WATCHED;
        p->u.break_watched.break_id = m->break_watched->break_id;
        break;
    case SNAPBACK__V1__PUSH__KIND_BOOKMARK_SAVED:
        p->kind = SNAPBACK_PUSH_BOOKMARK_SAVED;
        p->u.bookmark_saved.content_time = m->bookmark_saved->content_time;
        p->u.bookmark_saved.stream_time = m->bookmark_saved->stream_time;
        p->u.bookmark_saved.trigger = (unsigned)m->bookmark_saved->trigger <= SNAPBACK_BOOKMARK_SNAPBACK_RETURN
                                          ? (snapback_bookmark_trigger)m->bookmark_saved->trigger
                                          : SNAPBACK_BOOKMARK_UNSPECIFIED;
        break;
    case SNAPBACK__V1__PUSH__KIND_BOOKMARK_CLEARED:
        p->kind = SNAPBACK_PUSH_BOOKMARK_CLEARED;
        break;
    case SNAPBACK__V1__PUSH__KIND_PLAY_BREAK:
        p->kind = SNAPBACK_PUSH_PLAY_BREAK;
        p->u.play_break.break_id = m->play_break->break_id;
        break;
    case SNAPBACK__V1__PUSH__KIND_ALL_ADS_COMPLETED:
        p->kind = SNAPBACK_PUSH_ALL_ADS_COMPLETED;
        break;
    case SNAPBACK__V1__PUSH__KIND_BREAK_SKIPPED:
        p->kind = SNAPBACK_PUSH_BREAK_SKIPPED;
        p->u.break_skipped.break_id = m->break_skipped->break_id;
        p->u.break_skipped.reason = skip_reason_view((int)m->break_skipped->reason);
        break;
    case SNAPBACK__V1__PUSH__KIND_SESSION_ERROR:
        p->kind = SNAPBACK_PUSH_SESSION_ERROR;
        /* A code outside gRPC's 0..16 must not read as one of the library's negative codes. */
        p->u.session_error.code = m->session_error->code <= SNAPBACK_UNAUTHENTICATED ? (int)m->session_error->code
                                                                                      : SNAPBACK_UNKNOWN;
        p->u.session_error.message = m->session_error->message;
        break;
    default:
        /* A kind newer than this library (its field is among the unknown ones): seq and reason only. */
        p->kind = SNAPBACK_PUSH_UNKNOWN;
        break;
    }
    return SNAPBACK_OK;
}
