/* SPDX-License-Identifier: Apache-2.0 */
/* The CRC_32 of an MPEG-2 section (SCTE 35 9.6), for the tests and fuzz targets that build sections:
 * the library's own (sb_crc32_mpeg2) is not exported. */
#ifndef SNAPBACK_TEST_CRC32_MPEG2_H
#define SNAPBACK_TEST_CRC32_MPEG2_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t crc32_mpeg2(const uint8_t *d, size_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)d[i] << 24;
        for (int b = 0; b < 8; b++) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
    }
    return crc;
}

#endif
