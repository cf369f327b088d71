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

Every product `make install` installs (the $(BINDIR) files of mk/install.mk's INSTALLED) must link no
Foundation: not one symbol with "Foundation" in its name (nm), since FoundationEssentials and ICU cost
a set-top box megabytes of resident memory in any process that links them. And the operator's CLI,
`snapback --help`, must peak within CLI_RSS_BUDGET_KIB (its ru_maxrss, as GNU time reports it).

Usage: check-footprint.py BIN_DIR RSS_BUDGET_KIB SIZE_BUDGET_KIB CLI_RSS_BUDGET_KIB
Exit status: 0 within the budgets, 1 over a budget or when the run failed, 2 for a bad command line.
"""

import collections
import os
import re
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


def installed_binaries():
    """The names of the executables mk/install.mk installs into $(BINDIR)."""
    install_mk = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mk", "install.mk")
    with open(install_mk) as f:
        text = f.read()
    installed = re.search(r"^INSTALLED\s*:=((?:.*\\\n)*.*)$", text, re.MULTILINE)
    if not installed:
        fail(f"no INSTALLED in {install_mk}")
    return re.findall(r"\$\(BINDIR\)/([A-Za-z0-9_-]+)", installed.group(1))


def foundation_symbols(binary):
    """How many of the binary's symbols (nm, dynamic ones included) name Foundation."""
    count = 0
    for flags in ([], ["-D"]):
        nm = subprocess.run(["nm", *flags, binary], capture_output=True, text=True)
        if nm.returncode != 0 and "no symbols" not in nm.stderr:
            fail(f"nm {' '.join(flags)} {binary}: {nm.stderr.strip()}")
        count += sum(1 for line in nm.stdout.splitlines() if "Foundation" in line)
    return count


def peak_rss_kib(command):
    """The peak resident memory of a run of `command` (its ru_maxrss, KiB), and its exit status.

    Through GNU time, which reports its child's getrusage: a child forked from this Python, or spawned
    by it, would count the interpreter's pages before the exec in its own peak.
    """
    with tempfile.NamedTemporaryFile("r", prefix="snapback-footprint.") as report:
        status = subprocess.run(["/usr/bin/time", "-o", report.name, "-f", "%M", *command],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        lines = report.read().split()
    if not lines or not lines[-1].isdigit():
        fail(f"/usr/bin/time gave no peak RSS for {' '.join(command)}")
    return int(lines[-1]), status


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
    if len(sys.argv) != 5 or not all(arg.isdigit() for arg in sys.argv[2:]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    bin_dir, rss_budget, size_budget, cli_rss_budget = sys.argv[1], *map(int, sys.argv[2:])
    daemon = os.path.join(bin_dir, "snapbackd")
    if not os.access(daemon, os.X_OK):
        fail(f"{daemon} is not an executable")

    # No installed product links Foundation.
    products = installed_binaries()
    if "snapback" not in products or "snapbackd" not in products:
        fail(f"mk/install.mk's INSTALLED names {products}: snapbackd and snapback expected")
    counts = {}
    for name in products:
        binary = os.path.join(bin_dir, name)
        if not os.access(binary, os.X_OK):
            fail(f"{binary} is not an executable (make release builds every installed product)")
        counts[name] = foundation_symbols(binary)
    print("check-footprint: symbols naming Foundation: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
    linked = [f"{name} ({n} symbols)" for name, n in counts.items() if n > 0]
    if linked:
        fail("links Foundation: " + ", ".join(linked) + "; no installed product may")

    # The operator's CLI at its lightest: its help, its binary read from disk (as the daemon's is).
    cli = os.path.join(bin_dir, "snapback")
    evict_from_page_cache(cli)
    cli_rss, status = peak_rss_kib([cli, "--help"])
    if status != 0:
        fail(f"snapback --help exited {status}")
    print(f"check-footprint: snapback --help peak RSS {cli_rss} KiB (budget {cli_rss_budget} KiB)")
    if cli_rss > cli_rss_budget:
        fail(f"snapback --help peaked at {cli_rss} KiB, over the budget of {cli_rss_budget} KiB")

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
