#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapback-web as real browsers see it: headless Chromium (driven over the DevTools protocol) and WPE
WebKit (`cog -P headless`, reporting through its console) loading pages over http from
127.0.0.1, against the real snapbackd and snapback-web.

    python3 Tests/web/test_browsers.py .build/debug/snapbackd .build/debug/snapback-web

Checks, each from a page: an app's page connects (token in the query and as a sub-protocol) and calls;
refused: an origin not configured, a wrong token, Origin null (a file:// page), a rebinding Host (a
foreign name mapped to 127.0.0.1 by --host-resolver-rules), a page of a "public" address space
(--ip-address-space-overrides) until granted the loopback permission; a flooding page is closed with its
close code while another page goes on. Each refusal is also found, with its reason, in the bridge's log.
WPE: the same but the rebinding Host and the address space (Chromium's flags and permission).

Chromium also plays, with hls.js 1.6.15 (hlsjs.py: fetched from the pinned PyPI wheel at test time),
an HLS stream made by ffmpeg (media.py) with an EXT-X-DATERANGE interstitial X-RESTRICT="SKIP,JUMP" at 4 s
and a SCTE35-OUT range: hls.js schedules the ad with its restrictions, lists the SCTE35-OUT range, and
after the viewer's seek 1 -> 9 plays the ad and resumes at 4, not 9 (video-dev/hls.js#7029): the
baseline that snapback.js, with the bridge's page methods, is to turn into 9. WPE 2.38 (cog) does not
play it here: its renderer process crashes at random in GStreamer (mini_object_unref: refcount
assertion) while hls.js feeds it through MSE, which would make the suite fail for a reason not its own.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cdp import Chromium  # noqa: E402
from harness import FAILURES, check, expect, free_port, show_logs, start_bridge, start_daemon, stop, write_config  # noqa: E402
import hlsjs  # noqa: E402
import media  # noqa: E402
import range_server  # noqa: E402

GUIDE_TOKEN = "guide-token-0123456789abcdef"
PUBLIC_TOKEN = "public-token-0123456789abcd"


def main():
    snapbackd, web = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="snapback-browsers-")
    # The site: the pages, hls.js and the media, made here.
    pages = os.path.join(tmp, "site")
    shutil.copytree(os.path.join(HERE, "pages"), pages)
    hlsjs.fetch(pages)
    media.hls(pages)
    app_server, app_port = range_server.serve(pages)
    stranger_server, stranger_port = range_server.serve(pages)
    public_server, public_port = range_server.serve(pages)
    sock_path = os.path.join(tmp, "snapbackd.sock")
    bridge_port = free_port()
    daemon = bridge = chromium = None
    log_path = os.path.join(tmp, "snapback-web.log")
    try:
        daemon = start_daemon(snapbackd, tmp, sock_path)
        apps = {"guide": {"origin": "http://127.0.0.1:%d" % app_port, "token": GUIDE_TOKEN, "max-connections": 4},
                "public": {"origin": "http://127.0.0.1:%d" % public_port, "token": PUBLIC_TOKEN}}
        config = write_config(tmp, bridge_port, sock_path, apps, messages_per_second=20, message_burst=40)
        bridge = start_bridge(web, config, log_path, bridge_port)
        chromium = Chromium(free_port(), [
            "--host-resolver-rules=MAP rebind.test 127.0.0.1",
            "--ip-address-space-overrides=127.0.0.1:%d=public" % public_port])
        print("chromium %s" % chromium.version.get("Browser"))
        run_checks(chromium, tmp, log_path, app_port, stranger_port, public_port, bridge_port)
        check("Chromium: hls.js %s interstitial, seek 1 -> 9 (hls.js#7029 baseline)" % hlsjs.VERSION,
              lambda: hls_baseline(chromium_result(chromium, "http://127.0.0.1:%d/hls.html" % app_port)))
        chromium.close()
        chromium = None
        run_wpe_checks(tmp, log_path, app_port, stranger_port, bridge_port)
    finally:
        if chromium:
            chromium.close()
        stop(bridge, daemon)
        for server in (app_server, stranger_server, public_server):
            server.shutdown()
        if FAILURES:
            show_logs(tmp, ("snapback-web.log", "snapbackd.log"))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(FAILURES) if FAILURES else "all passed")
    sys.exit(1 if FAILURES else 0)


def chromium_result(chromium, url, timeout=60):
    page = chromium.new_page()
    try:
        page.navigate(url)
        page.wait("window.__done === true", timeout=timeout)
        return page.evaluate("window.__result")
    finally:
        page.close()


