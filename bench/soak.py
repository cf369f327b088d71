#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A long soak: many players for a long time, reconnecting as restarting players do.

Starts the release snapbackd with its own state directory and runs PLAYERS players (threads in WORKERS
processes) for MINUTES minutes. Each player connects, says Hello, opens a session of a 60-minute program
with three unwatched mid-rolls (resuming from its bookmark), reports its playhead every 250 ms at 4x
speed, now and then seeks over a break (and is snapped back, playing the break through AdBreakStarted and
AdBreakEnded), pauses (a bookmark save), and after one to five minutes goes away — half of the time with
CloseSession, half of the time by simply closing the socket, as a crashed player does — then comes back.

Every call is timed; every status other than OK, every protocol error and every missing snapback is an
error. The daemon's RSS is sampled every 10 s. After the warm-up (the first sixth of the run, at least a
minute or all but the last sample), the drift is the last sample over the lowest after warm-up, minus 1.
Prints the calls, errors, latency p50/p99/max, reconnects, snapbacks, bookmark saves and the RSS series;
exits 1 if there was an error or the drift is 5% or more.

Usage: soak.py SNAPBACKD [--players N] [--minutes M] [--workers W]
"""

import argparse
import multiprocessing
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "clients", "python"))
from snapback_client import Client, ProtocolError, RpcError  # noqa: E402
from bench_daemon import BenchDaemon  # noqa: E402

BREAKS = [{"id": f"mid{i}", "start": 600.0 * i, "duration": 30.0} for i in (1, 2, 3)]
CONTENT = 3600.0 + 90.0


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.errors = []
        self.reconnects = 0
        self.snapbacks = 0
        self.bookmarks = 0

    def error(self, text):
        with self.lock:
            if len(self.errors) < 50:
                self.errors.append(text)
            else:
                self.errors.append(None)


def timed(stats, client, method, **fields):
    start = time.perf_counter()
    reply = client.call(method, **fields)
    elapsed = (time.perf_counter() - start) * 1e3
    with stats.lock:
        stats.latencies.append(elapsed)
    return reply


def pushes_of(client, kind):
    return [p for p in client.take_pushes() if p.push.kind == kind]


def play_once(sock, name, stats, deadline, rng):
    """One connection's life: up to a few minutes of playback, then gone."""
    life_end = min(deadline, time.monotonic() + rng.uniform(60, 300))
    with Client(sock, timeout=30) as c:
        c.hello(name)
        opened = timed(stats, c, "Timeline/OpenSession", content_id=name, profile="soak", breaks=BREAKS,
                       content_duration=CONTENT, resume={"use_bookmark": True})
        sid = opened.session_id
        position = opened.start_stream_time or 0.0
        in_break = None
        while time.monotonic() < life_end:
            time.sleep(0.25)
            if in_break is None and rng.random() < 0.01:
                # Seek over the next break if one is ahead: snapback to it.
                ahead = [b for b in BREAKS if b["start"] > position + 5]
                if ahead:
                    target = min(ahead[0]["start"] + 120.0, CONTENT - 10)
                    timed(stats, c, "Timeline/SeekEnded", session_id=sid, from_stream_time=position,
                          to_stream_time=target)
                    seeks = pushes_of(c, "seek")
                    if seeks:
                        with stats.lock:
                            stats.snapbacks += 1
                        position = seeks[-1].push.seek.stream_time
                        in_break = next((b for b in BREAKS if abs(b["start"] - position) < 1e-6), None)
                        if in_break:
                            timed(stats, c, "Timeline/AdBreakStarted", session_id=sid, break_id=in_break["id"],
                                  stream_time=position)
                    else:
                        position = target
                    continue
            if rng.random() < 0.005:
                timed(stats, c, "Timeline/Pause", session_id=sid, stream_time=position)
                continue
            position = min(position + 1.0, CONTENT)
            if in_break and position >= in_break["start"] + in_break["duration"]:
                timed(stats, c, "Timeline/AdBreakEnded", session_id=sid, break_id=in_break["id"], stream_time=position)
                seeks = pushes_of(c, "seek")
                if seeks:
                    position = seeks[-1].push.seek.stream_time
                in_break = None
            timed(stats, c, "Timeline/ReportPlayhead", session_id=sid, stream_time=position, rate=1.0, playing=True)
            if position >= CONTENT - 1:
                position = 0.0
                timed(stats, c, "Timeline/SeekEnded", session_id=sid, from_stream_time=CONTENT - 1, to_stream_time=0.0)
            saved = pushes_of(c, "bookmark_saved")
            if saved:
                with stats.lock:
                    stats.bookmarks += len(saved)
        if rng.random() < 0.5:
            timed(stats, c, "Timeline/CloseSession", session_id=sid)
        # else: the socket just closes, as a crashed player's does


