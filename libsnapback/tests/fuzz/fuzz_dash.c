/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: DASH manifests, as successive refreshes (split at NUL), through the break-source reader. */
#include "fuzz_cues.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_refreshes(SNAPBACK_CUES_DASH, data, size);
}
