#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make link-order: which code the release daemon runs, as the linker's section order.

Runs the release snapbackd under callgrind as `make check-budget` does (start-up reading the installed
configuration file, Hello, the bench's session, snapback round trips, closing, SIGTERM), twice with
different numbers of round trips, and writes the sections of every function it ran, one `.text.NAME` a
line, to OUT: first the functions every round trip runs (those whose calls or instructions grow with
the round trips) in the order a round trip first runs them (a third run, under valgrind's lackey), then,
sorted, the rest. The release link (the link-order lever, perf/README.md) places those sections in that
order and together:
- the code the daemon runs at start-up, at rest and per message fills few 64 KiB windows of the binary
  instead of touching a page in most of them (`make check-footprint` measures the resident set);
- the round trip's own code fills few 4 KiB pages, each a TLB miss when a request comes cold (`make
  check-budget` counts them; `snapback-bench daemon --spacing` shows the time); the jump tables of its
  switches (`.rodata.NAME`) are listed too, and share a page or two.
A name the build no longer has is ignored by the linker; code added since the file was written lands
after the ordered sections, so regenerate it when either check reports pages grew.

Usage: gen-link-order.py BIN_DIR OUT
"""

import bisect
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

SHORT, LONG = 200, 400
# The round trips of the run that finds their functions' order (one is taken).
ORDER_ROUND_TRIPS = 20


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

        def named(name):
            return name and not name.startswith("0x")

        names = {name for name in long.own if named(name)}
        names |= {callee for (_, callee) in long.calls if named(callee)}
        # The functions of the code check-budget counts as the round trip's.
        hot = {long.function_at[at] for at in long.code_run_by_each(short, LONG - SHORT)} & names
        order = run_order(budget, daemon, bin_dir, work, ["--config", config], hot)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    with open(out, "w") as f:
        for name in order + sorted(names - hot):
            f.write(f".text.{name}\n")
        # A function's jump tables are in `.rodata.NAME`: the round trip's switches read theirs.
        for name in sorted(hot):
            f.write(f".rodata.{name}\n")
    print(f"gen-link-order: {len(names)} functions run by snapbackd written to {out}, first the {len(hot)} "
          "each round trip runs, in the order it runs them")
    return 0


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
