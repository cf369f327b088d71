/* SPDX-License-Identifier: Apache-2.0 */
/* What a text of n items costs the break-source reader, for libsnapback/tests/cues-cost.sh, which runs
 * it under callgrind at two sizes: the instructions an item adds must not grow with the text (a reader
 * that compares each item with every one before it reads a hostile 50,000-line playlist for seconds).
 * Each case is a text the bounds admit, of n items that are all different breaks:
 *   hls    n segments dated by EXT-X-PROGRAM-DATE-TIME, an interstitial DATERANGE at each (found by ID,
 *          placed by date) and an END-ON-NEXT range of one CLASS at each (ended by the next);
 *   dash   n SCTE-35 Events (XML splice_insert) in one EventStream, each a break;
 *   vmap   n AdBreaks, each with its own breakId and time.
 * Usage: cues_cost hls|dash|vmap N. Exit 1 when the reader refused the text or found fewer breaks. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapback/cues.h"

static char *text;
static size_t len, cap;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(text + len, cap - len, fmt, ap);
        va_end(ap);
        if (n < 0) exit(2);
        if ((size_t)n < cap - len) {
            len += (size_t)n;
            return;
        }
        cap = cap ? 2 * cap : 1 << 16;
        if (!(text = realloc(text, cap))) exit(2);
    }
}

static void date(int seconds, char out[32]) {
    snprintf(out, 32, "2020-01-02T%02d:%02d:%02d.000Z", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int n = atoi(argv[2]);
    if (n <= 0 || n > 20000) return 2;
    snapback_cues_format format;
    if (strcmp(argv[1], "hls") == 0) {
        format = SNAPBACK_CUES_HLS;
        put("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-PLAYLIST-TYPE:VOD\n");
        for (int i = 0; i < n; i++) {
            char d[32], e[32];
            date(6 * i, d);
            date(6 * i + 1, e);
            put("#EXT-X-PROGRAM-DATE-TIME:%s\n#EXTINF:6,\ns%d.ts\n", d, i);
            put("#EXT-X-DATERANGE:ID=\"ad%d\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"%s\",DURATION=2,"
                "X-ASSET-URI=\"a%d.m3u8\"\n", i, d, i);
            put("#EXT-X-DATERANGE:ID=\"c%d\",CLASS=\"chapter\",START-DATE=\"%s\",END-ON-NEXT=YES\n", i, e);
        }
        put("#EXT-X-ENDLIST\n");
    } else if (strcmp(argv[1], "dash") == 0) {
        format = SNAPBACK_CUES_DASH;
        put("<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\" "
            "mediaPresentationDuration=\"PT100H\"><Period id=\"p0\" start=\"PT0S\">"
            "<EventStream schemeIdUri=\"urn:scte:scte35:2013:xml\" timescale=\"1\">\n");
        for (int i = 0; i < n; i++)
            put("<Event presentationTime=\"%d\" duration=\"2\" id=\"%d\"><SpliceInfoSection><SpliceInsert "
                "spliceEventId=\"%d\" outOfNetworkIndicator=\"true\"/></SpliceInfoSection></Event>\n", 10 * i + 5, i, i);
        put("</EventStream><AdaptationSet/></Period></MPD>\n");
    } else if (strcmp(argv[1], "vmap") == 0) {
        format = SNAPBACK_CUES_VMAP;
        put("<?xml version=\"1.0\"?>\n<vmap:VMAP xmlns:vmap=\"http://www.iab.net/videosuite/vmap\" version=\"1.0\">\n");
        for (int i = 0; i < n; i++)
            put("<vmap:AdBreak timeOffset=\"%02d:%02d:%02d.000\" breakType=\"linear\" breakId=\"b%d\"><vmap:AdSource>"
                "<vmap:AdTagURI templateType=\"vast3\">https://ads.example/%d</vmap:AdTagURI></vmap:AdSource>"
                "</vmap:AdBreak>\n", (10 * i + 5) / 3600, (10 * i + 5) / 60 % 60, (10 * i + 5) % 60, i, i);
        put("</vmap:VMAP>\n");
    } else {
        return 2;
    }
    snapback_cues_options o = {.format = format, .max_breaks = (size_t)n + 1};
    snapback_cues *c = snapback_cues_new(&o);
    if (!c) return 2;
    int rc = snapback_cues_update(c, text, len);
    size_t breaks;
    snapback_cues_breaks(c, &breaks);
    printf("%s n=%d: %zu bytes, rc %d, %zu breaks %s\n", argv[1], n, len, rc, breaks, snapback_cues_error(c));
    snapback_cues_free(c);
    free(text);
    return rc == SNAPBACK_OK && breaks >= (size_t)n ? 0 : 1;
}
