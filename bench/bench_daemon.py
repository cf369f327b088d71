# SPDX-License-Identifier: Apache-2.0
"""snapbackd started for a bench script: its own socket and state directory, a configuration file only
when given one.

    with BenchDaemon(path, "snapback-soak.") as daemon:
        ... daemon.socket, daemon.pid, daemon.poll() ...
    daemon.exit_code    # how it ended after SIGTERM

Entering starts it and returns once it accepts connections (it fails if the daemon exits first or does
not listen within the timeout); leaving sends SIGTERM, waits for the exit and removes the directory.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


class BenchDaemon:
    def __init__(self, snapbackd, prefix, start_timeout=10, stop_timeout=30, config=None):
        """`config`: the text of a configuration file for it (none by default)."""
        self.snapbackd = snapbackd
        self.prefix = prefix
        self.config = config
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.exit_code = None

    def __enter__(self):
        self.work = tempfile.mkdtemp(prefix=self.prefix)
        self.socket = os.path.join(self.work, "snapbackd.sock")
        config = "/dev/null"
        if self.config is not None:
            config = os.path.join(self.work, "snapbackd.conf")
            with open(config, "w") as f:
                f.write(self.config)
        try:
            self.process = subprocess.Popen(
                [self.snapbackd, "--socket", self.socket, "--state-dir", os.path.join(self.work, "state"),
                 "--config", config, "--log-level", "warning"], stdin=subprocess.DEVNULL)
        except OSError as error:
            shutil.rmtree(self.work, ignore_errors=True)
            raise SystemExit(f"cannot start {self.snapbackd}: {error}")
        try:
            self._wait_listening()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    @property
    def pid(self):
        return self.process.pid

    def poll(self):
        return self.process.poll()

    def _wait_listening(self):
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.snapbackd} exited {self.process.returncode} during start-up")
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.socket)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{self.snapbackd} did not listen on {self.socket} within {self.start_timeout} s")
                time.sleep(0.02)
            finally:
                probe.close()

    def __exit__(self, *exc):
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
            self.exit_code = self.process.wait(timeout=self.stop_timeout)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
        return False
