/* SPDX-License-Identifier: Apache-2.0 */
/* A small, strict JSON reader for the sidecar file (RFC 8259): the whole document in memory, bounded
 * in size and depth, strings checked as UTF-8 and refused when they hold U+0000 (the daemon could not
 * tell "a\0b" from "a"). mpv's client API has no JSON parser for C plugins, and the plugin needs no
 * more than this. */
#ifndef SNAPBACK_MPV_JSON_H
#define SNAPBACK_MPV_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define SBJ_MAX_BYTES (4u << 20) /* a sidecar of 100,000 breaks fits */
#define SBJ_MAX_DEPTH 16

typedef enum sbj_type { SBJ_NULL, SBJ_BOOL, SBJ_NUMBER, SBJ_STRING, SBJ_ARRAY, SBJ_OBJECT } sbj_type;

typedef struct sbj_value {
    sbj_type type;
    bool boolean;
    double number;
    char *string;           /* SBJ_STRING: NUL-terminated, valid UTF-8 */
    struct sbj_value *items; /* SBJ_ARRAY and SBJ_OBJECT: n values */
    char **keys;            /* SBJ_OBJECT: n keys */
    size_t n;
} sbj_value;

/* Parses text[0..len). 0 and *out set, or -1 with a message "offset N: reason" in err. */
int sbj_parse(const char *text, size_t len, sbj_value *out, char *err, size_t errlen);
void sbj_free(sbj_value *v);
/* The member `key` of an object (the last one when repeated), or NULL. */
const sbj_value *sbj_get(const sbj_value *object, const char *key);

#endif
