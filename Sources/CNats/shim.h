/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_CNATS_SHIM_H
#define SNAPBACK_CNATS_SHIM_H
/* The NATS C client (Debian 12's libnats-dev 3.4): connection options, JetStream key-value. With it,
 * what the agent's one poll waits on beside the client and Swift's Glibc module leaves out: the eventfd
 * the client's callbacks write, the signalfd of the stop signals, and naming the agent's own thread
 * (prctl is variadic, which Swift does not call). */
#include <nats/nats.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

/* Names the calling thread (at most 15 bytes are kept): 0, or -1 with errno set. */
static inline int snapback_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long) name, 0UL, 0UL, 0UL);
}
#endif