def hls_baseline(result):
    expect(result.get("version") == hlsjs.VERSION and not result.get("error"), "hls.js %r" % result)
    ads = result["interstitials"]
    expect(len(ads) == 1 and abs(ads[0]["start"] - 4) < 0.1 and ads[0]["restrictions"] == {"skip": True, "jump": True},
           "interstitials %r" % ads)
    expect(any(r["scte35Out"] and r["start"] == 8 for r in result["dateRanges"]), "date ranges %r" % result["dateRanges"])
    expect(1 <= result["seekFrom"] < 2, "seek from %r" % result.get("seekFrom"))
    expect(abs(result["resumedAt"] - 4) < 0.1, "resumed at %r" % result.get("resumedAt"))
    return "ad at %.2f (skip, jump restricted), SCTE35-OUT at 8; seek %.2f -> 9 played the ad and resumed at %.2f" % (
        ads[0]["start"], result["seekFrom"], result["resumedAt"])


def bridge_log(log_path):
    return open(log_path, errors="replace").read()


def run_checks(chromium, tmp, log_path, app_port, stranger_port, public_port, bridge_port):
    page = chromium.new_page()
    bridge = "ws://127.0.0.1:%d/jsonrpc" % bridge_port

    def probe(origin_url, token=GUIDE_TOKEN, bridge_url=bridge, extra="", target=page):
        target.navigate("%s/probe.html?bridge=%s&token=%s%s" % (origin_url, bridge_url, token, extra))
        target.wait("window.__done === true")
        return target.evaluate("window.__result")

    def refused(origin_url, words, **kw):
        mark = len(bridge_log(log_path))
        result = probe(origin_url, **kw)
        expect(not result["opened"] and result["closeCode"] == 1006, "page saw %r" % result)
        time.sleep(0.1)
        logged = bridge_log(log_path)[mark:]
        expect(words in logged, "bridge log lacks %r: %r" % (words, logged[-300:]))
        line = next(l for l in logged.splitlines() if words in l)
        return "page: error, close 1006; bridge: %s" % line.split("refused: ", 1)[-1][:110]

    def connects(extra=""):
        result = probe("http://127.0.0.1:%d" % app_port, extra=extra)
        expect(result["opened"] and result["reply"] == {"jsonrpc": "2.0", "id": 1, "result": None}, "%r" % result)
        expect(result["closeCode"] == 1000, "close %r" % result)
        return "opened (protocol %r), register -> null, closed 1000" % result.get("protocol")

    check("Chromium: an app's page connects (?token=)", connects)
    check("Chromium: an app's page connects (token as a sub-protocol)", lambda: connects("&via=protocol"))
    check("Chromium: an origin not configured is refused",
          lambda: refused("http://127.0.0.1:%d" % stranger_port, "is not a configured app"))
    check("Chromium: a wrong token is refused",
          lambda: refused("http://127.0.0.1:%d" % app_port, "wrong token", token="guide-token-0123456789abcdeX"))

    def file_page():
        path = os.path.join(tmp, "probe.html")
        shutil.copy(os.path.join(HERE, "pages", "probe.html"), path)
        return refused("file://" + tmp, "Origin 'null'")
    check("Chromium: a file:// page (Origin null) is refused", file_page)

    check("Chromium: a rebinding Host is refused", lambda: refused(
        "http://rebind.test:%d" % app_port, "Host 'rebind.test:%d' is not this bridge" % bridge_port,
        bridge_url="ws://rebind.test:%d/jsonrpc" % bridge_port))

    def public_space():
        origin = "http://127.0.0.1:%d" % public_port
        mark = len(bridge_log(log_path))
        blocked = probe(origin, token=PUBLIC_TOKEN)
        expect(not blocked["opened"] and blocked["closeCode"] == 1006, "before the grant: %r" % blocked)
        time.sleep(0.2)
        seen = bridge_log(log_path)[mark:]
        expect("app public" not in seen and origin not in seen, "the bridge saw the blocked page: %r" % seen)
        chromium.grant(["loopbackNetwork"], origin)
        granted = probe(origin, token=PUBLIC_TOKEN)
        expect(granted["opened"] and granted["reply"].get("result", 0) is None, "after the grant: %r" % granted)
        expect("of app public connected" in bridge_log(log_path), "the bridge did not see the granted page")
        return "blocked before the grant (the bridge saw nothing), connected after loopbackNetwork was granted"
    check("Chromium: a public page is blocked until granted the loopback permission", public_space)

    def flood():
        quiet = chromium.new_page()
        quiet.navigate("http://127.0.0.1:%d/probe.html?bridge=%s&token=%s&calls=40&gap=50" % (app_port, bridge, GUIDE_TOKEN))
        page.navigate("http://127.0.0.1:%d/probe.html?bridge=%s&token=%s&flood=500" % (app_port, bridge, GUIDE_TOKEN))
        page.wait("window.__done === true")
        noisy = page.evaluate("window.__result")
        quiet.wait("window.__done === true", timeout=20)
        calm = quiet.evaluate("window.__result")
        quiet.close()
        expect(noisy["closeCode"] == 1008 and "messages per second" in noisy["closeReason"], "flooder %r" % noisy)
        expect(calm["replies"] == 40 and calm["closeCode"] == 1000, "the other page %r" % calm)
        return "flooder closed %d %r; the other page made its 40 calls and closed 1000" % (noisy["closeCode"], noisy["closeReason"])
    check("Chromium: a flooding page is closed 1008 while another goes on", flood)
    page.close()


