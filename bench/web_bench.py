#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The web bridge's costs, each beside its baseline in the same run, from one Python client (its own
cost is in every row alike, so the ratios are the bridge's):

  - unix:   a GetStatus round trip to snapbackd over its Unix socket (the native players' path);
  - ws-echo: a WebSocket ping -> pong through snapback-web (framing only: the bare WebSocket echo);
  - web-rpc: a JSON-RPC call the bridge answers itself (Snapback.1.register: framing + the envelope);
  - web-rpc under flood: the same, p99, while --flooders pages send as fast as they can (each closed
    1008 at its rate limit and reconnecting), against its unloaded p99 (target: at most 2x);
  - unix snapback / web snapback: the snapback round trip, a SeekEnded over an unwatched break until its
    seek push and reply are in (in a session of its own, opened and closed untimed), over the Unix
    socket and as JSON-RPC through the bridge (Snapback.1.seekEnded, the push a "b.push" notification);
  - web-rpc beside readCues: the same bystander's p99 while another page sends readCues back to back,
    each the largest playlist the bridge's default bounds admit (max-message-size 256 KiB) with the
    most tags (SCTE35-OUT date ranges: the reader's 1,000 breaks and the rest rejected), against its
    p99 alone; and how long one such readCues takes, the client's round trip;
  - loop held by readCues: how long one such readCues holds the bridge's loop, as another page's
    slowest ping while it is sent, read and answered, against that page's slowest ping over as long
    without it (the 5 ms stall rule);
  - the bridge's RSS and wake-ups while no page is connected (target: no wake-up at all).

Usage: web_bench.py SNAPBACKD SNAPBACK_WEB [--calls N] [--seconds S] [--flooders N] [--json]
"""

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "web"))
from harness import free_port, rss_kib, sb, start_bridge, start_daemon, stop, wakeups, write_config  # noqa: E402
from wsclient import Closed, WebSocket  # noqa: E402
import media  # noqa: E402

ORIGIN = "http://127.0.0.1:8000"
TOKEN = "bench-token-0123456789abcdef"


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")


def summary(samples):
    return {"min_us": min(samples, default=float("nan")) * 1e6, "p50_us": percentile(samples, 0.5) * 1e6,
            "p99_us": percentile(samples, 0.99) * 1e6, "n": len(samples)}


def page(port):
    ws = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + TOKEN, origin=ORIGIN)
    if ws.status != 101:
        raise RuntimeError("upgrade refused: %d %r" % (ws.status, ws.body))
    return ws


def time_unix(sock_path, calls):
    samples = []
    with sb.Client(sock_path) as c:
        c.hello()
        for _ in range(calls):
            t0 = time.perf_counter()
            c.call("Control/GetStatus")
            samples.append(time.perf_counter() - t0)
    return samples


def time_ping(port, calls):
    ws = page(port)
    ws.call("Snapback.1.register", {"event": "push", "id": "b"})  # the page's daemon link is up
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        ws.send_frame(0x9, b"bench")
        opcode, _ = ws.recv_frame()
        samples.append(time.perf_counter() - t0)
        assert opcode == 0xA
    ws.close()
    return samples


def time_rpc(port, calls=None, seconds=None, gap=0.0):
    ws = page(port)
    samples = []
    deadline = time.monotonic() + seconds if seconds else None
    i = 0
    while (calls is None or i < calls) and (deadline is None or time.monotonic() < deadline):
        i += 1
        t0 = time.perf_counter()
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "b"}, id=i)
        samples.append(time.perf_counter() - t0)
        assert reply.get("id") == i, reply
        if gap:
            time.sleep(gap)
    ws.close()
    return samples


BREAK = [{"id": "b1", "start": 600.0, "duration": 60.0}]


def time_unix_snapback(sock_path, calls):
    samples = []
    with sb.Client(sock_path) as c:
        c.hello()
        for _ in range(calls):
            # A session each (not timed): the daemon's loop guard stops snapping one session back forever.
            sid = c.open_session(content_id="bench-unix", breaks=BREAK).session_id
            c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=10.0, rate=1.0, playing=True)
            t0 = time.perf_counter()
            c.call("Timeline/SeekEnded", session_id=sid, from_stream_time=10.0, to_stream_time=700.0)
            pushes = c.take_pushes()
            samples.append(time.perf_counter() - t0)
            assert [p.push.seek.reason for p in pushes if p.push.kind == "seek"] == [1], pushes  # SNAPBACK
            c.close_session(sid)
            c.take_pushes()
    return samples


def time_web_snapback(port, calls):
    ws = page(port)
    ws.call("Snapback.1.register", {"event": "push", "id": "b"})

    def call(id, method, params):
        ws.send_text(json.dumps({"jsonrpc": "2.0", "id": id, "method": "Snapback.1." + method, "params": params}))
        while True:  # the notifications on the way are not this call's
            message = ws.recv_json()
            if message.get("id") == id:
                assert "result" in message, message
                return message["result"]

    samples = []
    for _ in range(calls):
        sid = call(2, "openSession", {"contentId": "bench-web", "breaks": BREAK})["sessionId"]
        call(3, "reportPlayhead", {"sessionId": sid, "streamTime": 10, "rate": 1, "playing": True})
        t0 = time.perf_counter()
        ws.send_text(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "Snapback.1.seekEnded",
                                 "params": {"sessionId": sid, "fromStreamTime": 10, "toStreamTime": 700}}))
        seek = reply = None
        while seek is None or reply is None:  # a BookmarkSaved push may come as well
            message = ws.recv_json()
            if message.get("id") == 4:
                reply = message
            elif "seek" in message.get("params", {}):
                seek = message["params"]["seek"]
        samples.append(time.perf_counter() - t0)
        assert seek["reason"] == "SEEK_REASON_SNAPBACK" and "result" in reply, (seek, reply)
        call(5, "closeSession", {"sessionId": sid})
    ws.close()
    return samples


def cue_frames(ws, text):
    """A readCues of `text` as `ws` sends it, in frames of the default max-frame-size (64 KiB), masked
    once: the same bytes each time."""
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "Snapback.1.readCues",
                          "params": {"text": text, "format": "hls", "reset": True}}).encode()
    capture = CaptureSocket()
    ws.sock, real = capture, ws.sock
    for at in range(0, len(message), FRAME):
        ws.send_frame(0x1 if at == 0 else 0x0, message[at:at + FRAME], fin=at + FRAME >= len(message))
    ws.sock = real
    return b"".join(capture.sent)


def cues_sender(port, seconds, text, out):
    """A page sending readCues of `text` back to back for `seconds`, each call's time put in `out`."""
    if os.cpu_count() > 1:
        os.sched_setaffinity(0, {1})
    ws = page(port)
    frames = cue_frames(ws, text)
    deadline = time.monotonic() + seconds
    samples = []
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        ws.sock.sendall(frames)
        reply = ws.recv_json(timeout=60)
        samples.append(time.perf_counter() - t0)
        assert "result" in reply, str(reply)[:300]
    ws.close()
    out.put(samples)


FRAME = 64 * 1024


def pinger(port, go, halt, out):
    """A page pinging the bridge back to back from each `go` until `halt`, the slowest pong of each
    round put in `out`: how long the bridge's loop was held meanwhile, within a ping's round trip."""
    if os.cpu_count() > 1:
        os.sched_setaffinity(0, {1})
    ws = page(port)
    ws.call("Snapback.1.register", {"event": "push", "id": "b"})
    while True:
        go.wait()
        go.clear()
        worst = 0.0
        while not halt.is_set():
            t0 = time.perf_counter()
            ws.send_frame(0x9, b"hold")
            opcode, _ = ws.recv_frame(timeout=60)
            worst = max(worst, time.perf_counter() - t0)
            if opcode == 0x8:
                return
        halt.clear()
        out.put(worst)


def loop_held(port, text, rounds):
    """How long one readCues of `text` holds the bridge's loop: the slowest of another page's pings while
    it is sent and answered, against the slowest over as long a time without it. (held, alone) samples."""
    go, halt, out = multiprocessing.Event(), multiprocessing.Event(), multiprocessing.Queue()
    child = multiprocessing.Process(target=pinger, args=(port, go, halt, out), daemon=True)
    child.start()
    ws = page(port)
    frames = cue_frames(ws, text)
    held, alone = [], []
    try:
        for _ in range(rounds):
            go.set()
            time.sleep(0.01)
            t0 = time.perf_counter()
            ws.sock.sendall(frames)
            reply = ws.recv_json(timeout=60)
            took = time.perf_counter() - t0
            halt.set()
            held.append(out.get(timeout=60))
            assert "result" in reply, str(reply)[:300]
            go.set()
            time.sleep(0.01 + took)
            halt.set()
            alone.append(out.get(timeout=60))
    finally:
        ws.close()
        child.terminate()
    return held, alone


class CaptureSocket:
    """What a WebSocket would send, kept."""

    def __init__(self):
        self.sent = []

    def sendall(self, data):
        self.sent.append(bytes(data))


def flooder(port, seconds, counts):
    # The flooders' own CPU is not the bridge's doing: they run on the other core.
    if os.cpu_count() > 1:
        os.sched_setaffinity(0, {1})
    deadline = time.monotonic() + seconds
    message = json.dumps({"jsonrpc": "2.0", "method": "Snapback.1.register", "params": {"event": "push", "id": "f"}})
    sent = closed = 0
    while time.monotonic() < deadline:
        try:
            ws = page(port)
            while time.monotonic() < deadline:
                ws.send_text(message)
                sent += 1
        except (OSError, Closed):
            closed += 1
        time.sleep(0.001)
    counts.put((sent, closed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapbackd")
    parser.add_argument("web")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--flooders", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="snapback-web-bench-")
    sock_path = os.path.join(tmp, "snapbackd.sock")
    port = free_port()
    daemon = bridge = None
    try:
        daemon = start_daemon(args.snapbackd, tmp, sock_path)
        apps = {"bench": {"origin": ORIGIN, "token": TOKEN, "max-connections": 16}}
        # The back-to-back rows' bridge allows any rate; the flood's, 500 messages a second a page.
        config = write_config(tmp, port, sock_path, apps, messages_per_second=100000, message_burst=100000)
        bridge = start_bridge(args.web, config, os.path.join(tmp, "snapback-web.log"), port)
        time.sleep(0.5)
        idle_rss = rss_kib(bridge.pid)
        w0 = wakeups(bridge.pid)
        time.sleep(args.seconds)
        idle_wakeups = wakeups(bridge.pid) - w0
        rows = {"unix": summary(time_unix(sock_path, args.calls)),
                "ws-echo": summary(time_ping(port, args.calls)),
                "web-rpc": summary(time_rpc(port, calls=args.calls)),
                "unix snapback": summary(time_unix_snapback(sock_path, args.calls // 5)),
                "web snapback": summary(time_web_snapback(port, args.calls // 5))}
        # The largest readCues the default bounds admit (max-message-size 256 KiB), this bridge's (any rate).
        text, tags = media.cue_playlist(256 * 1024)
        held, held_alone = loop_held(port, text, rounds=100)
        rows["loop held by readCues"] = summary(held)
        rows["ping worst, alone"] = summary(held_alone)
        stop(bridge)
        flood_tmp = os.path.join(tmp, "flood")
        os.mkdir(flood_tmp)
        port = free_port()
        config = write_config(flood_tmp, port, sock_path, apps, messages_per_second=500, message_burst=500)
        bridge = start_bridge(args.web, config, os.path.join(tmp, "snapback-web-flood.log"), port)
        # The bridge and the bystander share core 0; whatever the flood costs the bridge lands there.
        os.sched_setaffinity(bridge.pid, {0})
        os.sched_setaffinity(0, {0})
        # The bystander's pace: a call every 5 ms (within its 500 a second), alone and then beside the flooders.
        alone = time_rpc(port, seconds=args.seconds, gap=0.005)
        counts = multiprocessing.Queue()
        floods = [multiprocessing.Process(target=flooder, args=(port, args.seconds + 1, counts)) for _ in range(args.flooders)]
        for p in floods:
            p.start()
        time.sleep(0.5)
        loaded = time_rpc(port, seconds=args.seconds, gap=0.005)
        for p in floods:
            p.join()
        sent = closed = 0
        for _ in floods:
            s, c = counts.get()
            sent, closed = sent + s, closed + c
        rows["web-rpc alone"] = summary(alone)
        rows["web-rpc flooded"] = summary(loaded)
        busy_rss = rss_kib(bridge.pid)  # the flood bridge's, after the flood
        # The bystander beside a page sending the largest readCues the default bounds admit (the flood
        # bridge: its limits but the message rate are the defaults).
        cues_out = multiprocessing.Queue()
        sender = multiprocessing.Process(target=cues_sender, args=(port, args.seconds + 1, text, cues_out))
        sender.start()
        time.sleep(0.5)
        beside = time_rpc(port, seconds=args.seconds, gap=0.005)
        cues_samples = cues_out.get()
        sender.join()
        rows["web-rpc beside readCues"] = summary(beside)
        rows["readCues 256 KiB"] = summary(cues_samples)

        result = {"rows": rows, "flood": {"flooders": args.flooders, "messages_sent": sent, "pages_closed": closed},
                  "flood_p99_ratio": rows["web-rpc flooded"]["p99_us"] / rows["web-rpc alone"]["p99_us"],
                  "cues": {"bytes": len(text.encode()), "date_ranges": tags, "calls": len(cues_samples)},
                  "cues_p99_ratio": rows["web-rpc beside readCues"]["p99_us"] / rows["web-rpc alone"]["p99_us"],
                  "cues_hold_ratio": rows["loop held by readCues"]["p50_us"] / rows["ping worst, alone"]["p50_us"],
                  "bridge_idle_rss_kib": idle_rss, "bridge_rss_after_kib": busy_rss,
                  "bridge_idle_wakeups": idle_wakeups, "idle_seconds": args.seconds}
    finally:
        stop(bridge, daemon)
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    unix = rows["unix"]
    print("web bridge (one Python client; ratios against the Unix-socket round trip):")
    for name, row in rows.items():
        print("  %-16s p50 %7.1f us  p99 %7.1f us  (%5.2fx / %5.2fx)  n=%d" % (
            name, row["p50_us"], row["p99_us"], row["p50_us"] / unix["p50_us"], row["p99_us"] / unix["p99_us"], row["n"]))
    print("  flood: %d pages sending as fast as they can (%d messages, closed %d times): bystander p99 %.2fx its unloaded p99 (target <= 2)"
          % (args.flooders, sent, closed, result["flood_p99_ratio"]))
    print("  readCues: a page sending %d-byte playlists (%d SCTE35-OUT date ranges) back to back, %d calls of p50 %.1f ms:"
          " bystander p99 %.2fx its unloaded p99 (target: within the 5 ms stall rule)" % (
              result["cues"]["bytes"], tags, len(cues_samples), rows["readCues 256 KiB"]["p50_us"] / 1e3, result["cues_p99_ratio"]))
    held, alone = rows["loop held by readCues"], rows["ping worst, alone"]
    print("  readCues holds the loop: another page's slowest ping while one is read min %.2f ms, p50 %.2f ms, p99 %.2f ms;"
          " over as long without it min %.2f ms, p50 %.2f ms (p50 %.2fx; the 5 ms stall rule)" % (
              held["min_us"] / 1e3, held["p50_us"] / 1e3, held["p99_us"] / 1e3, alone["min_us"] / 1e3, alone["p50_us"] / 1e3,
              result["cues_hold_ratio"]))
    print("  bridge idle: RSS %d KiB, %d wake-ups in %.0f s with no page (target 0); RSS %d KiB after the flood"
          % (idle_rss, idle_wakeups, args.seconds, busy_rss))
    print("  snapback round trip: web %.2fx the Unix socket's (p50)" % (
        rows["web snapback"]["p50_us"] / rows["unix snapback"]["p50_us"]))


if __name__ == "__main__":
    main()
