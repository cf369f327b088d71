#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The longest requests a player can send, and what they cost everybody else.

snapbackd serves every player from one event-loop thread: while it works on one request, every other
player's request waits. This bench starts the daemon at its default limits and, for each of the largest
requests those limits allow, has an abusive player send it again and again (one every --interval ms)
while a bystander player reports its playhead every 2 ms and times each round trip. It prints, per
request: the longest and the median round trip of the abusive request itself (an upper bound on how long
it held the loop: the daemon's work plus the socket's), and the bystander's p50/p99/max beside its own
unloaded p99, measured for as long right before each case, with the p99 ratio (target: at most 2).

The last cases are a sync agent catching up (Sync/WatchChanges from change 0) over a backlog of
--backlog changes: the daemon sends it a page a loop turn, so its "round trip" is the whole catch-up,
many turns, not one hold. Its client reads the pages as they come (a wake-up a page, a thousand a
second, each costing this Python client more CPU than the daemon's page, on the bystander's cores), then
in turns of 10 ms, as an agent working in turns reads them (snapback-sync takes up to 512 changes a
turn): the second measures the daemon, the first the two together.

Usage: loop_stall.py SNAPBACKD [--seconds S] [--interval MS] [--backlog N] [--json]
"""

import argparse
import json
import multiprocessing
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "clients", "python"))
from snapback_client import HEADER, METHODS, OK, PUSH, REQUEST, Client, decode, encode, encode_frame  # noqa: E402
from bench_daemon import BenchDaemon  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")


def bystander(sock, seconds, out):
    """A player on a 30-minute program reporting its playhead every 2 ms; the round trips in ms."""
    with Client(sock) as c:
        c.hello("bystander")
        sid = c.open_session(content_id="bystander", breaks=[{"id": "b1", "start": 600.0, "duration": 60.0}]).session_id
        method = METHODS["Timeline/ReportPlayhead"].id
        times = []
        position = 0.0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            position = (position + 0.002) % 500
            body = encode("ReportPlayheadRequest", session_id=sid, stream_time=position, rate=1.0, playing=True)
            start = time.perf_counter()
            status, _ = c.call_raw(method, body)
            times.append((time.perf_counter() - start) * 1e3)
            if status != OK:
                raise SystemExit(f"bystander: ReportPlayhead answered status {status}")
            time.sleep(0.002)
        out.put(times)


def breaks(n, start=600.0):
    return [{"id": f"break-{i:06d}", "start": start + i * 700.0, "duration": 60.0,
             "ad_durations": [15.0, 15.0, 15.0, 15.0]} for i in range(n)]


def catch_up(sock, total, turn_ms=0):
    """A sync agent's catch-up: Hello, WatchChanges from change 0, then `total` SyncChange pushes read
    (their frames counted, not decoded: the client's own work stays out of the measure), as they come or
    every `turn_ms` ms."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock)
        s.sendall(encode_frame(1, REQUEST, METHODS["Control/Hello"].id,
                               encode("HelloRequest", protocol_version=1, client_name="loop-stall-agent"))
                  + encode_frame(2, REQUEST, METHODS["Sync/WatchChanges"].id, encode("WatchChangesRequest", after=0)))
        pending, pushes = b"", 0
        while pushes < total:
            if turn_ms:
                time.sleep(turn_ms / 1e3)
            chunk = s.recv(1 << 20)
            if not chunk:
                raise SystemExit(f"the change stream closed after {pushes} of {total} changes")
            pending += chunk
            at = 0
            while len(pending) - at >= HEADER.size:
                length, _, ftype, status, _ = HEADER.unpack_from(pending, at)
                if len(pending) - at < HEADER.size + length:
                    break
                if status != OK:
                    raise SystemExit(f"WatchChanges answered status {status}")
                pushes += ftype == PUSH
                at += HEADER.size + length
            pending = pending[at:]


def make_backlog(c, total):
    """`total` changes in the store: records merged as another box's, 256 a call (Merge's most)."""
    now = int(time.time() * 1000)
    for first in range(0, total, 256):
        records = [{"profile": "", "content_id": f"backlog-{i:06d}",
                    "stamp": {"physical": now, "counter": 0, "device": "loop-stall-other-box"},
                    "bookmark": {"content_time": 60.0 + i, "updated_at": now / 1e3}}
                   for i in range(first, min(total, first + 256))]
        c.call("Sync/Merge", records=records)


def abusive_requests(hello, sock, backlog):
    """(name, prepare(client) -> (method id, body, expected status), or a callable that makes the request)
    for the largest requests allowed."""
    limit = hello.max_breaks_per_session
    frame = hello.max_frame_size

    def open_at_limit(c):
        return METHODS["Timeline/OpenSession"].id, encode("OpenSessionRequest", content_id="abuse", breaks=breaks(limit)), OK

    def open_over_limit(c):
        # As many small breaks as the largest frame holds: refused once counted.
        many = [{"id": f"{i}", "start": float(i), "duration": 0.5} for i in range(frame // 14)]
        body = encode("OpenSessionRequest", content_id="abuse", breaks=many)
        while len(body) > frame:
            many = many[: len(many) * 9 // 10]
            body = encode("OpenSessionRequest", content_id="abuse", breaks=many)
        return METHODS["Timeline/OpenSession"].id, body, 8  # RESOURCE_EXHAUSTED

    def state_at_limit(c):
        sid = c.open_session(content_id="abuse-state", breaks=breaks(limit)).session_id
        return METHODS["Timeline/GetSessionState"].id, encode("GetSessionStateRequest", session_id=sid), OK

    def update_at_limit(c):
        sid = c.open_session(content_id="", kind=2, breaks=breaks(limit - 1)).session_id
        return (METHODS["Timeline/UpdateBreaks"].id,
                encode("UpdateBreaksRequest", session_id=sid, breaks=breaks(limit)), OK)

    def watch_backlog(c):
        make_backlog(c, backlog)
        return lambda: catch_up(sock, backlog)

    def watch_backlog_in_turns(c):
        # The backlog the case before made.
        return lambda: catch_up(sock, backlog, turn_ms=10)

    return [
        (f"OpenSession of {limit} breaks (the session limit)", open_at_limit),
        (f"OpenSession over the limit filling the {frame}-byte frame", open_over_limit),
        (f"GetSessionState of a {limit}-break session", state_at_limit),
        (f"UpdateBreaks of a live session's {limit} breaks", update_at_limit),
        (f"WatchChanges catching up {backlog:,} changes, read as they come", watch_backlog),
        (f"WatchChanges catching up {backlog:,} changes, read every 10 ms", watch_backlog_in_turns),
    ]


def measure(sock, seconds, interval, prepare=None):
    """The bystander's round trips while `prepare`'s request is sent every `interval` ms (none if None);
    returns (bystander times, abusive times)."""
    queue = multiprocessing.Queue()
    probe = multiprocessing.Process(target=bystander, args=(sock, seconds, queue))
    abusive = []
    with Client(sock) as c:
        c.hello("abuser")
        request = prepare(c) if prepare else None
        probe.start()
        deadline = time.monotonic() + seconds
        while request and time.monotonic() < deadline:
            if callable(request):
                start = time.perf_counter()
                request()
                abusive.append((time.perf_counter() - start) * 1e3)
                time.sleep(interval / 1e3)
                continue
            method, body, expected = request
            start = time.perf_counter()
            status, reply = c.call_raw(method, body)
            abusive.append((time.perf_counter() - start) * 1e3)
            if status != expected:
                raise SystemExit(f"abusive request answered status {status}, expected {expected}")
            if method == METHODS["Timeline/OpenSession"].id and status == OK:
                c.call("Timeline/CloseSession", session_id=decode("OpenSessionReply", reply).session_id)
            time.sleep(interval / 1e3)
        times = queue.get(timeout=seconds + 60)
        probe.join()
    return times, abusive


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapbackd")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval", type=float, default=50.0, help="ms between abusive requests")
    parser.add_argument("--backlog", type=int, default=2000, help="changes the sync agent's catch-up reads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # The catch-up's Sync calls are for root and the admin groups: the bench's own group is one.
    with BenchDaemon(args.snapbackd, "snapback-stall.", config=f"[access]\nadmin-groups = {os.getgid()}\n") as daemon:
        sock = daemon.socket
        with Client(sock) as c:
            hello = c.hello("loop-stall")
        rows = []
        for name, prepare in abusive_requests(hello, sock, args.backlog):
            # The unloaded figures right before each case: the machine's own drift over the run (another
            # process, the CPU's clock) moves a p99 of a tenth of a millisecond as much as a request does.
            unloaded, _ = measure(sock, args.seconds, args.interval)
            times, abusive = measure(sock, args.seconds, args.interval, prepare)
            rows.append({"request": name, "count": len(abusive), "stall_max_ms": max(abusive),
                         "stall_p50_ms": percentile(abusive, 0.5), "unloaded_p99_ms": percentile(unloaded, 0.99),
                         "bystander_p50_ms": percentile(times, 0.5), "bystander_p99_ms": percentile(times, 0.99),
                         "bystander_max_ms": max(times),
                         "p99_ratio": percentile(times, 0.99) / percentile(unloaded, 0.99)})
    if args.json:
        print(json.dumps({"requests": rows}, indent=2))
        return
    print(f"loop stall: abusive request every {args.interval:g} ms for {args.seconds:g} s each, after {args.seconds:g} s "
          "without it (the bystander's unloaded p99)")
    print(f"  {'abusive request':64} {'stall max':>9} {'p50':>7}   {'unloaded p99':>12} {'bystander p50':>13} {'p99':>7} "
          f"{'max':>7} {'p99 ratio':>9}")
    for r in rows:
        print(f"  {r['request']:64} {r['stall_max_ms']:7.2f}ms {r['stall_p50_ms']:5.2f}ms   {r['unloaded_p99_ms']:10.3f}ms "
              f"{r['bystander_p50_ms']:11.3f}ms {r['bystander_p99_ms']:5.2f}ms {r['bystander_max_ms']:5.2f}ms "
              f"{r['p99_ratio']:8.2f}x")


if __name__ == "__main__":
    main()
