/* SPDX-License-Identifier: Apache-2.0 */
/* The sidecar's JSON reader: recursive descent over the grammar of RFC 8259, nothing more. */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *p, *start, *end;
    int depth;
    char *err;
    size_t errlen;
};

static int fail(struct parser *ps, const char *what) {
    snprintf(ps->err, ps->errlen, "offset %zu: %s", (size_t)(ps->p - ps->start), what);
    return -1;
}

static void skip_space(struct parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static bool literal(struct parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return false;
    ps->p += n;
    return true;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one (overlong forms,
 * surrogates and code points above U+10FFFF are not). */
static size_t utf8_length(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

static int hex4(struct parser *ps, uint32_t *out) {
    if (ps->end - ps->p < 4) return fail(ps, "short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return fail(ps, "bad \\u escape");
    }
    *out = v;
    return 0;
}

/* At the opening quote. The decoded string is never longer than its source. */
static int parse_string(struct parser *ps, char **out) {
    ps->p++;
    const char *from = ps->p;
    char *s = malloc((size_t)(ps->end - from) + 1);
    if (!s) return fail(ps, "out of memory");
    size_t n = 0;
    for (;;) {
        if (ps->p >= ps->end) { free(s); return fail(ps, "unterminated string"); }
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') { ps->p++; break; }
        if (c < 0x20) { free(s); return fail(ps, "control character in a string"); }
        if (c != '\\') {
            size_t len = utf8_length((const unsigned char *)ps->p, (size_t)(ps->end - ps->p));
            if (!len) { free(s); return fail(ps, "string is not valid UTF-8"); }
            memcpy(s + n, ps->p, len);
            n += len;
            ps->p += len;
            continue;
        }
        if (++ps->p >= ps->end) { free(s); return fail(ps, "unterminated escape"); }
        char e = *ps->p++;
        uint32_t cp;
        switch (e) {
        case '"': case '\\': case '/': s[n++] = e; continue;
        case 'b': s[n++] = '\b'; continue;
        case 'f': s[n++] = '\f'; continue;
        case 'n': s[n++] = '\n'; continue;
        case 'r': s[n++] = '\r'; continue;
        case 't': s[n++] = '\t'; continue;
        case 'u': break;
        default: free(s); return fail(ps, "bad escape");
        }
        if (hex4(ps, &cp) != 0) { free(s); return -1; }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low;
            if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') { free(s); return fail(ps, "lone surrogate"); }
            ps->p += 2;
            if (hex4(ps, &low) != 0) { free(s); return -1; }
            if (low < 0xDC00 || low > 0xDFFF) { free(s); return fail(ps, "lone surrogate"); }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            free(s);
            return fail(ps, "lone surrogate");
        }
        if (cp == 0) { free(s); return fail(ps, "U+0000 in a string"); }
        n += put_utf8(s + n, cp);
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int parse_number(struct parser *ps, double *out) {
    const char *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end) return fail(ps, "bad number");
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (q < ps->end && *q >= '0' && *q <= '9') q++;
    else return fail(ps, "bad number");
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || *q < '0' || *q > '9') return fail(ps, "bad number");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || *q < '0' || *q > '9') return fail(ps, "bad number");
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    char buf[64];
    size_t len = (size_t)(q - ps->p);
    if (len >= sizeof buf) return fail(ps, "number too long");
    memcpy(buf, ps->p, len);
    buf[len] = '\0';
    /* mpv runs with LC_NUMERIC "C", as strtod needs for a JSON number. */
    *out = strtod(buf, NULL);
    ps->p = q;
    return 0;
}

static int parse_value(struct parser *ps, sbj_value *v);

/* Grows a container's arrays by one slot. */
static int grow(struct parser *ps, sbj_value *v, size_t *cap, bool keys) {
    if (v->n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    sbj_value *items = realloc(v->items, ncap * sizeof *items);
    if (!items) return fail(ps, "out of memory");
    v->items = items;
    if (keys) {
        char **k = realloc(v->keys, ncap * sizeof *k);
        if (!k) return fail(ps, "out of memory");
        v->keys = k;
    }
    *cap = ncap;
    return 0;
}

static int parse_container(struct parser *ps, sbj_value *v, bool object) {
    if (++ps->depth > SBJ_MAX_DEPTH) return fail(ps, "nested too deep");
    v->type = object ? SBJ_OBJECT : SBJ_ARRAY;
    char close = object ? '}' : ']';
    size_t cap = 0;
    ps->p++;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        if (grow(ps, v, &cap, object) != 0) return -1;
        skip_space(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "expected a key");
            if (parse_string(ps, &v->keys[v->n]) != 0) return -1;
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(v->keys[v->n]);
                return fail(ps, "expected ':'");
            }
            ps->p++;
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        int rc = parse_value(ps, &v->items[v->n]);
        v->n++; /* counted even when it failed: sbj_free frees what it holds */
        if (rc != 0) return -1;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    ps->depth--;
    return 0;
}

static int parse_value(struct parser *ps, sbj_value *v) {
    skip_space(ps);
    if (ps->p >= ps->end) return fail(ps, "expected a value");
    switch (*ps->p) {
    case '{': return parse_container(ps, v, true);
    case '[': return parse_container(ps, v, false);
    case '"': v->type = SBJ_STRING; return parse_string(ps, &v->string);
    case 't': if (literal(ps, "true")) { v->type = SBJ_BOOL; v->boolean = true; return 0; } break;
    case 'f': if (literal(ps, "false")) { v->type = SBJ_BOOL; return 0; } break;
    case 'n': if (literal(ps, "null")) { v->type = SBJ_NULL; return 0; } break;
    default: v->type = SBJ_NUMBER; return parse_number(ps, &v->number);
    }
    return fail(ps, "unexpected word");
}

int sbj_parse(const char *text, size_t len, sbj_value *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    struct parser ps = {.p = text, .start = text, .end = text + len, .err = err, .errlen = errlen};
    if (len > SBJ_MAX_BYTES) return fail(&ps, "document too large");
    if (parse_value(&ps, out) != 0) {
        sbj_free(out);
        return -1;
    }
    skip_space(&ps);
    if (ps.p != ps.end) {
        sbj_free(out);
        return fail(&ps, "text after the document");
    }
    return 0;
}

void sbj_free(sbj_value *v) {
    if (!v) return;
    free(v->string);
    for (size_t i = 0; i < v->n; i++) {
        sbj_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

const sbj_value *sbj_get(const sbj_value *object, const char *key) {
    if (!object || object->type != SBJ_OBJECT) return NULL;
    const sbj_value *found = NULL;
    for (size_t i = 0; i < object->n; i++)
        if (strcmp(object->keys[i], key) == 0) found = &object->items[i];
    return found;
}
