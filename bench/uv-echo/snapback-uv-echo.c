/* SPDX-License-Identifier: Apache-2.0 */
/* snapback-uv-echo: the libuv floor of `snapback-bench daemon --spacing` (and of the round trip bench).
 *
 * The same peer as `snapback-bench echo-peer` — on fd 3, reads requests of a fixed size and answers each with
 * the canned bytes snapbackd sent, the reply's call id patched, in one write — but behind the event loop the
 * daemon's design fixes: libuv's uv_run, a uv_pipe_t read with uv_read_start, the answer written with
 * uv_try_write. It is C and is linked with the same static libuv archive as the release daemon, so that
 * what it costs over the epoll echo is libuv's own share of a round trip, and what snapbackd costs over it
 * is snapbackd's: the decoding, the session, the timeline, the encoding.
 *
 * Usage: snapback-uv-echo --request-size N --response HEX --reply-offset K   (fd 3: a connected socket)
 * Exit status: 0 at the end of the stream, 1 on an error (said on stderr), 2 for a bad command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

enum { frame_header_size = 12, capacity = 1 << 16 };

static unsigned char input[capacity];
static size_t have;
static size_t request_size;
static unsigned char *answer;
static size_t answer_size;
static size_t reply_offset;
static int status;

static void fail(uv_stream_t *stream, const char *what, int error) {
    fprintf(stderr, "snapback-uv-echo: %s: %s\n", what, uv_strerror(error));
    status = 1;
    uv_stop(stream->loop);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    (void)handle;
    (void)suggested;
    *buf = uv_buf_init((char *)input + have, (unsigned)(capacity - have));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    if (n == UV_EOF) {
        uv_stop(stream->loop);
        return;
    }
    if (n < 0) {
        fail(stream, "read", (int)n);
        return;
    }
    have += (size_t)n;
    size_t offset = 0;
    while (have - offset >= request_size) {
        /* The reply echoes the request's call id (bytes 4..7 of a frame header). */
        memcpy(answer + reply_offset + 4, input + offset + 4, 4);
        uv_buf_t out = uv_buf_init((char *)answer, (unsigned)answer_size);
        int written = uv_try_write(stream, &out, 1);
        /* The answer is a few hundred bytes on an idle socketpair: a short write means the bench broke. */
        if (written != (int)answer_size) {
            fail(stream, "write", written < 0 ? written : UV_EAGAIN);
            return;
        }
        offset += request_size;
    }
    if (offset > 0) {
        memmove(input, input + offset, have - offset);
        have -= offset;
    }
    if (have == capacity) fail(stream, "read", UV_ENOBUFS);
}

static int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int usage(const char *why) {
    fprintf(stderr, "snapback-uv-echo: %s\nusage: snapback-uv-echo --request-size N --response HEX --reply-offset K\n", why);
    return 2;
}

static int parse_size(const char *text, size_t *value) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v > capacity) return -1;
    *value = v;
    return 0;
}

int main(int argc, char **argv) {
    const char *hex = NULL;
    int have_size = 0, have_offset = 0;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) return usage("an option without its value");
        if (strcmp(argv[i], "--request-size") == 0) {
            if (parse_size(argv[i + 1], &request_size) != 0) return usage("--request-size: a number of bytes");
            have_size = 1;
        } else if (strcmp(argv[i], "--reply-offset") == 0) {
            if (parse_size(argv[i + 1], &reply_offset) != 0) return usage("--reply-offset: a number of bytes");
            have_offset = 1;
        } else if (strcmp(argv[i], "--response") == 0) {
            hex = argv[i + 1];
        } else {
            return usage("unknown option");
        }
    }
    if (!have_size || !have_offset || hex == NULL) return usage("--request-size, --response and --reply-offset are needed");
    size_t digits = strlen(hex);
    if (digits == 0 || digits % 2 != 0 || digits / 2 > capacity) return usage("--response: hex bytes");
    if (request_size < frame_header_size) return usage("--request-size: at least a frame header");
    answer_size = digits / 2;
    if (reply_offset + frame_header_size > answer_size) return usage("--reply-offset: a frame header within --response");
    answer = malloc(answer_size);
    if (answer == NULL) return 1;
    for (size_t i = 0; i < answer_size; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return usage("--response: hex bytes");
        answer[i] = (unsigned char)(hi << 4 | lo);
    }

    uv_loop_t *loop = uv_default_loop();
    uv_pipe_t peer;
    int error = uv_pipe_init(loop, &peer, 0);
    if (error == 0) error = uv_pipe_open(&peer, 3);
    if (error == 0) error = uv_read_start((uv_stream_t *)&peer, on_alloc, on_read);
    if (error != 0) {
        fprintf(stderr, "snapback-uv-echo: fd 3: %s\n", uv_strerror(error));
        return 1;
    }
    uv_run(loop, UV_RUN_DEFAULT);
    free(answer);
    return status;
}
