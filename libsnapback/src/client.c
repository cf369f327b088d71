/* SPDX-License-Identifier: Apache-2.0 */
/* libsnapback: the connection, the request queue, dispatch, reconnection and the public calls.
 *
 * Life of a call: a public function encodes the request body (without the session id when the call
 * names a session) and appends it to the waiting FIFO; drain_waiting() turns the FIFO's head into a
 * frame in the output buffer once the connection is ready and the head's session has a daemon id;
 * the frame's call id then keys it in the pending list until its RESPONSE. The session id is added
 * only when the frame is built (a leading field 1; protobuf fields may come in any order), which is
 * what lets a player queue events on a session whose OpenSession, or whose reopen after a daemon
 * restart, has not been answered yet. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define HEADER_SIZE 12
#define TYPE_REQUEST 1
#define TYPE_RESPONSE 2
#define TYPE_PUSH 3
/* PROTOCOL.md, Limits: frames from the server are at most 16 MiB. */
#define MAX_INBOUND_BODY (16u << 20)
#define DEFAULT_QUEUE_BYTES (1u << 20)
#define READ_CHUNK 65536

enum conn_state { CONN_IDLE, CONN_DOWN, CONN_HELLO, CONN_READY };
/* A session's one state. OPENING: its OpenSession is not answered yet. OPEN: the daemon holds it.
 * DOWN: the connection went; reopened at the next Hello. REOPENING: its reopen is in flight (the
 * daemon's resume pushes are the library's, not the player's). CLOSING: its CloseSession is queued or
 * in flight; CLOSING_REOPENING the same, closed by the player while its reopen was in flight (the
 * close waits for the reopened id). */
enum session_state { SS_OPENING, SS_OPEN, SS_DOWN, SS_REOPENING, SS_CLOSING_REOPENING, SS_CLOSING };
enum call_kind { CALL_USER, CALL_HELLO, CALL_OPEN, CALL_REOPEN, CALL_CLOSE, CALL_UPDATE_BREAKS };

struct call {
    struct call *next;
    uint32_t id;
    uint16_t method;
    uint8_t kind;
    snapback_session *session;
    uint8_t *body;
    size_t len;
    snapback_reply_cb cb;
    void *user;
    /* CALL_UPDATE_BREAKS: the list kept once the daemon accepts it. */
    struct sb_break *new_breaks;
    size_t n_new_breaks;
    /* On the done list: how it failed. */
    int status;
    char *message;
};

struct call_list {
    struct call *head, *tail;
};

struct snapback_session {
    snapback_client *client;
    snapback_session *prev, *next;
    enum session_state state;
    uint64_t id;           /* the daemon's, 0 while not open */
    uint32_t open_call_id; /* the OpenSession call id its pushes carry */
    uint8_t *open_request; /* the OpenSessionRequest as first sent, for reopening */
    size_t open_request_len;
    bool live, ad_rules;
    struct sb_break *breaks;
    size_t n_breaks;
    bool has_position;
    double position;
    void *user_data;
};

struct snapback_client {
    char *socket_path;
    char *client_name;
    size_t max_queue_bytes;
    unsigned backoff_min_ms, backoff_max_ms, backoff_ms;
    bool reconnect;
    snapback_callbacks cb;

    int fd;
    enum conn_state state;
    uint32_t next_call_id;
    bool write_failed; /* a send failed inside a public call; dispatch drops the connection */
    int write_errno;
    bool freeing;
    bool dispatching; /* snapback_client_dispatch is on the stack: callbacks must not re-enter it */

    struct call_list waiting, pending, done;
    size_t waiting_bytes;
    uint8_t *out;
    size_t out_off, out_len, out_cap;
    uint8_t *in;
    size_t in_len, in_cap;

    snapback_session *sessions;
    Snapback__V1__HelloReply *hello_message;
    snapback_hello hello;

    bool timer_armed;
    uint64_t reconnect_at_ms;
    uint32_t jitter_state;
};

/* ---------------------------------------------------------------------------------------------- */

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void list_push(struct call_list *l, struct call *c) {
    c->next = NULL;
    if (l->tail) l->tail->next = c;
    else l->head = c;
    l->tail = c;
}

static struct call *list_pop(struct call_list *l) {
    struct call *c = l->head;
    if (c) {
        l->head = c->next;
        if (!l->head) l->tail = NULL;
        c->next = NULL;
    }
    return c;
}

static struct call *list_take_id(struct call_list *l, uint32_t id) {
    struct call *prev = NULL;
    for (struct call *c = l->head; c; prev = c, c = c->next) {
        if (c->id != id) continue;
        if (prev) prev->next = c->next;
        else l->head = c->next;
        if (l->tail == c) l->tail = prev;
        c->next = NULL;
        return c;
    }
    return NULL;
}

static void call_free(struct call *c) {
    if (!c) return;
    free(c->body);
    free(c->message);
    sb_breaks_free(c->new_breaks, c->n_new_breaks);
    free(c);
}

/* What a waiting call counts against the queue bound: its frame at the most (header, session id). */
static size_t waiting_cost(const struct call *c) { return HEADER_SIZE + 11 + c->len; }

static void mark_failed(struct call *c, int status, const char *message) {
    c->status = status;
    free(c->message);
    c->message = strdup(message ? message : "");
}

static void session_free(snapback_session *s);

static void reply_callback(snapback_client *client, struct call *c, snapback_reply *reply) {
    reply->method = c->method;
    reply->session = c->session;
    if (!reply->message) reply->message = "";
    if (c->cb) c->cb(client, reply, c->user);
}

/* Delivers the failures collected on the done list. A callback may queue or close; the list is
 * re-read each time round. */
static void run_done(snapback_client *client) {
    struct call *c;
    while ((c = list_pop(&client->done))) {
        snapback_session *s = c->session;
        if (c->kind != CALL_HELLO && c->kind != CALL_REOPEN) {
            snapback_reply reply;
            memset(&reply, 0, sizeof reply);
            reply.status = c->status;
            reply.message = c->message;
            reply_callback(client, c, &reply);
        }
        s = c->session; /* the callback may have freed it (a NULL then) */
        if (s && (c->kind == CALL_OPEN || c->kind == CALL_CLOSE)) session_free(s);
        call_free(c);
    }
}

/* Moves the waiting calls of `s` to the done list: they cannot be sent (its open or reopen failed). */
static void fail_session_waiting(snapback_client *client, snapback_session *s, int status, const char *message) {
    struct call_list keep = {0};
    struct call *c;
    while ((c = list_pop(&client->waiting))) {
        if (c->session == s) {
            client->waiting_bytes -= waiting_cost(c);
            mark_failed(c, status, message);
            list_push(&client->done, c);
        } else {
            list_push(&keep, c);
        }
    }
    client->waiting = keep;
}

static void forget_session_in(struct call_list *l, snapback_session *s) {
    for (struct call *c = l->head; c; c = c->next)
        if (c->session == s) c->session = NULL;
}

static void session_free(snapback_session *s) {
    snapback_client *client = s->client;
    forget_session_in(&client->waiting, s);
    forget_session_in(&client->pending, s);
    forget_session_in(&client->done, s);
    if (s->prev) s->prev->next = s->next;
    else client->sessions = s->next;
    if (s->next) s->next->prev = s->prev;
    sb_breaks_free(s->breaks, s->n_breaks);
    free(s->open_request);
    free(s);
}

