#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Power-cut durability test: snapbackd's state directory on LazyFS, many cuts, nothing acknowledged lost.

    python3 Tests/clients/python/power_cut.py --lazyfs PATH/TO/lazyfs --snapbackd .build/release/snapbackd

A SIGKILL keeps the kernel's page cache: whatever the daemon wrote reaches the disk later, fsynced or not.
A power cut does not. LazyFS is a FUSE filesystem that keeps every write in its own cache until it is
fsynced, and drops everything unsynced on command (`lazyfs::clear-cache` on its fault FIFO). This test
runs the release daemon with its state directory (SQLite, WAL, synchronous=FULL) on a LazyFS mount, and
for each cut:

1. starts the daemon; players save bookmarks (pauses, periodic saves of playing sessions every second,
   saves on close), get breaks watched and delete bookmarks, recording every BookmarkSaved and
   BreakWatched push and every Delete reply: what the daemon acknowledged as durable;
2. cuts the power at a random moment (during the traffic, or while the daemon starts): freezes the
   daemon (SIGSTOP: nothing runs after the cut, as no CPU would), drops every unsynced write (LazyFS's
   clear-cache, waited for), SIGKILLs the daemon, unmounts LazyFS and mounts it again (the reboot: the
   kernel's cache of the mount goes too);
3. starts the daemon on the same directory and checks, through its socket, that every acknowledged
   bookmark is there (its value, or a later one: positions only grow), every acknowledged watched break
   is still watched and every acknowledged delete stayed deleted; that the database opened without
   repair (no error in the daemon's log, the status query's store error empty) and that SQLite's
   `PRAGMA integrity_check` says ok.

Before the cuts it checks that LazyFS does lose unsynced writes (a file written without fsync is gone
after clear-cache, one fsynced is there), so a LazyFS that did not would fail the run rather than pass it.
Prints a line per cut and a summary (cuts, acknowledged saves, lost); exits non-zero on any loss, any
repair, or when LazyFS or FUSE is missing (saying why).
"""

import argparse
import os
import random
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapback_client as sb  # noqa: E402

PROFILE = "powercut"
BREAK = {"id": "b1", "start": 10.0, "duration": 5.0, "ad_durations": [5.0]}


class Unavailable(Exception):
    """What the test needs is missing here (said once, exit status 2)."""


# --------------------------------------------------------------------------------------------------
# LazyFS
# --------------------------------------------------------------------------------------------------

class LazyFS:
    """One LazyFS mount of `root` on `mount`, with its fault FIFO and the FIFO that confirms a clear."""

    def __init__(self, binary, work):
        self.binary = binary
        self.root = os.path.join(work, "lazyfs.root")
        self.mount = os.path.join(work, "lazyfs.mnt")
        self.fifo = os.path.join(work, "faults.fifo")
        self.done_fifo = os.path.join(work, "faults-done.fifo")
        self.config = os.path.join(work, "lazyfs.toml")
        self.log_path = os.path.join(work, "lazyfs.log")
        self.proc = None
        self.done_fd = None
        os.makedirs(self.root, exist_ok=True)
        os.makedirs(self.mount, exist_ok=True)
        with open(self.config, "w") as f:
            # No eviction: nothing unsynced reaches the root behind the test's back. The cache holds
            # every unsynced write of a cut's traffic (a few MiB) many times over.
            f.write('[faults]\nfifo_path="%s"\nfifo_path_completed="%s"\n'
                    '[cache]\napply_eviction=false\n[cache.simple]\ncustom_size="512mb"\nblocks_per_page=1\n'
                    '[filesystem]\nlog_all_operations=false\nlogfile=""\n' % (self.fifo, self.done_fifo))

    def start(self):
        log = open(self.log_path, "ab")
        # The configuration's path relative to the working directory: lazyfs ignores a --config-path that
        # contains "-o" anywhere (it takes it for the next option), as a temporary directory's name may.
        self.proc = subprocess.Popen(
            [self.binary, self.mount, "--config-path", os.path.basename(self.config), "-o", "modules=subdir",
             "-o", "subdir=" + self.root, "-f"], cwd=os.path.dirname(self.config),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 20
        while not os.path.ismount(self.mount):
            if self.proc.poll() is not None:
                raise Unavailable("lazyfs exited with status %d before mounting %s (its log: %s)\n%s"
                                  % (self.proc.returncode, self.mount, self.log_path, tail(self.log_path)))
            if time.monotonic() > deadline:
                raise Unavailable("lazyfs did not mount %s within 20 s (its log: %s)" % (self.mount, self.log_path))
            time.sleep(0.02)
        # LazyFS opens the confirmation FIFO for writing once mounted; reading it non-blocking lets that open
        # go through whenever it comes.
        deadline = time.monotonic() + 10
        while not os.path.exists(self.done_fifo):
            if time.monotonic() > deadline:
                raise Unavailable("lazyfs did not create %s" % self.done_fifo)
            time.sleep(0.02)
        self.done_fd = os.open(self.done_fifo, os.O_RDONLY | os.O_NONBLOCK)

    def clear_cache(self):
        """Drops every unsynced write; returns once LazyFS says it is done."""
        fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, b"lazyfs::clear-cache\n")
        finally:
            os.close(fd)
        deadline = time.monotonic() + 30
        got = b""
        while b"finished::clear-cache" not in got:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("lazyfs did not confirm clear-cache within 30 s (its log: %s)" % self.log_path)
            ready, _, _ = select.select([self.done_fd], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(self.done_fd, 4096)
                if chunk:
                    got += chunk
                else:
                    time.sleep(0.02)  # no writer yet (EOF): LazyFS opens its end a moment after mounting

    def stop(self):
        if self.proc is None:
            return
        if os.path.ismount(self.mount):
            if subprocess.run(["fusermount3", "-u", self.mount], capture_output=True).returncode != 0:
                subprocess.run(["fusermount3", "-u", "-z", self.mount], capture_output=True)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        if self.done_fd is not None:
            os.close(self.done_fd)
            self.done_fd = None

    def remount(self):
        """The reboot after a cut: LazyFS (its cache, empty after the clear) and the kernel's cache of the
        mount go, and the daemon finds only what reached the root directory."""
        self.stop()
        self.start()

    def check_loses_unsynced_writes(self):
        """Fails unless LazyFS behaves as a power cut: an unsynced write lost, a synced one kept."""
        synced = os.path.join(self.mount, "canary-synced")
        unsynced = os.path.join(self.mount, "canary-unsynced")
        with open(synced, "wb") as f:
            f.write(b"s" * 8192)
            f.flush()
            os.fsync(f.fileno())
        with open(unsynced, "wb") as f:
            f.write(b"u" * 8192)
        with open(synced, "ab") as f:
            f.write(b"x" * 4096)  # appended after the fsync: must go
        self.clear_cache()
        self.remount()
        with open(synced, "rb") as f:
            kept = f.read()
        gone = open(unsynced, "rb").read() if os.path.exists(unsynced) else b""
        os.unlink(synced)
        if os.path.exists(unsynced):
            os.unlink(unsynced)
        if kept != b"s" * 8192 or b"u" in gone:
            raise Unavailable(
                "this LazyFS does not act as a power cut: after clear-cache the fsynced file holds %d bytes "
                "(8192 expected), the unsynced one %d bytes of its data (0 expected)" % (len(kept), gone.count(b"u")))


def tail(path, lines=20):
    try:
        with open(path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode("utf-8", "replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------------
# The daemon
# --------------------------------------------------------------------------------------------------

class Daemon:
    def __init__(self, binary, work, state_dir):
        self.binary = binary
        self.socket = os.path.join(work, "snapbackd.sock")
        self.state_dir = state_dir
        self.config = os.path.join(work, "snapbackd.conf")
        self.log_dir = os.path.join(work, "logs")
        os.makedirs(self.log_dir, exist_ok=True)
        with open(self.config, "w") as f:
            # A periodic bookmark every second for every playing session, committed together on the
            # shared tick: group commits of many saves, all the time.
            f.write("[bookmarks]\nbookmark-interval = 1\n")
        self.proc = None
        self.log_path = None
        self.starts = 0

    def spawn(self):
        self.starts += 1
        self.log_path = os.path.join(self.log_dir, "snapbackd-%03d.log" % self.starts)
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--socket", self.socket, "--state-dir", self.state_dir, "--config", self.config,
             "--log-level", "info"], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def wait_listening(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("snapbackd exited with %d at start:\n%s" % (self.proc.returncode, tail(self.log_path)))
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.socket)
                s.close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("snapbackd did not listen on %s within %d s" % (self.socket, timeout))

    def cut(self, lazyfs):
        """The power goes: the daemon stops where it is, unsynced writes vanish, the process is gone."""
        self.proc.send_signal(signal.SIGSTOP)
        lazyfs.clear_cache()
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def log_problems(self):
        """Log lines that say the store was not opened as it was left (priority error or worse, or a repair)."""
        problems = []
        with open(self.log_path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if line[:3] in ("<0>", "<1>", "<2>", "<3>") or "moved aside" in line or "corrupt" in line:
                    problems.append(line)
        return problems


def client(path, name):
    # Generous: a player waiting on a busy machine is not a failure; a cut ends every wait at once.
    c = sb.Client(path, timeout=10.0)
    c.hello(name)
    return c


# --------------------------------------------------------------------------------------------------
# What the daemon acknowledged
# --------------------------------------------------------------------------------------------------

class Ledger:
    """Per bookmark key: the last acknowledged value, the highest value any save of it could have had,
    or its acknowledged delete; the content ids whose break b1 was acknowledged watched. A key's
    positions only grow over the run, so a stored value below the acknowledged one is a loss."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}  # key -> last acknowledged content time
        self.ceiling = {}  # key -> highest content time a save of it may hold
        self.deleted = set()  # keys whose delete was acknowledged (never saved again)
        self.deleting = set()  # keys whose delete was sent: gone or not, until it is acknowledged
        self.watched = set()  # content ids whose b1 was acknowledged watched
        self.saves = 0
        self.deletes = 0

    def allow(self, key, value):
        with self.lock:
            self.ceiling[key] = max(self.ceiling.get(key, 0.0), value)

    def start_above(self, key):
        """A value above anything the key held so far (each round starts its positions there)."""
        with self.lock:
            return self.ceiling.get(key, 0.0) + 100.0

    def bookmark_saved(self, key, value):
        with self.lock:
            self.acked[key] = max(self.acked.get(key, value), value)
            self.saves += 1

    def delete_sent(self, key):
        with self.lock:
            self.deleting.add(key)

    def delete_acked(self, key):
        with self.lock:
            self.deleting.discard(key)
            self.deleted.add(key)
            self.acked.pop(key, None)
            self.deletes += 1

    def accept_loss(self, key, stored):
        """A loss is reported once: from then on the key is held to what survived."""
        with self.lock:
            if stored is None:
                self.acked.pop(key, None)
            else:
                self.acked[key] = stored
            self.deleted.discard(key)

    def accept_lost_watch(self, content_id):
        with self.lock:
            self.watched.discard(content_id)

    def break_watched(self, content_id):
        with self.lock:
            self.watched.add(content_id)

    def snapshot(self):
        with self.lock:
            return dict(self.acked), dict(self.ceiling), set(self.deleted), set(self.watched), set(self.deleting)


def record(ledger, keys, pushes):
    """Files the acknowledgements among pushes; keys maps session id -> content id."""
    for ev in pushes:
        p = ev.push
        key = keys.get(p.session_id)
        if key is None or ev.method != sb.OPEN_SESSION:
            continue
        if p.kind == "bookmark_saved":
            ledger.bookmark_saved(key, p.bookmark_saved.content_time)
        elif p.kind == "break_watched" and p.break_watched.break_id == "b1":
            ledger.break_watched(key)


# --------------------------------------------------------------------------------------------------
# Players (one thread each, until the daemon is gone)
# --------------------------------------------------------------------------------------------------

def open_on_demand(c, key, breaks=(), duration=10_000_000.0, profile=PROFILE):
    return c.open_session(stream_id="s-" + key, content_id=key, profile=profile, kind=sb.SESSION_KIND_ON_DEMAND,
                          breaks=list(breaks), content_duration=duration).session_id


def pauser(sock, ledger, stop, who, keys_per_player=40):
    """Pauses at ever larger positions over a fixed set of keys (rows updated again and again)."""
    c = client(sock, "powercut-pauser-%d" % who)
    keys = {}
    n = 0
    while not stop.is_set():
        key = "pause-%d-%d" % (who, n % keys_per_player)
        n += 1
        sid = open_on_demand(c, key)
        keys[sid] = key
        v = ledger.start_above(key)
        for _ in range(random.randint(1, 6)):
            v += 1.0
            ledger.allow(key, v)
            c.call("Timeline/Pause", session_id=sid, stream_time=v)
            record(ledger, keys, c.take_pushes())
            while not acked_at(ledger, key, v):
                ev = c.next_push(timeout=10.0)
                if ev is None:
                    raise RuntimeError("no BookmarkSaved for %s at %g within 10 s" % (key, v))
                record(ledger, keys, [ev])
        c.close_session(sid)  # at the paused position: nothing more to save
        record(ledger, keys, c.take_pushes())


def acked_at(ledger, key, value):
    with ledger.lock:
        return ledger.acked.get(key, -1.0) >= value


def is_watched(ledger, key):
    with ledger.lock:
        return key in ledger.watched


def streamer(sock, ledger, stop, who, sessions=10):
    """Sessions that play and never report again: the daemon saves them every second (periodic)."""
    c = client(sock, "powercut-streamer-%d" % who)
    keys = {}
    started = time.monotonic()
    for j in range(sessions):
        key = "stream-%d-%d" % (who, j)
        start = ledger.start_above(key)
        # A round lasts well under a minute: no save of this round can hold more than start + 60.
        ledger.allow(key, start + 60.0)
        sid = open_on_demand(c, key)
        keys[sid] = key
        c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=start, rate=1.0, playing=True)
        record(ledger, keys, c.take_pushes())
    while not stop.is_set():
        if time.monotonic() - started > 50:
            raise RuntimeError("a round lasted more than 50 s: the streamers' ceiling would no longer hold")
        ev = c.next_push(timeout=0.5)
        if ev is not None:
            record(ledger, keys, [ev])


