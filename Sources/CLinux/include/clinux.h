/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_CLINUX_H
#define SNAPBACK_CLINUX_H
/* Linux calls the command-line client's benchmarks and the daemon's soak test need and Swift's Glibc
 * module leaves out: <sys/epoll.h> is not imported (and struct epoll_event is packed on x86-64), the
 * CPU affinity calls sit behind _GNU_SOURCE, <malloc.h>'s mallinfo2 and <sys/random.h>'s getrandom (the
 * sync agent's box id and report jitter) are not imported. Written here in C
 * so that Swift calls them with their real types. */

#include <stddef.h>
#include <sys/types.h>

/* A new epoll instance (close-on-exec) watching fd for input; -1 with errno set on failure. */
int snapback_epoll_watch(int fd);

/* Blocks until the watched descriptor is readable: 1, or 0 on an error other than EINTR. */
int snapback_epoll_wait_readable(int epfd);

/* Restricts thread tid (0: the calling one) to one CPU: 0, or -1 with errno set. */
int snapback_pin_thread(pid_t tid, int cpu);

/* Lets the calling thread run on every CPU its cpuset allows again: 0, or -1 with errno set. */
int snapback_unpin_thread(void);

/* Whether the calling thread may run on cpu: 1 or 0. */
int snapback_cpu_allowed(int cpu);

/* Bytes of glibc's heap in use by allocations, every arena (mallinfo2().uordblks). */
size_t snapback_heap_in_use(void);

/* Fills buf with len bytes from getrandom(2) (flags 0: blocks only until the kernel's pool is first
 * seeded); 0 on success, -1 with errno set. */
int snapback_random(void *buf, size_t len);

#endif
