#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make check-budget: the hot path's cost, counted rather than timed.

Runs the release snapbackd under callgrind twice, driven by `snapback-bench exchange` through the
bench's SeekEnded -> snapback push + EventReply exchange: once with SHORT round trips and once with
LONG. Everything else the two runs do (start-up, Hello, OpenSession, closing, stopping) is the same,
so the difference of the two runs, divided by LONG - SHORT, is what one steady-state round trip costs
the daemon process: its instructions (Swift, the static Swift runtime, libuv, libc, protobuf-c; every
thread), its calls to the allocator, and the 4 KiB pages of code it runs. Instruction counts and
addresses under callgrind do not depend on the machine's load or clock, so the figures repeat from run
to run and a budget can be tight.

The code pages are what a request costs when it comes cold (`snapback-bench daemon --spacing`): after a few
milliseconds of other processes, each page the round trip runs is a TLB miss and a page walk (two-level
under a hypervisor), whatever the instructions in it. The link order (`make link-order`) places the
round trip's functions first and together; this count fails when it goes stale (a hot function
renamed, new code on the path) and the round trip's code spreads back over the binary. The cache lines
of code are what the profile (`make profile`) saves: with it, each function's taken blocks lie together;
a stale profile (a hot function changed since) leaves that function laid out blind and the count grows.

A second run counts what a connection leaves behind: one daemon under callgrind serves connect/close
cycles of five kinds (plain connect and close, Hello then close, Hello with a session opened and closed,
Hello with a WatchDecisions and a WatchChanges stream opened then closed, a peer that vanishes in the
middle of a frame), CYCLES of each, and callgrind's counters are dumped before and after each kind
(callgrind_control). Between two dumps, the calls to the allocator minus the calls to free, divided by
CYCLES, is what one cycle keeps: it must be 0. The connections' Hello timeout is set to
an hour, so that nothing a closed connection holds can hide behind a timer that would let it go later.

The same daemon then serves the largest request a player may send at the default limits, BIG_CYCLES
times between two dumps: an OpenSession of 1,000 breaks (each with four ad durations, as
bench/loop_stall.py sends it) and its CloseSession; then BIG_CYCLES GetSessionState pages of such a session.
What the loop thread spends on them is what every other player waits for: per break, their instructions on
the loop thread (callgrind counts each thread apart; the OpenSession is decoded on a worker thread, whose
share is shown beside) and the OpenSession's allocations (every thread's) have budgets of their own, and
the heap must neither grow and shrink (brk) nor map memory (mmap) in every OpenSession cycle: both cost
page faults on each request. Nor may a cycle keep an allocation (on any thread): what a session and its
decoding take is given back at its close.

Usage: check-budget.py BIN_DIR INSTRUCTION_BUDGET ALLOCATION_BUDGET CODE_PAGE_BUDGET CODE_LINE_BUDGET
                       BREAK_INSTRUCTION_BUDGET BREAK_ALLOCATION_BUDGET PAGE_INSTRUCTION_BUDGET
  BIN_DIR             holds the release snapbackd and snapback
  INSTRUCTION_BUDGET  fail above this many instructions per round trip
  ALLOCATION_BUDGET   fail above this many allocations per round trip
  CODE_PAGE_BUDGET    fail above this many 4 KiB pages of code run by every round trip
  CODE_LINE_BUDGET    fail above this many 64-byte cache lines of code run by every round trip
  BREAK_INSTRUCTION_BUDGET  fail above this many loop-thread instructions per break of the large OpenSession
                            and its close
  BREAK_ALLOCATION_BUDGET   fail above this many hundredths of an allocation per break of the same
  PAGE_INSTRUCTION_BUDGET   fail above this many instructions per break of a GetSessionState page of it
