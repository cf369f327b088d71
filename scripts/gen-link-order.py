#!/usr/bin/env python3
"""make link-order: which code the release daemon runs, as the linker's section order.

Runs the release snapbackd under callgrind as `make check-budget` does (start-up reading the installed
configuration file, Hello, the bench's session, 200 snapback round trips, closing, SIGTERM) and writes the sections of every function it ran,
one `.text.NAME` a line, sorted, to OUT. The release link (Package.swift, `smallDaemon`) places those
sections first and together, so that the code the daemon runs at start-up, at rest and per message
fills few 64 KiB windows of the binary instead of touching a page in most of them (`make
check-footprint` measures the resident set that follows). A name the build no longer has is ignored by
the linker; code added since the file was written lands after the ordered sections, so regenerate it
when check-footprint reports the binary's resident pages grew.

Usage: gen-link-order.py BIN_DIR OUT
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

ROUND_TRIPS = 200


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
        profile = budget.run(daemon, bin_dir, work, ROUND_TRIPS, ["--config", config])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = {name for name in profile.own if name and not name.startswith("0x")}
    names |= {callee for (_, callee) in profile.calls if callee and not callee.startswith("0x")}
    with open(out, "w") as f:
        for name in sorted(names):
            f.write(f".text.{name}\n")
    print(f"gen-link-order: {len(names)} functions run by snapbackd written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
