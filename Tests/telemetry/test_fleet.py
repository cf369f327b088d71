#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fleet telemetry end to end: three boxes, one nats-server -js, snapback-fleet and a real VictoriaMetrics.

    python3 Tests/telemetry/test_fleet.py --snapbackd .build/debug/snapbackd \\
        --agent .build/debug/snapback-sync --fleet .build/debug/snapback-fleet \\
        --stream-probe .build-c/telemetry/stream-probe

Each box is a snapbackd and a snapback-sync without household sync (telemetry only), with its own
operator labels, reaching nats-server through a TCP relay of its own (the test cuts a box off by closing
it). The boxes' viewers are scripted through the players' protocol under several presets; what each
daemon decided (snapbacks, skipped breaks) is read from its own WatchDecisions stream, per session and
so per preset: that is the truth the fleet's totals must equal. The totals are read back with PromQL
from VictoriaMetrics' HTTP API. Then: a box restarted (its counters kept), a report re-published (with
its own message id, and with another), snapback-fleet killed mid-stream and started again, a box cut
off from NATS while its viewers go on, then back: the totals stay exact. The agent's textfile is read
with prometheus_client's parser. With --plot PNG, the story's snapbacks and skipped breaks per hour by
preset are read back with query_range and drawn (matplotlib), as `make fleet-plot` does.

