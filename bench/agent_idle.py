#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's idle cost of telemetry: snapback-sync with telemetry on beside the baseline, the same agent
with telemetry off, in one run (make bench).

    bench/agent_idle.py SNAPBACKD SNAPBACK_SYNC [--interval 10] [--reports 6]

One nats-server -js and one snapbackd; two agents, each with household sync (households of their own)
so that both hold the same NATS connection, watcher and keep-alives: the baseline with `[telemetry]
enabled = false`, the other reporting every `--interval` seconds (jittered ±10 %) with a textfile. Nobody
plays: both are idle. Over a window of exactly `--reports` reports (from just after one report to just
after the `--reports`-th next, as a NATS subscriber of the bench's own sees them: Tests/telemetry/
nats_wire.py), it counts each agent's voluntary context switches from /proc/PID/task/*/status (each is a
thread going to sleep and being woken again; a preemption by a busy neighbour is not a wake-up), its
loop's (the main thread) apart, and reads their resident memory (VmRSS). Prints the figures, the extra
per report, and the ratios on/off. The target: the loop wakes once a report (its timer; the publish's ack
does not wake it), the rest being the report's own work within that wake-up (the GetMetrics round trip
over the connection kept to snapbackd) and libnats's threads sending the report and reading its ack.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "telemetry"))
from nats_wire import NatsWire  # noqa: E402


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what, probe, timeout=60, step=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            sys.exit(f"agent_idle: {what}: not within {timeout} s")
        time.sleep(step)


def switches(pid):
    """(the main thread's context switches, all threads', {thread name: switches})."""
    main, total, by_name = 0, 0, {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                text = f.read()
        except OSError:
            continue
        count = int(re.search(r"(?m)^voluntary_ctxt_switches:\s+(\d+)", text).group(1))
        total += count
        if int(tid) == pid:
            main = count
            name = "loop (main)"
        by_name[name] = by_name.get(name, 0) + count
    return main, total, by_name


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def stop(process):
    if process and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("snapbackd")
    parser.add_argument("agent")
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--reports", type=int, default=6)
    args = parser.parse_args()
    if shutil.which("nats-server") is None:
        sys.exit("agent_idle: nats-server is not installed (make deps-telemetry)")
    work = tempfile.mkdtemp(prefix="snapback-agent-idle-")
    port = free_port()
    processes = []
    wire = None
    try:
        nats_log = open(os.path.join(work, "nats-server.log"), "w")
        processes.append(subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port), "-sd",
                                           os.path.join(work, "js")], stdout=nats_log, stderr=nats_log,
                                          stdin=subprocess.DEVNULL))
        sock = os.path.join(work, "snapbackd.sock")
        daemon_log = open(os.path.join(work, "snapbackd.log"), "w")
        processes.append(subprocess.Popen([args.snapbackd, "--socket", sock, "--state-dir", os.path.join(work, "state"),
                                           "--config", "/dev/null", "--log-level", "notice"],
                                          stdout=daemon_log, stderr=daemon_log, stdin=subprocess.DEVNULL))
        wait_for("snapbackd listening", lambda: os.path.exists(sock))
        agents = {}
        for name, telemetry in (("off", "enabled = false\n"),
                                ("on", f"interval = {args.interval}\ntextfile = {os.path.join(work, 'on.prom')}\n")):
            config = os.path.join(work, f"{name}.conf")
            with open(config, "w") as f:
                f.write(f"servers = nats://127.0.0.1:{port}\nhousehold = bench-{name}\nsocket = {sock}\n"
                        f"state-directory = {os.path.join(work, name)}\n"
                        f"status-file = {os.path.join(work, name + '.status')}\n\n[telemetry]\n{telemetry}")
            log = open(os.path.join(work, f"{name}.log"), "w")
            agents[name] = subprocess.Popen([args.agent, "--config", config], stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL)
            processes.append(agents[name])

        def connected(name):
            try:
                with open(os.path.join(work, name + ".status")) as f:
                    return "state = connected" in f.read()
            except OSError:
                return False

        wire = NatsWire(port)
        wire.subscribe("snapback.telemetry.>")
        seen = [0]

        def seq():
            while not wire.messages.empty():
                wire.messages.get()
                seen[0] += 1
            return seen[0]
        for name in agents:
            wait_for(f"agent {name} connected", lambda: connected(name))
        # Past the first reports (the stream made): the window starts just after a report.
        first = wait_for("the first reports", lambda: seq() >= 2 and seq(), timeout=4 * args.interval)
        start = wait_for("a report", lambda: seq() > first and seq(), timeout=4 * args.interval, step=0.01)
        before = {name: switches(p.pid) for name, p in agents.items()}
        started = time.monotonic()
        wait_for(f"{args.reports} reports", lambda: seq() >= start + args.reports,
                 timeout=(args.reports + 2) * args.interval * 1.2, step=0.01)
        seconds = time.monotonic() - started
        reports = seq() - start
        after = {name: switches(p.pid) for name, p in agents.items()}
        rss = {name: rss_kib(p.pid) for name, p in agents.items()}
        for name, p in agents.items():
            if p.poll() is not None:
                sys.exit(f"agent_idle: agent {name} exited {p.returncode}")
        delta = {name: (after[name][0] - before[name][0], after[name][1] - before[name][1],
                        {t: after[name][2].get(t, 0) - before[name][2].get(t, 0) for t in after[name][2]})
                 for name in agents}
        print(f"agent idle, telemetry on (a report every {args.interval} s ±10 %) vs off, household sync in both, "
              f"over {reports} reports ({seconds:.1f} s):")
        for name in ("off", "on"):
            loop, total, threads = delta[name]
            detail = ", ".join(f"{t} {n}" for t, n in sorted(threads.items()) if n)
            print(f"  telemetry {name:3}: wake-ups {total:4} ({total / seconds * 60:6.1f}/min), "
                  f"loop {loop:3}; RSS {rss[name]:6} KiB   [{detail or 'none'}]")
        extra = delta["on"][1] - delta["off"][1]
        print(f"  per report: loop wake-ups {delta['on'][0] / reports:.1f} (baseline's loop: {delta['off'][0]} in all), "
              f"all threads {extra / reports:+.1f} over the baseline")
        ratio = (delta["on"][1] / delta["off"][1]) if delta["off"][1] else float("inf")
        # The same costs at the default interval: the baseline's rate over 300 s, plus one report's extra.
        baseline = delta["off"][1] / seconds * 300
        if baseline:
            print(f"  at the default interval (300 s), from these figures: {(baseline + extra / reports) / baseline:.3f}x "
                  f"the baseline's wake-ups ({baseline:.0f} in 300 s, +{extra / reports:.1f} a report)")
        print(f"  ratios on/off: wake-ups {ratio:.2f}x, RSS {rss['on'] / rss['off']:.3f}x "
              f"({rss['on'] - rss['off']:+} KiB)")
    finally:
        if wire:
            wire.close()
        for p in reversed(processes):
            stop(p)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
