#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make check-footprint: what the release daemon costs the box at rest.

Starts the release snapbackd, its binary read from disk (as after a boot; see evict_from_page_cache),
on a temporary socket and state directory, with the configuration file
`make install` installs (every key commented out, read at each start), waits until it accepts a
connection (the socket is bound after the store is open), lets it settle, and reads its resident memory
from /proc: VmRSS from status, Rss/Pss/Private_Dirty from smaps_rollup, and Rss per mapping from smaps
(the binary, each shared library, the heap, anonymous memory, the stacks), so that a change in any of
them shows. It then checks the stripped binary's size, and that nothing dynamic beyond libc (and the
loader) is linked: no Foundation, ICU, shared Swift runtime, libstdc++ or libm.

Usage: check-footprint.py BIN_DIR RSS_BUDGET_KIB SIZE_BUDGET_KIB
Exit status: 0 within both budgets, 1 over a budget or when the run failed, 2 for a bad command line.
"""

import collections
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# Idle means: the start-up is over and nothing has happened since. The daemon's loop sleeps in
# epoll_wait; one second is far more than its start-up needs.
SETTLE_SECONDS = 1.0
# Dynamic libraries the daemon may need: glibc's own and the loader (the rest is linked statically).
ALLOWED_LIBRARIES = ("linux-vdso", "libc.so", "ld-linux")


def fail(message):
    print(f"check-footprint: FAIL {message}", file=sys.stderr)
    sys.exit(1)


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def rollup(pid):
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                values[parts[0].rstrip(":")] = int(parts[1])
    return values


def rss_by_mapping(pid):
    """Rss in KiB per mapping name (the file's base name, [heap], [stack], anonymous)."""
    totals = collections.Counter()
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split(None, 1)[0]
            if "-" in first and not first.endswith(":"):
                fields = line.split()
                name = os.path.basename(fields[5]) if len(fields) >= 6 else "anonymous"
            elif first == "Rss:":
                totals[name] += int(line.split()[1])
    return totals


def evict_from_page_cache(path):
    """Write the file back and drop it from the page cache, so that the daemon reads its pages from disk.

    A file-backed mapping's resident pages are the ones its faults touched plus what fault-around maps
    of the file's cached neighbours, which depends on how the file came into the cache: the same binary
    measured 5.6 MiB read from disk and 6.7 MiB straight after the linker wrote it (larger page-cache
    folios). Read from disk is how it starts on a box after boot, and it measures the same every time.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure(daemon):
    evict_from_page_cache(daemon)
    directory = tempfile.mkdtemp(prefix="snapback-footprint.")
    sock = os.path.join(directory, "snapbackd.sock")
    # The configuration file `make install` puts in /etc: the daemon on the box reads it at every start.
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "snapbackd.conf")
    process = subprocess.Popen(
        [daemon, "--socket", sock, "--state-dir", os.path.join(directory, "state"), "--config", config,
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            if process.poll() is not None:
                fail(f"snapbackd exited {process.returncode} during start-up: {process.stderr.read().decode()}")
            try:
                probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                probe.connect(sock)
                probe.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    fail("snapbackd did not accept a connection within 10 s")
                time.sleep(0.01)
        time.sleep(SETTLE_SECONDS)
        pid = process.pid
        return status_kib(pid, "VmRSS"), rollup(pid), rss_by_mapping(pid)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    if len(sys.argv) != 4 or not sys.argv[2].isdigit() or not sys.argv[3].isdigit():
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    bin_dir, rss_budget, size_budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    daemon = os.path.join(bin_dir, "snapbackd")
    if not os.access(daemon, os.X_OK):
        fail(f"{daemon} is not an executable")

    # Linking: glibc only, whatever else the daemon uses is inside the binary.
    ldd = subprocess.run(["ldd", daemon], capture_output=True, text=True)
    libraries = [line.split()[0] for line in ldd.stdout.splitlines() if line.strip()]
    extra = [lib for lib in libraries if not lib.startswith(ALLOWED_LIBRARIES) and "not a dynamic" not in lib]
    if "not a dynamic executable" not in ldd.stdout + ldd.stderr and extra:
        fail(f"snapbackd links {', '.join(extra)}: only libc (and the loader) may be dynamic")

    stripped = daemon + ".stripped"
    subprocess.run(["strip", "-o", stripped, daemon], check=True)
    size_kib = (os.path.getsize(stripped) + 1023) // 1024
    os.remove(stripped)

    rss, rolled, mappings = measure(daemon)
    if rss is None:
        fail("no VmRSS in /proc/PID/status")
    parts = ", ".join(f"{name} {kib}" for name, kib in mappings.most_common() if kib > 0)
    print(f"check-footprint: idle VmRSS {rss} KiB (Pss {rolled.get('Pss', 0)}, private dirty "
          f"{rolled.get('Private_Dirty', 0)}, anonymous {rolled.get('Anonymous', 0)}); by mapping (KiB): {parts}")
    print(f"check-footprint: stripped snapbackd {size_kib} KiB; dynamic libraries: "
          f"{', '.join(libraries) if libraries else 'none'}")
    failed = False
    if rss > rss_budget:
        print(f"check-footprint: FAIL idle RSS {rss} KiB is over the budget of {rss_budget} KiB", file=sys.stderr)
        failed = True
    if size_kib > size_budget:
        print(f"check-footprint: FAIL stripped binary {size_kib} KiB is over the budget of {size_budget} KiB",
              file=sys.stderr)
        failed = True
    if failed:
        sys.exit(1)
    print(f"check-footprint: ok   idle RSS {rss} KiB ≤ {rss_budget} KiB, binary {size_kib} KiB ≤ {size_budget} KiB")


if __name__ == "__main__":
    main()