/* ---------------------------------------------------------------------------------------------- */
/* Output                                                                                           */

static size_t queued_bytes(const snapback_client *client) {
    return client->out_len - client->out_off + client->waiting_bytes;
}

static int out_reserve(snapback_client *client, size_t more) {
    if (client->out_off > 0 && client->out_off == client->out_len) client->out_off = client->out_len = 0;
    if (client->out_len + more <= client->out_cap) return SNAPBACK_OK;
    if (client->out_off > 0) {
        memmove(client->out, client->out + client->out_off, client->out_len - client->out_off);
        client->out_len -= client->out_off;
        client->out_off = 0;
        if (client->out_len + more <= client->out_cap) return SNAPBACK_OK;
    }
    size_t cap = client->out_cap ? client->out_cap : 4096;
    while (cap < client->out_len + more) cap *= 2;
    uint8_t *p = realloc(client->out, cap);
    if (!p) return SNAPBACK_E_NO_MEMORY;
    client->out = p;
    client->out_cap = cap;
    return SNAPBACK_OK;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool call_id_in_use(const snapback_client *client, uint32_t id) {
    for (const struct call *c = client->pending.head; c; c = c->next)
        if (c->id == id) return true;
    for (const snapback_session *s = client->sessions; s; s = s->next)
        if (s->open_call_id == id) return true;
    return false;
}

static uint32_t take_call_id(snapback_client *client) {
    uint32_t id;
    do {
        id = client->next_call_id++;
        if (client->next_call_id == 0) client->next_call_id = 1;
    } while (id == 0 || call_id_in_use(client, id));
    return id;
}

/* Frames `c` into the output buffer and moves it to the pending list. */
static int emit(snapback_client *client, struct call *c) {
    uint8_t prefix[11];
    size_t prefix_len = 0;
    if (c->session && c->kind != CALL_OPEN && c->kind != CALL_REOPEN) {
        uint64_t v = c->session->id;
        prefix[prefix_len++] = 0x08; /* field 1, varint: session_id in every session request */
        do {
            uint8_t byte = v & 0x7f;
            v >>= 7;
            prefix[prefix_len++] = (uint8_t)(v ? byte | 0x80 : byte);
        } while (v);
    }
    size_t body = prefix_len + c->len;
    int rc = out_reserve(client, HEADER_SIZE + body);
    if (rc != SNAPBACK_OK) return rc;
    c->id = take_call_id(client);
    uint8_t *p = client->out + client->out_len;
    put_be32(p, (uint32_t)body);
    put_be32(p + 4, c->id);
    p[8] = TYPE_REQUEST;
    p[9] = 0;
    p[10] = (uint8_t)(c->method >> 8);
    p[11] = (uint8_t)c->method;
    memcpy(p + HEADER_SIZE, prefix, prefix_len);
    if (c->len) memcpy(p + HEADER_SIZE + prefix_len, c->body, c->len);
    client->out_len += HEADER_SIZE + body;
    free(c->body);
    c->body = NULL;
    c->len = 0;
    if (c->kind == CALL_OPEN || c->kind == CALL_REOPEN) c->session->open_call_id = c->id;
    list_push(&client->pending, c);
    return SNAPBACK_OK;
}

static void try_write(snapback_client *client) {
    if (client->fd < 0 || client->write_failed) return;
    while (client->out_off < client->out_len) {
        ssize_t n = send(client->fd, client->out + client->out_off, client->out_len - client->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            client->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            /* Handled by the next dispatch (never from inside a public call: no callback there). */
            client->write_failed = true;
            client->write_errno = n < 0 ? errno : EPIPE;
            break;
        }
    }
    if (client->out_off == client->out_len) client->out_off = client->out_len = 0;
}

/* Sends the waiting calls that can go: the connection is ready and the head's session has an id. */
static void drain_waiting(snapback_client *client) {
    if (client->state != CONN_READY) return;
    while (client->waiting.head) {
        struct call *c = client->waiting.head;
        if (c->session && c->kind != CALL_OPEN && c->session->id == 0) break;
        list_pop(&client->waiting);
        client->waiting_bytes -= waiting_cost(c);
        if (emit(client, c) != SNAPBACK_OK) {
            mark_failed(c, SNAPBACK_E_NO_MEMORY, "out of memory");
            list_push(&client->done, c);
        }
    }
    try_write(client);
}

static int pack_body(const ProtobufCMessage *m, uint8_t **body, size_t *len) {
    *len = protobuf_c_message_get_packed_size(m);
    *body = malloc(*len ? *len : 1);
    if (!*body) return SNAPBACK_E_NO_MEMORY;
    protobuf_c_message_pack(m, *body);
    return SNAPBACK_OK;
}

/* Queues one call; the body is taken over. Returns the error (and frees the body) when it cannot go. */
static int enqueue(snapback_client *client, snapback_session *s, unsigned method, enum call_kind kind,
                   uint8_t *body, size_t len, snapback_reply_cb cb, void *user, struct call **out) {
    if (client->freeing) {
        free(body);
        return SNAPBACK_E_CLIENT_CLOSED;
    }
    if (client->state != CONN_HELLO && client->state != CONN_READY) {
        free(body);
        return SNAPBACK_E_DISCONNECTED;
    }
    if (queued_bytes(client) + HEADER_SIZE + 11 + len > client->max_queue_bytes) {
        free(body);
        return SNAPBACK_E_QUEUE_FULL;
    }
    struct call *c = calloc(1, sizeof *c);
    if (!c) {
        free(body);
        return SNAPBACK_E_NO_MEMORY;
    }
    c->method = (uint16_t)method;
    c->kind = (uint8_t)kind;
    c->session = s;
    c->body = body;
    c->len = len;
    c->cb = cb;
    c->user = user;
    list_push(&client->waiting, c);
    client->waiting_bytes += waiting_cost(c);
    if (out) *out = c;
    drain_waiting(client);
    return SNAPBACK_OK;
}

static int enqueue_message(snapback_client *client, snapback_session *s, unsigned method,
                           const ProtobufCMessage *m, snapback_reply_cb cb, void *user) {
    uint8_t *body;
    size_t len;
    int rc = pack_body(m, &body, &len);
    if (rc != SNAPBACK_OK) return rc;
    return enqueue(client, s, method, CALL_USER, body, len, cb, user, NULL);
}

/* ---------------------------------------------------------------------------------------------- */
/* Connection                                                                                       */

static void arm_reconnect(snapback_client *client) {
    if (!client->reconnect || client->freeing) {
        client->timer_armed = false;
        return;
    }
    /* ±25% jitter, so the players of a box do not all knock at the same millisecond after a restart. */
    client->jitter_state = client->jitter_state * 1664525u + 1013904223u;
    unsigned delay = client->backoff_ms;
    unsigned spread = delay / 2;
    if (spread) delay = delay - spread / 2 + (client->jitter_state >> 8) % (spread + 1);
    client->reconnect_at_ms = now_ms() + delay;
    client->timer_armed = true;
    client->backoff_ms = client->backoff_ms * 2 > client->backoff_max_ms ? client->backoff_max_ms
                                                                          : client->backoff_ms * 2;
}

static void free_hello(snapback_client *client) {
    if (client->hello_message) protobuf_c_message_free_unpacked(&client->hello_message->base, NULL);
    client->hello_message = NULL;
    memset(&client->hello, 0, sizeof client->hello);
}

/* Tears the connection down: every call in flight or waiting fails with `status`, open sessions wait
 * for the reopen, on_connection is told, and the reconnection timer is armed. */
static void drop_connection(snapback_client *client, int status, const char *message) {
    if (client->fd >= 0) close(client->fd);
    client->fd = -1;
    bool was_up = client->state == CONN_HELLO || client->state == CONN_READY;
    client->state = CONN_DOWN;
    client->write_failed = false;
    client->in_len = 0;
    client->out_off = client->out_len = 0;
    free_hello(client);
    struct call *c;
    while ((c = list_pop(&client->pending))) {
        mark_failed(c, status, message);
        list_push(&client->done, c);
    }
    while ((c = list_pop(&client->waiting))) {
        mark_failed(c, status, message);
        list_push(&client->done, c);
    }
    client->waiting_bytes = 0;
    for (snapback_session *s = client->sessions; s; s = s->next) {
        /* OPENING and CLOSING sessions are freed with their failed call (run_done, below). */
        if (s->state == SS_OPEN || s->state == SS_REOPENING) s->state = SS_DOWN;
        else if (s->state == SS_CLOSING_REOPENING) s->state = SS_CLOSING;
        s->id = 0;
        s->open_call_id = 0;
    }
    arm_reconnect(client);
    run_done(client);
    if (was_up && client->cb.on_connection)
        client->cb.on_connection(client, SNAPBACK_DISCONNECTED, status, message, client->cb.user_data);
}

static int start_connection(snapback_client *client, char *why, size_t why_len) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    size_t plen = strlen(client->socket_path);
    if (plen == 0 || plen >= sizeof addr.sun_path) {
        snprintf(why, why_len, "socket path too long or empty: %s", client->socket_path);
        return SNAPBACK_E_INVALID;
    }
    memcpy(addr.sun_path, client->socket_path, plen);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, why_len, "socket: %s", strerror(errno));
        return SNAPBACK_E_SYSTEM;
    }
    /* A Unix-socket connect completes at once or fails (EAGAIN: the daemon's backlog is full). */
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        snprintf(why, why_len, "connect %s: %s", client->socket_path, strerror(errno));
        close(fd);
        return SNAPBACK_E_DISCONNECTED;
    }
    client->fd = fd;
    client->state = CONN_HELLO;
    client->next_call_id = 1;
    client->timer_armed = false;

    Snapback__V1__HelloRequest hello = SNAPBACK__V1__HELLO_REQUEST__INIT;
    hello.protocol_version = 1;
    hello.client_name = client->client_name;
    struct call *c = calloc(1, sizeof *c);
    int rc = c ? pack_body(&hello.base, &c->body, &c->len) : SNAPBACK_E_NO_MEMORY;
    if (rc == SNAPBACK_OK) {
        c->method = M_HELLO;
        c->kind = CALL_HELLO;
        rc = emit(client, c);
    }
    if (rc != SNAPBACK_OK) {
        call_free(c);
        close(fd);
        client->fd = -1;
        client->state = CONN_DOWN;
        snprintf(why, why_len, "out of memory");
        return rc;
    }
    try_write(client);
    return SNAPBACK_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Sessions across reconnects                                                                       */

