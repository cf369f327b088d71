/* SPDX-License-Identifier: Apache-2.0 */
/* The mpv plugin's file-reading half without mpv: ad chapters, the sidecar JSON and its reader, the
 * OSD clock, the sidecar's default path. Exits 1 at the first failed check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "media.h"

static int checks;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        checks++;                                                                     \
        if (!(cond)) {                                                                \
            fprintf(stderr, "test_media: %s:%d: FAIL %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static void test_ad_titles(void) {
    const char *ads[] = {"AD", "Ad 2", "ad: brand", "Commercial break", "ADS", "  ad", "Advert", "advertisement 3"};
    const char *not_ads[] = {"Adventure", "Content", "", "Bad ad", "Addendum", "Advertise"};
    for (size_t i = 0; i < sizeof ads / sizeof *ads; i++) CHECK(sbm_is_ad_title(ads[i], NULL));
    for (size_t i = 0; i < sizeof not_ads / sizeof *not_ads; i++) CHECK(!sbm_is_ad_title(not_ads[i], ""));
    CHECK(!sbm_is_ad_title(NULL, NULL));
    CHECK(sbm_is_ad_title("werbung 1", "Werbung"));
    CHECK(!sbm_is_ad_title("AD", "Werbung"));
}

/* Stitching A of the test media: ads of 6, 2+3 and 4 s at content 10, 25 and 50. */
static void test_chapters(void) {
    sbm_chapter ch[] = {{"Content", 0},  {"AD 1", 10},  {"Content", 16}, {"AD 2a", 31},
                        {"AD 2b", 33},   {"Content", 36}, {"AD 3", 61},  {"Content", 65}};
    sbm_breaks b;
    char err[160];
    CHECK(sbm_breaks_from_chapters(ch, 8, 90, NULL, &b, err, sizeof err) == 0);
    CHECK(b.n == 3);
    CHECK(!strcmp(b.items[0].id, "ad@10") && b.items[0].start == 10 && b.items[0].duration == 6);
    CHECK(b.items[0].n_ad_durations == 1 && b.items[0].ad_durations[0] == 6);
    CHECK(!strcmp(b.items[1].id, "ad@25") && b.items[1].start == 31 && b.items[1].duration == 5);
    CHECK(b.items[1].n_ad_durations == 2 && b.items[1].ad_durations[0] == 2 && b.items[1].ad_durations[1] == 3);
    CHECK(!strcmp(b.items[2].id, "ad@50") && b.items[2].start == 61 && b.items[2].duration == 4);
    CHECK(sbm_ads_before(&b, 20) == 6 && sbm_ads_before(&b, 12) == 2 && sbm_ads_before(&b, 70) == 15);
    CHECK(sbm_break_at(&b, 10) == 0 && sbm_break_at(&b, 15.9) == 0 && sbm_break_at(&b, 16) == -1);
    CHECK(sbm_break_at(&b, 35) == 1 && sbm_break_at(&b, 5) == -1);
    sbm_breaks_free(&b);

    /* An ad chapter last: it runs to the file's end, and is left out when that is unknown. */
    sbm_chapter tail[] = {{"Content", 0}, {"Ad", 100.5}};
    CHECK(sbm_breaks_from_chapters(tail, 2, 130.5, NULL, &b, err, sizeof err) == 0);
    CHECK(b.n == 1 && b.items[0].duration == 30 && !strcmp(b.items[0].id, "ad@100.5"));
    sbm_breaks_free(&b);
    CHECK(sbm_breaks_from_chapters(tail, 2, 0, NULL, &b, err, sizeof err) == 0 && b.n == 0);
    /* No ad chapters: no breaks (the session still keeps the bookmark). */
    sbm_chapter story[] = {{"Opening", 0}, {"Middle", 28}};
    CHECK(sbm_breaks_from_chapters(story, 2, 88, NULL, &b, err, sizeof err) == 0 && b.n == 0);
    /* A chapter without a time is no break; one a little before the start begins at 0. */
    sbm_chapter odd[] = {{"Ad", NAN}, {"Ad", -0.064}, {"Content", 9.936}};
    CHECK(sbm_breaks_from_chapters(odd, 3, 90, NULL, &b, err, sizeof err) == 0);
    CHECK(b.n == 1 && b.items[0].start == 0 && b.items[0].duration == 9.936 && !strcmp(b.items[0].id, "ad@0"));
    sbm_breaks_free(&b);
    /* Beyond the daemon's range. */
    sbm_chapter far[] = {{"Ad", 2e10}, {"Content", 2e10 + 5}};
    CHECK(sbm_breaks_from_chapters(far, 2, 3e10, NULL, &b, err, sizeof err) == -1 && strstr(err, "range"));
}

static int sidecar(const char *json, sbm_breaks *b, char **id, char *err) {
    return sbm_breaks_from_sidecar(json, strlen(json), b, id, err, 160);
}

