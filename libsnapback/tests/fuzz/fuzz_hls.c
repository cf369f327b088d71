/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: HLS manifests, as successive refreshes (split at NUL), through the break-source reader. */
#include "fuzz_cues.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_refreshes(SNAPBACK_CUES_HLS, data, size);
}