/* The reopen request: the first OpenSessionRequest with the breaks as the library knows them now
 * (watched flags, live updates) and, when a position is known, a resume there with no break before it
 * (the player is already past the resume point; breaks before it are the player's history, not a new
 * start). The position goes as stream time: the daemon turns it into content time with these breaks by
 * its own rule, so the library keeps no copy of it. */
static int build_reopen(snapback_session *s, uint8_t **body, size_t *len) {
    Snapback__V1__OpenSessionRequest *req =
        snapback__v1__open_session_request__unpack(NULL, s->open_request_len, s->open_request);
    if (!req) return SNAPBACK_E_NO_MEMORY;
    size_t saved_n = req->n_breaks;
    Snapback__V1__AdBreak **saved_breaks = req->breaks;
    Snapback__V1__PolicyOverrides *saved_overrides = req->policy_overrides;
    Snapback__V1__ResumeOptions *saved_resume = req->resume;
    Snapback__V1__PolicyOverrides overrides = SNAPBACK__V1__POLICY_OVERRIDES__INIT;
    Snapback__V1__ResumeOptions resume = SNAPBACK__V1__RESUME_OPTIONS__INIT;
    Snapback__V1__AdBreak **wire = NULL;
    int rc = SNAPBACK_OK;

    if (!s->ad_rules) {
        wire = sb_breaks_to_wire(s->breaks, s->n_breaks);
        if (!wire) rc = SNAPBACK_E_NO_MEMORY;
        req->breaks = wire;
        req->n_breaks = s->n_breaks;
    }
    if (rc == SNAPBACK_OK && s->has_position && !s->live) {
        if (saved_overrides) overrides = *saved_overrides;
        overrides.resume_breaks = SNAPBACK__V1__RESUME_BREAKS__RESUME_BREAKS_NONE;
        req->policy_overrides = &overrides;
        resume.use_bookmark = 0;
        resume._resume_stream_time_case = SNAPBACK__V1__RESUME_OPTIONS___RESUME_STREAM_TIME_RESUME_STREAM_TIME;
        resume.resume_stream_time = s->position;
        req->resume = &resume;
    }
    if (rc == SNAPBACK_OK) rc = pack_body(&req->base, body, len);
    sb_wire_breaks_free(wire, s->n_breaks);
    req->breaks = saved_breaks;
    req->n_breaks = saved_n;
    req->policy_overrides = saved_overrides;
    req->resume = saved_resume;
    snapback__v1__open_session_request__free_unpacked(req, NULL);
    return rc;
}