def watcher(sock, ledger, stop, who, round_no):
    """Plays through b1 of a new content id each time: BreakWatched is pushed once its mark committed.
    Then closes (a bookmark saved on close)."""
    c = client(sock, "powercut-watcher-%d" % who)
    keys = {}
    n = 0
    while not stop.is_set():
        key = "watch-%d-%d-%d" % (round_no, who, n)
        n += 1
        ledger.allow(key, 70.0)  # content 10 after b1 (stream 15), plus what a round can play after it
        sid = open_on_demand(c, key, breaks=[BREAK], duration=1000.0)
        keys[sid] = key
        c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=9.5, rate=1.0, playing=True)
        c.call("Timeline/AdBreakStarted", session_id=sid, break_id="b1", stream_time=10.0)
        c.call("Timeline/AdBreakEnded", session_id=sid, break_id="b1", stream_time=15.0)
        record(ledger, keys, c.take_pushes())
        deadline = time.monotonic() + 10.0
        while not is_watched(ledger, key):
            ev = c.next_push(timeout=max(0.01, deadline - time.monotonic()))
            if ev is None:
                raise RuntimeError("no BreakWatched for %s within 10 s" % key)
            record(ledger, keys, [ev])
        c.close_session(sid)
        record(ledger, keys, c.take_pushes())
        # Each content id keeps a bookmark; the store keeps 10,000 (the least recently updated go): a few
        # a second keep a long run far below that.
        stop.wait(0.1)


