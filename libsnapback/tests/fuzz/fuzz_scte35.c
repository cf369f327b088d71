/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: SCTE-35 splice_info_sections through the one decoder, raw; and the same bytes as the
 * base64 of an EXT-OATCLS-SCTE35 before a CUE-OUT, through the HLS reader. The CRC is fixed up half
 * the time, so that the fuzzer reaches past the check. */
#include "fuzz_cues.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    uint8_t buf[4100];
    memcpy(buf, data, size);
    size_t n = size;
    if (size >= 1 && (data[0] & 1) && size >= 8) {
        /* section_length to fit, and a valid CRC */
        buf[0] = 0xFC;
        size_t sl = n - 3;
        buf[1] = (uint8_t)((buf[1] & 0x70) | ((sl >> 8) & 0x0F));
        buf[2] = (uint8_t)sl;
        uint32_t crc = crc32_mpeg2(buf, n - 4);
        buf[n - 4] = (uint8_t)(crc >> 24), buf[n - 3] = (uint8_t)(crc >> 16), buf[n - 2] = (uint8_t)(crc >> 8),
        buf[n - 1] = (uint8_t)crc;
    }
    snapback_scte35 s;
    char err[128];
    int rc = snapback_scte35_decode(buf, n, &s, err, sizeof err);
    FUZZ_ASSERT(rc == SNAPBACK_OK || rc == SNAPBACK_INVALID_ARGUMENT);
    if (rc == SNAPBACK_OK) {
        FUZZ_ASSERT(s.n_events <= SNAPBACK_SCTE35_MAX_EVENTS);
        for (size_t i = 0; i < s.n_events; i++) {
            FUZZ_ASSERT(s.events[i].pts < (1ull << 33));
            FUZZ_ASSERT(s.events[i].duration < (1ull << 40));
        }
    } else {
        FUZZ_ASSERT(err[0]);
    }
    /* Through the playlist reader, as an OATCLS tag. */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char text[6000];
    size_t t = (size_t)snprintf(text, sizeof text, "#EXTM3U\n#EXTINF:10,\na.ts\n#EXT-OATCLS-SCTE35:");
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)buf[i] << 16 | (i + 1 < n ? (uint32_t)buf[i + 1] << 8 : 0) | (i + 2 < n ? buf[i + 2] : 0);
        text[t++] = b64[v >> 18 & 63];
        text[t++] = b64[v >> 12 & 63];
        text[t++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        text[t++] = i + 2 < n ? b64[v & 63] : '=';
    }
    t += (size_t)snprintf(text + t, sizeof text - t, "\n#EXT-X-CUE-OUT\n#EXTINF:10,\nb.ts\n");
    snapback_cues *c = snapback_cues_new(NULL);
    if (c) {
        rc = snapback_cues_update(c, text, t);
        FUZZ_ASSERT(rc == SNAPBACK_OK || rc == SNAPBACK_E_NO_MEMORY);
        fuzz_check(c);
        snapback_cues_free(c);
    }
    return 0;
}