static void reopen_sessions(snapback_client *client) {
    for (snapback_session *s = client->sessions; s; s = s->next) {
        if (s->state != SS_DOWN) continue;
        struct call *c = calloc(1, sizeof *c);
        if (!c || build_reopen(s, &c->body, &c->len) != SNAPBACK_OK) {
            free(c);
            continue; /* tried again at the next reconnect */
        }
        c->method = M_OPEN_SESSION;
        c->kind = CALL_REOPEN;
        c->session = s;
        if (emit(client, c) != SNAPBACK_OK) {
            call_free(c);
            continue;
        }
        s->state = SS_REOPENING;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Input                                                                                            */

static void status_message(const uint8_t *body, size_t len, char *buf, size_t buf_len) {
    Snapback__V1__Status *st = snapback__v1__status__unpack(NULL, len, body);
    snprintf(buf, buf_len, "%s", st ? st->message : "(unreadable status body)");
    if (st) snapback__v1__status__free_unpacked(st, NULL);
}

static void handle_hello_reply(snapback_client *client, const uint8_t *body, size_t len) {
    Snapback__V1__HelloReply *h = snapback__v1__hello_reply__unpack(NULL, len, body);
    if (!h) {
        drop_connection(client, SNAPBACK_E_PROTOCOL, "unreadable HelloReply");
        return;
    }
    client->hello_message = h;
    client->hello.protocol_version = h->protocol_version;
    client->hello.server_name = h->server_name;
    client->hello.server_version = h->server_version;
    client->hello.max_frame_size = h->max_frame_size;
    client->hello.max_outbound_queue_bytes = h->max_outbound_queue_bytes;
    client->hello.policy_presets = (const char *const *)h->policy_presets;
    client->hello.n_policy_presets = h->n_policy_presets;
    client->hello.default_policy_preset = h->default_policy_preset;
    client->hello.max_breaks_per_session = h->max_breaks_per_session;
    client->state = CONN_READY;
    client->backoff_ms = client->backoff_min_ms;
    reopen_sessions(client);
    drain_waiting(client);
    run_done(client);
    if (client->cb.on_connection)
        client->cb.on_connection(client, SNAPBACK_CONNECTED, SNAPBACK_OK, "", client->cb.user_data);
}

static void handle_response(snapback_client *client, uint32_t call_id, int status, const uint8_t *body,
                            size_t len) {
    char message[512];
    if (call_id == 0) {
        /* The daemon refused the connection (allow-list, limits) before reading anything. */
        status_message(body, len, message, sizeof message);
        drop_connection(client, status ? status : SNAPBACK_UNKNOWN, message);
        return;
    }
    struct call *c = list_take_id(&client->pending, call_id);
    if (!c) return; /* not ours (cannot happen with this library); ignored like an unknown push */
    snapback_session *s = c->session;

    if (c->kind == CALL_HELLO) {
        call_free(c);
        if (status != 0) {
            status_message(body, len, message, sizeof message);
            drop_connection(client, status, message);
        } else {
            handle_hello_reply(client, body, len);
        }
        return;
    }

    snapback_reply reply;
    struct sb_reply_storage storage;
    memset(&reply, 0, sizeof reply);
    memset(&storage, 0, sizeof storage);
    if (status != 0) {
        status_message(body, len, message, sizeof message);
        reply.status = status;
        reply.message = message;
    } else {
        reply.status = sb_reply_decode(c->method, body, len, &reply, &storage);
        if (reply.status != SNAPBACK_OK) reply.message = "unreadable reply";
    }

    switch (c->kind) {
    case CALL_OPEN:
        if (reply.status == SNAPBACK_OK && s) {
            s->id = reply.u.opened.session_id;
            s->state = SS_OPEN;
            drain_waiting(client);
        } else if (s) {
            s->open_call_id = 0;
            fail_session_waiting(client, s, reply.status, reply.message);
        }
        run_done(client);
        reply_callback(client, c, &reply);
        s = c->session;
        if (reply.status != SNAPBACK_OK && s) session_free(s);
        break;
    case CALL_REOPEN: {
        if (!s) break;
        /* Closed by the player while the reopen was in flight: its CloseSession waits for the id. */
        bool closing = s->state == SS_CLOSING_REOPENING;
        if (reply.status == SNAPBACK_OK) {
            s->id = reply.u.opened.session_id;
            s->state = closing ? SS_CLOSING : SS_OPEN;
            drain_waiting(client);
        } else {
            s->state = closing ? SS_CLOSING : SS_DOWN;
            s->open_call_id = 0;
            fail_session_waiting(client, s, reply.status, reply.message);
        }
        if (!closing && client->cb.on_session_restored)
            client->cb.on_session_restored(client, s, reply.status, reply.message,
                                           reply.status == SNAPBACK_OK ? reply.u.opened.start_stream_time : 0,
                                           client->cb.user_data);
        run_done(client); /* may free s (a close that can no longer be sent) */
        break;
    }
    case CALL_CLOSE:
        reply_callback(client, c, &reply);
        s = c->session;
        if (s) session_free(s);
        break;
    case CALL_UPDATE_BREAKS:
        if (reply.status == SNAPBACK_OK && s) {
            sb_breaks_free(s->breaks, s->n_breaks);
            s->breaks = c->new_breaks;
            s->n_breaks = c->n_new_breaks;
            c->new_breaks = NULL;
            c->n_new_breaks = 0;
        }
        reply_callback(client, c, &reply);
        break;
    default:
        reply_callback(client, c, &reply);
        break;
    }
    sb_reply_release(&storage);
    call_free(c);
}

static snapback_session *session_for_push(snapback_client *client, uint32_t call_id) {
    for (snapback_session *s = client->sessions; s; s = s->next)
        if (s->open_call_id == call_id && s->state != SS_DOWN) return s;
    return NULL;
}

static int handle_push(snapback_client *client, uint32_t call_id, const uint8_t *body, size_t len) {
    snapback_session *s = session_for_push(client, call_id);
    if (!s) return SNAPBACK_OK; /* a session this client no longer knows */
    snapback_push push;
    Snapback__V1__Push *m;
    if (sb_push_decode(body, len, &push, &m) != SNAPBACK_OK) return SNAPBACK_E_PROTOCOL;
    bool deliver = true;
    bool reopening = s->state == SS_REOPENING || s->state == SS_CLOSING_REOPENING;
    if (push.kind == SNAPBACK_PUSH_SEEK) {
        /* A reopen resumes where the player already is: the daemon's resume seek to that point is the
         * library's doing, not the player's to carry out. */
        if (reopening && push.u.seek.reason == SNAPBACK_SEEK_RESUME_FROM_BOOKMARK) deliver = false;
        s->has_position = true;
        s->position = push.u.seek.stream_time;
    } else if (push.kind == SNAPBACK_PUSH_BREAK_SKIPPED) {
        /* Likewise the breaks that resume goes past: the player skipped nothing. */
        if (reopening && push.u.break_skipped.reason == SNAPBACK_SKIP_RESUME_PLAN) deliver = false;
    } else if (push.kind == SNAPBACK_PUSH_BREAK_WATCHED) {
        for (size_t i = 0; i < s->n_breaks; i++)
            if (strcmp(s->breaks[i].id, push.u.break_watched.break_id) == 0) s->breaks[i].watched = true;
    }
    if (deliver && client->cb.on_push) client->cb.on_push(client, s, &push, client->cb.user_data);
    snapback__v1__push__free_unpacked(m, NULL);
    return SNAPBACK_OK;
}

/* Handles every complete frame in the input buffer. Returns false when the connection was dropped. */
static bool process_input(snapback_client *client) {
    size_t off = 0;
    bool ok = true;
    while (client->in_len - off >= HEADER_SIZE) {
        const uint8_t *h = client->in + off;
        uint32_t len = get_be32(h);
        uint32_t call_id = get_be32(h + 4);
        uint8_t type = h[8], status = h[9];
        if (len > MAX_INBOUND_BODY || (type != TYPE_RESPONSE && type != TYPE_PUSH)) {
            drop_connection(client, SNAPBACK_E_PROTOCOL, "the daemon sent a malformed frame header");
            return false;
        }
        if (client->in_len - off - HEADER_SIZE < len) break;
        const uint8_t *body = h + HEADER_SIZE;
        off += HEADER_SIZE + len;
        if (type == TYPE_RESPONSE) {
            handle_response(client, call_id, status, body, len);
        } else if (handle_push(client, call_id, body, len) != SNAPBACK_OK) {
            drop_connection(client, SNAPBACK_E_PROTOCOL, "the daemon sent an unreadable push");
            return false;
        }
        if (client->state == CONN_DOWN) return false; /* a refusal, a failed Hello */
    }
    if (off) {
        memmove(client->in, client->in + off, client->in_len - off);
        client->in_len -= off;
    }
    return ok;
}

/* Reads until the socket is empty. Returns false when the connection was dropped. */
static bool read_input(snapback_client *client) {
    for (;;) {
        if (client->in_cap - client->in_len < READ_CHUNK) {
            size_t cap = client->in_cap ? client->in_cap * 2 : 2 * READ_CHUNK;
            uint8_t *p = realloc(client->in, cap);
            if (!p) {
                drop_connection(client, SNAPBACK_E_NO_MEMORY, "out of memory");
                return false;
            }
            client->in = p;
            client->in_cap = cap;
        }
        ssize_t n = recv(client->fd, client->in + client->in_len, client->in_cap - client->in_len, MSG_DONTWAIT);
        if (n > 0) {
            client->in_len += (size_t)n;
            if (!process_input(client)) return false;
            /* Keep the buffer no larger than the frame being assembled needs. */
            if (client->in_len == 0 && client->in_cap > 4 * READ_CHUNK) {
                free(client->in);
                client->in = NULL;
                client->in_cap = 0;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        char why[160];
        if (n == 0) snprintf(why, sizeof why, "the daemon closed the connection");
        else snprintf(why, sizeof why, "recv: %s", strerror(errno));
        drop_connection(client, SNAPBACK_E_DISCONNECTED, why);
        return false;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Public: client                                                                                   */

snapback_client *snapback_client_new(const snapback_options *options) {
    snapback_options defaults;
    memset(&defaults, 0, sizeof defaults);
    if (!options) options = &defaults;
    snapback_client *client = calloc(1, sizeof *client);
    if (!client) return NULL;
    const char *path = options->socket_path;
    if (!path) {
        /* The same variable the snapback command-line tool reads. */
        const char *env = getenv("SNAPBACK_SOCKET");
        path = env && *env ? env : SNAPBACK_DEFAULT_SOCKET;
    }
    client->socket_path = strdup(path);
    client->client_name = strdup(options->client_name ? options->client_name : "libsnapback");
    if (!client->socket_path || !client->client_name) {
        free(client->socket_path);
        free(client->client_name);
        free(client);
        return NULL;
    }
    client->max_queue_bytes = options->max_queue_bytes ? options->max_queue_bytes : DEFAULT_QUEUE_BYTES;
    client->backoff_min_ms = options->reconnect_min_ms ? options->reconnect_min_ms : 100;
    client->backoff_max_ms = options->reconnect_max_ms ? options->reconnect_max_ms : 5000;
    if (client->backoff_max_ms < client->backoff_min_ms) client->backoff_max_ms = client->backoff_min_ms;
    client->backoff_ms = client->backoff_min_ms;
    client->reconnect = !options->no_reconnect;
    client->cb = options->callbacks;
    client->fd = -1;
    client->state = CONN_IDLE;
    client->next_call_id = 1;
    client->jitter_state = (uint32_t)now_ms() ^ (uint32_t)(uintptr_t)client ^ (uint32_t)getpid();
    return client;
}

int snapback_client_connect(snapback_client *client) {
    if (!client) return SNAPBACK_E_INVALID;
    if (client->state == CONN_HELLO || client->state == CONN_READY) return SNAPBACK_OK;
    char why[256];
    int rc = start_connection(client, why, sizeof why);
    if (rc != SNAPBACK_OK) {
        client->state = CONN_DOWN;
        arm_reconnect(client);
    }
    return rc;
}

void snapback_client_free(snapback_client *client) {
    if (!client) return;
    client->freeing = true;
    if (client->fd >= 0) close(client->fd);
    client->fd = -1;
    client->state = CONN_DOWN;
    struct call *c;
    while ((c = list_pop(&client->pending))) {
        mark_failed(c, SNAPBACK_E_CLIENT_CLOSED, "the client was freed");
        list_push(&client->done, c);
    }
    while ((c = list_pop(&client->waiting))) {
        mark_failed(c, SNAPBACK_E_CLIENT_CLOSED, "the client was freed");
        list_push(&client->done, c);
    }
    run_done(client);
    while (client->sessions) session_free(client->sessions);
    free_hello(client);
    free(client->out);
    free(client->in);
    free(client->socket_path);
    free(client->client_name);
    free(client);
}

int snapback_client_fd(const snapback_client *client) { return client ? client->fd : -1; }

short snapback_client_events(const snapback_client *client) {
    if (!client || client->fd < 0) return 0;
    return (short)(POLLIN | (client->out_off < client->out_len ? POLLOUT : 0));
}

int snapback_client_next_timeout_ms(const snapback_client *client) {
    if (!client) return -1;
    if (client->write_failed) return 0;
    if (client->state != CONN_DOWN || !client->timer_armed) return -1;
    uint64_t now = now_ms();
    if (now >= client->reconnect_at_ms) return 0;
    uint64_t left = client->reconnect_at_ms - now;
    return left > 1000000000u ? 1000000000 : (int)left;
}

int snapback_client_dispatch(snapback_client *client, short revents) {
    if (!client || client->dispatching) return SNAPBACK_E_INVALID;
    client->dispatching = true;
    if (client->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR))) read_input(client);
    if (client->fd >= 0) {
        try_write(client);
        if (client->write_failed) {
            char why[160];
            snprintf(why, sizeof why, "send: %s", strerror(client->write_errno));
            drop_connection(client, SNAPBACK_E_DISCONNECTED, why);
        }
    }
    if (client->state == CONN_DOWN && client->timer_armed && now_ms() >= client->reconnect_at_ms) {
        char why[256];
        client->timer_armed = false;
        if (start_connection(client, why, sizeof why) != SNAPBACK_OK) {
            client->state = CONN_DOWN;
            arm_reconnect(client);
        }
    }
    client->dispatching = false;
    return client->fd >= 0 ? SNAPBACK_OK : SNAPBACK_E_DISCONNECTED;
}

int snapback_client_wait(snapback_client *client, const int *done, int timeout_ms) {
    if (!client || !done || client->dispatching) return SNAPBACK_E_INVALID;
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout_ms;
    while (!*done) {
        uint64_t now = now_ms();
        if (now >= deadline) return SNAPBACK_E_TIMEOUT;
        int wait = snapback_client_next_timeout_ms(client);
        if (deadline != UINT64_MAX) {
            uint64_t left = deadline - now;
            if (wait < 0 || (uint64_t)wait > left) wait = left > 1000000000u ? 1000000000 : (int)left;
        }
        struct pollfd p = {.fd = client->fd, .events = snapback_client_events(client), .revents = 0};
        int n = poll(&p, p.fd >= 0 ? 1 : 0, wait);
        if (n < 0 && errno != EINTR) return SNAPBACK_E_SYSTEM;
        snapback_client_dispatch(client, n > 0 ? p.revents : 0);
    }
    return SNAPBACK_OK;
}

const snapback_hello *snapback_client_hello(const snapback_client *client) {
    return client && client->state == CONN_READY ? &client->hello : NULL;
}

const char *snapback_client_socket_path(const snapback_client *client) {
    return client ? client->socket_path : NULL;
}

bool snapback_client_is_connected(const snapback_client *client) {
    return client && client->state == CONN_READY;
}

/* ---------------------------------------------------------------------------------------------- */
/* Public: sessions                                                                                 */

int snapback_session_open(snapback_client *client, const snapback_session_params *params,
                          snapback_reply_cb cb, void *user, snapback_session **out) {
    return sb_session_open(client, params, NULL, cb, user, out);
}

int sb_session_open(snapback_client *client, const snapback_session_params *params,
                    const struct sb_break_flags *flags, snapback_reply_cb cb, void *user, snapback_session **out) {
    if (out) *out = NULL;
    if (!client || !params || !out) return SNAPBACK_E_INVALID;
    if (client->freeing) return SNAPBACK_E_CLIENT_CLOSED;
    if (client->state != CONN_HELLO && client->state != CONN_READY) return SNAPBACK_E_DISCONNECTED;
    snapback_session *s = calloc(1, sizeof *s);
    if (!s) return SNAPBACK_E_NO_MEMORY;
    s->client = client;
    s->state = SS_OPENING;
    s->live = params->kind == SNAPBACK_SESSION_LIVE;
    s->ad_rules = params->ad_rules != NULL;
    int rc = sb_breaks_copy(params->breaks, flags, params->n_breaks, &s->breaks);
    if (rc != SNAPBACK_OK) {
        free(s);
        return rc;
    }
    s->n_breaks = params->n_breaks;

    Snapback__V1__OpenSessionRequest req = SNAPBACK__V1__OPEN_SESSION_REQUEST__INIT;
    struct sb_open_scratch scratch;
    rc = sb_open_request_fill(&req, params, flags, &scratch);
    if (rc == SNAPBACK_OK) rc = pack_body(&req.base, &s->open_request, &s->open_request_len);
    sb_open_request_release(&scratch);
    uint8_t *body = NULL;
    if (rc == SNAPBACK_OK) {
        body = malloc(s->open_request_len ? s->open_request_len : 1);
        if (!body) rc = SNAPBACK_E_NO_MEMORY;
        else memcpy(body, s->open_request, s->open_request_len);
    }
    if (rc != SNAPBACK_OK) {
        sb_breaks_free(s->breaks, s->n_breaks);
        free(s->open_request);
        free(s);
        return rc;
    }
    /* Linked before enqueue: emit() may set its open call id at once. */
    s->next = client->sessions;
    if (client->sessions) client->sessions->prev = s;
    client->sessions = s;
    rc = enqueue(client, s, M_OPEN_SESSION, CALL_OPEN, body, s->open_request_len, cb, user, NULL);
    if (rc != SNAPBACK_OK) {
        session_free(s);
        return rc;
    }
    *out = s;
    return SNAPBACK_OK;
}

static bool is_closing(const snapback_session *s) {
    return s->state == SS_CLOSING || s->state == SS_CLOSING_REOPENING;
}

int snapback_session_close(snapback_session *s, snapback_reply_cb cb, void *user) {
    if (!s || is_closing(s) || s->state == SS_OPENING) return SNAPBACK_E_INVALID;
    snapback_client *client = s->client;
    if (s->state == SS_DOWN || client->state == CONN_DOWN || client->state == CONN_IDLE) {
        session_free(s);
        return SNAPBACK_OK;
    }
    Snapback__V1__CloseSessionRequest req = SNAPBACK__V1__CLOSE_SESSION_REQUEST__INIT;
    uint8_t *body;
    size_t len;
    int rc = pack_body(&req.base, &body, &len);
    if (rc != SNAPBACK_OK) return rc;
    rc = enqueue(client, s, M_CLOSE_SESSION, CALL_CLOSE, body, len, cb, user, NULL);
    if (rc == SNAPBACK_OK) s->state = s->state == SS_REOPENING ? SS_CLOSING_REOPENING : SS_CLOSING;
    return rc;
}

snapback_client *snapback_session_client(const snapback_session *s) { return s ? s->client : NULL; }
void snapback_session_set_user_data(snapback_session *s, void *user_data) {
    if (s) s->user_data = user_data;
}
void *snapback_session_user_data(const snapback_session *s) { return s ? s->user_data : NULL; }
uint64_t snapback_session_id(const snapback_session *s) { return s ? s->id : 0; }

bool snapback_session_position(const snapback_session *s, double *stream_time) {
    if (!s || !s->has_position) return false;
    if (stream_time) *stream_time = s->position;
    return true;
}

static void note_position(snapback_session *s, double t) {
    s->has_position = true;
    s->position = t;
}

/* A session call can be queued unless the session is closing or waiting for a reconnect. */
static int session_call(snapback_session *s, unsigned method, const ProtobufCMessage *m, snapback_reply_cb cb,
                        void *user) {
    if (!s || is_closing(s)) return SNAPBACK_E_INVALID;
    if (s->state == SS_DOWN) return SNAPBACK_E_DISCONNECTED;
    return enqueue_message(s->client, s, method, m, cb, user);
}

int snapback_report_playhead(snapback_session *s, double stream_time, double rate, bool playing,
                             snapback_reply_cb cb, void *user) {
    if (!s) return SNAPBACK_E_INVALID;
    note_position(s, stream_time);
    Snapback__V1__ReportPlayheadRequest r = SNAPBACK__V1__REPORT_PLAYHEAD_REQUEST__INIT;
    r.stream_time = stream_time;
    r.rate = rate;
    r.playing = playing;
    return session_call(s, M_REPORT_PLAYHEAD, &r.base, cb, user);
}

int snapback_seek_started(snapback_session *s, double from, snapback_reply_cb cb, void *user) {
    Snapback__V1__SeekStartedRequest r = SNAPBACK__V1__SEEK_STARTED_REQUEST__INIT;
    r.from_stream_time = from;
    return session_call(s, M_SEEK_STARTED, &r.base, cb, user);
}

int snapback_seek_ended(snapback_session *s, double from, double to, snapback_reply_cb cb, void *user) {
    if (!s) return SNAPBACK_E_INVALID;
    note_position(s, to);
    Snapback__V1__SeekEndedRequest r = SNAPBACK__V1__SEEK_ENDED_REQUEST__INIT;
    r.from_stream_time = from;
    r.to_stream_time = to;
    return session_call(s, M_SEEK_ENDED, &r.base, cb, user);
}

/* Sets an ad event request's optional stream_time when `at` is given. */
#define SET_POSITION(req, case_value, at)          \
    do {                                           \
        if (at) {                                  \
            (req)._stream_time_case = (case_value); \
            (req).stream_time = *(at);             \
        }                                          \
    } while (0)

/* The ad events: `at` NULL sends no position; otherwise *at is the player's position, sent in the
 * request's optional stream_time and kept as the session's last position. `index` for the per-ad ones. */
static int ad_event(snapback_session *s, unsigned method, const char *break_id, uint32_t index, const double *at,
                    snapback_reply_cb cb, void *user) {
    if (!s || !break_id) return SNAPBACK_E_INVALID;
    if (at) note_position(s, *at);
    char *id = (char *)break_id;
    switch (method) {
    case M_AD_BREAK_STARTED: {
        Snapback__V1__AdBreakStartedRequest r = SNAPBACK__V1__AD_BREAK_STARTED_REQUEST__INIT;
        r.break_id = id;
        SET_POSITION(r, SNAPBACK__V1__AD_BREAK_STARTED_REQUEST___STREAM_TIME_STREAM_TIME, at);
        return session_call(s, method, &r.base, cb, user);
    }
    case M_AD_BREAK_ENDED: {
        Snapback__V1__AdBreakEndedRequest r = SNAPBACK__V1__AD_BREAK_ENDED_REQUEST__INIT;
        r.break_id = id;
        SET_POSITION(r, SNAPBACK__V1__AD_BREAK_ENDED_REQUEST___STREAM_TIME_STREAM_TIME, at);
        return session_call(s, method, &r.base, cb, user);
    }
    case M_AD_STARTED: {
        Snapback__V1__AdStartedRequest r = SNAPBACK__V1__AD_STARTED_REQUEST__INIT;
        r.break_id = id;
        r.index = index;
        SET_POSITION(r, SNAPBACK__V1__AD_STARTED_REQUEST___STREAM_TIME_STREAM_TIME, at);
        return session_call(s, method, &r.base, cb, user);
    }
    default: {
        Snapback__V1__AdEndedRequest r = SNAPBACK__V1__AD_ENDED_REQUEST__INIT;
        r.break_id = id;
        r.index = index;
        SET_POSITION(r, SNAPBACK__V1__AD_ENDED_REQUEST___STREAM_TIME_STREAM_TIME, at);
        return session_call(s, M_AD_ENDED, &r.base, cb, user);
    }
    }
}

int snapback_ad_break_started(snapback_session *s, const char *break_id, snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_BREAK_STARTED, break_id, 0, NULL, cb, user);
}

int snapback_ad_break_ended(snapback_session *s, const char *break_id, snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_BREAK_ENDED, break_id, 0, NULL, cb, user);
}

int snapback_ad_started(snapback_session *s, const char *break_id, uint32_t index, snapback_reply_cb cb,
                        void *user) {
    return ad_event(s, M_AD_STARTED, break_id, index, NULL, cb, user);
}

int snapback_ad_ended(snapback_session *s, const char *break_id, uint32_t index, snapback_reply_cb cb,
                      void *user) {
    return ad_event(s, M_AD_ENDED, break_id, index, NULL, cb, user);
}

int snapback_ad_break_started_at(snapback_session *s, const char *break_id, double stream_time,
                                 snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_BREAK_STARTED, break_id, 0, &stream_time, cb, user);
}

int snapback_ad_break_ended_at(snapback_session *s, const char *break_id, double stream_time,
                               snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_BREAK_ENDED, break_id, 0, &stream_time, cb, user);
}