def deleter(sock, ledger, stop, who, round_no):
    """Saves a bookmark, then deletes it: the Delete reply comes after the delete committed."""
    c = client(sock, "powercut-deleter-%d" % who)
    keys = {}
    n = 0
    while not stop.is_set():
        key = "delete-%d-%d-%d" % (round_no, who, n)
        n += 1
        ledger.allow(key, 5.0)
        sid = open_on_demand(c, key)
        keys[sid] = key
        c.call("Timeline/Pause", session_id=sid, stream_time=5.0)
        while not acked_at(ledger, key, 5.0):
            ev = c.next_push(timeout=10.0)
            if ev is None:
                raise RuntimeError("no BookmarkSaved for %s within 10 s" % key)
            record(ledger, keys, [ev])
        c.close_session(sid)
        record(ledger, keys, c.take_pushes())
        ledger.delete_sent(key)
        reply = c.call("Bookmarks/Delete", profile=PROFILE, content_id=key)
        if not reply.deleted:
            raise RuntimeError("Delete of %s found nothing" % key)
        ledger.delete_acked(key)
        stop.wait(0.02)  # every deleted key is read back after each cut: keep them in the thousands


def run_player(fn, errors, *args):
    try:
        fn(*args)
    except (OSError, sb.ProtocolError, sb.RpcError, RuntimeError) as e:
        # The cut ends every player with a broken connection; anything before it is a failure.
        errors.append((time.monotonic(), "%s: %s: %s" % (fn.__name__, type(e).__name__, e)))


