/* SPDX-License-Identifier: Apache-2.0 */
/* A live manifest's refreshes (refresh.h). The thread waits for its deadline on a condition variable of
 * the monotonic clock, so it sleeps the whole interval and wakes early only to stop; a fetch runs with
 * the lock released. */
#define _GNU_SOURCE
#include "refresh.h"

#include "snapback_fetch.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sbm_refresher {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* signalled to stop */
    char *path;
    struct timespec interval;
    int wake_fd;
    bool stop;
    /* The fetch the loop has not taken yet. */
    bool ready;
    char *text;
    size_t len;
    char err[256];
};

static void add(struct timespec *t, const struct timespec *d) {
    t->tv_sec += d->tv_sec;
    t->tv_nsec += d->tv_nsec;
    if (t->tv_nsec >= 1000000000L) t->tv_sec++, t->tv_nsec -= 1000000000L;
}

static bool should_stop(void *user) {
    struct sbm_refresher *r = user;
    pthread_mutex_lock(&r->lock);
    bool stop = r->stop;
    pthread_mutex_unlock(&r->lock);
    return stop;
}

static void *run(void *user) {
    struct sbm_refresher *r = user;
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    pthread_mutex_lock(&r->lock);
    for (;;) {
        add(&due, &r->interval);
        while (!r->stop && pthread_cond_timedwait(&r->cond, &r->lock, &due) != ETIMEDOUT) {
        }
        if (r->stop) break;
        pthread_mutex_unlock(&r->lock);
        size_t len = 0;
        char err[256] = "";
        char *text = snapback_fetch_stoppable(r->path, &len, err, sizeof err, should_stop, r);
        pthread_mutex_lock(&r->lock);
        if (r->stop) {
            free(text);
            break;
        }
        free(r->text);
        r->text = text;
        r->len = len;
        snprintf(r->err, sizeof r->err, "%s", err);
        r->ready = true;
        uint64_t one = 1;
        ssize_t n = write(r->wake_fd, &one, sizeof one);
        (void)n;
        /* A fetch that took longer than the interval: the next is due an interval after it, not at once. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > due.tv_sec || (now.tv_sec == due.tv_sec && now.tv_nsec > due.tv_nsec)) due = now;
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

struct sbm_refresher *sbm_refresher_start(const char *path, double interval, int wake_fd, char *err, size_t errlen) {
    if (!(interval >= SBM_REFRESH_MIN && interval <= SBM_REFRESH_MAX)) {
        snprintf(err, errlen, "an interval of %g s: from %g to %g expected", interval, SBM_REFRESH_MIN, SBM_REFRESH_MAX);
        return NULL;
    }
    struct sbm_refresher *r = calloc(1, sizeof *r);
    pthread_condattr_t ca;
    bool attr = r && pthread_condattr_init(&ca) == 0;
    if (!r || !attr || !(r->path = strdup(path)) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&r->cond, &ca) != 0) {
        snprintf(err, errlen, "out of memory");
        if (attr) pthread_condattr_destroy(&ca);
        if (r) free(r->path);
        free(r);
        return NULL;
    }
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&r->lock, NULL);
    r->interval.tv_sec = (time_t)interval;
    r->interval.tv_nsec = (long)((interval - (double)r->interval.tv_sec) * 1e9);
    r->wake_fd = wake_fd;
    int rc = pthread_create(&r->thread, NULL, run, r);
    if (rc != 0) {
        snprintf(err, errlen, "no thread: %s", strerror(rc));
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

bool sbm_refresher_take(struct sbm_refresher *r, char **text, size_t *len, char *err, size_t errlen) {
    if (!r) return false;
    pthread_mutex_lock(&r->lock);
    bool ready = r->ready;
    if (ready) {
        *text = r->text;
        *len = r->len;
        snprintf(err, errlen, "%s", r->err);
        r->text = NULL;
        r->ready = false;
    }
    pthread_mutex_unlock(&r->lock);
    return ready;
}

void sbm_refresher_stop(struct sbm_refresher *r) {
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    free(r->text);
    free(r->path);
    free(r);
}