Every wait is bounded (generously: the machine may be loaded); each check prints PASS or FAIL.
"""

import argparse
import collections
import functools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "sync"))
sys.path.insert(0, os.path.join(TESTS, "clients", "python"))
import snapback_client as sb  # noqa: E402
import checks  # noqa: E402
from checks import FAILURES  # noqa: E402
from nats_fixture import free_port  # noqa: E402
from test_household import expect, stop_process, wait_for  # noqa: E402

check = functools.partial(checks.check, timed=True)
TIMEOUT = 60  # the bound of a wait for the fleet's totals
INTERVAL = 1  # the agents' report interval (s) and the fleet's export interval
PRESETS = ("snapback", "ima", "media3", "tvsdk", "hlsjs")


class Relay:
    """A TCP relay from a port of its own to nats-server: closed, the box is offline (its connections
    cut, new ones refused); opened again on the same port, it is back."""

    def __init__(self, target_port):
        self.target = target_port
        self.port = free_port()
        self.listener = None
        self.pairs = []
        self.lock = threading.Lock()

    def open(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(8)
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def close(self):
        listener, self.listener = self.listener, None
        if listener:
            # shutdown first: a close alone leaves the thread in accept() taking connections.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                ready, _, _ = select.select([a, b], [], [], 60)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass


class Box:
    """snapbackd and snapback-sync (telemetry only), with the operator's labels."""

    def __init__(self, work, name, labels, nats_port, args):
        self.name = name
        self.labels = labels
        self.args = args
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.socket = os.path.join(self.dir, "snapbackd.sock")
        self.state = os.path.join(self.dir, "state")
        self.agent_state = os.path.join(self.dir, "agent-state")
        self.textfile = os.path.join(self.dir, "snapback.prom")
        self.relay = Relay(nats_port)
        self.relay.open()
        self.config = os.path.join(self.dir, "sync.conf")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(f"servers = nats://127.0.0.1:{self.relay.port}\n"
                    f"socket = {self.socket}\n"
                    f"state-directory = {self.agent_state}\n"
                    f"status-file = {os.path.join(self.dir, 'sync-status')}\n"
                    "\n[telemetry]\n"
                    f"interval = {INTERVAL}\n"
                    f"textfile = {self.textfile}\n"
                    f"firmware = {labels['firmware']}\nmodel = {labels['model']}\nregion = {labels['region']}\n")
        self.daemon = self.agent = self.watcher = None
        # What this box's daemon decided, by preset: snapbacks and skipped breaks; sessions opened.
        self.snapbacks = collections.Counter()
        self.skips = collections.Counter()
        self.opened = 0
        self.preset_of = {}
        self.rounds = 0

    def start_daemon(self):
        log = open(os.path.join(self.dir, "snapbackd.log"), "a")
        self.daemon = subprocess.Popen([self.args.snapbackd, "--socket", self.socket, "--state-dir", self.state,
                                        "--config", "/dev/null", "--log-level", "notice"],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

        def listening():
            if self.daemon.poll() is not None:
                raise RuntimeError(f"{self.name}'s snapbackd exited {self.daemon.returncode}")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.connect(self.socket)
                return True
            except OSError:
                return False
        wait_for(f"{self.name}'s snapbackd listening", listening)
        # Every decision of the daemon, from now on (a new connection after each start).
        self.watcher = sb.Client(self.socket, timeout=30)
        self.watcher.hello(f"telemetry-test-{self.name}-watch")
        self.watcher.result(self.watcher.send("Control/WatchDecisions"))

    def start_agent(self):
        log = open(os.path.join(self.dir, "snapback-sync.log"), "a")
        self.agent = subprocess.Popen([self.args.agent, "--config", self.config],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

    def stop_daemon(self):
        self.drain_decisions()
        self.watcher.close()
        stop_process(self.daemon)

    def stop(self):
        stop_process(self.agent)
        if self.daemon and self.daemon.poll() is None:
            self.stop_daemon()
        self.relay.close()

    def box_id(self):
        with open(os.path.join(self.agent_state, "box-id"), encoding="utf-8") as f:
            return f.read().strip()

    def agent_log(self):
        with open(os.path.join(self.dir, "snapback-sync.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def story(self, presets):
        """A round of viewers, one per preset: a movie from the start (its pre-roll watched, a seek over
        the mid-roll), then the same movie resumed at its bookmark."""
        self.rounds += 1
        c = sb.Client(self.socket, timeout=30)
        c.hello(f"telemetry-test-{self.name}")
        breaks = [{"id": "pre", "start": 0.0, "duration": 30.0}, {"id": "mid", "start": 600.0, "duration": 60.0}]
        for preset in presets:
            content = f"movie-{self.name}-{self.rounds}-{preset}"
            r = c.open_session(stream_id=f"s-{content}", content_id=content, profile="alice", breaks=breaks,
                               policy_preset=preset)
            self.preset_of[r.session_id] = preset
            sid = r.session_id
            c.call("Timeline/AdBreakStarted", session_id=sid, break_id="pre", stream_time=0.0)
            c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=15.0, rate=1.0, playing=True)
            c.call("Timeline/AdBreakEnded", session_id=sid, break_id="pre", stream_time=30.0)
            c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=300.0, rate=1.0, playing=True)
            c.call("Timeline/SeekStarted", session_id=sid, from_stream_time=300.0)
            c.call("Timeline/SeekEnded", session_id=sid, from_stream_time=300.0, to_stream_time=900.0)
            c.call("Timeline/Pause", session_id=sid, stream_time=900.0)
            c.close_session(sid)
            again = c.open_session(stream_id=f"s-{content}", content_id=content, profile="alice", breaks=breaks,
                                   policy_preset=preset, resume={"use_bookmark": True})
            self.preset_of[again.session_id] = preset
            c.close_session(again.session_id)
            self.opened += 2
        c.close()
        self.drain_decisions()

    def drain_decisions(self):
        """Takes the decisions the watcher has, until none came for half a second."""
        while True:
            event = self.watcher.next_push(timeout=0.5)
            if event is None:
                return
            d = event.push
            preset = self.preset_of.get(d.session_id)
            if preset is None:
                continue
            if d.kind == sb.DECISION_KIND_SEEK and d.seek_reason == sb.SEEK_REASON_SNAPBACK:
                self.snapbacks[preset] += 1
            elif d.kind == sb.DECISION_KIND_BREAK_SKIPPED:
                self.skips[preset] += 1


class Victoria:
    def __init__(self, work):
        self.port = free_port()
        self.data = os.path.join(work, "victoria-metrics")
        self.log = os.path.join(work, "victoria-metrics.log")
        self.url = f"http://127.0.0.1:{self.port}"
        log = open(self.log, "w")
        self.process = subprocess.Popen(
            ["victoria-metrics", f"-storageDataPath={self.data}", f"-httpListenAddr=127.0.0.1:{self.port}",
             "-retentionPeriod=1d", "-search.latencyOffset=0s", "-search.disableCache", "-loggerLevel=WARN"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

        def healthy():
            if self.process.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited {self.process.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_for("victoria-metrics healthy", healthy)

    def query(self, promql):
        """An instant PromQL query: {label value: number} by the query's one `by` label."""
        with urllib.request.urlopen(self.url + "/internal/force_flush", timeout=10):
            pass
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        expect(body["status"] == "success", f"query {promql}: {body}")
        out = {}
        for row in body["data"]["result"]:
            key = ",".join(f"{v}" for _, v in sorted(row["metric"].items())) or "all"
            out[key] = float(row["value"][1])
        return out


    def query_range(self, promql, start, end, step):
        """A range PromQL query: {label value: [(unix seconds, number)]} by the query's one `by` label."""
        with urllib.request.urlopen(self.url + "/internal/force_flush", timeout=10):
            pass
        url = self.url + "/api/v1/query_range?" + urllib.parse.urlencode(
            {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step}s"})
        with urllib.request.urlopen(url, timeout=30) as r:
            body = json.load(r)
        expect(body["status"] == "success", f"query_range {promql}: {body}")
        out = {}
        for row in body["data"]["result"]:
            key = ",".join(f"{v}" for _, v in sorted(row["metric"].items())) or "all"
            out[key] = [(float(t), float(v)) for t, v in row["values"]]
        return out


# The plot's two panels: docs/telemetry.md "The plot" gives the same queries for vmui.
PLOT_QUERIES = (
    ("Snapbacks per hour, by preset",
     'sum by (preset) (increase(snapback_fleet_seeks_commanded_total{reason="snapback"}[1h]))'),
    ("Skipped breaks per hour, by preset", "sum by (preset) (increase(snapback_fleet_breaks_skipped_total[1h]))"),
)


def plot(victoria, start, path):
    """The story's snapbacks and skipped breaks per hour by preset, read back from VictoriaMetrics over its
    HTTP API (query_range), drawn as a PNG with Debian's matplotlib. Any failure fails the run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    end = time.time()
    step = max(1, int((end - start) / 200))
    figure, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    drawn = 0
    for axis, (title, promql) in zip(axes, PLOT_QUERIES):
        series = victoria.query_range(promql, start, end, step)
        expect(series, f"{promql}: no series over the story")
        for preset, points in sorted(series.items()):
            axis.plot([(t - start) / 60 for t, _ in points], [v for _, v in points], label=preset, linewidth=1.5)
            drawn += 1
        axis.set_title(f"{title}\n{promql}", fontsize=9)
        axis.set_ylabel("per hour")
        axis.grid(True, alpha=0.3)
        axis.legend(title="preset", fontsize=8)
    axes[-1].set_xlabel("minutes into the three-box story")
    figure.suptitle("snapback fleet: the three-box story in VictoriaMetrics")
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    with open(path, "rb") as f:
        expect(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    return f"{path}: {drawn} lines, {os.path.getsize(path)} bytes, step {step} s"


def nonzero(counter):
    return {k: float(v) for k, v in counter.items() if v}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapbackd", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--fleet", required=True)
    parser.add_argument("--stream-probe", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--plot", metavar="PNG", help="at the end, draw the story's snapbacks and skipped breaks per hour")
    args = parser.parse_args()
    for tool in ("nats-server", "victoria-metrics"):
        if shutil.which(tool) is None:
            sys.exit(f"test_fleet: {tool} is not installed")
    started = time.monotonic()
    started_wall = time.time()
    work = tempfile.mkdtemp(prefix="snapback-telemetry-")
    nats_port = free_port()
    nats_log = open(os.path.join(work, "nats-server.log"), "w")
    nats = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(nats_port),
                             "-sd", os.path.join(work, "jetstream")],
                            stdin=subprocess.DEVNULL, stdout=nats_log, stderr=nats_log)
    nats_url = f"nats://127.0.0.1:{nats_port}"
    victoria = Victoria(work)
    fleet_conf = os.path.join(work, "fleet.conf")
    with open(fleet_conf, "w", encoding="utf-8") as f:
        f.write(f"servers = {nats_url}\ndatabase = {os.path.join(work, 'fleet', 'fleet.db')}\n"
                f"import-url = {victoria.url}/api/v1/import/prometheus\nbatch = 16\n"
                f"export-interval = {INTERVAL}\n")
    fleet = {"process": None}

    def start_fleet():
        log = open(os.path.join(work, "snapback-fleet.log"), "a")
        fleet["process"] = subprocess.Popen([args.fleet, "--config", fleet_conf], stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=log)
        log.close()

    boxes = [
        Box(work, "box0", {"firmware": "fw-1.0", "model": "stb-a", "region": "eu"}, nats_port, args),
        Box(work, "box1", {"firmware": "fw-1.0", "model": "stb-b", "region": "us"}, nats_port, args),
        Box(work, "box2", {"firmware": "fw-2.0", "model": "stb-a", "region": "eu"}, nats_port, args),
    ]
    presets = {"box0": ("snapback", "ima"), "box1": ("snapback", "media3", "tvsdk"), "box2": ("hlsjs", "ima")}

    def probe(*argv):
        return subprocess.run([args.stream_probe, nats_url, "SNAPBACK_TELEMETRY", *argv], check=True,
                              capture_output=True, text=True, timeout=30).stdout.split()

    def expected():
        snapbacks, skips, by_firmware = collections.Counter(), collections.Counter(), collections.Counter()
        for box in boxes:
            snapbacks.update(box.snapbacks)
            skips.update(box.skips)
            by_firmware[box.labels["firmware"]] += box.opened
        return nonzero(snapbacks), nonzero(skips), nonzero(by_firmware)

    def fleet_totals():
        return (victoria.query('sum by (preset) (snapback_fleet_seeks_commanded_total{reason="snapback"})'),
                victoria.query("sum by (preset) (snapback_fleet_breaks_skipped_total)"),
                victoria.query("sum by (firmware) (snapback_fleet_sessions_opened_total)"))

    def totals_exact(what):
        want = expected()
        got = wait_for(f"{what}: the fleet's totals {want}", lambda: fleet_totals() == want and want, timeout=TIMEOUT)
        return f"snapbacks {got[0]}, skips {got[1]}, sessions by firmware {got[2]}"

    def settled():
        """Every report published so far is applied: each box's latest report is in the stream and the
        fleet's consumer has nothing pending."""
        wait_for("the fleet's consumer drained", lambda: probe("pending", "snapback-fleet") == ["pending", "0"])

    try:
        for box in boxes:
            box.start_daemon()
            box.start_agent()
        start_fleet()

        def first_round():
            for box in boxes:
                box.story(presets[box.name])
            want = expected()
            expect(want[0].get("snapback", 0) >= 2, f"the snapback preset snapped back in each story: {want[0]}")
            return totals_exact("three boxes")
        check("fleet totals by preset equal the boxes' decisions", first_round)

        def restart_box():
            box = boxes[0]
            box.stop_daemon()
            box.start_daemon()
            box.story(presets[box.name])
            return totals_exact("box0 restarted")
        check("a box restarted: its counters kept, nothing doubled", restart_box)

        def duplicate():
            box = boxes[1]
            subject = f"snapback.telemetry.{box.box_id()}"
            before = fleet_totals()
            last = probe("last", subject)
            # The stream's last message of the box: its own id is deduplicated by the stream; another id is
            # stored, and the fleet must skip it (its seq is the box's last applied, or below).
            same = probe("republish", subject, f"{box.box_id()}-0")
            again = probe("republish", subject, "another-id-1")
            twice = probe("republish", subject, "another-id-1")
            expect(again[:2] == ["duplicate", "0"] and twice[:2] == ["duplicate", "1"], f"{again} {twice}")
            settled()
            time.sleep(2 * INTERVAL)
            after = fleet_totals()
            expect(after == before == expected(), f"after re-publishing: {after}, before {before}")
            expect(same[:2] == ["duplicate", "0"] or same[:2] == ["duplicate", "1"], f"{same}")
            return f"the box's last report at stream sequence {last[1]}, its copy at {again[3]}; totals unchanged"
        check("a re-published report is not counted twice", duplicate)

        def fleet_restart():
            # Killed while the boxes report a new round: its batch is applied with the consumer's position
            # in one transaction, or not at all.
            for box in boxes:
                box.story(presets[box.name][:1])
            fleet["process"].kill()
            fleet["process"].wait()
            for box in boxes:
                box.story(presets[box.name])
            time.sleep(2 * INTERVAL)
            start_fleet()
            return totals_exact("snapback-fleet killed and started again")
        check("snapback-fleet killed mid-stream and started again: totals exact", fleet_restart)

        def offline():
            box = boxes[2]
            box.relay.close()
            wait_for("box2's agent sees NATS lost", lambda: "not connected to NATS" in box.agent_log(), timeout=40)
            before = fleet_totals()
            box.story(presets[box.name])
            time.sleep(4 * INTERVAL)
            cut_off = fleet_totals()
            expect(cut_off == before, f"box2 is offline, yet the totals moved: {before} -> {cut_off}")
            box.relay.open()
            return totals_exact("box2 back online") + "; while offline: unchanged"
        check("a box offline, then back: its counts arrive once", offline)

        def wiped():
            # The box's store made afresh (a new counting_since): its counters start from 0 again, below
            # what the fleet last applied; what it counts from then on is added, nothing taken away (a
            # fleet that took it for the same counting would add nothing).
            box = boxes[0]
            box.stop_daemon()
            shutil.rmtree(box.state)
            box.start_daemon()
            box.story(presets[box.name])
            return totals_exact("box0's store wiped")
        check("a box's store wiped: its new counts are added to the fleet's", wiped)

        def textfile():
            # The Prometheus text format, which node_exporter's textfile collector reads: each counter typed
            # (prometheus_client's parser names the family without _total, as it does a typed counter's).
            from prometheus_client.parser import text_string_to_metric_families as prometheus
            box = boxes[1]
            with open(box.textfile, encoding="utf-8") as f:
                text = f.read()
            expect("# EOF" not in text and "# UNIT" not in text, "OpenMetrics-only lines in the textfile")
            families = {fam.name: fam for fam in prometheus(text)}
            seeks = families.get("snapbackd_seeks_commanded")
            expect(seeks is not None and seeks.type == "counter" and seeks.documentation,
                   f"no typed counter snapbackd_seeks_commanded with its help: {sorted(families)[:8]}")

            def snapbacks(samples):
                return sum(s.value for s in samples
                           if s.name == "snapbackd_seeks_commanded_total" and s.labels.get("reason") == "snapback")
            counted = snapbacks(seeks.samples)
            expect(counted == sum(box.snapbacks.values()), f"textfile: {counted} snapbacks, the daemon {box.snapbacks}")
            expect(all(s.labels.get("firmware") == box.labels["firmware"] and s.labels.get("region") == box.labels["region"]
                       for s in seeks.samples), "the operator's labels on every sample")
            plain = [s for fam in prometheus(text) for s in fam.samples]
            expect(snapbacks(plain) == counted, f"the Prometheus text parser reads {snapbacks(plain)} snapbacks")
            return f"{len(families)} families, {counted:.0f} snapbacks, {len(plain)} samples in the Prometheus text format"
        check("the textfile parses (prometheus_client) and says what the daemon counted", textfile)

        def private():
            sizes = []
            for box in boxes:
                _, _, data = probe("last", f"snapback.telemetry.{box.box_id()}")
                raw = bytes.fromhex(data)
                sizes.append(len(raw))
                for word in (b"movie-", b"alice", b"s-movie"):
                    expect(word not in raw, f"{box.name}'s report carries {word!r}")
            return f"no content id, profile or stream id in the reports ({min(sizes)} to {max(sizes)} bytes each)"
        check("reports carry no content id or profile", private)
        if args.plot:
            check("the plot: snapbacks and skipped breaks per hour by preset, from VictoriaMetrics (query_range)",
                  lambda: plot(victoria, started_wall, args.plot))
    finally:
        for box in boxes:
            box.stop()
        stop_process(fleet["process"])
        stop_process(victoria.process)
        stop_process(nats)
        nats_log.close()
        if FAILURES or args.keep:
            print(f"work directory kept: {work}")
            for name in ("snapback-fleet.log",):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print(f"--- {name}\n" + open(path, encoding="utf-8", errors="replace").read()[-4000:])
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAIL' if FAILURES else 'PASS'} test_fleet: {len(FAILURES)} failed, {time.monotonic() - started:.0f} s")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