# --------------------------------------------------------------------------------------------------
# Checking what survived
# --------------------------------------------------------------------------------------------------

def verify(sock, ledger):
    """Reads every acknowledged thing back; returns the list of losses."""
    acked, ceiling, deleted, watched, deleting = ledger.snapshot()
    c = client(sock, "powercut-verifier")
    lost = []
    for key, value in sorted(acked.items()):
        try:
            stored = c.call("Bookmarks/Get", profile=PROFILE, content_id=key).content_time
        except sb.RpcError as e:
            if e.code != sb.NOT_FOUND:
                raise
            if key in deleting:
                continue  # its delete committed, and the cut came before the reply
            lost.append("bookmark %s: acknowledged %g, stored nothing" % (key, value))
            ledger.accept_loss(key, None)
            continue
        if stored < value - 1e-9 or stored > ceiling.get(key, value) + 1e-9:
            lost.append("bookmark %s: acknowledged %g, stored %g (at most %g possible)"
                        % (key, value, stored, ceiling.get(key, value)))
            ledger.accept_loss(key, stored)
    for key in sorted(deleted):
        try:
            stored = c.call("Bookmarks/Get", profile=PROFILE, content_id=key).content_time
            lost.append("bookmark %s: delete acknowledged, stored %g" % (key, stored))
            ledger.accept_loss(key, stored)
        except sb.RpcError as e:
            if e.code != sb.NOT_FOUND:
                raise
    for key in sorted(watched):
        # Another profile: no resume, no bookmark of the test's profile touched.
        sid = open_on_demand(c, key, breaks=[BREAK], duration=1000.0, profile="verify")
        state = c.call("Timeline/GetSessionState", session_id=sid)
        c.close_session(sid)
        flags = [b.watched for b in state.break_states if b.break_id == "b1"]
        if flags != [True]:
            lost.append("watched break b1 of %s: acknowledged, now %s" % (key, flags))
            ledger.accept_lost_watch(key)
    status = c.call("Control/GetStatus")
    c.close()
    return lost, status.store.error


