#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's telemetry publish against a stream that does not answer: the agent's other work goes on.

    python3 Tests/telemetry/test_agent.py --snapbackd .build/debug/snapbackd \\
        --agent .build/debug/snapback-sync --stream-probe .build-c/telemetry/stream-probe

One nats-server -js, one box (snapbackd and snapback-sync with household sync and telemetry). A NATS
client of the test's own (nats_wire.py) subscribes to the box's report subject before any stream exists
and never answers: each report is received and its ack never comes, as from a stream whose leader is
stuck. Meanwhile a viewer saves a bookmark: it must reach the household's bucket while the report is still
in flight (the agent has neither given it up nor timed it out). Then: a report answered by the test is
stored as far as the agent knows (no complaint at the next); one left unanswered is replaced by the next
report, the latest; with the holder gone the stream is missing (no responders), and the agent creates it
and stores its latest report there. Every check is an event seen (a message on a subject, a line of the
agent's log, a file's content), each wait bounded.
"""

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "sync"))
sys.path.insert(0, os.path.join(TESTS, "clients", "python"))
import snapback_client as sb  # noqa: E402
import checks  # noqa: E402
from checks import FAILURES  # noqa: E402
from nats_fixture import free_port  # noqa: E402
from nats_wire import NatsWire  # noqa: E402
from test_household import expect, stop_process, wait_for  # noqa: E402

check = functools.partial(checks.check, timed=True)
# The report interval: a report waits for its answer until the next is made, so a bookmark's hand-off
# (well under a second here) must happen within it; generous for a loaded machine.
INTERVAL = 20
TIMEOUT = 3 * INTERVAL
HOUSEHOLD = "smith"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapbackd", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--stream-probe", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    if shutil.which("nats-server") is None:
        sys.exit("test_agent: nats-server is not installed")
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="snapback-telemetry-agent-")
    port = free_port()
    nats_log = open(os.path.join(work, "nats-server.log"), "w")
    nats = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port),
                             "-sd", os.path.join(work, "jetstream")],
                            stdin=subprocess.DEVNULL, stdout=nats_log, stderr=nats_log)
    url = f"nats://127.0.0.1:{port}"
    sock = os.path.join(work, "snapbackd.sock")
    agent_log = os.path.join(work, "snapback-sync.log")
    textfile = os.path.join(work, "snapback.prom")
    config = os.path.join(work, "sync.conf")
    with open(config, "w", encoding="utf-8") as f:
        f.write(f"servers = {url}\nhousehold = {HOUSEHOLD}\nsocket = {sock}\n"
                f"state-directory = {os.path.join(work, 'agent-state')}\n"
                f"status-file = {os.path.join(work, 'sync-status')}\n"
                f"\n[telemetry]\ninterval = {INTERVAL}\ntextfile = {textfile}\n")
    daemon = agent = wire = None

    def log_text():
        with open(agent_log, encoding="utf-8", errors="replace") as f:
            return f.read()

    try:
        wait_for("nats-server listening", lambda: _listening(port))
        daemon_log = open(os.path.join(work, "snapbackd.log"), "w")
        daemon = subprocess.Popen([args.snapbackd, "--socket", sock, "--state-dir", os.path.join(work, "state"),
                                   "--config", "/dev/null", "--log-level", "notice"],
                                  stdin=subprocess.DEVNULL, stdout=daemon_log, stderr=daemon_log)
        wait_for("snapbackd listening", lambda: os.path.exists(sock))
        wire = NatsWire(port)
        holder = wire.subscribe("snapback.telemetry.>")
        wire.subscribe(f"$KV.snapback.{HOUSEHOLD}.>")
        with open(agent_log, "w") as log:
            agent = subprocess.Popen([args.agent, "--config", config], stdin=subprocess.DEVNULL, stdout=log, stderr=log)

        def report(seq):
            return wire.next(lambda m: m.subject.startswith("snapback.telemetry.")
                             and m.headers.get("Nats-Msg-Id", "").endswith(f"-{seq}"), timeout=TIMEOUT)

        box = {}

        def in_flight():
            first = report(1)
            box["id"] = first.subject.rsplit(".", 1)[1]
            box["first"] = first
            expect(first.headers.get("Nats-Msg-Id") == f"{box['id']}-1", f"message id {first.headers}")
            # The report is the agent's, unanswered. A viewer saves a bookmark now: snapbackd's change, the
            # outbox, the bucket.
            with sb.Client(sock, timeout=30) as c:
                c.hello("telemetry-agent-test")
                r = c.open_session(stream_id="s-film", content_id="film-1", profile="alice", breaks=[])
                c.call("Timeline/ReportPlayhead", session_id=r.session_id, stream_time=40.0, rate=1.0, playing=True)
                c.call("Timeline/Pause", session_id=r.session_id, stream_time=41.0)
                c.close_session(r.session_id)
            put = wire.next(lambda m: m.subject.startswith(f"$KV.snapback.{HOUSEHOLD}."), timeout=TIMEOUT)
            text = log_text()
            # The synchronous publish waited up to 5 s for the ack, and logged its timeout, before the
            # loop read snapbackd's change.
            expect("kept for the next attempt" not in text and "no answer from the stream" not in text,
                   f"the report was given up before the bookmark went out:\n{text}")
            return f"{put.subject} written while report {box['id']}-1 waited for its ack"
        check("a report without an answer: the bookmark reaches the bucket meanwhile", in_flight)

        def answered():
            first = box["first"]
            wire.publish(first.reply, b'{"stream":"SNAPBACK_TELEMETRY","seq":1}')
            second = report(2)
            text = log_text()
            expect("no answer from the stream" not in text, f"the answered report was taken back:\n{text}")
            # The textfile was written again at the second report, with the bookmark counted.
            with open(textfile, encoding="utf-8") as f:
                prom = f.read()
            expect('snapbackd_bookmarks_saved_total{trigger="paused"} 1' in prom, "the textfile lacks the bookmark")
            box["second"] = second
            return f"report 1 acked by the test; report 2 came ({len(second.data)} bytes); the textfile counts the bookmark"
        check("an answered report is done; the textfile goes on", answered)

        def replaced():
            third = report(3)
            wait_for("the agent's log says report 2 was replaced",
                     lambda: f"no answer from the stream to {box['id']}-2 within an interval" in log_text(),
                     timeout=TIMEOUT)
            box["third"] = third
            return "report 2 left unanswered, report 3 went instead"
        check("an unanswered report is replaced by the next, the latest", replaced)

        def created():
            # No one on the subject any more: the next publish has no responders, the agent creates the
            # stream and publishes there (report 3 is taken back at report 4's time).
            wire.unsubscribe(holder)
            latest = 4

            def stored():
                done = subprocess.run([args.stream_probe, url, "SNAPBACK_TELEMETRY", "last",
                                       f"snapback.telemetry.{box['id']}"], capture_output=True, text=True, timeout=30)
                box["probe"] = done.stderr.strip()
                return done.returncode == 0 and done.stdout
            # Each probe is a process and a connection of its own: twice a second is enough.
            try:
                out = wait_for("the stream holds a report of the box", stored, timeout=TIMEOUT, interval=0.5)
            except AssertionError as e:
                raise AssertionError(f"{e}; the last probe said: {box.get('probe')}") from None
            seq = report_seq(bytes.fromhex(out.split()[2]))
            expect(seq >= latest, f"the stream's report is seq {seq}, not the latest")
            return f"stream created by the agent, report {seq} in it"
        check("with no stream, the agent creates it and stores its latest report", created)

        def status():
            with open(os.path.join(work, "sync-status"), encoding="utf-8") as f:
                text = f.read()
            expect("state = connected" in text and "outbox = 0" in text, text)
            return "household sync connected, outbox empty"
        check("household sync unaffected", status)
    finally:
        # Whether the server was still running when the checks ended (a lost connection's other side).
        nats_state = "running" if nats.poll() is None else f"exited with {nats.returncode}"
        stop_process(agent)
        stop_process(daemon)
        if wire:
            wire.close()
        stop_process(nats)
        nats_log.close()
        if FAILURES or args.keep:
            print(f"work directory kept: {work}")
            if os.path.exists(agent_log):
                print("--- snapback-sync.log\n" + log_text()[-4000:])
            # The server's side of a lost connection (its exit status, if it stopped, and its log).
            print(f"--- nats-server ({nats_state} at the end of the checks)")
            with open(os.path.join(work, "nats-server.log"), encoding="utf-8", errors="replace") as f:
                print(f.read()[-3000:])
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAIL' if FAILURES else 'PASS'} test_agent: {len(FAILURES)} failed, {time.monotonic() - started:.0f} s")
    sys.exit(1 if FAILURES else 0)


def report_seq(data):
    """A TelemetryReport's seq (field 2, a varint), read from its top-level fields."""
    pos = 0
    while pos < len(data):
        key, pos = sb.dec_varint(data, pos)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, pos = sb.dec_varint(data, pos)
            if number == 2:
                return value
        elif kind == 1:
            pos += 8
        elif kind == 2:
            size, pos = sb.dec_varint(data, pos)
            pos += size
        elif kind == 5:
            pos += 4
        else:
            raise AssertionError(f"wire type {kind} in a TelemetryReport")
    return 0


def _listening(port):
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
            return probe.recv(4096).startswith(b"INFO")
    except OSError:
        return False


if __name__ == "__main__":
    main()
