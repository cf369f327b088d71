#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make link-order: which code the release daemon runs, as the linker's section order.

Runs the release snapbackd under callgrind as `make check-budget` does (start-up reading the installed
configuration file, Hello, the bench's session, snapback round trips, closing, SIGTERM), twice with
different numbers of round trips, and once as `make check-footprint` starts it (the same configuration
file, a probe connection once it listens), its counters dumped once it is idle. It writes the sections
of every function these runs ran, one `.text.NAME` a line, to OUT: first the functions every round trip
runs (those whose calls or instructions grow with the round trips) in the order a round trip first runs
them (a third run, under valgrind's lackey), then, sorted, those the daemon runs from its start until
it is idle, then, sorted, the rest. The release link (the link-order lever, perf/README.md) places
those sections in that order and together:
- the round trip's own code fills few 4 KiB pages, each a TLB miss when a request comes cold (`make
  check-budget` counts them; `snapback-bench daemon --spacing` shows the time); the jump tables of its
  switches (`.rodata.NAME`) are listed too, and share a page or two;
- the code an idle daemon has run fills few 64 KiB windows of the binary, next to the round trip's,
  instead of touching a page in many of them: the kernel maps the cached 64 KiB around each fault of
  the file, so code run once at start-up and never again still stays resident (`make check-footprint`
  measures the resident set); the code of sessions and shutdown follows.
A name the build no longer has is ignored by the linker; code added since the file was written lands
after the ordered sections, so regenerate it when either check reports pages grew.

Usage: gen-link-order.py BIN_DIR OUT
"""

import bisect
import glob
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHORT, LONG = 200, 400
# The round trips of the run that finds their functions' order (one is taken).
ORDER_ROUND_TRIPS = 20
# How long the start-up run waits, once the daemon has accepted the probe, before it dumps: check-footprint
# waits 1 s on the bare daemon, which valgrind runs tens of times slower.
STARTUP_SETTLE_SECONDS = 5.0


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    bin_dir, out = argv[1], argv[2]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("check_budget", os.path.join(root, "scripts", "check-budget.py"))
    budget = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(budget)
    work = tempfile.mkdtemp(prefix="snapback-link-order.")
    try:
        daemon = os.path.join(work, "snapbackd")
        subprocess.run(["strip", "--strip-debug", "-o", daemon, os.path.join(bin_dir, "snapbackd")], check=True)
        # With the configuration file `make install` puts in /etc, which the daemon reads at every start.
        config = os.path.join(root, "config", "snapbackd.conf")
        short = budget.run(daemon, bin_dir, work, SHORT, ["--config", config])
        long = budget.run(daemon, bin_dir, work, LONG, ["--config", config])
        idle = run_until_idle(budget, daemon, work, config)

        names = functions(long)
        # The functions of the code check-budget counts as the round trip's.
        hot = {long.function_at[at] for at in long.code_run_by_each(short, LONG - SHORT)} & names
        order = run_order(budget, daemon, bin_dir, work, ["--config", config], hot)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    startup = functions(idle) - hot
    names |= startup
    with open(out, "w") as f:
        for name in order + sorted(startup) + sorted(names - hot - startup):
            f.write(f".text.{name}\n")
        # A function's jump tables are in `.rodata.NAME`: the round trip's switches read theirs.
        for name in sorted(hot):
            f.write(f".rodata.{name}\n")
    print(f"gen-link-order: {len(names)} functions run by snapbackd written to {out}, first the {len(hot)} "
          f"each round trip runs, in the order it runs them, then the {len(startup)} more it runs from its "
          "start until idle")
    return 0


def functions(profile):
    """The named functions a callgrind profile ran (those it called included)."""
    def named(name):
        return name and not name.startswith("0x")

    names = {name for name in profile.own if named(name)}
    return names | {callee for (_, callee) in profile.calls if named(callee)}


def run_until_idle(budget, daemon_path, work, config):
    """snapbackd under callgrind started as check-footprint starts it (its configuration file, a fresh
    state directory, accepted once, left to settle), its counters dumped once idle; returns the Profile of
    everything it ran until then: the code whose pages an idle daemon keeps resident."""
    sock = os.path.join(work, "idle.sock")
    state = os.path.join(work, "idle-state")
    out = os.path.join(work, "callgrind.idle")
    log = os.path.join(work, "valgrind.idle.log")
    os.mkdir(state, 0o700)
    env = dict(os.environ)
    env.pop("LISTEN_FDS", None)
    env.pop("NOTIFY_SOCKET", None)
    with open(log, "w") as log_file:
        process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=yes", "--demangle=no",
             "--dump-line=no", "--compress-strings=no", "--compress-pos=no",
             daemon_path, "--socket", sock, "--state-dir", state, "--config", config, "--log-level", "warning"],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, env=env)
    try:
        # wait_for_socket connects once, as check-footprint's probe does.
        budget.wait_for_socket(sock, process, log)
        time.sleep(STARTUP_SETTLE_SECONDS)
        result = subprocess.run(["callgrind_control", "--dump=idle", str(process.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            budget.fail(f"callgrind_control --dump failed: {result.stdout.strip()}", log)
        deadline = time.monotonic() + 60
        dumps = []
        while not dumps and time.monotonic() < deadline:
            time.sleep(0.1)
            dumps = glob.glob(out + ".*")
        if not dumps:
            budget.fail("callgrind wrote no dump of the idle daemon", log)
        process.send_signal(signal.SIGTERM)
        if process.wait(timeout=120) != 0:
            budget.fail(f"snapbackd under valgrind exited {process.returncode}", log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return budget.Profile(sorted(dumps)[0])


def run_order(budget, daemon, bin_dir, work, daemon_arguments, hot):
    """The `hot` functions in the order one round trip first runs them (those it does not run at all
    after, sorted). A request that comes cold fetches its code line by line; laid out in the order it
    runs, that code is read front to back and the processor's prefetchers fetch ahead. The order comes
    from valgrind's lackey, which prints every superblock it runs, in order: the round trips are cut at
    each entry to `epoll_wait`, and the one taken is in the middle of those that run the most of `hot`."""
    trace = os.path.join(work, "superblocks")
    budget.drive(daemon, bin_dir, work, ORDER_ROUND_TRIPS,
                 ["--tool=lackey", "--basic-counts=no", "--trace-superblocks=yes", f"--log-file={trace}"],
                 daemon_arguments)
    symbols = []
    listing = subprocess.run(["nm", daemon], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            symbols.append((int(fields[0], 16), fields[2]))
    symbols.sort()
    starts = [address for address, _ in symbols]
    windows, current = [], []
    with open(trace) as f:
        for line in f:
            if not line.startswith("SB "):
                continue
            at = bisect.bisect_right(starts, int(line[3:], 16)) - 1
            name = symbols[at][1] if at >= 0 else None
            if name == "epoll_wait":
                windows.append(current)
                current = []
            elif name in hot and name not in current:
                current.append(name)
    windows.append(current)
    most = max(len(w) for w in windows)
    fullest = [w for w in windows if len(w) == most]
    order = fullest[len(fullest) // 2]
    return order + sorted(hot - set(order))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
