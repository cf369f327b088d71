#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""config/nats-server.conf's telemetry permissions, against a real nats-server, agents and snapback-fleet.

    python3 Tests/telemetry/test_permissions.py --snapbackd .build/debug/snapbackd \\
        --agent .build/debug/snapback-sync --fleet .build/debug/snapback-fleet

The example configuration as it is (Tests/sync/nats_fixture.py: loopback, a store of its own, passwords
made here): household accounts, the operator's account FLEET holding the stream, snapback-fleet's user.
Two agents of household smith on one snapbackd: the living-room box with its own credentials and box id,
its reports stored in FLEET's stream through the households' service import and counted by
snapback-fleet into VictoriaMetrics; the bedroom box with its own credentials but the living room's box
id, whose reports the server refuses (the agent logs why, its household sync unaffected). A device may
publish nothing else of telemetry (the stream's API, its consumer, a subscription to the reports), and
snapback-fleet's user may publish no report.
"""

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "sync"))
sys.path.insert(0, os.path.join(TESTS, "clients", "python"))
import checks  # noqa: E402
from checks import FAILURES  # noqa: E402
from nats_fixture import EXAMPLE, NatsServer  # noqa: E402
from nats_wire import NatsWire  # noqa: E402
from test_fleet import Victoria  # noqa: E402
from test_household import expect, stop_process, wait_for  # noqa: E402

check = functools.partial(checks.check, timed=True)
TIMEOUT = 60


def box_ids():
    """Each device's box id, as the example's permissions name it: {permissions variable: id}."""
    with open(EXAMPLE, encoding="utf-8") as f:
        text = f.read()
    ids = dict(re.findall(r'(?ms)^([A-Z_]+) = \{\n  publish: \{\n    allow: \[\n[^]]*?"snapback\.telemetry\.([0-9a-f]{32})"',
                          text))
    expect({"SMITH_LIVING", "SMITH_BEDROOM", "JONES_LIVING"} <= set(ids), f"the example's box ids: {ids}")
    return ids


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapbackd", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--fleet", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    for tool in ("nats-server", "victoria-metrics"):
        if shutil.which(tool) is None:
            sys.exit(f"test_permissions: {tool} is not installed")
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="snapback-telemetry-perm-")
    ids = box_ids()
    living = ids["SMITH_LIVING"]
    processes = []
    nats = victoria = None
    wires = []

    def log_of(name):
        with open(os.path.join(work, name), encoding="utf-8", errors="replace") as f:
            return f.read()

    try:
        nats = NatsServer(os.path.join(work, "nats"))
        nats.start()
        victoria = Victoria(work)
        fleet_conf = os.path.join(work, "fleet.conf")
        fleet_password = os.path.join(work, "snapback-fleet.password")
        with open(os.open(fleet_password, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(nats.password("snapback-fleet") + "\n")
        with open(fleet_conf, "w", encoding="utf-8") as f:
            f.write(f"servers = {nats.url}\nuser = snapback-fleet\npassword-file = {fleet_password}\n"
                    f"database = {os.path.join(work, 'fleet.db')}\n"
                    f"import-url = {victoria.url}/api/v1/import/prometheus\nexport-interval = 1\n")
        with open(os.path.join(work, "snapback-fleet.log"), "w") as log:
            processes.append(subprocess.Popen([args.fleet, "--config", fleet_conf], stdin=subprocess.DEVNULL,
                                              stdout=log, stderr=log))
        sock = os.path.join(work, "snapbackd.sock")
        with open(os.path.join(work, "snapbackd.log"), "w") as log:
            processes.append(subprocess.Popen([args.snapbackd, "--socket", sock, "--state-dir",
                                               os.path.join(work, "state"), "--config", "/dev/null",
                                               "--log-level", "notice"],
                                              stdin=subprocess.DEVNULL, stdout=log, stderr=log))
        wait_for("snapbackd listening", lambda: os.path.exists(sock))

        def agent(name, user, box_id):
            password_file = os.path.join(work, f"{name}.password")
            with open(os.open(password_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(nats.password(user) + "\n")
            config = os.path.join(work, f"{name}.conf")
            with open(config, "w", encoding="utf-8") as f:
                f.write(f"servers = {nats.url}\nhousehold = smith\nuser = {user}\npassword-file = {password_file}\n"
                        f"socket = {sock}\nstate-directory = {os.path.join(work, name)}\n"
                        f"status-file = {os.path.join(work, name + '.status')}\n"
                        f"\n[telemetry]\ninterval = 1\nbox-id = {box_id}\n")
            with open(os.path.join(work, f"{name}.log"), "w") as log:
                processes.append(subprocess.Popen([args.agent, "--config", config], stdin=subprocess.DEVNULL,
                                                  stdout=log, stderr=log))

        def starts():
            return victoria.query("sum(snapback_fleet_starts_total)")

        def own_subject():
            agent("living", "smith-living", living)
            wait_for("the living room's reports counted by snapback-fleet", lambda: starts() == {"all": 1.0},
                     timeout=TIMEOUT)
            log = nats.log_text()
            for user in ("smith-living", "snapback-fleet"):
                expect(f'User "{user}"' not in log, f"the server refused {user} something:\n{log[-3000:]}")
            return f"box {living}'s reports in FLEET's stream, counted: sum(snapback_fleet_starts_total) = 1"
        check("a box publishes its own report subject; snapback-fleet consumes the stream", own_subject)

        def another_box():
            agent("bedroom", "smith-bedroom", living)
            refusal = f'Permissions Violation for Publish to "snapback.telemetry.{living}"'
            wait_for("the bedroom agent's log names the refusal",
                     lambda: f"telemetry: the NATS server refuses this box's report: {refusal}" in log_of("bedroom.log"),
                     timeout=TIMEOUT)
            expect(f'User "smith-bedroom", Subject "snapback.telemetry.{living}"' in nats.log_text(),
                   "the server did not log the refused publish")

            def connected():
                try:
                    with open(os.path.join(work, "bedroom.status"), encoding="utf-8") as f:
                        return "state = connected" in f.read()
                except OSError:
                    return False
            wait_for("the bedroom's household sync connected", connected, timeout=TIMEOUT)
            # The fleet still counts one box: nothing of the bedroom's reached the stream.
            time.sleep(3)
            expect(starts() == {"all": 1.0}, f"the fleet counts {starts()} starts")
            line = next(line for line in log_of("bedroom.log").splitlines() if "telemetry: the NATS server" in line)
            expect("nats server: " not in log_of("bedroom.log"), "telemetry's refusal logged as household sync's too")
            return line
        check("a box publishing another box's subject is refused, and says so", another_box)

        def nothing_else():
            refused = []
            device = NatsWire(nats.port, "smith-living", nats.password("smith-living"))
            wires.append(device)
            for subject in ("$JS.API.STREAM.INFO.SNAPBACK_TELEMETRY", "$JS.API.STREAM.DELETE.SNAPBACK_TELEMETRY",
                            "$JS.API.STREAM.PURGE.SNAPBACK_TELEMETRY",
                            "$JS.API.CONSUMER.MSG.NEXT.SNAPBACK_TELEMETRY.snapback-fleet",
                            f"snapback.telemetry.{ids['JONES_LIVING']}"):
                device.publish(subject, b"{}")
                refused.append(f'Permissions Violation for Publish to "{subject}"')
            device.subscribe("snapback.telemetry.>")
            refused.append('Permissions Violation for Subscription to "snapback.telemetry.>"')
            fleet = NatsWire(nats.port, "snapback-fleet", nats.password("snapback-fleet"))
            wires.append(fleet)
            fleet.publish(f"snapback.telemetry.{living}", b"forged")
            for wire, texts in ((device, refused), (fleet, [f'Permissions Violation for Publish to "snapback.telemetry.{living}"'])):
                for text in texts:
                    wait_for(f"the server refuses: {text}", lambda: any(text in e for e in wire.errors), timeout=TIMEOUT)
            return f"{len(refused)} of a device's and 1 of snapback-fleet's refused"
        check("a device may publish nothing else of telemetry; snapback-fleet no report", nothing_else)
    finally:
        for wire in wires:
            wire.close()
        for p in reversed(processes):
            stop_process(p)
        if victoria:
            stop_process(victoria.process)
        if nats:
            nats.stop()
        if FAILURES or args.keep:
            print(f"work directory kept: {work}")
            for name in ("bedroom.log", "living.log", "snapback-fleet.log"):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print(f"--- {name}\n" + log_of(name)[-3000:])
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAIL' if FAILURES else 'PASS'} test_permissions: {len(FAILURES)} failed, {time.monotonic() - started:.0f} s")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