int snapback_ad_started_at(snapback_session *s, const char *break_id, uint32_t index, double stream_time,
                           snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_STARTED, break_id, index, &stream_time, cb, user);
}

int snapback_ad_ended_at(snapback_session *s, const char *break_id, uint32_t index, double stream_time,
                         snapback_reply_cb cb, void *user) {
    return ad_event(s, M_AD_ENDED, break_id, index, &stream_time, cb, user);
}

int snapback_trick_play_started(snapback_session *s, double stream_time, double rate, snapback_reply_cb cb,
                                void *user) {
    Snapback__V1__TrickPlayStartedRequest r = SNAPBACK__V1__TRICK_PLAY_STARTED_REQUEST__INIT;
    r.stream_time = stream_time;
    r.rate = rate;
    return session_call(s, M_TRICK_PLAY_STARTED, &r.base, cb, user);
}

int snapback_trick_play_ended(snapback_session *s, double stream_time, snapback_reply_cb cb, void *user) {
    if (!s) return SNAPBACK_E_INVALID;
    note_position(s, stream_time);
    Snapback__V1__TrickPlayEndedRequest r = SNAPBACK__V1__TRICK_PLAY_ENDED_REQUEST__INIT;
    r.stream_time = stream_time;
    return session_call(s, M_TRICK_PLAY_ENDED, &r.base, cb, user);
}

