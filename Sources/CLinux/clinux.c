/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "clinux.h"

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

int snapback_epoll_watch(int fd) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) return -1;
    struct epoll_event event = { .events = EPOLLIN, .data = { .fd = fd } };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) != 0) {
        int saved = errno;
        close(epfd);
        errno = saved;
        return -1;
    }
    return epfd;
}

int snapback_epoll_wait_readable(int epfd) {
    struct epoll_event events[8];
    for (;;) {
        int n = epoll_wait(epfd, events, 8, -1);
        if (n > 0) return 1;
        if (n < 0 && errno != EINTR) return 0;
    }
}

int snapback_pin_thread(pid_t tid, int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
        errno = EINVAL;
        return -1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set);
}

int snapback_unpin_thread(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

int snapback_cpu_allowed(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_ISSET(cpu, &set) ? 1 : 0;
}

size_t snapback_heap_in_use(void) {
    return mallinfo2().uordblks;
}

int snapback_random(void *buf, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = getrandom((char *)buf + done, len - done, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}