static void test_sidecar(void) {
    sbm_breaks b;
    char *id, err[160];
    /* Stitching B, listed out of order: sorted, ids from content positions unless given. */
    CHECK(sidecar("{\"content_id\": \"snapback-test-movie\", \"breaks\": ["
                  "{\"start\": 28, \"duration\": 8, \"ads\": [5, 3]},"
                  "{\"start\": 10, \"duration\": 3},"
                  "{\"start\": 61, \"duration\": 2, \"id\": \"last\", \"extra\": true}]}",
                  &b, &id, err) == 0);
    CHECK(id && !strcmp(id, "snapback-test-movie"));
    CHECK(b.n == 3 && !strcmp(b.items[0].id, "ad@10") && !strcmp(b.items[1].id, "ad@25") &&
          !strcmp(b.items[2].id, "last"));
    CHECK(b.items[1].n_ad_durations == 2 && b.items[1].ad_durations[1] == 3 && b.items[0].n_ad_durations == 0);
    free(id);
    sbm_breaks_free(&b);
    CHECK(sidecar("{\"breaks\": []}", &b, &id, err) == 0 && b.n == 0 && id == NULL);

    struct { const char *json, *message; } bad[] = {
        {"[]", "must be an object"},
        {"{}", "breaks: an array is required"},
        {"{\"breaks\": [{\"start\": 1}]}", "breaks[0].duration: a number is required"},
        {"{\"breaks\": [{\"start\": -1, \"duration\": 1}]}", "breaks[0].start must be from 0"},
        {"{\"breaks\": [{\"start\": 1e11, \"duration\": 1}]}", "breaks[0].start must be from 0"},
        {"{\"breaks\": [{\"start\": 1, \"duration\": 1e9}]}", "breaks[0].duration must be from 0"},
        {"{\"breaks\": [{\"start\": 1, \"duration\": 1, \"id\": \"\"}]}", "breaks[0].id"},
        {"{\"breaks\": [{\"start\": 1, \"duration\": 1, \"ads\": 3}]}", "breaks[0].ads"},
        {"{\"breaks\": [{\"start\": 1, \"duration\": 1, \"ads\": [-2]}]}", "breaks[0].ads[0]"},
        {"{\"content_id\": 7, \"breaks\": []}", "content_id"},
        {"{\"breaks\": [}", "offset 12"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(sidecar(bad[i].json, &b, &id, err) == -1);
        if (!strstr(err, bad[i].message)) fprintf(stderr, "test_media: \"%s\": %s\n", bad[i].json, err);
        CHECK(strstr(err, bad[i].message) != NULL);
        CHECK(b.n == 0 && id == NULL);
    }
}

static int parse(const char *text, sbj_value *v) {
    char err[120];
    return sbj_parse(text, strlen(text), v, err, sizeof err);
}

static void test_json(void) {
    sbj_value v;
    CHECK(parse(" {\"a\": [1, -0.5e+2, true, false, null], \"s\": \"x\\\"\\u00e9\\ud83d\\ude00\\n\"} ", &v) == 0);
    const sbj_value *a = sbj_get(&v, "a"), *s = sbj_get(&v, "s");
    CHECK(a && a->type == SBJ_ARRAY && a->n == 5 && a->items[1].number == -50 && a->items[2].boolean);
    CHECK(a->items[4].type == SBJ_NULL && !a->items[3].boolean);
    CHECK(s && !strcmp(s->string, "x\"\xc3\xa9\xf0\x9f\x98\x80\n"));
    CHECK(sbj_get(&v, "missing") == NULL && sbj_get(a, "a") == NULL);
    sbj_free(&v);
    CHECK(parse("{\"k\": 1, \"k\": 2}", &v) == 0 && sbj_get(&v, "k")->number == 2);
    sbj_free(&v);
    const char *bad[] = {"", "01", "1.", "-", "1e", "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "\"\\u0000\"", "\"\\ud800\"",
                         "\"\\udc00x\"", "\"a\x01\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"abc", "tru",
                         "[1] x", "\"\\x\"", "nan", "Infinity"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (parse(bad[i], &v) == 0) fprintf(stderr, "test_media: accepted bad JSON %s\n", bad[i]);
        CHECK(parse(bad[i], &v) == -1);
    }
    /* Depth: 16 levels are read, 17 are not. */
    char deep[64] = {0};
    memset(deep, '[', 16);
    memset(deep + 16, ']', 16);
    CHECK(parse(deep, &v) == 0);
    sbj_free(&v);
    memset(deep, '[', 17);
    memset(deep + 17, ']', 17);
    CHECK(parse(deep, &v) == -1);
}

static void test_clock_and_path(void) {
    char buf[32];
    struct { double t; const char *s; } clocks[] = {{0, "0:00"}, {9.9, "0:09"}, {905, "15:05"}, {3723, "1:02:03"},
                                                    {-3, "0:00"}, {NAN, "0:00"}, {INFINITY, "0:00"}};
    for (size_t i = 0; i < sizeof clocks / sizeof *clocks; i++) {
        sbm_format_clock(clocks[i].t, buf, sizeof buf);
        CHECK(!strcmp(buf, clocks[i].s));
    }
    struct { const char *path, *sidecar; } paths[] = {
        {"/v/movie.mkv", "/v/movie.snapback.json"}, {"movie", "movie.snapback.json"},
        {"/v.d/movie", "/v.d/movie.snapback.json"}, {"/v/.hidden", "/v/.hidden.snapback.json"},
        {"http://host/movie.mkv", NULL},           {"", NULL}};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char *s = sbm_default_sidecar_path(paths[i].path);
        CHECK(paths[i].sidecar ? s && !strcmp(s, paths[i].sidecar) : s == NULL);
        free(s);
    }
    char *v = sbm_sidecar_path("/v.d/movie.mkv", ".vmap.xml");
    CHECK(v && !strcmp(v, "/v.d/movie.vmap.xml"));
    free(v);
    CHECK(sbm_sidecar_path("https://host/movie.mkv", ".vmap.xml") == NULL);
}

int main(void) {
    test_ad_titles();
    test_chapters();
    test_sidecar();
    test_json();
    test_clock_and_path();
    printf("test_media: ok (%d checks)\n", checks);
    return 0;
}