int snapback_content_complete(snapback_session *s, snapback_reply_cb cb, void *user) {
    Snapback__V1__ContentCompleteRequest r = SNAPBACK__V1__CONTENT_COMPLETE_REQUEST__INIT;
    return session_call(s, M_CONTENT_COMPLETE, &r.base, cb, user);
}

int snapback_update_breaks(snapback_session *s, const snapback_break *breaks, size_t n, snapback_reply_cb cb,
                           void *user) {
    return sb_update_breaks(s, breaks, NULL, n, cb, user);
}

int sb_update_breaks(snapback_session *s, const snapback_break *breaks, const struct sb_break_flags *flags, size_t n,
                     snapback_reply_cb cb, void *user) {
    if (!s || (n && !breaks) || is_closing(s)) return SNAPBACK_E_INVALID;
    if (s->state == SS_DOWN) return SNAPBACK_E_DISCONNECTED;
    struct sb_break *copy;
    int rc = sb_breaks_copy(breaks, flags, n, &copy);
    if (rc != SNAPBACK_OK) return rc;
    Snapback__V1__UpdateBreaksRequest r = SNAPBACK__V1__UPDATE_BREAKS_REQUEST__INIT;
    r.breaks = sb_breaks_to_wire(copy, n);
    r.n_breaks = n;
    uint8_t *body = NULL;
    size_t len = 0;
    rc = r.breaks ? pack_body(&r.base, &body, &len) : SNAPBACK_E_NO_MEMORY;
    sb_wire_breaks_free(r.breaks, n);
    struct call *c = NULL;
    if (rc == SNAPBACK_OK) rc = enqueue(s->client, s, M_UPDATE_BREAKS, CALL_UPDATE_BREAKS, body, len, cb, user, &c);
    if (rc != SNAPBACK_OK) {
        sb_breaks_free(copy, n);
        return rc;
    }
    c->new_breaks = copy;
    c->n_new_breaks = n;
    return SNAPBACK_OK;
}

