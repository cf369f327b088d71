/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: in-band DASH events, ISO BMFF emsg boxes, through snapback_cues_update_emsg. The input's
 * first byte chooses: bit 0, a live MPD read first (with an EventStream Event whose id the boxes may
 * repeat); bit 1, each box's size field set to its length; bit 2, each box's SCTE-35 section given a
 * section_length and CRC that fit (so that the fuzzer reaches past those checks). The rest is boxes,
 * each a 2-byte big-endian length and its bytes; each is read at its own stream times. */
#include "fuzz_cues.h"

#include <stdint.h>

/* Past a nul-terminated string at b[*i], false when it has none. */
static bool skip_string(const uint8_t *b, size_t n, size_t *i) {
    const uint8_t *z = *i < n ? memchr(b + *i, 0, n - *i) : NULL;
    if (!z) return false;
    *i = (size_t)(z - b) + 1;
    return true;
}

static void fix_section(uint8_t *b, size_t n) {
    if (n < 16) return;
    size_t i = (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 1) ? 16 : 8;
    unsigned version = b[i];
    i += 4;
    if (version == 0) {
        if (!skip_string(b, n, &i) || !skip_string(b, n, &i)) return;
        i += 16;
    } else {
        i += 20;
        if (i > n || !skip_string(b, n, &i) || !skip_string(b, n, &i)) return;
    }
    if (i > n || n - i < 8 || n - i > 4096) return;
    uint8_t *s = b + i;
    size_t sn = n - i, sl = sn - 3;
    s[0] = 0xFC;
    s[1] = (uint8_t)((s[1] & 0x70) | ((sl >> 8) & 0x0F));
    s[2] = (uint8_t)sl;
    uint32_t crc = crc32_mpeg2(s, sn - 4);
    s[sn - 4] = (uint8_t)(crc >> 24), s[sn - 3] = (uint8_t)(crc >> 16), s[sn - 2] = (uint8_t)(crc >> 8),
    s[sn - 1] = (uint8_t)crc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned flags = data[0];
    snapback_cues *c = snapback_cues_new(NULL);
    if (!c) return 0;
    if (flags & 1) {
        static const char mpd[] =
            "<MPD type=\"dynamic\"><Period id=\"1\"><EventStream schemeIdUri=\"urn:scte:scte35:2013:bin\">"
            "<Event presentationTime=\"5\" id=\"1\">/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo=</Event>"
            "</EventStream></Period></MPD>";
        FUZZ_ASSERT(snapback_cues_update(c, mpd, sizeof mpd - 1) == SNAPBACK_OK);
    }
    static uint8_t box[65536 + 16];
    size_t i = 1;
    for (unsigned k = 0; i + 2 <= size; k++) {
        size_t n = (size_t)data[i] << 8 | data[i + 1];
        i += 2;
        if (n > size - i) n = size - i;
        memcpy(box, data + i, n);
        i += n;
        if ((flags & 2) && n >= 8 && !(box[0] == 0 && box[1] == 0 && box[2] == 0 && box[3] == 1))
            box[0] = (uint8_t)(n >> 24), box[1] = (uint8_t)(n >> 16), box[2] = (uint8_t)(n >> 8), box[3] = (uint8_t)n;
        if (flags & 4) fix_section(box, n);
        /* Stream times from the input too, bounds and beyond included. */
        static const double times[] = {0, 1, 10.5, -20, 1e10, -1e10, 2e10, 600};
        double seg = times[(flags >> 3 & 7)] + k, origin = times[(flags >> 5 & 7)] - k;
        int rc = snapback_cues_update_emsg(c, box, n, seg, origin);
        FUZZ_ASSERT(rc == SNAPBACK_OK || rc == SNAPBACK_INVALID_ARGUMENT || rc == SNAPBACK_E_NO_MEMORY);
        if (rc != SNAPBACK_OK) FUZZ_ASSERT(snapback_cues_error(c)[0]);
        FUZZ_ASSERT(snapback_cues_format_of(c) == SNAPBACK_CUES_DASH || rc != SNAPBACK_OK);
        fuzz_check(c);
    }
    snapback_cues_free(c);
    return 0;
}
