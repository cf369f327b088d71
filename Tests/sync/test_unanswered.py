#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent against a server that takes the bucket's requests and does not answer them: its loop goes on.

    python3 Tests/sync/test_unanswered.py --snapbackd .build/debug/snapbackd --agent .build/debug/snapback-sync

One nats-server -js, reached by the agent through a proxy of the test's own (HoldingProxy) that can hold
the bucket's requests — the publishes to `$KV.` (create/update) and to the JetStream API about a `KV_`
stream (bind, get, stream info, the watcher's consumer) — while everything else passes (pings and their
answers, telemetry's report): a server that accepts the connection and answers slowly or not at all, for
the bucket alone. While the requests are held, viewers save bookmarks every second for longer than
snapbackd waits for a change reader that takes nothing (5 s) and longer than libnats's wait (5 s): the
agent keeps reading snapbackd's change stream (each change reaches the outbox, the status file says so;
neither snapbackd nor the agent logs a dropped stream) and writes its telemetry textfile at each report.
Released, the held requests reach the server (their answers are late) and the outbox
drains into the bucket. Then telemetry's stream is deleted and its look-up held (the next report finds no
stream, and the agent asks for the stream's info): bookmarks still reach the bucket and the textfile is
still written before that look-up's wait runs out. Held again, with a bookmark's publish under way, SIGTERM stops the agent promptly;
the entry stays in the outbox, and the agent started again sends it. Every check is an event seen, each
wait bounded far above what it takes; the figures printed (how long the stop took, the longest gap between
textfile writes against the interval) are not asserted on.
"""

import argparse
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "telemetry"))
sys.path.insert(0, os.path.join(TESTS, "clients", "python"))
import snapback_client as sb  # noqa: E402
import checks  # noqa: E402
from checks import FAILURES  # noqa: E402
from nats_fixture import free_port  # noqa: E402
from nats_wire import NatsWire  # noqa: E402
from test_household import expect, stop_process, wait_for  # noqa: E402

check = functools.partial(checks.check, timed=True)
HOUSEHOLD = "smith"
# The telemetry report's interval (s): the textfile is written at each.
INTERVAL = 2
# How long the bucket's requests are held while bookmarks are saved: past snapbackd's 5 s and libnats's 5 s.
HOLD_SECONDS = 12
# The agent's telemetry stream (the default).
STREAM = "SNAPBACK_TELEMETRY"
# Every wait's bound: far above what each takes (well under a second here).
TIMEOUT = 60


class HoldingProxy:
    """A TCP proxy in front of nats-server that reads the client's side of the protocol and, while
    holding, keeps the bucket's requests back instead of forwarding them (forwarded at release)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.holding = False
        self.holds = self.bucket_request
        self.held = []  # (upstream socket, bytes)
        self.held_count = 0
        self.forwarded = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @staticmethod
    def bucket_request(subject):
        return subject.startswith("$KV.") or (subject.startswith("$JS.API.") and "KV_" in subject)

    @staticmethod
    def stream_request(stream):
        return lambda subject: subject.startswith("$JS.API.STREAM.") and subject.endswith("." + stream)

    def hold(self, holds=None):
        with self.lock:
            self.holding = True
            self.holds = holds or self.bucket_request

    def release(self):
        with self.lock:
            self.holding = False
            held, self.held = self.held, []
        for upstream, data in held:
            try:
                upstream.sendall(data)
            except OSError:
                pass
        return len(held)

    def held_total(self):
        with self.lock:
            return self.held_count

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._down, args=(upstream, client), daemon=True).start()
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()

    @staticmethod
    def _down(upstream, client):
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                client.sendall(data)
        except OSError:
            pass
        finally:
            client.close()

    def _up(self, client, upstream):
        buffer = b""
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                buffer += data
                while True:
                    end = buffer.find(b"\r\n")
                    if end < 0:
                        break
                    words = buffer[:end].split()
                    op = words[0].upper() if words else b""
                    size = end + 2
                    if op == b"PUB" and len(words) >= 3:
                        size += int(words[-1]) + 2
                    elif op == b"HPUB" and len(words) >= 4:
                        size += int(words[-1]) + 2
                    if len(buffer) < size:
                        break
                    message, buffer = buffer[:size], buffer[size:]
                    subject = words[1].decode() if op in (b"PUB", b"HPUB") else ""
                    with self.lock:
                        if self.holding and subject and self.holds(subject):
                            self.held.append((upstream, message))
                            self.held_count += 1
                            continue
                        self.forwarded += 1
                    upstream.sendall(message)
        except OSError:
            pass
        finally:
            upstream.close()

    def close(self):
        self.listener.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--snapbackd", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    if shutil.which("nats-server") is None:
        sys.exit("test_unanswered: nats-server is not installed")
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="snapback-unanswered-")
    port = free_port()
    nats_log = open(os.path.join(work, "nats-server.log"), "w")
    nats = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port),
                             "-sd", os.path.join(work, "jetstream")],
                            stdin=subprocess.DEVNULL, stdout=nats_log, stderr=nats_log)
    proxy = None
    sock = os.path.join(work, "snapbackd.sock")
    agent_log = os.path.join(work, "snapback-sync.log")
    daemon_log = os.path.join(work, "snapbackd.log")
    textfile = os.path.join(work, "snapback.prom")
    status_file = os.path.join(work, "sync-status")
    config = os.path.join(work, "sync.conf")
    daemon = wire = None
    agent = {}

    def log_text(path=agent_log):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def status():
        try:
            with open(status_file, encoding="utf-8") as f:
                return dict(line.split(" = ", 1) for line in f.read().splitlines() if " = " in line)
        except OSError:
            return {}

    def start_agent():
        with open(agent_log, "a") as log:
            agent["p"] = subprocess.Popen([args.agent, "--config", config], stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log)

    def save(content, at):
        with sb.Client(sock, timeout=30) as c:
            c.hello("unanswered-test")
            r = c.open_session(stream_id=f"s-{content}", content_id=content, profile="alice", breaks=[])
            c.call("Timeline/ReportPlayhead", session_id=r.session_id, stream_time=at - 1.0, rate=1.0, playing=True)
            c.call("Timeline/Pause", session_id=r.session_id, stream_time=at)
            c.close_session(r.session_id)

    def put_of(content):
        return wire.next(lambda m: m.subject.startswith(f"$KV.snapback.{HOUSEHOLD}.") and m.subject.endswith(f".{content}"),
                         timeout=TIMEOUT)

    try:
        wait_for("nats-server listening", lambda: _listening(port))
        proxy = HoldingProxy(port)
        with open(config, "w", encoding="utf-8") as f:
            f.write(f"servers = nats://127.0.0.1:{proxy.port}\nhousehold = {HOUSEHOLD}\nsocket = {sock}\n"
                    f"state-directory = {os.path.join(work, 'agent-state')}\n"
                    f"status-file = {status_file}\n"
                    f"\n[telemetry]\ninterval = {INTERVAL}\ntextfile = {textfile}\n")
        with open(daemon_log, "w") as log:
            daemon = subprocess.Popen([args.snapbackd, "--socket", sock, "--state-dir", os.path.join(work, "state"),
                                       "--config", "/dev/null", "--log-level", "notice"],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        wait_for("snapbackd listening", lambda: os.path.exists(sock))
        wire = NatsWire(port)
        wire.subscribe(f"$KV.snapback.{HOUSEHOLD}.>")
        start_agent()

        def connected():
            save("film00", 10.0)
            put_of("film00")
            wait_for("status connected, outbox empty",
                     lambda: status().get("state") == "connected" and status().get("outbox") == "0", timeout=TIMEOUT)
            wait_for("a telemetry textfile", lambda: os.path.exists(textfile), timeout=TIMEOUT)
            return "film00 in the bucket; connected, outbox 0"
        check("the agent connected through the proxy", connected)

        box = {}

        def held():
            proxy.hold()
            before = proxy.held_total()
            writes = [os.stat(textfile).st_mtime]
            hold_started = time.monotonic()
            count = 0
            # A bookmark a second for HOLD_SECONDS: the first one's publish hangs in the bucket's worker.
            while time.monotonic() - hold_started < HOLD_SECONDS:
                count += 1
                save(f"film{count:02d}", 10.0 + count)
                mtime = os.stat(textfile).st_mtime
                if mtime != writes[-1]:
                    writes.append(mtime)
                time.sleep(1)
            expect(proxy.held_total() > before, "no bucket request was held: the test holds the wrong subjects")
            box["count"] = count
            wait_for(f"the status file's outbox at {count}", lambda: status().get("outbox") == str(count),
                     timeout=TIMEOUT)
            # The textfile, written at each report meanwhile.
            deadline = time.monotonic() + TIMEOUT
            while len(writes) < 4 and time.monotonic() < deadline:
                mtime = os.stat(textfile).st_mtime
                if mtime != writes[-1]:
                    writes.append(mtime)
                time.sleep(0.1)
            expect(len(writes) >= 4, f"the textfile was written {len(writes) - 1} times while the bucket hung")
            gap = max(b - a for a, b in zip(writes, writes[1:]))
            text, daemon_text = log_text(), log_text(daemon_log)
            expect("change stream" not in text, f"the agent lost snapbackd's change stream:\n{text}")
            expect("not reading" not in daemon_text, f"snapbackd dropped the agent:\n{daemon_text}")
            return (f"{count} bookmarks in {HOLD_SECONDS} s, all in the outbox while {proxy.held_total() - before} "
                    f"bucket requests were held; textfile written {len(writes) - 1} times, longest gap {gap:.1f} s "
                    f"(interval {INTERVAL} s ±10 %); no change stream dropped")
        check("bucket requests unanswered: the agent reads snapbackd and writes its textfile", held)

        def drained():
            released = proxy.release()
            for i in range(1, box["count"] + 1):
                put_of(f"film{i:02d}")
            wait_for("outbox 0", lambda: status().get("outbox") == "0", timeout=TIMEOUT)
            return f"{released} held requests released (late); {box['count']} bookmarks in the bucket, outbox 0"
        check("the server answers again: the outbox drains", drained)

        def stream_unanswered():
            # The next report finds no stream and the agent looks it up; that request is held.
            proxy.hold(HoldingProxy.stream_request(STREAM))
            before = proxy.held_total()
            wire.subscribe("_INBOX.unanswered")
            wire.publish(f"$JS.API.STREAM.DELETE.{STREAM}", b"", reply="_INBOX.unanswered")
            deleted = wire.next(lambda m: m.subject == "_INBOX.unanswered", timeout=TIMEOUT)
            expect(b'"success":true' in deleted.data, f"the stream was not deleted: {deleted.data!r}")
            wait_for("the stream's look-up held", lambda: proxy.held_total() > before, timeout=TIMEOUT, interval=0.01)
            held_since = time.monotonic()
            held_at = os.stat(textfile).st_mtime
            save("filmstream", 42.0)
            put_of("filmstream")
            in_bucket = time.monotonic() - held_since
            wait_for("a textfile written while the look-up is held",
                     lambda: os.stat(textfile).st_mtime != held_at, timeout=TIMEOUT)
            # Both happened before the look-up's wait ran out: the loop did not wait for it.
            expect("no stream takes" not in log_text(),
                   f"the look-up had timed out before the bookmark reached the bucket:\n{log_text()}")
            wait_for("the look-up's failure logged", lambda: "no stream takes" in log_text(), timeout=TIMEOUT)
            failed_after = time.monotonic() - held_since
            proxy.release()
            return (f"bookmark in the bucket {in_bucket * 1000:.0f} ms into the hold, textfile written meanwhile; "
                    f"the look-up's failure logged after {failed_after:.1f} s")
        check("telemetry's stream look-up unanswered: the agent's loop goes on", stream_unanswered)

        def stops_promptly():
            proxy.hold()
            before = proxy.held_total()
            save("filmlast", 99.0)
            # SIGTERM as soon as the bookmark's first request is held: the request is under way.
            wait_for("the bookmark's request held", lambda: proxy.held_total() > before, timeout=TIMEOUT, interval=0.01)
            process = agent.pop("p")
            asked = time.monotonic()
            process.send_signal(signal.SIGTERM)
            try:
                rc = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise AssertionError("snapback-sync did not stop within 10 s of SIGTERM")
            took = time.monotonic() - asked
            expect(rc == 0, f"snapback-sync exited {rc}")
            expect("snapback-sync: stopped" in log_text(), "no 'stopped' in the agent's log")
            proxy.release()
            # The entry was kept in the outbox: the agent started again sends it.
            start_agent()
            put_of("filmlast")
            wait_for("outbox 0 after the restart", lambda: status().get("outbox") == "0"
                     and status().get("pid") == str(agent["p"].pid), timeout=TIMEOUT)
            return f"stopped {took * 1000:.0f} ms after SIGTERM with a bucket request under way; restarted, it sent the entry"
        check("SIGTERM while a bucket request hangs: the agent stops promptly, the entry is kept", stops_promptly)
    finally:
        stop_process(agent.get("p"))
        stop_process(daemon)
        if wire:
            wire.close()
        if proxy:
            proxy.close()
        stop_process(nats)
        nats_log.close()
        if FAILURES or args.keep:
            print(f"work directory kept: {work}")
            if os.path.exists(agent_log):
                print("--- snapback-sync.log\n" + log_text()[-4000:])
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAIL' if FAILURES else 'PASS'} test_unanswered: {len(FAILURES)} failed, {time.monotonic() - started:.0f} s")
    sys.exit(1 if FAILURES else 0)


def _listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
            return probe.recv(4096).startswith(b"INFO")
    except OSError:
        return False


if __name__ == "__main__":
    main()