def integrity(db_path):
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, timeout=5)
    try:
        return [row[0] for row in db.execute("PRAGMA integrity_check")]
    finally:
        db.close()


# --------------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lazyfs", required=True, help="the lazyfs executable")
    parser.add_argument("--snapbackd", required=True, help="the daemon (make release: .build/release/snapbackd)")
    parser.add_argument("--cuts", type=int, default=24)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--work", default=None, help="working directory (default: a new one under /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    args = parser.parse_args()

    try:
        check_prerequisites(args)
    except Unavailable as e:
        print("power-cut test cannot run: %s" % e, file=sys.stderr, flush=True)
        return 2

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    random.seed(seed)
    work = args.work or tempfile.mkdtemp(prefix="snapback-powercut-")
    os.makedirs(work, exist_ok=True)
    print("power-cut test: %d cuts, seed %d, working directory %s" % (args.cuts, seed, work), flush=True)
    lazyfs = LazyFS(os.path.abspath(args.lazyfs), work)
    daemon = Daemon(os.path.abspath(args.snapbackd), work, os.path.join(lazyfs.mount, "state"))
    failures = []
    started = time.monotonic()
    try:
        try:
            lazyfs.start()
            lazyfs.check_loses_unsynced_writes()
        except Unavailable as e:
            print("power-cut test cannot run: %s" % e, file=sys.stderr, flush=True)
            return 2
        print("LazyFS drops unsynced writes at clear-cache, keeps fsynced ones: checked", flush=True)
        failures = run_cuts(args.cuts, lazyfs, daemon)
    finally:
        daemon.stop()
        lazyfs.stop()
        if not args.keep and not failures:
            shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    return report(failures, seconds, work)


SUMMARY = {}


def report(failures, seconds, work):
    print("power-cut test: cuts=%d, acknowledged saves=%d (%d bookmarks), acknowledged watched breaks=%d, "
          "acknowledged deletes=%d, lost=%d (saves %d, watched %d, deletes %d), repaired=%d, %.0f s"
          % (SUMMARY.get("cuts", 0), SUMMARY.get("saves", 0), SUMMARY.get("bookmarks", 0),
             SUMMARY.get("watched", 0), SUMMARY.get("deletes", 0), SUMMARY.get("lost", 0),
             SUMMARY.get("lost saves", 0), SUMMARY.get("lost watched", 0), SUMMARY.get("lost deletes", 0),
             SUMMARY.get("repaired", 0), seconds), flush=True)
    if failures:
        for f in failures[:40]:
            print("FAIL " + f, flush=True)
        print("working directory kept: %s" % work, flush=True)
        return 1
    return 0


def check_prerequisites(args):
    if not os.path.isfile(args.snapbackd) or not os.access(args.snapbackd, os.X_OK):
        raise Unavailable("no snapbackd executable at %s (make release builds it)" % args.snapbackd)
    if not os.path.isfile(args.lazyfs) or not os.access(args.lazyfs, os.X_OK):
        raise Unavailable("no lazyfs executable at %s" % args.lazyfs)
    if not os.path.exists("/dev/fuse"):
        raise Unavailable("/dev/fuse is missing: this kernel or container offers no FUSE")
    if shutil.which("fusermount3") is None:
        raise Unavailable("fusermount3 is missing (Debian package fuse3)")
    ldd = subprocess.run(["ldd", args.lazyfs], capture_output=True, text=True)
    missing = [line.split()[0] for line in ldd.stdout.splitlines() if "not found" in line]
    if missing:
        raise Unavailable("%s needs shared libraries this machine lacks: %s" % (args.lazyfs, ", ".join(missing)))


def run_cuts(cuts, lazyfs, daemon):
    """Each round starts the daemon on what the last cut left, checks it, then cuts again."""
    ledger = Ledger()
    failures = []
    for n in range(1, cuts + 2):
        daemon.spawn()
        spawned = time.monotonic()
        # Every fifth cut comes while the daemon starts (opening the store, recovering the WAL the last cut
        # left), before anything is checked; the next round checks it.
        if n <= cuts and n % 5 == 0:
            time.sleep(random.uniform(0.0, 0.15))
            cut_at = time.monotonic()
            daemon.cut(lazyfs)
            failures += check_log(n, daemon)
            lazyfs.remount()
            print("cut %2d/%d while the daemon started, %.3f s after its start" % (n, cuts, cut_at - spawned),
                  flush=True)
            continue
        daemon.wait_listening()
        if n > 1:
            failures += check_restart(n - 1, daemon, ledger)
        if n > cuts:
            # The last start: stopped cleanly, as a daemon that never lost power.
            daemon.proc.send_signal(signal.SIGTERM)
            if daemon.proc.wait(timeout=30) != 0:
                failures.append("the last daemon exited with %d on SIGTERM" % daemon.proc.returncode)
            daemon.proc = None
            failures += check_log(n, daemon)
            break
        stop = threading.Event()
        errors = []
        threads = []
        players = [(pauser, i) for i in range(4)] + [(streamer, i) for i in range(2)] \
            + [(watcher, i, n) for i in range(2)] + [(deleter, 0, n)]
        for fn, *rest in players:
            t = threading.Thread(target=run_player, args=(fn, errors, daemon.socket, ledger, stop) + tuple(rest))
            t.start()
            threads.append(t)
        time.sleep(random.uniform(0.3, 3.0))
        cut_at = time.monotonic()
        daemon.cut(lazyfs)
        stop.set()
        for t in threads:
            t.join()
        # A player may only fail because the daemon went: an error before the cut is the test's failure.
        failures += ["cut %d: a player failed before the cut: %s" % (n, e) for when, e in errors if when < cut_at]
        failures += check_log(n, daemon)
        lazyfs.remount()
        print("cut %2d/%d during the players' traffic, %.2f s after the daemon started: so far %d acknowledged "
              "saves, %d watched breaks, %d deletes" % (n, cuts, cut_at - spawned, ledger.saves, len(ledger.watched),
                                                         ledger.deletes), flush=True)
    acked, _, _, watched, _ = ledger.snapshot()
    SUMMARY.update(cuts=cuts, saves=ledger.saves, bookmarks=len(acked), watched=len(watched), deletes=ledger.deletes)
    if ledger.saves < cuts * 20:
        failures.append("too few acknowledged saves to mean anything: %d in %d cuts" % (ledger.saves, cuts))
    return failures


def check_restart(cut, daemon, ledger):
    """After cut number `cut`: everything acknowledged so far is there, the store opened as it was left."""
    lost, store_error = verify(daemon.socket, ledger)
    db_path = os.path.join(daemon.state_dir, "snapback.db")
    check = integrity(db_path)
    SUMMARY["lost"] = SUMMARY.get("lost", 0) + len(lost)
    for what in lost:
        kind = "watched" if what.startswith("watched") else "deletes" if "delete acknowledged" in what else "saves"
        SUMMARY["lost " + kind] = SUMMARY.get("lost " + kind, 0) + 1
    SUMMARY["repaired"] = SUMMARY.get("repaired", 0) + (1 if store_error else 0)
    print("  restarted after cut %d: lost %d, store error %r, integrity_check %s"
          % (cut, len(lost), store_error, "; ".join(check[:3])), flush=True)
    failures = ["cut %d: lost %s" % (cut, what) for what in lost]
    if store_error:
        failures.append("cut %d: the status query's store error after the restart: %r" % (cut, store_error))
    if check != ["ok"]:
        failures.append("cut %d: PRAGMA integrity_check: %s" % (cut, "; ".join(check[:5])))
    return failures


def check_log(n, daemon):
    problems = daemon.log_problems()
    if problems:
        SUMMARY["repaired"] = SUMMARY.get("repaired", 0) + 1
    return ["daemon start %d (%s): %s" % (n, daemon.log_path, line) for line in problems]


if __name__ == "__main__":
    sys.exit(main())