class Cog:
    """A page in WPE WebKit: `cog -P headless`, whose console lines come out on its stderr (unbuffered);
    the probe prints `__result {…}`."""

    def __init__(self, url):
        if not shutil.which("cog"):
            raise RuntimeError("cog is not installed (make deps installs Debian's cog)")
        self.proc = subprocess.Popen(["cog", "-P", "headless", "--enable-write-console-messages-to-stdout=true", url],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, NO_AT_BRIDGE="1"))
        self.lines = []

    def result(self, timeout=20):
        deadline = time.monotonic() + timeout
        os.set_blocking(self.proc.stderr.fileno(), False)
        buffered = b""
        try:
            while time.monotonic() < deadline:
                chunk = self.proc.stderr.read()
                if chunk:
                    buffered += chunk
                    for line in buffered.decode(errors="replace").splitlines():
                        if " CONSOLE LOG __result " in line:
                            return json.loads(line.split(" CONSOLE LOG __result ", 1)[1])
                elif self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            raise TimeoutError("no __result from cog within %g s: %r" % (timeout, buffered[-500:]))
        finally:
            self.proc.kill()
            self.proc.wait()


def run_wpe_checks(tmp, log_path, app_port, stranger_port, bridge_port):
    bridge = "ws://127.0.0.1:%d/jsonrpc" % bridge_port

    def url(origin_url, token=GUIDE_TOKEN, extra=""):
        return "%s/probe.html?bridge=%s&token=%s%s" % (origin_url, bridge, token, extra)

    def connects(extra=""):
        result = Cog(url("http://127.0.0.1:%d" % app_port, extra=extra)).result()
        expect(result["opened"] and result["reply"] == {"jsonrpc": "2.0", "id": 1, "result": None}, "%r" % result)
        return "opened (protocol %r), register -> null, closed %s" % (result.get("protocol"), result["closeCode"])

    def refused(origin_url, words, **kw):
        mark = len(bridge_log(log_path))
        result = Cog(url(origin_url, **kw)).result()
        expect(not result["opened"] and result["closeCode"] == 1006, "page saw %r" % result)
        logged = bridge_log(log_path)[mark:]
        expect(words in logged, "bridge log lacks %r: %r" % (words, logged[-300:]))
        return "page: error, close 1006; bridge: %s" % words

    check("WPE: an app's page connects (?token=)", connects)
    check("WPE: an app's page connects (token as a sub-protocol)", lambda: connects("&via=protocol"))
    check("WPE: an origin not configured is refused", lambda: refused("http://127.0.0.1:%d" % stranger_port, "is not a configured app"))
    check("WPE: a wrong token is refused", lambda: refused("http://127.0.0.1:%d" % app_port, "wrong token", token="guide-token-0123456789abcdeX"))

    def file_page():
        shutil.copy(os.path.join(HERE, "pages", "probe.html"), os.path.join(tmp, "probe.html"))
        return refused("file://" + tmp, "Origin 'null'")
    check("WPE: a file:// page (Origin null) is refused", file_page)

    def flood():
        quiet = Cog(url("http://127.0.0.1:%d" % app_port, extra="&calls=40&gap=50"))
        try:
            noisy = Cog(url("http://127.0.0.1:%d" % app_port, extra="&flood=500")).result()
        finally:
            calm = quiet.result()  # and it is stopped, whatever happened to the other
        expect(noisy["closeCode"] == 1008 and "messages per second" in noisy["closeReason"], "flooder %r" % noisy)
        expect(calm["replies"] == 40 and calm["closeCode"] == 1000, "the other page %r" % calm)
        return "flooder closed %d %r; the other page made its 40 calls" % (noisy["closeCode"], noisy["closeReason"])
    check("WPE: a flooding page is closed 1008 while another goes on", flood)


if __name__ == "__main__":
    main()
