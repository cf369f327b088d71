/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_CLIBUV_SHIM_H
#define SNAPBACK_CLIBUV_SHIM_H
#include <uv.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <malloc.h> /* malloc_trim, which the Glibc module leaves out */
#include <nss.h>    /* __nss_configure_lookup, likewise */
#include <sys/syscall.h>
#include <unistd.h>

/* accept4(2) with no address, for the listener: glibc declares accept4 only under _GNU_SOURCE, which
   the Swift Glibc module is not built with. Returns the descriptor, or -1 with errno set. */
static inline int snapback_accept4(int fd, int flags) {
    return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, flags);
}
#endif
