/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzz targets' replay for `make test`: runs LLVMFuzzerTestOneInput over every file of the
 * directories given (a target's committed corpus), built without libFuzzer, under ASan and UBSan. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return perror(path), -1;
    static uint8_t buf[1u << 21];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    uint8_t *copy = malloc(n ? n : 1); /* its own allocation, so ASan sees a read past its end */
    if (!copy) return -1;
    memcpy(copy, buf, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
    return 0;
}

int main(int argc, char **argv) {
    size_t files = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) return perror(argv[a]), 1;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (replay_file(path) < 0) return 1;
            files++;
        }
        closedir(d);
    }
    if (!files) return fprintf(stderr, "replay: no inputs in the corpus given\n"), 1;
    printf("replay %s: %zu inputs\n", argv[0], files);
    return 0;
}
