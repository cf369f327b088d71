#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapback-web as real browsers see it: headless Chromium (driven over the DevTools protocol) and WPE
WebKit (`cog -P headless`, reporting through its console) loading pages over http from
127.0.0.1, against the real snapbackd and snapback-web.

    python3 Tests/web/test_browsers.py .build/debug/snapbackd .build/debug/snapback-web .build-c/release/player_poll

Checks, each from a page: an app's page connects (token in the query and as a sub-protocol) and calls;
refused: an origin not configured, a wrong token, Origin null (a file:// page), a rebinding Host (a
foreign name mapped to 127.0.0.1 by --host-resolver-rules), a page of a "public" address space
(--ip-address-space-overrides) until granted the loopback permission; a flooding page is closed with its
close code while another page goes on. Each refusal is also found, with its reason, in the bridge's log.
WPE: the same but the rebinding Host and the address space (Chromium's flags and permission).
Chromium: a page that sends more calls than the bridge lets wait for snapbackd (32) in one go, while
snapbackd is stopped, has the extra ones refused RESOURCE_EXHAUSTED at once and the others answered
once it runs. 200 Chromium page loads, each opening a session and going without closing it (navigated
away or its tab closed), leave no connection or session in snapbackd, and neither process an fd or
memory (RSS within 1 MiB).

snapback.js in Chromium and in WPE, on an MP4 made by ffmpeg whose breaks the page lists (player.html),
from two apps' pages at once: a seek over an unwatched break snaps back and ends
at the seek target after the break; neither app sees the other's sessions, content ids or bookmarks (nor may name its profile);
a second load resumes from the bookmark saved when the first page went; and (Chromium) when snapback-web
restarts under a playing page, snapback.js is told 1001, reconnects and reopens its session where the
video is. A page and a native player (libsnapback's example player_poll, on the same snapbackd) share
watched breaks: after a page watched break b1 of a content under profile alice, player_poll opening that
content and profile is not snapped back over b1; after player_poll watched b1 of another content, the
page's seek over it is not snapped back. An element that stalls (stall.html: film.mp4's bytes after its
first fifth held by the server) and then stays seeking (the viewer's seek beyond them) is not playing
for snapback.js (player.playing) nor for snapbackd (GetSessionState: playing, and a stream time not
extrapolated past where it stopped). WPE plays the MP4 with GStreamer, whose GL elements (Debian's gstreamer1.0-gl, which make deps
installs) it needs: without them its renderer process crashed as the video started.

Chromium also plays, with hls.js 1.6.15 (hlsjs.py: fetched from the pinned PyPI wheel at test time),
an HLS stream made by ffmpeg (media.py) with an EXT-X-DATERANGE interstitial X-RESTRICT="SKIP,JUMP" at 4 s
and a SCTE35-OUT range: without snapback (hls.html) hls.js schedules the ad with its restrictions, lists
the SCTE35-OUT range, and after the viewer's seek 1 -> 9 plays the ad and resumes at 4, not 9
(video-dev/hls.js#7029); with snapback.js attached to hls.js (hls-snapback.html) the same seek plays the
ad and ends at 9; and on a stitched stream (hls-splice.html: no interstitial, a SCTE35-OUT range at 4 s)
snapback.js has the bridge read the playlist hls.js loaded (readCues, libsnapback's readers), opens a
stitched session with that break, and the viewer's seek 1 -> 9 snaps back to 4 and ends at 9. Both check
that the ad's asset played to its end; hls-snapback.html that the session is not FINISHED at 9 (the
asset's end fires the element's `ended`, which is the ad's, not the content's). WPE 2.38 (cog) runs the same three on the stream in fragmented MP4
segments (media.py: on the TS one, WebKit's MSE player at times never completes the seek hls.js makes
over the gap at the buffer's start while the pipeline prerolls, and the page stays at 0.1).

A live playlist (hls-live.html: range_server's live.m3u8, media.live's EVENT playlist shown one segment
more every 2 s) carries an interstitial at 4 s from the first load and one at 10 s only from a later
refresh: snapback.js opens a live ad-rules session with midroll-4 and, when hls.js's schedule grows, sends
UpdateBreaks' midroll_times; the session then lists midroll-4 and midroll-10, and snapbackd pushes
PlayBreak for each as the content reaches it (both ads' assets play to their end).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cdp import Chromium  # noqa: E402
from harness import (FAILURES, check, daemon_status, expect, fds, free_port, rss_kib, show_logs,  # noqa: E402
                     start_bridge, start_daemon, stop, write_config)
import hlsjs  # noqa: E402
import media  # noqa: E402
import range_server  # noqa: E402

GUIDE_TOKEN = "guide-token-0123456789abcdef"
KIDS_TOKEN = "kids-token-0123456789abcdefg"
PUBLIC_TOKEN = "public-token-0123456789abcd"
# Calls a page may have waiting for snapbackd at once (PageRPC.maxInFlight).
IN_FLIGHT = 32


def main():
    snapbackd, web, player_poll = sys.argv[1], sys.argv[2], sys.argv[3]
    tmp = tempfile.mkdtemp(prefix="snapback-browsers-")
    # The site: the pages, hls.js and the media, made here.
    pages = os.path.join(tmp, "site")
    shutil.copytree(os.path.join(HERE, "pages"), pages)
    hlsjs.fetch(pages)
    for segments in media.STREAMS:
        media.hls(pages, segments=segments)
        media.splice(pages, segments=segments)
        media.live(pages, segments=segments)
    media.mp4(pages)
    app_server, app_port = range_server.serve(pages)
    kids_server, kids_port = range_server.serve(pages)
    stranger_server, stranger_port = range_server.serve(pages)
    public_server, public_port = range_server.serve(pages)
    sock_path = os.path.join(tmp, "snapbackd.sock")
    bridge_port = free_port()
    daemon = bridge = chromium = None
    log_path = os.path.join(tmp, "snapback-web.log")
    try:
        daemon = start_daemon(snapbackd, tmp, sock_path)
        apps = {"guide": {"origin": "http://127.0.0.1:%d" % app_port, "token": GUIDE_TOKEN, "max-connections": 4,
                          "profiles": "alice"},
                "kids": {"origin": "http://127.0.0.1:%d" % kids_port, "token": KIDS_TOKEN, "profiles": "kid"},
                "public": {"origin": "http://127.0.0.1:%d" % public_port, "token": PUBLIC_TOKEN}}
        config = write_config(tmp, bridge_port, sock_path, apps, messages_per_second=20, message_burst=40)
        bridge = start_bridge(web, config, log_path, bridge_port)
        chromium = Chromium(free_port(), [
            "--host-resolver-rules=MAP rebind.test 127.0.0.1",
            "--ip-address-space-overrides=127.0.0.1:%d=public" % public_port])
        print("chromium %s" % chromium.version.get("Browser"))
        run_checks(chromium, tmp, log_path, app_port, stranger_port, public_port, bridge_port)
        check("Chromium: a page's calls beyond %d in flight are refused RESOURCE_EXHAUSTED, the others answered" % IN_FLIGHT,
              lambda: in_flight(chromium, daemon, app_port, bridge_port))
        check("Chromium: 200 page loads and closes, each with a session, leave no session, fd or memory behind",
              lambda: loads_leave_nothing(chromium, daemon, bridge, sock_path, app_port, bridge_port))
        run_player_checks("Chromium", ChromiumPlayer(chromium, sock_path), app_port, kids_port, bridge_port, pages)
        run_shared_checks("Chromium", ChromiumPlayer(chromium, sock_path), player_poll, sock_path, app_port, bridge_port)

        def restart_bridge():
            nonlocal bridge
            stop(bridge)
            bridge = start_bridge(web, config, log_path, bridge_port)  # a fresh log: the checks after read only theirs
        check("Chromium: snapback.js reconnects when the bridge restarts and reopens its session where the video is",
              lambda: reconnects(chromium, app_port, bridge_port, restart_bridge, sock_path))
        run_hls_checks("Chromium", lambda url: chromium_result(chromium, url), app_port, bridge_port, "ts")
        chromium.close()
        chromium = None
        run_wpe_checks(tmp, log_path, app_port, stranger_port, bridge_port)
        run_player_checks("WPE", CogPlayer(sock_path), app_port, kids_port, bridge_port, pages)
        run_shared_checks("WPE", CogPlayer(sock_path), player_poll, sock_path, app_port, bridge_port)
        run_hls_checks("WPE", lambda url: Cog(url).result(timeout=60), app_port, bridge_port, "fmp4")
    finally:
        if chromium:
            chromium.close()
        stop(bridge, daemon)
        for server in (app_server, kids_server, stranger_server, public_server):
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


def run_hls_checks(browser, result_of, app_port, bridge_port, segments):
    """hls.js's three pages in `browser` (`result_of(url)`: the page's __result) on media.py's stream of
    `segments` (Chromium: MPEG-TS, which hls.js transmuxes; WPE 2.38: fragmented MP4, see media.py)."""
    stream = media.STREAMS[segments]
    site = "http://127.0.0.1:%d" % app_port
    snapback = "bridge=http://127.0.0.1:%d&token=%s&profile=alice&stream=%s" % (bridge_port, GUIDE_TOKEN, stream)
    check("%s: hls.js %s interstitial (%s), seek 1 -> 9 (hls.js#7029 baseline)" % (browser, hlsjs.VERSION, segments),
          lambda: hls_baseline(result_of("%s/hls.html?stream=%s" % (site, stream))))
    check("%s: snapback.js with hls.js %s (%s): the viewer's seek 1 -> 9 ends at 9 after the ad (hls.js#7029)" % (
        browser, hlsjs.VERSION, segments),
          lambda: hls_snapback(result_of("%s/hls-snapback.html?%s&content=hls-%s" % (site, snapback, browser.lower()))))
    check("%s: snapback.js with hls.js %s (%s) on a stitched stream: its SCTE35-OUT range, read by the bridge, snaps a seek 1 -> 9 back" % (
        browser, hlsjs.VERSION, segments),
          lambda: hls_splice(result_of("%s/hls-splice.html?%s&content=splice-%s" % (site, snapback, browser.lower()))))
    check("%s: snapback.js with hls.js %s (%s) on a live playlist: the interstitial that appears later joins the session and plays" % (
        browser, hlsjs.VERSION, segments),
          lambda: hls_live(result_of("%s/hls-live.html?%s&content=live-%s" % (site, snapback, browser.lower()))))


def ad_played(result):
    """The interstitial's asset played to its end, without an error (its playlist's 404, say)."""
    expect(result.get("assetsEnded") == 1 and not result.get("assetErrors"), "the ad's asset: ended %r, errors %r; %r" % (
        result.get("assetsEnded"), result.get("assetErrors"), result))


def hls_baseline(result):
    expect(result.get("version") == hlsjs.VERSION and not result.get("error"), "hls.js %r" % result)
    ad_played(result)
    ads = result["interstitials"]
    expect(len(ads) == 1 and abs(ads[0]["start"] - 4) < 0.1 and ads[0]["restrictions"] == {"skip": True, "jump": True},
           "interstitials %r" % ads)
    expect(any(r["scte35Out"] and r["start"] == 8 for r in result["dateRanges"]), "date ranges %r" % result["dateRanges"])
    expect(1 <= result["seekFrom"] < 2, "seek from %r" % result.get("seekFrom"))
    expect(abs(result["resumedAt"] - 4) < 0.1, "resumed at %r" % result.get("resumedAt"))
    return "ad at %.2f (skip, jump restricted), SCTE35-OUT at 8; seek %.2f -> 9 played the ad and resumed at %.2f" % (
        ads[0]["start"], result["seekFrom"], result["resumedAt"])


def session_closed(sock_path, leave):
    """Runs `leave` (a page goes) and waits, up to 10 s, until snapbackd holds a session fewer: the page's
    bookmark is saved then, which the next load resumes from (a fixed pause was too short on a loaded
    machine)."""
    before = daemon_status(sock_path)[1]
    leave()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and daemon_status(sock_path)[1] >= before:
        time.sleep(0.05)


class ChromiumPlayer:
    """Pages of snapback.js in Chromium tabs, left open until `leave` navigates them away (pagehide)."""

    def __init__(self, chromium, sock_path):
        self.chromium = chromium
        self.sock_path = sock_path

    def load(self, url, timeout=60):
        page = self.chromium.new_page()
        page.navigate(url)
        page.wait("window.__done === true", timeout=timeout)
        return page, page.evaluate("window.__result")

    def leave(self, page):
        session_closed(self.sock_path, lambda: page.navigate("about:blank"))
        page.close()


def run_player_checks(browser, player, app_port, kids_port, bridge_port, site_dir):
    """snapback.js on film.mp4 (breaks listed by the page: "mid", 10-15 s) from two apps' pages at once."""
    bridge = "http://127.0.0.1:%d" % bridge_port
    # Content ids of this browser's own: bookmarks and watched breaks outlive the pages.
    film, cartoon = "film-" + browser.lower(), "cartoon-" + browser.lower()
    guide = "http://127.0.0.1:%d/player.html?bridge=%s&token=%s&content=%s&profile=alice" % (app_port, bridge, GUIDE_TOKEN, film)
    kids = "http://127.0.0.1:%d/player.html?bridge=%s&token=%s&content=%s&profile=kid" % (kids_port, bridge, KIDS_TOKEN, cartoon)
    state = {}

    def snapped_back():
        page, r = player.load(guide + "&seek=2,30&until=30")
        state["guide"] = page
        expect(not r["errors"], "errors %r" % r["errors"])
        seeks = [p["seek"] for p in r["pushes"] if p["seek"]]
        expect(seeks and seeks[0]["reason"] == "SEEK_REASON_SNAPBACK" and seeks[0]["streamTime"] == 10, "pushes %r" % r["pushes"])
        expect(seeks[-1]["reason"] == "SEEK_REASON_RESUME_AFTER_SNAPBACK" and abs(seeks[-1]["streamTime"] - 30) < 0.1,
               "pushes %r" % r["pushes"])
        expect(30 <= r["at"] < 33, "ended at %r" % r["at"])
        return "seek %.2f -> 30 snapped back to 10 (%s), after the break on to %.3f; at %.2f" % (
            r["seekFrom"], r["pushes"][0]["reason"], seeks[-1]["streamTime"], r["at"])
    check("%s: snapback.js, a seek over an unwatched break snaps back and ends at its target" % browser, snapped_back)

    def other_app():
        page, r = player.load(kids + "&list=1&foreign=alice&until=1")
        player.leave(page)
        expect(r["listed"] == [cartoon], "kids list sessions %r" % r["listed"])
        expect(not any(b.startswith("film") for b in r["bookmarks"]), "kids see bookmarks %r" % r["bookmarks"])
        expect(r["foreign"] == 7, "kids listing alice's bookmarks: %r" % r["foreign"])
        return "kids (while guide plays film) list sessions %r, bookmarks %r; alice's: error %r" % (
            r["listed"], r["bookmarks"], r["foreign"])
    check("%s: two apps in one browser: neither sees the other's content ids or bookmarks" % browser, other_app)

    def resumed():
        # Chromium navigates away (pagehide: snapback.js closes the session); WPE's cog is stopped (the
        # connection drops). Either way the daemon saves the bookmark.
        player.leave(state.pop("guide"))
        page, r = player.load(guide + "&list=1&foreign=kid&until=30")
        player.leave(page)
        opened = r["sessions"][0]
        # Where the first page was when it went: past the seek target 30, before the film's end at 40.
        start = opened.get("startStreamTime", 0)
        expect(opened.get("resumedFromBookmark") is True and 30 <= start < 40, "reply %r" % opened)
        expect(abs(r["at"] - start) < 2, "playing at %r, not at the resume point %r" % (r["at"], start))
        expect(r["listed"] == [film] and film in r["bookmarks"] and not any(b.startswith("cartoon") for b in r["bookmarks"])
               and r["foreign"] == 7, "guide sees %r" % r)
        return "resumed from the bookmark at %.2f; lists %r, bookmarks %r; kid's: error %r" % (
            opened["startStreamTime"], r["listed"], r["bookmarks"], r["foreign"])
    check("%s: a second load resumes from the bookmark saved when the first page went" % browser, resumed)

    check("%s: snapback.js tells a stalled element and one stuck seeking as not playing, to the page and to snapbackd" % browser,
          lambda: stalls(browser, player, app_port, bridge, site_dir))


def stalls(browser, player, app_port, bridge, site_dir):
    """stall.html on film.mp4 whose bytes from a fifth on are held (range_server.py): a few seconds
    play, then none come, and the viewer's seek to 30 never completes."""
    hold = os.path.getsize(os.path.join(site_dir, "film.mp4")) // 5
    page, r = player.load("http://127.0.0.1:%d/stall.html?bridge=%s&token=%s&content=stall-%s&profile=alice&hold=%d" % (
        app_port, bridge, GUIDE_TOKEN, browser.lower(), hold))
    player.leave(page)
    expect(not r["errors"] and [s["what"] for s in r["states"]] == ["stalled", "seeking"], "the page %r" % r)
    stall, seek = r["states"]
    expect(seek["seeking"] and stall["readyState"] < 3 and not stall["paused"], "the element %r" % r["states"])
    for s in r["states"]:
        expect(not s["snapbackPlaying"] and not s["daemonPlaying"], "%s: playing %r" % (s["what"], s))
        # Not extrapolated past where the element stopped (the daemon's position of a playing session grows).
        expect(s["daemonStreamTime"] <= stall["element"] + 0.3, "%s: the daemon at %.2f, the element stopped at %.2f" % (
            s["what"], s["daemonStreamTime"], stall["element"]))
    return "stalled at %.2f (readyState %d): not playing, the daemon at %.2f; seeking to 30 (readyState %d): not playing, the daemon at %.2f (%s)" % (
        stall["element"], stall["readyState"], stall["daemonStreamTime"], seek["readyState"], seek["daemonStreamTime"], seek["phase"])


def native(player_poll, sock_path, *args):
    """player_poll's story against the test's snapbackd: (exit status, what it printed)."""
    run = subprocess.run([player_poll, *args], env=dict(os.environ, SNAPBACK_SOCKET=sock_path),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    return run.returncode, run.stdout.decode("utf-8", "replace")


def run_shared_checks(browser, player, player_poll, sock_path, app_port, bridge_port):
    """A page (film.mp4, its break named b1, as the native player names its first) and player_poll, on
    one content id and profile, each after the other watched b1: the daemon keeps watched breaks by
    content id and break id, the page reaching it through snapback-web, the player through libsnapback."""
    page_url = "http://127.0.0.1:%d/player.html?bridge=http://127.0.0.1:%d&token=%s&profile=alice&break=b1&content=" % (
        app_port, bridge_port, GUIDE_TOKEN)

    def page_then_native():
        content = "shared-page-" + browser.lower()
        # Done once told b1 watched: the daemon has stored it by then, so the player's open finds it.
        page, r = player.load(page_url + content + "&seek=2,30&until=30&awaitPush=breakWatched")
        player.leave(page)
        seeks = [p["seek"] for p in r["pushes"] if p["seek"]]
        expect(not r["errors"] and seeks and seeks[0]["reason"] == "SEEK_REASON_SNAPBACK", "the page: %r" % r)
        expect(any(p["kind"] == "breakWatched" for p in r["pushes"]), "the page was not told b1 watched: %r" % r["pushes"])
        rc, out = native(player_poll, sock_path, "--content-id", content, "--profile", "alice", "--b1-watched")
        expect(rc == 0 and "seek to 600" not in out, "player_poll exited %d:\n%s" % (rc, out))
        return "the page snapped back to 10 and watched b1; player_poll then: %s" % out.strip().splitlines()[-1]
    check("%s: after a page watched a break, a native player on the same content and profile is not snapped back over it"
          % browser, page_then_native)

    def native_then_page():
        content = "shared-native-" + browser.lower()
        rc, out = native(player_poll, sock_path, "--content-id", content, "--profile", "alice")
        expect(rc == 0 and "break b1 watched" in out, "player_poll exited %d:\n%s" % (rc, out))
        # Played on to 33: a snapback pushed after the seek reached 30 would be seen before the page is done.
        page, r = player.load(page_url + content + "&seek=2,30&until=33&watched=1")
        player.leave(page)
        seeks = [p["seek"] for p in r["pushes"] if p["seek"]]
        expect(not r["errors"] and not seeks and 33 <= r["at"] < 36, "the page: %r" % r)
        return "player_poll watched b1 (%s); the page's seek %.2f -> 30 not snapped back, at %.2f; pushes %s" % (
            out.strip().splitlines()[-1], r["seekFrom"], r["at"], sorted({p["kind"] for p in r["pushes"]}))
    check("%s: after a native player watched a break, a page's seek over it is not snapped back" % browser, native_then_page)


def reconnects(chromium, app_port, bridge_port, restart_bridge, sock_path):
    url = "http://127.0.0.1:%d/player.html?bridge=http://127.0.0.1:%d&token=%s&content=film-again&profile=alice&until=1000" % (
        app_port, bridge_port, GUIDE_TOKEN)
    page = chromium.new_page()
    try:
        page.navigate(url)
        page.wait("window.__result && window.__result.sessions.length === 1 && document.getElementById('v').currentTime > 3", timeout=30)
        restart_bridge()
        page.wait("window.__result.sessions.length === 2", timeout=30)
        r = page.evaluate("window.__result")
        at = page.evaluate("document.getElementById('v').currentTime")
    finally:
        page.close()
    first, second = r["sessions"]
    expect(second["sessionId"] != first["sessionId"] and 3 < second.get("resumeContentTime", 0) <= at,
           "reopened %r (first %r), video at %.2f" % (second, first, at))
    expect(any(e["code"] == 1001 for e in r["errors"]), "the page was not told the bridge went: %r" % r["errors"])
    return "told %s; reopened as session %s at content %.2f (the video at %.2f)" % (
        [e["code"] for e in r["errors"]], second["sessionId"], second["resumeContentTime"], at)


def in_flight(chromium, daemon, app_port, bridge_port, extra=4):
    """A page sends IN_FLIGHT + extra calls in one go while snapbackd is stopped (SIGSTOP), so none is
    answered before the bridge has read them all: the extra ones are refused at once, the others answered
    once snapbackd runs again."""
    n = IN_FLIGHT + extra  # within the burst of messages the bridge takes (40 here)
    page = chromium.new_page()
    try:
        page.navigate("http://127.0.0.1:%d/probe.html?bridge=ws://127.0.0.1:%d/jsonrpc&token=%s&burst=%d" % (
            app_port, bridge_port, GUIDE_TOKEN, n))
        page.wait("window.__ready === true")
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            page.evaluate("window.__burst()")
            page.wait("window.__result.burst.refused.length >= %d" % extra, timeout=10)
            time.sleep(0.3)  # any more refusals, or an answer, would have come by now
            early = page.evaluate("window.__result.burst")
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        page.wait("window.__done === true", timeout=15)
        r = page.evaluate("window.__result")
    finally:
        page.close()
    refused = r["burst"]["refused"]
    expect(early["answered"] == 0 and len(early["refused"]) == extra, "while snapbackd was stopped: %r" % early)
    expect([e["id"] for e in refused] == list(range(n + 2 - extra, n + 2)), "refused ids %r (register was 1)" % refused)
    expect(all(e["code"] == 8 and "more than %d calls waiting" % IN_FLIGHT in e["message"] for e in refused), "refusals %r" % refused)
    expect(r["burst"]["answered"] == IN_FLIGHT and r["closeCode"] == 1000, "answered %r, close %r" % (r["burst"], r["closeCode"]))
    return "%d calls at once: the last %d refused %d %r, the first %d answered once snapbackd ran" % (
        n, extra, refused[0]["code"], refused[0]["message"], r["burst"]["answered"])


def loads_leave_nothing(chromium, daemon, bridge, sock_path, app_port, bridge_port, loads=200, warmup=20):
    """Pages that open a session and go without closing it: every other one navigated to the next load
    (the browser closes its WebSocket as the page unloads), the others' tab closed. After them snapbackd
    has the connections and sessions it had before, and both processes their fds and, within 1 MiB,
    their RSS (measured after `warmup` loads, so that the allocators' first growth is not counted)."""
    url = "http://127.0.0.1:%d/probe.html?bridge=ws://127.0.0.1:%d/jsonrpc&token=%s&session=loads" % (
        app_port, bridge_port, GUIDE_TOKEN)
    procs = {"snapback-web": bridge.pid, "snapbackd": daemon.pid}

    def run(count, first):
        page = chromium.new_page()
        for i in range(first, first + count):
            page.navigate("%s&n=%d" % (url, i))
            page.wait("window.__n === '%d' && window.__done === true" % i)
            r = page.evaluate("window.__result")
            expect("result" in r.get("session", {}), "load %d: openSession %r, close %r %r" % (
                i, r.get("session"), r["closeCode"], r["closeReason"]))
            if i % 2:
                page.close_tab()
                page = chromium.new_page()
        page.close_tab()

    def settled(base):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and daemon_status(sock_path) != base:
            time.sleep(0.1)
        status = daemon_status(sock_path)
        time.sleep(1.2)  # the bridge's lingering closes (1 s), and snapbackd's of the status call's connection
        return status

    def counts():
        return {name: (len(fds(pid)), rss_kib(pid)) for name, pid in procs.items()}

    base = daemon_status(sock_path)
    run(warmup, 0)
    settled(base)
    before = counts()
    open_before = {name: fds(pid) for name, pid in procs.items()}
    t0 = time.monotonic()
    run(loads, warmup)
    elapsed = time.monotonic() - t0
    status = settled(base)
    after = counts()
    expect(status == base, "snapbackd (connections, sessions) %r, before the pages %r" % (status, base))
    for name in procs:
        gained = sorted(set(fds(procs[name])) - set(open_before[name]))
        expect(after[name][0] == before[name][0], "%s fds %d -> %d (new: %s)" % (name, before[name][0], after[name][0], gained))
        expect(after[name][1] - before[name][1] < 1024, "%s RSS %d -> %d KiB" % (name, before[name][1], after[name][1]))
    return "%d loads in %.1f s; snapbackd connections, sessions %r -> %r; %s" % (
        loads, elapsed, base, status, "; ".join("%s fds %d -> %d, RSS %d -> %d KiB" % (
            name, before[name][0], after[name][0], before[name][1], after[name][1]) for name in procs))


def hls_snapback(result):
    expect(result.get("version") == hlsjs.VERSION and not result.get("error") and not result["errors"], "hls.js %r" % result)
    ad_played(result)
    plays = [p for p in result["pushes"] if p["playBreak"]]
    seeks = [p["seek"] for p in result["pushes"] if p["seek"]]
    expect(len(plays) == 1 and plays[0]["playBreak"]["breakId"] == "midroll-4", "PlayBreak pushes %r" % result["pushes"])
    expect(seeks == [{"streamTime": 9, "reason": "SEEK_REASON_RESUME_AFTER_SNAPBACK"}], "seek pushes %r" % result["pushes"])
    expect(abs(result["resumedAt"] - 4) < 0.1, "hls.js resumed the primary at %r" % result.get("resumedAt"))
    expect(9 <= result["at"] < 10.5, "ended at %r, not after 9" % result["at"])
    # The ad's asset ended on the element: that is not the content's end (ContentComplete).
    expect(result.get("phase") not in (None, "SESSION_PHASE_FINISHED"), "the session's phase at 9: %r (the element ended %r times)" % (
        result.get("phase"), result.get("elementEnded")))
    return "seek %.2f -> 9: PlayBreak midroll-4 (the ad hls.js plays, its end the element's `ended` %r times), hls.js resumed at %.2f, pushed on to 9; at %.2f, %s" % (
        result["seekFrom"], result.get("elementEnded", 0), result["resumedAt"], result["at"], result["phase"])


def hls_live(result):
    expect(result.get("version") == hlsjs.VERSION and not result.get("error") and not result["errors"], "hls.js %r" % result)
    expect(result.get("live") is True, "hls.js did not take the playlist as live: %r" % result)
    # hls.js's schedule grew after the session opened: one interstitial (near 4 s), then two (near 10 s).
    schedules = result["schedules"]
    expect(schedules and len(schedules[0]) == 1 and len(schedules[-1]) == 2
           and abs(schedules[0][0] - 4) < 0.1 and abs(schedules[-1][1] - 10) < 0.1, "hls.js's schedules %r" % schedules)
    # Each interstitial is a break at the time hls.js first gave it (its later times move by milliseconds).
    first_second = next(times[1] for times in schedules if len(times) == 2)
    expected = [midroll_id(schedules[0][0]), midroll_id(first_second)]
    expect(result.get("breaks") == expected, "the session's breaks %r, not %r" % (result.get("breaks"), expected))
    plays = [p["playBreak"]["breakId"] for p in result["pushes"] if p["playBreak"]]
    expect(plays == expected, "PlayBreak pushes %r" % result["pushes"])
    expect(result.get("assetsEnded") == 2 and not result.get("assetErrors"), "the ads' assets: ended %r, errors %r" % (
        result.get("assetsEnded"), result.get("assetErrors")))
    return "schedules %r; session breaks %r; PlayBreak %r; both ads played; at %.2f" % (
        result["schedules"], result["breaks"], plays, result["at"])


def midroll_id(t):
    """snapbackd's id of an ad-rules mid-roll at content time t: to the millisecond, no trailing zeros."""
    return "midroll-" + ("%.3f" % round(t, 3)).rstrip("0").rstrip(".")


def hls_splice(result):
    expect(result.get("version") == hlsjs.VERSION and not result.get("error") and not result["errors"], "hls.js %r" % result)
    breaks = result.get("breaks")
    expect(breaks == [{"id": "splice1", "start": 4, "duration": 3}], "the session's breaks %r" % breaks)
    seeks = [p["seek"] for p in result["pushes"] if p["seek"]]
    expect(seeks == [{"streamTime": 4, "reason": "SEEK_REASON_SNAPBACK"},
                     {"streamTime": 9, "reason": "SEEK_REASON_RESUME_AFTER_SNAPBACK"}], "seek pushes %r" % result["pushes"])
    expect(9 <= result["at"] < 10.5, "ended at %r, not after 9" % result["at"])
    return "breaks %r; seek %.2f -> 9: snapped back to 4, on to 9 after the break; at %.2f" % (
        breaks, result["seekFrom"], result["at"])


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

    def result(self, timeout=20, keep=False):
        """The page's __result; cog is stopped then unless `keep` (then by `stop`)."""
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
            keep = False
            raise TimeoutError("no __result from cog within %g s: %r" % (timeout, buffered[-500:]))
        finally:
            if not keep:
                self.stop()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class CogPlayer:
    """Pages of snapback.js in WPE, each its own cog, left running until `leave` stops it: the page's
    connection drops, and snapbackd closes its session as a player's that vanished."""

    def __init__(self, sock_path):
        self.sock_path = sock_path

    def load(self, url, timeout=60):
        cog = Cog(url)
        return cog, cog.result(timeout, keep=True)

    def leave(self, cog):
        session_closed(self.sock_path, cog.stop)


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