int snapback_pause(snapback_session *s, double stream_time, snapback_reply_cb cb, void *user) {
    if (!s) return SNAPBACK_E_INVALID;
    note_position(s, stream_time);
    Snapback__V1__PauseRequest r = SNAPBACK__V1__PAUSE_REQUEST__INIT;
    r.stream_time = stream_time;
    return session_call(s, M_PAUSE, &r.base, cb, user);
}

int snapback_content_time_for_stream_time(snapback_session *s, double t, snapback_reply_cb cb, void *user) {
    Snapback__V1__ContentTimeForStreamTimeRequest r = SNAPBACK__V1__CONTENT_TIME_FOR_STREAM_TIME_REQUEST__INIT;
    r.stream_time = t;
    return session_call(s, M_CONTENT_TIME_FOR_STREAM_TIME, &r.base, cb, user);
}

int snapback_stream_time_for_content_time(snapback_session *s, double t, snapback_reply_cb cb, void *user) {
    Snapback__V1__StreamTimeForContentTimeRequest r = SNAPBACK__V1__STREAM_TIME_FOR_CONTENT_TIME_REQUEST__INIT;
    r.content_time = t;
    return session_call(s, M_STREAM_TIME_FOR_CONTENT_TIME, &r.base, cb, user);
}

int snapback_break_at(snapback_session *s, double t, snapback_reply_cb cb, void *user) {
    Snapback__V1__BreakAtRequest r = SNAPBACK__V1__BREAK_AT_REQUEST__INIT;
    r.stream_time = t;
    return session_call(s, M_BREAK_AT, &r.base, cb, user);
}

