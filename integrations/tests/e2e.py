# SPDX-License-Identifier: Apache-2.0
"""The players' end-to-end tests' shared fixture (integrations/mpv/tests/test_mpv.py,
integrations/gstreamer/tests/test_gstreamer.py): checks, the real snapbackd in a process, a player in a
process (its log, its position polled until a condition holds, its exit), and the run of a test in a
working directory whose logs are shown when it fails. Standard library only.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# How often a player's position is polled while it plays.
POLL = 0.05


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"ok   {what}", flush=True)


def summary(seen):
    """Positions seen, for a failure's message: all of a few, the first and last six of many."""
    if len(seen) <= 12:
        return ", ".join(f"{p:.2f}" for p in seen)
    return ", ".join(f"{p:.2f}" for p in seen[:6]) + " … " + ", ".join(f"{p:.2f}" for p in seen[-6:])


def plugin_failures(log):
    """The lines of a player's log in which the plugin ("[snapback] …") reports a failure."""
    return [line for line in log.splitlines() if line.startswith("[snapback]") and
            ("failed" in line or "error" in line or "not opened" in line or "did not open" in line)]


def wait_socket(path, proc, seconds, what):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise Failure(f"{what} exited ({proc.returncode}) before creating {path}")
        if time.monotonic() > deadline:
            raise Failure(f"{what} did not create {path} in {seconds} s")
        time.sleep(0.02)


class Process:
    """A process of the test's, its output in `name`.log in `work`: subclasses start `self.proc` with
    `self.log` as its output."""

    def __init__(self, work, name):
        self.log_path = os.path.join(work, f"{name}.log")
        self.log = open(self.log_path, "w")

    def output(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()


class Daemon(Process):
    """The built snapbackd on its own socket and state directory in `work`, logging to `name`.log (or
    `log_name`.log: a restart on the same socket and state); `config`: the text of its configuration file
    (none by default)."""

    def __init__(self, binary, work, name, log_name=None, config=None):
        super().__init__(work, log_name or name)
        self.sock = os.path.join(work, f"{name}.sock")
        conf = "/dev/null"
        if config is not None:
            conf = os.path.join(work, f"{name}.conf")
            with open(conf, "w") as f:
                f.write(config)
        self.proc = subprocess.Popen([binary, "--socket", self.sock, "--state-dir", os.path.join(work, f"{name}-state"),
                                      "--config", conf, "--log-level", "info"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        wait_socket(self.sock, self.proc, 10, "snapbackd")

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        """SIGTERM: it must exit with status 0 within 10 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
                raise Failure("snapbackd did not stop within 10 s")
            check(code == 0, f"snapbackd stops cleanly ({os.path.basename(self.sock)})")
        self.log.close()


class Player(Process):
    """A player in its own process. Subclasses start it and say where it plays (position(): seconds, or
    None when it has none)."""

    what = "the player"

    def position(self):
        raise NotImplementedError

    def wait_position(self, predicate, seconds, what):
        """Polls the position until predicate(pos) holds; returns the positions seen."""
        seen = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            pos = self.position()
            if pos is not None:
                seen.append(pos)
                if predicate(pos):
                    return seen
            time.sleep(POLL)
        raise Failure(f"{what}: not within {seconds} s (positions seen: {summary(seen)})")

    def exited(self, verb):
        """After the player was told to quit: it must exit with status 0 within 10 s."""
        try:
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure(f"{self.what} did not {verb} within 10 s")
        self.log.close()
        check(code == 0, f"{self.what} {verb}s with status 0 (got {code})")


def run(name, prefix, keep, body, noise=()):
    """Runs body(work) in a new working directory: any error fails the test, and then the last lines of
    every log there are shown (less the lines containing one of `noise`, a player's status line) and the
    directory is kept (also with `keep`). Returns the exit status."""
    work = tempfile.mkdtemp(prefix=prefix)
    ok = False
    try:
        body(work)
        ok = True
    except Exception as e:  # noqa: BLE001 -- any error fails the test, with the logs below
        print(f"FAIL {e}" if isinstance(e, Failure) else f"FAIL {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        if not ok:
            for log in sorted(n for n in os.listdir(work) if n.endswith(".log")):
                with open(os.path.join(work, log), errors="replace") as f:
                    lines = [l for l in f.read().replace("\r", "\n").splitlines() if not any(s in l for s in noise)]
                print(f"--- {log} (last 25 lines)", file=sys.stderr)
                print("\n".join(lines[-25:]), file=sys.stderr)
        if keep or not ok:
            print(f"{name}: working directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: ok" if ok else f"{name}: FAILED", flush=True)
    return 0 if ok else 1
