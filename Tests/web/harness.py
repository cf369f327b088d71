# SPDX-License-Identifier: Apache-2.0
"""What the web tests share: PASS/FAIL checks, free ports, the real snapbackd and snapback-web started and
waited for, their configuration, and the figures read from /proc."""

import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# snapback.js as the bridge serves it (the package installs it in /usr/share/snapback/web).
SCRIPT = os.path.normpath(os.path.join(HERE, "..", "..", "Sources", "snapback-web", "snapback.js"))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
import snapback_client as sb  # noqa: E402

FAILURES = []


def check(name, fn):
    try:
        detail = fn()
        print("PASS %s%s" % (name, ": " + detail if detail else ""))
    except Exception as error:  # noqa: BLE001 - every failure is reported, then the run goes on
        FAILURES.append(name)
        print("FAIL %s: %s: %s" % (name, type(error).__name__, error))


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_socket(path, proc, what):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %d at start" % (what, proc.returncode))
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s did not listen within 15 s" % what)


def wait_port(port, proc):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("snapback-web exited with %d at start" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("snapback-web did not listen on %d within 15 s" % port)


def write_config(tmp, port, sock_path, apps, **limits):
    """snapback-web.conf with `apps` ({name: {key: value}}) and the [limits] given."""
    path = os.path.join(tmp, "snapback-web.conf")
    lines = ["[bridge]", "port = %d" % port, "socket = %s" % sock_path, "script = %s" % SCRIPT, "[limits]"]
    lines += ["%s = %s" % (k.replace("_", "-"), v) for k, v in limits.items()]
    for name, keys in apps.items():
        lines.append("[app %s]" % name)
        lines += ["%s = %s" % (k.replace("_", "-"), v) for k, v in keys.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def daemon_connections(sock_path):
    with sb.Client(sock_path) as c:
        c.hello()
        return c.call("Control/GetStatus").connections - 1  # not this one


def daemon_status(sock_path):
    """(connections but the asker's, sessions) of snapbackd."""
    with sb.Client(sock_path) as c:
        c.hello()
        status = c.call("Control/GetStatus")
        return status.connections - 1, status.sessions


def fds(pid):
    """What `pid`'s descriptors are open on (socket:[inode], a path…), sorted."""
    targets = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            targets.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:  # closed meanwhile
            pass
    return sorted(targets)


def start_daemon(snapbackd, tmp, sock_path):
    proc = subprocess.Popen([snapbackd, "--socket", sock_path, "--state-dir", os.path.join(tmp, "state")],
                            stdout=open(os.path.join(tmp, "snapbackd.log"), "ab"), stderr=subprocess.STDOUT)
    wait_socket(sock_path, proc, "snapbackd")
    return proc


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wakeups(pid):
    """Context switches of every thread of `pid`: a process asleep in epoll_wait adds none."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total


def start_bridge(web, config, log_path, port):
    proc = subprocess.Popen([web, "--config", config, "--log-level", "debug"],
                            stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    wait_port(port, proc)
    return proc


def stop(*procs):
    for proc in procs:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def show_logs(tmp, names):
    for name in names:
        path = os.path.join(tmp, name)
        if os.path.exists(path):
            print("---- %s (last lines)" % name)
            print("\n".join(open(path, errors="replace").read().splitlines()[-40:]))