Exit status: 0 within the budgets, 1 over a budget or when the run failed, 2 for a bad command line.
"""

import collections
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "clients", "python"))
from snapback_client import HEADER, METHODS, REQUEST, Client, decode, encode, encode_frame  # noqa: E402

SHORT, LONG = 200, 2200

# The allocator's entry points in glibc (the release daemon links the Swift runtime statically but takes
# malloc from libc.so, so every allocation, Swift's included, goes through one of these). A call counts
# when it comes from outside glibc's allocator: realloc(NULL, n) calling malloc, or posix_memalign
# calling it through _mid_memalign, is one allocation, not two.
ALLOCATORS = {
    "malloc", "__libc_malloc", "calloc", "__libc_calloc", "realloc", "__libc_realloc", "reallocarray",
    "posix_memalign", "aligned_alloc", "memalign", "__libc_memalign", "valloc", "pvalloc",
}
ALLOCATOR_INTERNALS = ("_mid_memalign", "_int_", "__libc_", "sysmalloc", "tcache_")
# What gives memory back. realloc is left out of both sides: it moves a block, or is one of the two.
DEALLOCATORS = {"free", "__libc_free", "cfree"}
NET_ALLOCATORS = ALLOCATORS - {"realloc", "__libc_realloc", "reallocarray"}
# The connection cycles: how many of each kind between two dumps, and the kinds in the order they run.
CYCLES = 400
CYCLE_KINDS = ("connect and close", "Hello and close", "Hello, a session opened and closed",
               "Hello, both watch streams opened and closed", "vanish mid-frame")
# The large request: how many breaks, and how many cycles of it between two dumps.
BIG_BREAKS, BIG_CYCLES = 1000, 20
# What moves the heap's break or maps memory: counted per call from glibc's allocator.
HEAP_SYSCALLS = {"__brk", "brk", "__mmap", "mmap", "mmap64", "__munmap", "munmap"}


def inside_allocator(name):
    return name in ALLOCATORS or name.startswith(ALLOCATOR_INTERNALS)

# libuv 1.44's uv__async_io spins (pause, then sched_yield) while another thread is inside
# uv_async_send. How long it spins depends on how valgrind happens to schedule the threads, not on what
# the daemon does, so those instructions are left out: the function of libuv that calls sched_yield.
SPIN_YIELD = "sched_yield"
# How many callers an allocation over the budget is shown with.
ALLOCATION_CHAIN = 8


def fail(message, log=None):
    if log is not None and os.path.exists(log):
        with open(log) as f:
            sys.stderr.writelines(f.readlines()[-20:])
    print(f"check-budget: FAIL {message}", file=sys.stderr)
    sys.exit(1)


def base_name(name):
    """A callgrind function name without its recursion suffix (malloc'2 -> malloc)."""
    quote = name.rfind("'")
    return name[:quote] if quote > 0 and name[quote + 1:].isdigit() else name


class Profile:
    """One callgrind output file (written with --dump-instr=yes --compress-strings=no --compress-pos=no)."""

    def __init__(self, path):
        self.total = None
        self.own = collections.Counter()        # function -> instructions in the function itself
        self.calls = collections.Counter()      # (caller, callee) -> calls
        self.executed = collections.Counter()   # (object, instruction address) -> times executed
        self.function_at = {}                   # (object, instruction address) -> function
        ob = fn = cfn = None
        in_call = False
        with open(path) as f:
            for line in f:
                if line.startswith("ob="):
                    ob = line[3:].rstrip("\n")
                elif line.startswith("fn="):
                    fn = base_name(line[3:].rstrip("\n"))
                elif line.startswith("cfn="):
                    cfn = base_name(line[4:].rstrip("\n"))
                elif line.startswith("calls="):
                    self.calls[(fn, cfn)] += int(line[6:].split()[0])
                    in_call = True
                elif line[:1].isdigit() or line[:1] in "+-*":
                    fields = line.split()
                    cost = int(fields[-1])
                    if in_call:
                        in_call = False  # the callee's inclusive cost, already in its own lines
                    else:
                        self.own[fn] += cost
                        at = (ob, int(fields[0], 16))
                        self.executed[at] += cost
                        self.function_at[at] = fn
                elif line.startswith("totals:") or line.startswith("summary:"):
                    self.total = int(line.split()[1])
        if self.total is None:
            fail(f"{path}: no totals (did the daemon exit cleanly?)")
        self.spinners = {caller for (caller, callee) in self.calls if callee == SPIN_YIELD}
        self.spin = sum(self.own[f] for f in self.spinners)
        self.counted = self.total - self.spin

    def code_run_by_each(self, other, round_trips):
        """The instructions (object, address) the round trips run: those run more here than in `other`, a
        run with `round_trips` fewer round trips, by at least one every other round trip (code run once
        a loop turn runs about once a round trip, give or take a turn without a request), leaving out
        libuv's spin-wait (its thousands of turns depend on how valgrind schedules the threads)."""
        spinners = self.spinners | other.spinners
        return {at for at, n in self.executed.items()
                if 2 * (n - other.executed.get(at, 0)) >= round_trips and self.function_at[at] not in spinners}

    def net_allocations(self):
        """Calls to the allocator minus calls to free, from outside the allocator."""
        net = 0
        for (caller, callee), n in self.calls.items():
            if inside_allocator(caller):
                continue
            if callee in NET_ALLOCATORS:
                net += n
            elif callee in DEALLOCATORS:
                net -= n
        return net

    def heap_syscalls(self):
        """Calls that grow or shrink the heap, or map or unmap memory."""
        return sum(n for (caller, callee), n in self.calls.items()
                   if callee in HEAP_SYSCALLS and caller not in HEAP_SYSCALLS)

    def allocations(self):
        per_site = collections.Counter()
        for (caller, callee), n in self.calls.items():
            if callee in ALLOCATORS and not inside_allocator(caller):
                per_site[(caller, callee)] += n
        return per_site


class ThreadProfiles:
    """One callgrind dump of a daemon run with --separate-threads=yes: a Profile per thread. Thread 1 is
    the loop's; allocations, frees and heap calls are summed over every thread (a break read on the
    decoding thread is freed on the loop)."""

    def __init__(self, paths):
        self.threads = {int(path.rsplit("-", 1)[1]): Profile(path) for path in paths}
        self.loop = self.threads[1]
        self.others = sum(p.counted for n, p in self.threads.items() if n != 1)

    def net_allocations(self):
        return sum(p.net_allocations() for p in self.threads.values())

    def heap_syscalls(self):
        return sum(p.heap_syscalls() for p in self.threads.values())

    def allocations(self):
        return sum((p.allocations() for p in self.threads.values()), collections.Counter())

    @property
    def calls(self):
        return sum((p.calls for p in self.threads.values()), collections.Counter())


def wait_for_socket(path, process, log, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            fail(f"snapbackd under valgrind exited {process.returncode} during start-up", log)
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.05)
    fail(f"snapbackd under valgrind did not listen on {path} within {seconds} s")


def run(daemon_path, bin_dir, work, round_trips, daemon_arguments=()):
    """One daemon under callgrind and one exchange of `round_trips` round trips; returns its Profile.

    The socket and state paths are the same in both runs, and the state directory starts empty, so the
    two runs differ in the number of round trips alone."""
    out = os.path.join(work, f"callgrind.{round_trips}")
    drive(daemon_path, bin_dir, work, round_trips,
          # Names as the linker has them (gen-link-order.py writes them as section names).
          ["--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=yes", "--demangle=no",
           "--dump-line=no", "--compress-strings=no", "--compress-pos=no",
           # Swift's allocations by their chain of callers (swift_slowAlloc'swift_allocObject'…), so
           # that an allocation over the budget names the code that made it, not only the runtime.
           f"--separate-callers{ALLOCATION_CHAIN}=swift_slowAlloc"],
          daemon_arguments)
    return Profile(out)


def drive(daemon_path, bin_dir, work, round_trips, tool, daemon_arguments=()):
    """snapbackd under valgrind with the `tool` arguments, driven through `snapback-bench exchange`
    (`round_trips` round trips), then stopped with SIGTERM; fails unless everything exits 0."""
    sock = os.path.join(work, "snapbackd.sock")
    state = os.path.join(work, "state")
    log = os.path.join(work, f"valgrind.{round_trips}.log")
    shutil.rmtree(state, ignore_errors=True)
    os.mkdir(state, 0o700)
    env = dict(os.environ)
    # Swift seeds its hashing per process; a fixed seed makes dictionary work repeat exactly.
    env["SWIFT_DETERMINISTIC_HASHING"] = "1"
    env.pop("LISTEN_FDS", None)
    env.pop("NOTIFY_SOCKET", None)
    with open(log, "w") as log_file:
        daemon = subprocess.Popen(
            ["valgrind", *tool, daemon_path, "--socket", sock, "--state-dir", state,
             "--log-level", "warning", *daemon_arguments],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, env=env)
    client = None
    try:
        wait_for_socket(sock, daemon, log)
        client = subprocess.Popen(
            [os.path.join(bin_dir, "snapback-bench"), "exchange", "--socket", sock,
             "--round-trips", str(round_trips)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        line = client.stdout.readline()
        if not line.startswith("exchange: "):
            client.wait(timeout=60)
            fail(f"the exchange of {round_trips} round trips failed (exit {client.returncode})", log)
        # The client waits, its connection open and idle, until the daemon closes it on SIGTERM.
        daemon.send_signal(signal.SIGTERM)
        if daemon.wait(timeout=120) != 0:
            fail(f"snapbackd under valgrind exited {daemon.returncode}", log)
        if client.wait(timeout=60) != 0:
            fail(f"snapback-bench exchange exited {client.returncode}")
    finally:
        for process in (client, daemon):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def cycle(sock, kind, index):
    """One connection of `kind` through the Python client (Tests/clients/python)."""
    if kind == "connect and close":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(sock)
    elif kind == "Hello and close":
        with Client(sock) as c:
            c.hello("check-budget")
    elif kind == "Hello, a session opened and closed":
        with Client(sock) as c:
            c.hello("check-budget")
            opened = c.open_session(content_id=f"cycle-{index}",
                                    breaks=[{"id": "b1", "start": 600.0, "duration": 60.0}])
            c.close_session(opened.session_id)
    elif kind == "Hello, both watch streams opened and closed":
        with Client(sock) as c:
            c.hello("check-budget")
            c.call("Control/WatchDecisions")
            c.call("Sync/WatchChanges", after=0)
    else:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(sock)
            # A GetStatus request whose header announces 64 bytes of body, and 8 of them.
            s.sendall(encode_frame(1, REQUEST, METHODS["Control/GetStatus"].id, bytes(64))[:HEADER.size + 8])


def big_breaks(n):
    """The breaks of the large OpenSession (those of bench/loop_stall.py)."""
    return [{"id": f"break-{i:06d}", "start": 600.0 + i * 700.0, "duration": 60.0,
             "ad_durations": [15.0, 15.0, 15.0, 15.0]} for i in range(n)]


def big_cycles(sock, count):
    """`count` OpenSessions of BIG_BREAKS breaks, each then closed, on one connection."""
    with Client(sock) as c:
        c.hello("check-budget")
        body = encode("OpenSessionRequest", content_id="big", breaks=big_breaks(BIG_BREAKS))
        method = METHODS["Timeline/OpenSession"].id
        for _ in range(count):
            status, reply = c.call_raw(method, body, timeout=120)
            if status != 0:
                fail(f"the OpenSession of {BIG_BREAKS} breaks answered status {status}")
            c.close_session(decode("OpenSessionReply", reply).session_id)


def connection_cycles(daemon_path, work):
    """The daemon under callgrind serving CYCLES cycles of each kind, its counters dumped around each
    kind, then BIG_CYCLES of the large OpenSession; returns [(kind, net allocations per cycle, calls by
    site)] and the large request's Profile."""
    sock = os.path.join(work, "cycles.sock")
    state = os.path.join(work, "cycles-state")
    config = os.path.join(work, "cycles.conf")
    out = os.path.join(work, "callgrind.cycles")
    log = os.path.join(work, "valgrind.cycles.log")
    os.mkdir(state, 0o700)
    with open(config, "w") as f:
        f.write("[limits]\nhello-timeout = 3600\n")
    env = dict(os.environ)
    env["SWIFT_DETERMINISTIC_HASHING"] = "1"
    env.pop("LISTEN_FDS", None)
    env.pop("NOTIFY_SOCKET", None)
    with open(log, "w") as log_file:
        daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--demangle=no", "--dump-line=no",
             "--compress-strings=no", "--compress-pos=no", "--separate-threads=yes", daemon_path, "--socket", sock, "--state-dir", state,
             "--config", config, "--log-level", "warning"],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file, env=env)
    try:
        wait_for_socket(sock, daemon, log)
        # Warm-up: each kind a few times, so that what the first connections grow once (tables, caches)
        # is grown before the first dump.
        for kind in CYCLE_KINDS:
            for i in range(20):
                cycle(sock, kind, i)
        dumps = [dump(daemon.pid, "warm-up", log)]
        for kind in CYCLE_KINDS:
            for i in range(CYCLES):
                cycle(sock, kind, i)
            dumps.append(dump(daemon.pid, kind, log))
        # Warm-up as above: the first large session grows the heap once.
        big_cycles(sock, 3)
        dump(daemon.pid, "large warm-up", log)
        big_cycles(sock, BIG_CYCLES)
        big = dump(daemon.pid, "large OpenSession", log)
        with Client(sock) as c:
            c.hello("check-budget")
            opened = c.open_session(content_id="page", breaks=big_breaks(BIG_BREAKS))
            body = encode("GetSessionStateRequest", session_id=opened.session_id)
            method = METHODS["Timeline/GetSessionState"].id
            for i in range(3 + BIG_CYCLES):
                if i == 3:
                    dump(daemon.pid, "page warm-up", log)
                status, _ = c.call_raw(method, body, timeout=120)
                if status != 0:
                    fail(f"the GetSessionState of {BIG_BREAKS} breaks answered status {status}")
            page = dump(daemon.pid, "GetSessionState page", log)
        daemon.send_signal(signal.SIGTERM)
        if daemon.wait(timeout=120) != 0:
            fail(f"snapbackd under valgrind exited {daemon.returncode}", log)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    results = []
    for kind, path in zip(CYCLE_KINDS, dumps[1:]):
        profile = ThreadProfiles(path)
        results.append((kind, profile.net_allocations() / CYCLES, profile))
    return results, ThreadProfiles(big), ThreadProfiles(page)


def dump(pid, label, log):
    """Waits for the daemon to go quiet, then dumps callgrind's counters (and zeroes them); returns the
    files, one per thread."""
    time.sleep(0.5)
    before = set(glob.glob(f"{os.path.dirname(log)}/callgrind.cycles.*"))
    result = subprocess.run(["callgrind_control", "--dump=" + label.replace(" ", "_"), str(pid)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        fail(f"callgrind_control --dump failed: {result.stdout.strip()}", log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = set(glob.glob(f"{os.path.dirname(log)}/callgrind.cycles.*")) - before
        if new:
            time.sleep(0.2)  # written whole before callgrind_control returns; the margin costs nothing
            return sorted(set(glob.glob(f"{os.path.dirname(log)}/callgrind.cycles.*")) - before)
        time.sleep(0.05)
    fail(f"callgrind wrote no dump for {label}", log)


def main(argv):
    if len(argv) != 9 or not all(a.isdigit() for a in argv[2:]):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    bin_dir = argv[1]
    (instruction_budget, allocation_budget, page_budget, line_budget, break_instruction_budget,
     break_allocation_budget, page_instruction_budget) = (int(a) for a in argv[2:])
    if shutil.which("valgrind") is None:
        fail("valgrind is not installed (make deps installs it)")
    work = tempfile.mkdtemp(prefix="snapback-budget.")
    try:
        # Valgrind 3.19 gives up on the DWARF 5 the Swift compiler emits ("unhandled dwarf2 abbrev form
        # code 0x25"): it runs a copy without debug information (the symbol table stays, so functions
        # keep their names). The code is the same, and so is the count.
        daemon = os.path.join(work, "snapbackd")
        subprocess.run(["strip", "--strip-debug", "-o", daemon, os.path.join(bin_dir, "snapbackd")], check=True)
        short = run(daemon, bin_dir, work, SHORT)
        long = run(daemon, bin_dir, work, LONG)
        cycles, big, page = connection_cycles(daemon, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n = LONG - SHORT
    print(f"check-budget: snapbackd under callgrind: {short.total:,} instructions with {SHORT} round trips, "
          f"{long.total:,} with {LONG} (libuv's spin-wait, left out: {short.spin:,} and {long.spin:,})")
    instructions = (long.counted - short.counted) / n
    short_allocations, long_allocations = short.allocations(), long.allocations()
    # Rounded to hundredths: the two runs' totals differ by a few allocations made outside the round trips
    # (seen: two more in either run on a loaded machine, +/-0.001 over 2,000), while an allocation made in
    # one round trip of a hundred, or more often, counts 0.01 or more.
    allocations = round((sum(long_allocations.values()) - sum(short_allocations.values())) / n, 2) + 0.0
    verdict = []
    if instructions > instruction_budget:
        verdict.append(f"{instructions:,.0f} instructions per round trip, over the budget of "
                       f"{instruction_budget:,}")
        print(f"check-budget: where the instructions of one round trip go (daemon process, {n} round trips "
              "differenced):", file=sys.stderr)
        growth = [((long.own[f] - short.own[f]) / n, f) for f in set(long.own) | set(short.own)]
        for cost, f in sorted(growth, reverse=True)[:int(os.environ.get("BUDGET_TOP", "25"))]:
            if cost >= 1:
                print(f"  {cost:8,.0f}  {f[:150]}", file=sys.stderr)
    if allocations > allocation_budget:
        verdict.append(f"{allocations:g} allocations per round trip, over the budget of {allocation_budget}")
        print("check-budget: allocations per round trip, by caller:", file=sys.stderr)
        sites = {k: (long_allocations[k] - short_allocations[k]) / n for k in long_allocations}
        for (caller, callee), count in sorted(sites.items(), key=lambda kv: -kv[1]):
            if count > 0:
                chain = " <- ".join(caller.split("'"))
                print(f"  {count:g}  {callee} from {chain[:1500]}", file=sys.stderr)
    code = long.code_run_by_each(short, n)
    pages = collections.defaultdict(set)
    for ob, address in code:
        pages[(ob, address >> 12)].add(long.function_at[(ob, address)])
    lines = {(ob, address >> 6) for ob, address in code}
    if len(pages) > page_budget:
        verdict.append(f"{len(pages)} pages of code run by each round trip, over the budget of {page_budget} "
                       "(is the link order stale? make link-order)")
        print("check-budget: the pages of code each round trip runs, with the functions run in each:", file=sys.stderr)
        for (ob, code_page), functions in sorted(pages.items()):
            print(f"  {os.path.basename(ob)} {code_page << 12:#x}  {', '.join(sorted(f[:60] for f in functions))}",
                  file=sys.stderr)
    if len(lines) > line_budget:
        verdict.append(f"{len(lines)} cache lines of code run by each round trip, over the budget of {line_budget} "
                       "(is the profile stale? make profile)")
        print("check-budget: the cache lines of code each round trip runs, by function:", file=sys.stderr)
        line_function = {(ob, address >> 6): long.function_at[(ob, address)] for ob, address in code}
        by_function = collections.Counter(line_function.values())
        for function, count in by_function.most_common(25):
            print(f"  {count:4d}  {function[:150]}", file=sys.stderr)
    for kind, net, profile in cycles:
        # Rounded: a table grown once during CYCLES cycles is not kept per cycle.
        if round(net) != 0:
            verdict.append(f"{net:g} allocations kept per connection cycle ({kind}), where none may be")
            print(f"check-budget: allocations minus frees over {CYCLES} cycles ({kind}), by caller:", file=sys.stderr)
            sites = collections.Counter()
            for (caller, callee), n in profile.calls.items():
                if not inside_allocator(caller) and callee in NET_ALLOCATORS:
                    sites[caller] += n
                elif not inside_allocator(caller) and callee in DEALLOCATORS:
                    sites[caller] -= n
            for caller, count in sites.most_common(15):
                if count > 0:
                    print(f"  {count:6d}  {caller[:150]}", file=sys.stderr)
    per_break = BIG_CYCLES * BIG_BREAKS
    big_instructions = big.loop.counted / per_break
    big_allocations = sum(big.allocations().values()) / per_break
    big_heap = big.heap_syscalls() / BIG_CYCLES
    big_kept = big.net_allocations() / BIG_CYCLES
    print(f"check-budget: an OpenSession of {BIG_BREAKS:,} breaks and its close: {big_instructions:,.0f} instructions "
          f"on the loop thread ({big.others / per_break:,.0f} on the others) and {big_allocations:.2f} allocations "
          f"per break, {big_heap:g} heap system calls and {big_kept:g} allocations kept per cycle "
          f"(budgets {break_instruction_budget:,}, {break_allocation_budget / 100:.2f}, 0, 0)")
    # Rounded, as the connection cycles': a table grown once during the cycles is not kept per cycle.
    if round(big_kept) != 0:
        verdict.append(f"{big_kept:g} allocations kept per large OpenSession and close, where none may be")
    if big_instructions > break_instruction_budget:
        verdict.append(f"{big_instructions:,.0f} instructions per break of the large OpenSession, over the budget of "
                       f"{break_instruction_budget:,}")
        print("check-budget: where the loop thread's instructions of the large OpenSession and its close go, per "
              "break:", file=sys.stderr)
        for f, cost in big.loop.own.most_common(25):
            print(f"  {cost / per_break:8,.1f}  {f[:150]}", file=sys.stderr)
    if big_allocations * 100 > break_allocation_budget:
        verdict.append(f"{big_allocations:.2f} allocations per break of the large OpenSession, over the budget of "
                       f"{break_allocation_budget / 100:.2f}")
        print("check-budget: allocations of the large OpenSession and its close, per break, by caller:", file=sys.stderr)
        for (caller, callee), count in big.allocations().most_common(15):
            print(f"  {count / per_break:8.3f}  {callee} from {caller[:150]}", file=sys.stderr)
    page_instructions = page.loop.counted / per_break
    print(f"check-budget: a GetSessionState page of {BIG_BREAKS:,} breaks: {page_instructions:,.0f} instructions per "
          f"break (budget {page_instruction_budget:,})")
    if page_instructions > page_instruction_budget:
        verdict.append(f"{page_instructions:,.0f} instructions per break of the GetSessionState page, over the budget "
                       f"of {page_instruction_budget:,}")
        print("check-budget: where the instructions of the GetSessionState page go, per break:", file=sys.stderr)
        for f, cost in page.loop.own.most_common(25):
            print(f"  {cost / per_break:8,.1f}  {f[:150]}", file=sys.stderr)
    if big_heap > 0:
        verdict.append(f"{big_heap:g} calls per large OpenSession and close that grow or shrink the heap or map "
                       "memory, where none may")
        for (caller, callee), count in big.calls.items():
            if callee in HEAP_SYSCALLS and caller not in HEAP_SYSCALLS:
                print(f"  {count}  {callee} from {caller[:150]}", file=sys.stderr)
    if verdict:
        fail("; ".join(verdict))
    print("check-budget: ok, allocations kept per connection cycle: "
          + ", ".join(f"{net:g} ({kind})" for kind, net, _ in cycles) + f"; callgrind, {CYCLES} cycles of each")
    print(f"check-budget: ok {instructions:,.0f} instructions per round trip (budget {instruction_budget:,}), "
          f"{allocations:g} allocations (budget {allocation_budget}), {len(pages)} pages of code (budget "
          f"{page_budget}) in {len(lines)} cache lines (budget {line_budget}); callgrind, {n} round trips differenced")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
