/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The four functions of glibc 2.38 and later that the aarch64 Swift runtime calls, defined on top of
 * glibc 2.36 (Debian 12's) for the products `make cross-arm64` builds for Debian 12
 * (scripts/test-arm64.sh links this file into snapbackd, snapback, snapback-sync and snapback-web).
 *
 * Debian's only aarch64 Swift runtime is sid's swiftlang, and the products link its static libraries
 * (--static-swift-stdlib). Those were compiled against glibc 2.43's headers, which turn sscanf, strtol
 * and strtoll into their C23 versions (__isoc23_*, glibc 2.38), and libdispatch calls strlcpy (glibc
 * 2.38). Against glibc 2.36 these four are undefined, and nothing else is (scripts/test-arm64.sh's
 * link fails on any other). Their callers, in swiftlang 6.2.3:
 *
 *   __isoc23_sscanf   libswiftCore's CommandLine.cpp ("%p-%p", a line of /proc/self/maps) and
 *                     libdispatch's workqueue.c ("%*d %*s %c", /proc/PID/stat)
 *   __isoc23_strtol   libswiftCore's EnvironmentVariables.cpp and CrashHandlerLinux.cpp,
 *                     libswift_Concurrency's Actor.cpp, libdispatch's init.c (environment variables)
 *   __isoc23_strtoll  libswiftCore's EnvironmentVariables.cpp
 *   strlcpy           libdispatch's init.c
 *
 * C23's scanf differs from C99's only in %b and in %i taking a 0b prefix: the two formats above use
 * neither, so C99's vsscanf reads them the same. C23's strtol and strtoll also read a 0b or 0B prefix
 * when the base is 0 or 2: done here, the rest is C99's. strlcpy is the BSD function glibc 2.38 adopted.
 *
 * Hidden: they resolve the runtime's calls inside the executable and are not exported (the static
 * runtime links with -export-dynamic), so no shared library's calls of glibc's own come here.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPAT __attribute__((visibility("hidden")))

COMPAT int __isoc23_sscanf(const char *restrict s, const char *restrict format, ...);
COMPAT long __isoc23_strtol(const char *restrict s, char **restrict end, int base);
COMPAT long long __isoc23_strtoll(const char *restrict s, char **restrict end, int base);
COMPAT size_t strlcpy(char *restrict dst, const char *restrict src, size_t size);

int __isoc23_sscanf(const char *restrict s, const char *restrict format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsscanf(s, format, args);
    va_end(args);
    return n;
}

/* Where s (after spaces and a sign) is a 0b number strtol reads in base 0 or 2: its first digit, and
 * whether it is negative; else NULL. */
static const char *binary_digits(const char *s, int base, int *negative) {
    if (base != 0 && base != 2) return NULL;
    while (isspace((unsigned char)*s)) s++;
    *negative = *s == '-';
    if (*s == '+' || *s == '-') s++;
    if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B') && (s[2] == '0' || s[2] == '1')) return s + 2;
    return NULL;
}

/* C23's strtol for a signed type of the given bounds: the 0b form read as its magnitude (strtoull,
 * base 2), then bounded as C says (ERANGE and the bound beyond it). */
#define C23_STRTO(name, type, min, max, c99)                                                          \
    type name(const char *restrict s, char **restrict end, int base) {                                \
        int negative;                                                                                 \
        const char *digits = binary_digits(s, base, &negative);                                       \
        if (digits == NULL) return c99(s, end, base);                                                 \
        unsigned long long magnitude = strtoull(digits, end, 2);                                      \
        unsigned long long limit = negative ? (unsigned long long)(max) + 1 : (unsigned long long)(max); \
        if (magnitude > limit) {                                                                      \
            errno = ERANGE;                                                                           \
            return negative ? (min) : (max);                                                          \
        }                                                                                             \
        if (!negative) return (type)magnitude;                                                        \
        return magnitude == limit ? (min) : -(type)magnitude;                                         \
    }

C23_STRTO(__isoc23_strtol, long, LONG_MIN, LONG_MAX, strtol)
C23_STRTO(__isoc23_strtoll, long long, LLONG_MIN, LLONG_MAX, strtoll)

size_t strlcpy(char *restrict dst, const char *restrict src, size_t size) {
    size_t length = strlen(src);
    if (size > 0) {
        size_t n = length < size - 1 ? length : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return length;
}
