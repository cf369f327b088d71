#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""config/nats-server.conf's permissions, checked with libnats itself against a real nats-server.

    python3 Tests/sync/test_permissions.py KV_PROBE

KV_PROBE is Tests/sync/kv_probe.c built (make test-sync builds it). Household "smith" (two devices) and
household "jones" (one) of the example: a smith device writes, reads and watches smith's keys; jones's
credentials can neither read nor write them — the server refuses the subjects (a permission error) —
nor see them by watching or by listening to every reply subject of their own account. Prints one
PASS/FAIL line per check and exits non-zero if any failed.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import FAILURES, check  # noqa: E402
from nats_fixture import NatsServer  # noqa: E402

# A refused request ends at kv-probe's own 4 s bound: this one only catches a hang.
PROBE_TIMEOUT = 120


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


class Probe:
    def __init__(self, binary, nats):
        self.binary = binary
        self.nats = nats

    def run(self, user, *args):
        env = dict(os.environ, KV_PROBE_PASSWORD=self.nats.password(user))
        done = subprocess.run([self.binary, self.nats.url, user, *args], env=env, capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT)
        return done.returncode, done.stdout, done.stderr

    def start(self, user, *args):
        env = dict(os.environ, KV_PROBE_PASSWORD=self.nats.password(user))
        return subprocess.Popen([self.binary, self.nats.url, user, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


def hexed(text):
    return text.encode().hex()


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="snapback-nats-perm.") as work, NatsServer(work) as nats:
        probe = Probe(binary, nats)

        def own_household():
            code, out, err = probe.run("smith-living", "put", "smith.alice.movie-42", "47:23")
            expect(code == 0 and out.startswith("revision "), f"put: exit {code}: {out}{err}")
            code, out, err = probe.run("smith-bedroom", "get", "smith.alice.movie-42")
            expect(code == 0 and out == f"value {hexed('47:23')}\n", f"the other smith box's get: exit {code}: {out}{err}")
            code, out, err = probe.run("smith-bedroom", "put", "smith.alice.movie-42", "0:10")
            expect(code == 0, f"the other smith box's put: exit {code}: {out}{err}")
            code, out, err = probe.run("smith-living", "watch", "smith.>")
            expect(code == 0 and out == f"key smith.alice.movie-42 {hexed('0:10')}\nend\n", f"watch: exit {code}: {out}{err}")
            return "put, get, put again and watch by both smith devices"

        def refused(code, out, err, what):
            expect(code == 2 and "permission-error: " in out and "Permissions Violation" in out,
                   f"{what} was not refused with a permission error: exit {code}: {out}{err}")

        def foreign_read():
            # Jones's own bucket exists (a jones box has saved): the get reaches the subject check.
            code, out, err = probe.run("jones-living", "put", "jones.bob.film-7", "12:00")
            expect(code == 0, f"jones's own put: exit {code}: {out}{err}")
            code, out, err = probe.run("jones-living", "get", "smith.alice.movie-42")
            refused(code, out, err, "jones's get of a smith key")
            return out.strip()

        def foreign_write():
            code, out, err = probe.run("jones-living", "put", "smith.alice.movie-42", "99:99")
            refused(code, out, err, "jones's put of a smith key")
            code, out, err = probe.run("smith-living", "get", "smith.alice.movie-42")
            expect(code == 0 and out == f"value {hexed('0:10')}\n", f"smith's value after jones's put: exit {code}: {out}{err}")
            return out.strip()

        def foreign_watch():
            # The watch's consumer is created without the filter in its subject: only the account keeps
            # smith's keys out of what jones's devices can watch.
            code, out, err = probe.run("jones-living", "watch", "smith.>")
            expect(code == 0 and out == "end\n", f"jones's watch of smith keys saw something: exit {code}: {out}{err}")
            code, out, err = probe.run("jones-living", "watch", ">")
            expect(code == 0 and out == f"key jones.bob.film-7 {hexed('12:00')}\nend\n",
                   f"jones's watch of every key: exit {code}: {out}{err}")
            return "jones's watches see jones's key only"

        def foreign_replies():
            # Every reply goes to an _INBOX subject, which a device must be allowed to subscribe to:
            # jones listening to all of them while smith reads and writes sees none of smith's traffic.
            sniffer = probe.start("jones-living", "sniff", "_INBOX.>", "15")
            try:
                expect(sniffer.stdout.readline() == "listening\n", "the sniffer did not subscribe")
                for value in ("1:00", "2:00"):
                    code, out, err = probe.run("smith-living", "put", "smith.alice.movie-42", value)
                    expect(code == 0, f"smith's put: exit {code}: {out}{err}")
                    code, out, err = probe.run("smith-bedroom", "get", "smith.alice.movie-42")
                    expect(code == 0 and out == f"value {hexed(value)}\n", f"smith's get: exit {code}: {out}{err}")
                    code, out, err = probe.run("smith-bedroom", "watch", "smith.>")
                    expect(code == 0 and f"key smith.alice.movie-42 {hexed(value)}\n" in out, f"smith's watch: {out}{err}")
                out, err = sniffer.communicate(timeout=PROBE_TIMEOUT)
            finally:
                if sniffer.poll() is None:
                    sniffer.kill()
                    sniffer.wait()
            expect(sniffer.returncode == 0, f"the sniffer failed: exit {sniffer.returncode}: {out}{err}")
            heard = [line for line in out.splitlines() if line.startswith("msg ")]
            expect(not heard, f"jones heard {len(heard)} of smith's replies, on {heard[0].split()[1]} first" if heard else "")
            return "nothing heard on _INBOX.> during 6 smith calls"

        def no_bucket_admin():
            code, out, err = probe.run("smith-living", "delete-bucket")
            refused(code, out, err, "smith's deletion of its own bucket")
            code, out, err = probe.run("smith-bedroom", "get", "smith.alice.movie-42")
            expect(code == 0 and out.startswith("value "), f"smith's key after the refused deletion: {out}{err}")
            return out.strip()

        def logged():
            log = nats.log_text()
            for subject in ("$KV.snapback.smith.alice.movie-42",
                            "$JS.API.DIRECT.GET.KV_snapback.$KV.snapback.smith.alice.movie-42"):
                expect(f'User "jones-living", Subject "{subject}"' in log, f"no violation logged for {subject}")
            return f"{log.count('Violation - User')} refusals in the server's log"

        check("a household's devices read, write and watch its keys", own_household)
        check("another household's credentials cannot read its keys", foreign_read)
        check("another household's credentials cannot write its keys", foreign_write)
        check("another household's watch does not see its keys", foreign_watch)
        check("another household hears none of its replies", foreign_replies)
        check("a device cannot delete its household's bucket", no_bucket_admin)
        check("the server logs the refusals", logged)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed: {', '.join(FAILURES)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
