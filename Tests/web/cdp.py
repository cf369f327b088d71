# SPDX-License-Identifier: Apache-2.0
"""Headless Chromium driven over the DevTools protocol, with the tests' own WebSocket client."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

from wsclient import WebSocket


class Page:
    """One page target: navigate, evaluate, wait for a condition."""

    def __init__(self, port, ws_url):
        path = ws_url.split(str(port), 1)[1]
        self.port = port
        self.target_id = path.rsplit("/", 1)[1]
        self.ws = WebSocket("127.0.0.1", port, path=path, timeout=30)
        if self.ws.status != 101:
            raise RuntimeError("DevTools refused the connection: %d %r" % (self.ws.status, self.ws.body))
        self.next_id = 0
        self.events = []
        self.send("Runtime.enable")
        self.send("Page.enable")
        self.send("Log.enable")

    def send(self, method, **params):
        self.next_id += 1
        call_id = self.next_id
        self.ws.send_text(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError("page threw: %s" % json.dumps(result["exceptionDetails"])[:500])
        return result["result"].get("value")

    def navigate(self, url):
        self.send("Page.navigate", url=url)

    def wait(self, expression, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError("%s not true within %g s" % (expression, timeout))

    def console(self):
        """Console and log lines seen so far."""
        lines = []
        for event in self.events:
            if event.get("method") == "Runtime.consoleAPICalled":
                lines.append(" ".join(str(a.get("value", a.get("description", ""))) for a in event["params"]["args"]))
            elif event.get("method") == "Log.entryAdded":
                lines.append(event["params"]["entry"].get("text", ""))
        return lines

    def close(self):
        """Closes the DevTools connection only: the tab stays, its page loaded."""
        self.ws.sock.close()

    def close_tab(self):
        """Closes the tab itself (its page unloads, as when a viewer closes it), then the connection."""
        urllib.request.urlopen("http://127.0.0.1:%d/json/close/%s" % (self.port, self.target_id), timeout=10).read()
        self.close()


class Chromium:
    def __init__(self, port, extra_flags=()):
        self.port = port
        self.browser_session = None
        self.profile = tempfile.mkdtemp(prefix="snapback-chromium-")
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if not binary:
            raise RuntimeError("chromium is not installed (make deps installs Debian's chromium)")
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--mute-audio", "--no-first-run",
             "--autoplay-policy=no-user-gesture-required", "--remote-debugging-port=%d" % port,
             "--user-data-dir=" + self.profile, "--disable-background-networking", "--disable-component-update"]
            + list(extra_flags) + ["about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.profile, "chromium.log"), "wb"))
        deadline = time.monotonic() + 30
        while True:
            try:
                self.version = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/version" % port, timeout=2))
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chromium did not open its DevTools port")
                time.sleep(0.1)

    def new_page(self):
        request = urllib.request.Request("http://127.0.0.1:%d/json/new?about:blank" % self.port, method="PUT")
        target = json.load(urllib.request.urlopen(request, timeout=10))
        return Page(self.port, target["webSocketDebuggerUrl"])

    def grant(self, permissions, origin):
        """Browser.grantPermissions on the browser target. The grant lasts as long as the DevTools session
        that made it, so the session is kept open."""
        if self.browser_session is None:
            path = self.version["webSocketDebuggerUrl"].split(str(self.port), 1)[1]
            self.browser_session = WebSocket("127.0.0.1", self.port, path=path, timeout=30)
        ws = self.browser_session
        ws.send_text(json.dumps({"id": 1, "method": "Browser.grantPermissions",
                                 "params": {"permissions": permissions, "origin": origin}}))
        while True:
            message = json.loads(ws.recv(timeout=30))
            if message.get("id") == 1:
                if "error" in message:
                    raise RuntimeError("grantPermissions: %s" % message["error"])
                return

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