def player(sock, name, stats, deadline, seed):
    rng = random.Random(seed)
    time.sleep(rng.uniform(0, 5))  # players do not all start at once
    while time.monotonic() < deadline:
        try:
            play_once(sock, name, stats, deadline, rng)
        except (RpcError, ProtocolError, OSError) as e:
            stats.error(f"{name}: {type(e).__name__}: {e}")
            time.sleep(1)
        with stats.lock:
            stats.reconnects += 1
        time.sleep(rng.uniform(0.1, 2))  # a restarting player


def worker(sock, names, seconds, out):
    stats = Stats()
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=player, args=(sock, n, stats, deadline, hash(n))) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((stats.latencies, stats.errors, stats.reconnects, stats.snapbacks, stats.bookmarks))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapbackd")
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    seconds = args.minutes * 60
    with BenchDaemon(args.snapbackd, "snapback-soak.") as daemon:
        sock = daemon.socket
        queue = multiprocessing.Queue()
        names = [f"player-{i:03d}" for i in range(args.players)]
        procs = [multiprocessing.Process(target=worker, args=(sock, names[w::args.workers], seconds, queue))
                 for w in range(args.workers)]
        for p in procs:
            p.start()
        start = time.monotonic()
        samples = []
        while any(p.is_alive() for p in procs) and time.monotonic() - start < seconds + 120:
            time.sleep(10)
            samples.append((time.monotonic() - start, rss_kib(daemon.pid)))
            print(f"soak: {samples[-1][0]:6.0f} s  RSS {samples[-1][1]:,} KiB", flush=True)
            if daemon.poll() is not None:
                raise SystemExit(f"soak: snapbackd exited {daemon.poll()}")
        results = [queue.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
    code = daemon.exit_code
    latencies = sorted(x for r in results for x in r[0])
    errors = [e for r in results for e in r[1]]
    reconnects, snapbacks, bookmarks = (sum(r[i] for r in results) for i in (2, 3, 4))
    warm_up = max(60.0, seconds / 6)
    after = [rss for t, rss in samples if t >= warm_up] or [rss for _, rss in samples[-2:]]
    drift = after[-1] / min(after) - 1 if after else float("nan")
    p = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))] if latencies else float("nan")  # noqa: E731
    print(f"soak: {args.players} players for {args.minutes:g} min: {len(latencies):,} calls, {len(errors)} errors, "
          f"{reconnects:,} reconnects, {snapbacks:,} snapbacks, {bookmarks:,} bookmark saves; "
          f"latency p50 {p(0.5):.3f} ms, p99 {p(0.99):.3f} ms, max {latencies[-1] if latencies else 0:.1f} ms")
    print(f"soak: RSS {samples[0][1] if samples else 0:,} KiB at 10 s, lowest after warm-up {min(after):,}, "
          f"last {after[-1]:,}: drift {drift * 100:+.2f}% (limit 5%); daemon exit {code}")
    for e in [e for e in errors if e][:10]:
        print(f"soak: error: {e}")
    if errors or not drift < 0.05 or code != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
