/* SPDX-License-Identifier: Apache-2.0 */
/* packaging/glibc-compat.c against what glibc 2.38 does (scripts/test-arm64.sh runs it for aarch64 on the
 * Debian 12 sysroot, under qemu-user, before linking the products with it). */
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
long __isoc23_strtol(const char *, char **, int);
long long __isoc23_strtoll(const char *, char **, int);
int __isoc23_sscanf(const char *, const char *, ...);
size_t strlcpy(char *, const char *, size_t);
#define T(cond) do { if (!(cond)) { printf("FAIL %s\n", #cond); fails++; } } while (0)
int main(void) {
    int fails = 0; char *e; char buf[4];
    T(__isoc23_strtol("  0b101x", &e, 0) == 5 && *e == 'x');
    T(__isoc23_strtol("-0B11", &e, 2) == -3 && *e == 0);
    T(__isoc23_strtol("0b2", &e, 0) == 0 && *e == 'b');
    T(__isoc23_strtol("0x1f", &e, 0) == 31);
    T(__isoc23_strtol("42", &e, 10) == 42);
    T(__isoc23_strtol("0b101", &e, 10) == 0 && *e == 'b');
    errno = 0; T(__isoc23_strtol("0b1111111111111111111111111111111111111111111111111111111111111111", &e, 0) == LONG_MAX && errno == ERANGE);
    errno = 0; T(__isoc23_strtol("-0b1000000000000000000000000000000000000000000000000000000000000000", &e, 0) == LONG_MIN && errno == 0);
    errno = 0; T(__isoc23_strtoll("-0b1000000000000000000000000000000000000000000000000000000000000001", &e, 0) == LLONG_MIN && errno == ERANGE);
    errno = 0; T(__isoc23_strtoll("0b111111111111111111111111111111111111111111111111111111111111111", &e, 0) == LLONG_MAX && errno == 0);
    void *a, *b; T(__isoc23_sscanf("7f00-7fff r-xp", "%p-%p", &a, &b) == 2 && (long)a == 0x7f00 && (long)b == 0x7fff);
    char c; T(__isoc23_sscanf("12 (x y) S 1", "%*d %*s %c", &c) == 1);
    T(strlcpy(buf, "hello", sizeof buf) == 5 && strcmp(buf, "hel") == 0);
    T(strlcpy(buf, "hi", sizeof buf) == 2 && strcmp(buf, "hi") == 0);
    T(strlcpy(buf, "zz", 0) == 2 && strcmp(buf, "hi") == 0);
    printf("%d failures\n", fails);
    return fails != 0;
}
