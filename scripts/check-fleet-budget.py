#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make check-fleet-budget: snapback-fleet's batch path, counted rather than timed.

Runs the release `snapback-bench fleet --form sparse` under callgrind twice, with SMALL and LARGE boxes
(3 reports each, the bench's default mix of restarts and re-published reports), collecting only inside
the aggregator's own path: `FleetService.apply` (each report decoded and checked, the batch folded into
the totals and committed in one SQLite transaction, SQLite's work included) and
`FleetStore.importText` (the changed totals' import text). The bench's simulation, its encoding and its
two baselines run outside what is collected. The difference of the two runs divided by the difference of
their reports is what one sparse report costs the aggregator's thread in steady state, in instructions:
callgrind's counts do not depend on the machine's load or clock, and Swift's hashing is made
deterministic (SWIFT_DETERMINISTIC_HASHING), so the figure repeats to the instruction and a budget can be
tight. `make bench` gives the same path in reports per second (docs/telemetry.md).

valgrind 3.19 cannot read the debug information of the bench (DWARF 5 forms it does not know): the run
is of a copy without it (`strip --strip-debug`), whose symbols are what callgrind's toggles name.

Usage: check-fleet-budget.py BIN_DIR INSTRUCTION_BUDGET
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

SMALL = 500
LARGE = 1000
# Mangled-name patterns of what is collected (callgrind's --toggle-collect takes the linker's names).
COLLECT = ["*0B7ServiceC5apply*", "*0B5StoreC10importText*"]


def fail(message):
    print(f"check-fleet-budget: FAIL {message}", file=sys.stderr)
    sys.exit(1)


def run(bench, work, boxes):
    """Instructions collected and reports made by one run of `boxes` boxes."""
    out = os.path.join(work, f"callgrind.{boxes}")
    log = os.path.join(work, f"bench.{boxes}.log")
    env = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")
    with open(log, "w") as f:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            + [f"--toggle-collect={p}" for p in COLLECT]
            + [bench, "fleet", "--form", "sparse", "--boxes", str(boxes)],
            stdout=f, stderr=subprocess.STDOUT, env=env, timeout=1200)
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if done.returncode != 0:
        fail(f"the bench under callgrind exited {done.returncode}:\n{text[-3000:]}")
    reports = re.search(r"; (\d+) in all", text)
    if not reports:
        fail(f"the bench did not say how many reports it made:\n{text[-3000:]}")
    with open(out, encoding="utf-8", errors="replace") as f:
        totals = re.search(r"^totals: (\d+)", f.read(), re.MULTILINE)
    if not totals or int(totals.group(1)) == 0:
        fail(f"callgrind collected nothing in {COLLECT}: renamed? (the bench's output:\n{text[-2000:]})")
    return int(totals.group(1)), int(reports.group(1))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bin_dir, budget = sys.argv[1], int(sys.argv[2])
    for tool in ("valgrind", "strip"):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed (make deps installs it)")
    work = tempfile.mkdtemp(prefix="snapback-fleet-budget-")
    try:
        bench = os.path.join(work, "snapback-bench")
        subprocess.run(["strip", "--strip-debug", "-o", bench, os.path.join(bin_dir, "snapback-bench")], check=True)
        small, small_reports = run(bench, work, SMALL)
        large, large_reports = run(bench, work, LARGE)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if large_reports <= small_reports:
        fail(f"the runs made {small_reports} and {large_reports} reports")
    per_report = (large - small) / (large_reports - small_reports)
    print(f"check-fleet-budget: {small:,} instructions for {small_reports} reports, {large:,} for {large_reports}: "
          f"{per_report:,.0f} a sparse report (decode, checks, fold, its share of the transaction and of the "
          f"import text; budget {budget:,})")
    if per_report > budget:
        fail(f"{per_report:,.0f} instructions a sparse report, over the budget of {budget:,}")
    print("check-fleet-budget: ok")


if __name__ == "__main__":
    main()
