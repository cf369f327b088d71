#!/usr/bin/env python3
"""make link-order: which code the release daemon runs, as the linker's section order.

Runs the release snapbackd under callgrind as `make check-budget` does (start-up reading the installed
configuration file, Hello, the bench's session, snapback round trips, closing, SIGTERM), twice with
different numbers of round trips, and writes the sections of every function it ran, one `.text.NAME` a
line, to OUT: first, sorted, the functions every round trip runs (those whose calls or instructions
grow with the round trips), then, sorted, the rest. The release link (Package.swift, `smallDaemon`)
places those sections in that order and together:
- the code the daemon runs at start-up, at rest and per message fills few 64 KiB windows of the binary
  instead of touching a page in most of them (`make check-footprint` measures the resident set);
- the round trip's own code fills few 4 KiB pages, each a TLB miss when a request comes cold (`make
  check-budget` counts them; `snapback bench --spacing` shows the time); the jump tables of its
  switches (`.rodata.NAME`) are listed too, and share a page or two.
A name the build no longer has is ignored by the linker; code added since the file was written lands
after the ordered sections, so regenerate it when either check reports pages grew.

Usage: gen-link-order.py BIN_DIR OUT
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

SHORT, LONG = 200, 400


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    bin_dir, out = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("check_budget", os.path.join(here, "check-budget.py"))
    budget = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(budget)
    work = tempfile.mkdtemp(prefix="snapback-link-order.")
    try:
        daemon = os.path.join(work, "snapbackd")
        subprocess.run(["strip", "--strip-debug", "-o", daemon, os.path.join(bin_dir, "snapbackd")], check=True)
        # With the configuration file `make install` puts in /etc, which the daemon reads at every start.
        config = os.path.join(os.path.dirname(here), "config", "snapbackd.conf")
        short = budget.run(daemon, bin_dir, work, SHORT, ["--config", config])
        long = budget.run(daemon, bin_dir, work, LONG, ["--config", config])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def named(name):
        return name and not name.startswith("0x")

    names = {name for name in long.own if named(name)}
    names |= {callee for (_, callee) in long.calls if named(callee)}
    # The functions of the code check-budget counts as the round trip's.
    hot = {long.function_at[at] for at in long.code_run_by_each(short, LONG - SHORT)} & names
    with open(out, "w") as f:
        for name in sorted(hot) + sorted(names - hot):
            f.write(f".text.{name}\n")
        # A function's jump tables are in `.rodata.NAME`: the round trip's switches read theirs.
        for name in sorted(hot):
            f.write(f".rodata.{name}\n")
    print(f"gen-link-order: {len(names)} functions run by snapbackd written to {out}, first the {len(hot)} "
          "each round trip runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