int snapback_get_session_state(snapback_session *s, snapback_reply_cb cb, void *user) {
    Snapback__V1__GetSessionStateRequest r = SNAPBACK__V1__GET_SESSION_STATE_REQUEST__INIT;
    return session_call(s, M_GET_SESSION_STATE, &r.base, cb, user);
}

/* ---------------------------------------------------------------------------------------------- */
/* Public: client calls                                                                             */

int snapback_get_status(snapback_client *c, snapback_reply_cb cb, void *user) {
    if (!c) return SNAPBACK_E_INVALID;
    Snapback__V1__StatusRequest r = SNAPBACK__V1__STATUS_REQUEST__INIT;
    return enqueue_message(c, NULL, M_GET_STATUS, &r.base, cb, user);
}

int snapback_bookmark_get(snapback_client *c, const char *profile, const char *content_id, snapback_reply_cb cb,
                          void *user) {
    if (!c || !content_id) return SNAPBACK_E_INVALID;
    Snapback__V1__GetBookmarkRequest r = SNAPBACK__V1__GET_BOOKMARK_REQUEST__INIT;
    r.profile = (char *)(profile ? profile : "");
    r.content_id = (char *)content_id;
    return enqueue_message(c, NULL, M_BOOKMARK_GET, &r.base, cb, user);
}

int snapback_bookmark_list(snapback_client *c, const char *profile, uint32_t page_size, const char *page_token,
                           snapback_reply_cb cb, void *user) {
    if (!c) return SNAPBACK_E_INVALID;
    Snapback__V1__ListBookmarksRequest r = SNAPBACK__V1__LIST_BOOKMARKS_REQUEST__INIT;
    r.profile = (char *)(profile ? profile : "");
    r.page_size = page_size;
    r.page_token = (char *)(page_token ? page_token : "");
    return enqueue_message(c, NULL, M_BOOKMARK_LIST, &r.base, cb, user);
}

int snapback_bookmark_delete(snapback_client *c, const char *profile, const char *content_id,
                             snapback_reply_cb cb, void *user) {
    if (!c || !content_id) return SNAPBACK_E_INVALID;
    Snapback__V1__DeleteBookmarkRequest r = SNAPBACK__V1__DELETE_BOOKMARK_REQUEST__INIT;
    r.profile = (char *)(profile ? profile : "");
    r.content_id = (char *)content_id;
    return enqueue_message(c, NULL, M_BOOKMARK_DELETE, &r.base, cb, user);
}

int snapback_bookmark_clear(snapback_client *c, const char *profile, snapback_reply_cb cb, void *user) {
    if (!c) return SNAPBACK_E_INVALID;
    Snapback__V1__ClearBookmarksRequest r = SNAPBACK__V1__CLEAR_BOOKMARKS_REQUEST__INIT;
    r.profile = (char *)(profile ? profile : "");
    return enqueue_message(c, NULL, M_BOOKMARK_CLEAR, &r.base, cb, user);
}

/* ---------------------------------------------------------------------------------------------- */

const char *snapback_strerror(int status) {
    switch (status) {
    case SNAPBACK_OK: return "OK";
    case SNAPBACK_CANCELLED: return "CANCELLED: the operation was cancelled";
    case SNAPBACK_UNKNOWN: return "UNKNOWN: unknown error";
    case SNAPBACK_INVALID_ARGUMENT: return "INVALID_ARGUMENT: the daemon refused an argument";
    case SNAPBACK_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED: deadline exceeded";
    case SNAPBACK_NOT_FOUND: return "NOT_FOUND: no such session, break or bookmark";
    case SNAPBACK_ALREADY_EXISTS: return "ALREADY_EXISTS: already exists";
    case SNAPBACK_PERMISSION_DENIED: return "PERMISSION_DENIED: the daemon does not serve this user";
    case SNAPBACK_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED: a daemon limit was reached";
    case SNAPBACK_FAILED_PRECONDITION: return "FAILED_PRECONDITION: the call is out of order";
    case SNAPBACK_ABORTED: return "ABORTED: aborted";
    case SNAPBACK_OUT_OF_RANGE: return "OUT_OF_RANGE: out of range";
    case SNAPBACK_UNIMPLEMENTED: return "UNIMPLEMENTED: the daemon does not know this method";
    case SNAPBACK_INTERNAL: return "INTERNAL: internal error in the daemon";
    case SNAPBACK_UNAVAILABLE: return "UNAVAILABLE: the daemon or its store is unavailable";
    case SNAPBACK_DATA_LOSS: return "DATA_LOSS: data loss";
    case SNAPBACK_UNAUTHENTICATED: return "UNAUTHENTICATED: unauthenticated";
    case SNAPBACK_E_DISCONNECTED: return "DISCONNECTED: not connected to snapbackd";
    case SNAPBACK_E_QUEUE_FULL: return "QUEUE_FULL: the output queue is full";
    case SNAPBACK_E_NO_MEMORY: return "NO_MEMORY: out of memory";
    case SNAPBACK_E_INVALID: return "INVALID: invalid argument to libsnapback";
    case SNAPBACK_E_PROTOCOL: return "PROTOCOL: the daemon sent something unreadable";
    case SNAPBACK_E_CLIENT_CLOSED: return "CLIENT_CLOSED: the client was freed";
    case SNAPBACK_E_TIMEOUT: return "TIMEOUT: timed out";
    case SNAPBACK_E_SYSTEM: return "SYSTEM: a system call failed";
    default: return "unknown status";
    }
}

const char *snapback_skip_reason_name(snapback_skip_reason reason) {
    switch (reason) {
    case SNAPBACK_SKIP_TRICK_PLAY: return "trick-play";
    case SNAPBACK_SKIP_RESUME_PLAN: return "resume-plan";
    case SNAPBACK_SKIP_COOLDOWN: return "cooldown";
    case SNAPBACK_SKIP_EXEMPT: return "exempt";
    case SNAPBACK_SKIP_WATCHED: return "watched";
    case SNAPBACK_SKIP_DISABLED: return "disabled";
    default: return "unspecified";
    }
}

const char *snapback_break_position_name(snapback_break_position position) {
    switch (position) {
    case SNAPBACK_POSITION_PREROLL: return "preroll";
    case SNAPBACK_POSITION_MIDROLL: return "midroll";
    case SNAPBACK_POSITION_POSTROLL: return "postroll";
    default: return "unspecified";
    }
}
