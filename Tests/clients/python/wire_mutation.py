#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Mutated valid frames against the real snapbackd, over its socket, for a bounded time.

    wire_mutation.py path/to/snapbackd [--seconds N] [--seed S]

Several attacker connections open sessions and send the requests a player sends — with random bit flips,
overwritten bytes, truncations, splices and huge doubles in their bodies, and now and then a broken
header — while a bystander plays the seed story on its own connection after every burst. It fails when
the daemon dies, stops answering, answers an undocumented status, or gives the bystander a wrong
answer. A random bit-flip mutator like this one found the 1e300 trap within two minutes; `make test`
runs it briefly, `make fuzz` for FUZZ_SECONDS. Standard library only.
"""

import argparse
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapback_client as sb  # noqa: E402

DOCUMENTED = {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
              "FAILED_PRECONDITION", "UNIMPLEMENTED", "UNAVAILABLE"}
BREAKS = [{"id": "b1", "start": 600.0, "duration": 60.0, "ad_durations": [30.0, 30.0]},
          {"id": "b2", "start": 1260.0, "duration": 30.0}]
HUGE = [1e300, -1e300, 1e17, float("inf"), float("nan"), 2.0 ** 64, -0.0, 5e-324]


def templates(session_id):
    """(method, body) pairs a player sends, valid as they stand."""
    e = sb.encode
    s = session_id
    return [
        ("Timeline/OpenSession", e("OpenSessionRequest", stream_id="s", content_id="c", breaks=BREAKS,
                                   content_duration=1800.0, policy_preset="ima")),
        ("Timeline/OpenSession", e("OpenSessionRequest", stream_id="r", content_id="r", content_duration=3600.0,
                                   ad_rules={"preroll": True, "midroll_times": [600.0], "midroll_every": 900.0,
                                             "postroll": True, "break_duration": 30.0},
                                   policy_overrides={"bookmark_interval": 10.0})),
        ("Timeline/OpenSession", e("OpenSessionRequest", stream_id="l", kind=2, policy_overrides={"cooldown": 5.0})),
        ("Timeline/ReportPlayhead", e("ReportPlayheadRequest", session_id=s, stream_time=300.0, rate=1.0, playing=True)),
        ("Timeline/SeekEnded", e("SeekEndedRequest", session_id=s, from_stream_time=300.0, to_stream_time=900.0)),
        ("Timeline/AdBreakStarted", e("AdBreakStartedRequest", session_id=s, break_id="b1")),
        ("Timeline/AdBreakEnded", e("AdBreakEndedRequest", session_id=s, break_id="b1")),
        ("Timeline/TrickPlayStarted", e("TrickPlayStartedRequest", session_id=s, stream_time=100.0, rate=8.0)),
        ("Timeline/TrickPlayEnded", e("TrickPlayEndedRequest", session_id=s, stream_time=1000.0)),
        ("Timeline/Pause", e("PauseRequest", session_id=s, stream_time=700.0)),
        ("Timeline/UpdateBreaks", e("UpdateBreaksRequest", session_id=s, breaks=BREAKS)),
        ("Timeline/BreakAt", e("BreakAtRequest", session_id=s, stream_time=650.0)),
        ("Timeline/GetSessionState", e("GetSessionStateRequest", session_id=s)),
        ("Timeline/CloseSession", e("CloseSessionRequest", session_id=s)),
        ("Bookmarks/Get", e("GetBookmarkRequest", content_id="c")),
        ("Bookmarks/List", e("ListBookmarksRequest", page_size=3)),
    ]


def double_offsets(buf, base=0, depth=0):
    """Where the 8-byte values of double fields start, in nested messages too (a LEN field that parses
    as a message is taken for one: a string that happens to parse only adds harmless offsets)."""
    found, pos = [], 0
    try:
        while pos < len(buf):
            start = pos
            num, wt, val, pos = sb.read_field(buf, pos)
            if wt == sb.I64:
                found.append(base + pos - 8)
            elif wt == sb.LEN and depth < 3 and val:
                found += double_offsets(val, base + pos - len(val), depth + 1)
    except sb.DecodeError:
        pass
    return found


def mutate(rng, body):
    b = bytearray(body)
    # Most often one double field set to a value that is finite but huge, negative, or not a number:
    # what a buggy player sends, and what once took the daemon down (a 1e300 break duration).
    doubles = double_offsets(bytes(b))
    if doubles and rng.random() < 0.5:
        i = rng.choice(doubles)
        b[i:i + 8] = struct.pack("<d", rng.choice(HUGE))
        if rng.random() < 0.7:
            return bytes(b)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        if kind == 0 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 2 and b:
            del b[rng.randrange(len(b)):]
        elif kind == 3 and len(b) >= 8:
            # A double field's 8 bytes replaced by a huge or strange value, wherever it lands.
            i = rng.randrange(len(b) - 7)
            b[i:i + 8] = struct.pack("<d", rng.choice(HUGE))
        elif kind == 4 and b:
            i, j = sorted(rng.randrange(len(b)) for _ in range(2))
            b[i:i] = b[i:j]
        else:
            b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
    return bytes(b)


def bystander_story(path):
    """The seed story on a fresh connection: 5:00 → 15:00 is snapped back to 10:00."""
    with sb.Client(path, timeout=5) as c:
        c.hello("bystander")
        opened = c.open_session(stream_id="by", content_id="bystander", breaks=[BREAKS[0]], content_duration=1800.0)
        c.call("Timeline/ReportPlayhead", session_id=opened.session_id, stream_time=300.0, rate=1.0, playing=True)
        c.call("Timeline/SeekEnded", session_id=opened.session_id, from_stream_time=300.0, to_stream_time=900.0)
        seeks = [ev.push.seek.stream_time for ev in c.take_pushes() if ev.push.kind == "seek"]
        if seeks != [600.0]:
            raise AssertionError("bystander: expected a snapback to 600, got %r" % seeks)
        c.close_session(opened.session_id)


def attack(path, rng, rounds):
    """One attacker connection: sessions, then mutated requests; returns the statuses seen."""
    seen = set()
    try:
        c = sb.Client(path, timeout=5)
    except OSError:
        return seen
    with c:
        c.hello("attacker")
        session = c.open_session(stream_id="a", content_id="a%d" % rng.randrange(50), breaks=BREAKS,
                                 content_duration=1800.0).session_id
        for _ in range(rounds):
            method, body = rng.choice(templates(session))
            if rng.random() < 0.8:
                body = mutate(rng, body)
            if rng.random() < 0.03:
                # A broken header: the daemon hangs up on this connection, and only this one.
                c.sock.sendall(sb.encode_frame(0, sb.REQUEST, 0x0101, body))
                return seen
            try:
                status, _ = c.call_raw(sb.METHODS[method].id, body)
            except (sb.ProtocolError, OSError) as err:
                raise AssertionError("%s: the daemon dropped a connection for a well-framed request: %s" % (method, err))
            name = sb.STATUS_NAMES[status] if status < len(sb.STATUS_NAMES) else str(status)
            if name not in DOCUMENTED:
                raise AssertionError("%s answered %s" % (method, name))
            seen.add(name)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snapbackd")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="snapback-mutation-")
    path = os.path.join(work, "snapbackd.sock")
    log = open(os.path.join(work, "stderr.log"), "wb")
    daemon = subprocess.Popen([args.snapbackd, "--socket", path, "--state-dir", os.path.join(work, "state"),
                               "--log-level", "warning"], stdin=subprocess.DEVNULL, stderr=log)
    requests = 0
    statuses = set()
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("snapbackd did not start")
            time.sleep(0.02)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            statuses |= attack(path, rng, 50)
            requests += 50
            if daemon.poll() is not None:
                raise AssertionError("snapbackd died (%s)" % daemon.returncode)
            bystander_story(path)
        print("wire mutation: %d mutated requests in %.0f s (seed %d), statuses %s; daemon alive, bystander served"
              % (requests, args.seconds, seed, " ".join(sorted(statuses))))
    except AssertionError as err:
        log.flush()
        tail = open(os.path.join(work, "stderr.log"), "rb").read()[-2000:].decode("utf-8", "replace")
        print("wire mutation FAILED (seed %d): %s\n--- daemon stderr (tail)\n%s" % (seed, err, tail), file=sys.stderr)
        return 1
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            daemon.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
