/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SNAPBACK_CNATS_SHIM_H
#define SNAPBACK_CNATS_SHIM_H
/* The NATS C client (Debian 12's libnats-dev 3.4): connection options, JetStream key-value. */
#include <nats/nats.h>
#endif
