# SPDX-License-Identifier: Apache-2.0
"""A real nats-server for the sync tests, configured by the repository's config/nats-server.conf.

    with NatsServer(work_dir) as nats:
        nats.url, nats.password("smith-living"), nats.stop(), nats.start()

The example configuration is used as it is — its accounts, users and permissions — but for what a test
machine must change: the listen address (loopback, a free port), the JetStream store (in work_dir, kept
across stop() and start(), as a server restarted with its store) and the password hashes (the example's
are placeholders no password matches: each user gets a bcrypt hash of a password made here).
"""

import crypt
import os
import re
import secrets
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "config", "nats-server.conf")
# Generous: the machine running the tests may be loaded.
START_TIMEOUT = 60


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class NatsServer:
    def __init__(self, work_dir, binary="nats-server"):
        self.binary = binary
        self.work = work_dir
        os.makedirs(work_dir, exist_ok=True)
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.store = os.path.join(work_dir, "jetstream")
        self.config = os.path.join(work_dir, "nats-server.conf")
        self.log = os.path.join(work_dir, "nats-server.log")
        self.process = None
        self.passwords = {}
        self._write_config()

    def _write_config(self):
        with open(EXAMPLE, encoding="utf-8") as f:
            text = f.read()

        def hashed(match):
            user = match.group(2)
            self.passwords[user] = secrets.token_hex(12)
            # The example's hashes are bcrypt, and so are these ($2b$, as nats-server accepts).
            return f'{match.group(1)}password: "{crypt.crypt(self.passwords[user], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4))}"'

        text, users = re.subn(r'(\{ user: ([\w-]+),\s+)password: "[^"]*"', hashed, text)
        text, listens = re.subn(r"(?m)^listen: .*$", f"listen: 127.0.0.1:{self.port}", text)
        text, stores = re.subn(r'(?m)^(\s*)store_dir: .*$', lambda m: f'{m.group(1)}store_dir: "{self.store}"', text)
        if users < 3 or listens != 1 or stores != 1:
            raise RuntimeError(f"{EXAMPLE} no longer has the users, listen and store_dir lines this fixture sets")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(text)

    def password(self, user):
        return self.passwords[user]

    def start(self):
        log = open(self.log, "a", encoding="utf-8")
        self.process = subprocess.Popen([self.binary, "-c", self.config], stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited {self.process.returncode} at start; its log:\n{self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                    if probe.recv(4096).startswith(b"INFO"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not listen on {self.port} within {START_TIMEOUT} s")
            time.sleep(0.05)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log_text(self):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
