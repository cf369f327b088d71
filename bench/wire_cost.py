#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the daemon's loop spends per break on the cold path's largest messages.

Starts SNAPBACKD with room for a session of --breaks breaks (max-breaks-per-session and max-frame-size
raised in a configuration file of its own), then times, from a client on the same machine, the round trip
of an OpenSession of that many breaks (then closed) and of a GetSessionState page of 1,000 of them. The
best of --rounds round trips, less the best round trip of an empty request, divided by the breaks, is
the loop's cost per break (decoding and opening, or reading the state and encoding it), in microseconds.

Usage: wire_cost.py SNAPBACKD [--breaks N] [--rounds N] [--json]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "clients", "python"))
from snapback_client import METHODS, OK, Client, decode, encode  # noqa: E402


def best(c, method, body, rounds, after=None):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        status, reply = c.call_raw(method, body, timeout=60)
        times.append(time.perf_counter() - start)
        if status != OK:
            raise SystemExit(f"method {method:#06x} answered status {status}")
        if after:
            after(reply)
    return min(times) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapbackd")
    parser.add_argument("--breaks", type=int, default=37000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="snapback-wire-cost.")
    sock = os.path.join(work, "snapbackd.sock")
    config = os.path.join(work, "snapbackd.conf")
    with open(config, "w") as f:
        f.write(f"[limits]\nmax-breaks-per-session = {args.breaks}\nmax-frame-size = {64 << 20}\n")
    daemon = subprocess.Popen([args.snapbackd, "--socket", sock, "--state-dir", os.path.join(work, "state"),
                               "--config", config, "--log-level", "warning"], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        breaks = [{"id": f"break-{i:06d}", "start": 600.0 + i * 700.0, "duration": 60.0,
                   "ad_durations": [15.0, 15.0, 15.0, 15.0]} for i in range(args.breaks)]
        with Client(sock) as c:
            c.hello("wire-cost")
            empty = best(c, METHODS["Control/GetStatus"].id, b"", args.rounds)
            open_body = encode("OpenSessionRequest", content_id="cost", breaks=breaks)

            def close(reply):
                c.call("Timeline/CloseSession", session_id=decode("OpenSessionReply", reply).session_id)

            open_us = best(c, METHODS["Timeline/OpenSession"].id, open_body, args.rounds, close)
            sid = c.open_session(content_id="cost-state", breaks=breaks).session_id
            state_body = encode("GetSessionStateRequest", session_id=sid, first_break=0, max_breaks=1000)
            state_us = best(c, METHODS["Timeline/GetSessionState"].id, state_body, args.rounds)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    page = min(1000, args.breaks)
    result = {"breaks": args.breaks, "empty_round_trip_us": empty, "open_session_us": open_us,
              "open_session_us_per_break": (open_us - empty) / args.breaks, "session_state_page_us": state_us,
              "session_state_us_per_break": (state_us - empty) / page}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"OpenSession of {args.breaks} breaks: {open_us / 1e3:.2f} ms, "
          f"{result['open_session_us_per_break']:.2f} µs per break")
    print(f"GetSessionState page of {page} breaks: {state_us / 1e3:.2f} ms, "
          f"{result['session_state_us_per_break']:.2f} µs per break")
    print(f"(best of {args.rounds} round trips each, less an empty request's {empty:.0f} µs)")


if __name__ == "__main__":
    main()
