/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal player on plain poll(2): the library's descriptor beside the player's own (here a timer
 * descriptor for the playback clock), one poll, then dispatch what is ready.
 *
 *   SNAPBACK_SOCKET=/path/to/snapbackd.sock ./player_poll [--content-id ID] [--profile NAME] [--b1-watched] */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "scripted_player.h"

int main(int argc, char **argv) {
    struct player_args args;
    int parsed = player_parse_args("player_poll", argc, argv, &args);
    if (parsed) return parsed == 1 ? 0 : 2;
    struct player p;
    int rc = player_start(&p, &args);
    if (rc != SNAPBACK_OK) {
        fprintf(stderr, "player_poll: %s\n", snapback_strerror(rc));
        snapback_client_free(p.client);
        return 1;
    }
    int tick = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec every_10ms = {.it_interval = {0, 10000000}, .it_value = {0, 10000000}};
    timerfd_settime(tick, 0, &every_10ms, NULL);
    int idle_ticks = 0;
    while (!p.done && idle_ticks < 500) { /* 5 s without progress: give up */
        /* Read all three again each round: they change with the connection and the queue. */
        struct pollfd fds[2] = {{.fd = tick, .events = POLLIN},
                                {.fd = snapback_client_fd(p.client), .events = snapback_client_events(p.client)}};
        int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, snapback_client_next_timeout_ms(p.client));
        if (n < 0) continue;
        snapback_client_dispatch(p.client, fds[1].fd >= 0 ? fds[1].revents : 0);
        if (fds[0].revents & POLLIN) {
            uint64_t expirations;
            if (read(tick, &expirations, sizeof expirations) > 0) {
                idle_ticks = p.in_flight ? idle_ticks + 1 : 0;
                player_tick(&p);
            }
        }
    }
    close(tick);
    return player_finish(&p);
}
