#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mpv under snapback, end to end: the real daemon, a real mpv (headless: --vo=null --ao=null) with the
snapback.so plugin, and test media made by ffmpeg (make_media.py). Standard library only.

What mpv does is read from mpv itself, through its JSON IPC (--input-ipc-server), never from the
plugin. Positions are compared within TOLERANCE: the plugin's seeks are exact, the viewer's here are
mpv's default absolute seeks (precise too), keyframes are every second, and the position is polled
every POLL seconds while mpv plays; 0.5 s covers those and a report's delay, and is far below every
distance the checks tell apart (the shortest break is 2 s). What the daemon holds is asked of it through
the repository's Python client (Tests/clients/python).

    test_mpv.py --plugin .build-c/mpv/snapback.so --snapbackd .build/debug/snapbackd
"""
import argparse
import contextlib
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "Tests", "clients", "python"))
import make_media  # noqa: E402
import snapback_client as sb  # noqa: E402
from e2e import POLL, Failure, check, summary, wait_socket  # noqa: E402  (the players' shared fixture)
import e2e  # noqa: E402

TOLERANCE = 0.5
A = make_media.STITCHINGS["a"]
B = make_media.STITCHINGS["b"]


class Mpv(e2e.Player):
    """One mpv process with the plugin, driven and observed through its JSON IPC."""

    what = "mpv"

    def __init__(self, work, plugin, daemon_socket, media, name, paused=False, opts="", mpv_args=()):
        super().__init__(work, name)
        self.ipc_path = os.path.join(work, f"{name}.ipc")
        args = ["mpv", "--no-config", "--vo=null", "--ao=null", "--term-osd=force", "--idle=no",
                f"--script={plugin}", f"--input-ipc-server={self.ipc_path}",
                f"--script-opts=snapback-socket={daemon_socket},snapback-verbose=yes{opts}", *mpv_args]
        if paused:
            args.append("--pause")
        files = media if isinstance(media, list) else [media]
        self.proc = subprocess.Popen(args + files, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        wait_socket(self.ipc_path, self.proc, 10, "mpv")
        # mpv binds its IPC socket before it listens on it: a connect in between is refused.
        deadline = time.monotonic() + 10
        while True:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.settimeout(5)
            try:
                self.sock.connect(self.ipc_path)
                break
            except ConnectionRefusedError:
                self.sock.close()
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.02)
        self.reader = self.sock.makefile("rb")
        self.request = 0

    def command(self, *args):
        self.request += 1
        self.sock.sendall((json.dumps({"command": list(args), "request_id": self.request}) + "\n").encode())
        while True:
            line = self.reader.readline()
            if not line:
                raise Failure(f"mpv closed its IPC during {args}")
            reply = json.loads(line)
            if reply.get("request_id") == self.request and "error" in reply:
                return reply

    def position(self):
        """mpv's own time-pos, or None when it has none (no file loaded yet)."""
        reply = self.command("get_property", "time-pos")
        return reply.get("data") if reply["error"] == "success" else None

    def seek(self, target):
        check(self.command("seek", str(target), "absolute")["error"] == "success", f"mpv accepts seek {target}")

    def quit(self):
        self.command("quit")
        self.sock.close()
        self.exited("quit")


def seek_over_break(mpv, first_break, target):
    """A seek to `target` over the unwatched break `first_break` (start, duration, ads) lands in it; the
    break plays to its end, then mpv is pushed on to the seek target: the first position past the break
    (beyond a report's delay) is the target, never the content between them."""
    b_start, b_end = first_break[0], first_break[0] + first_break[1]
    mpv.seek(target)
    seen = mpv.wait_position(lambda p: b_start - TOLERANCE <= p < b_end, 3,
                             f"the seek to {target} over the unwatched break lands in it [{b_start}, {b_end})")
    check(True, f"mpv is in the break at {seen[-1]:.2f} after the seek to {target}")
    seen = mpv.wait_position(lambda p: p >= b_end + 0.3, first_break[1] + 4, "mpv leaves the break")
    check(abs(seen[-1] - target) <= TOLERANCE + 0.5,
          f"after the break mpv is at the seek target {target} (at {seen[-1]:.2f})")


def story(work, plugin, sock, media):
    movie_a, movie_b = media
    first_break = make_media.layout(A)[0]  # (10, 6): content 10
    target = 20.0

    print("-- A, first viewing: a seek over an unwatched break")
    mpv = Mpv(work, plugin, sock, movie_a, "a1")
    try:
        mpv.wait_position(lambda p: p >= 1.0, 10, "mpv plays A")
        seek_over_break(mpv, first_break, target)
        check("Ad break — you will return to 0:20" in mpv.output(),
              "mpv showed \"Ad break — you will return to 0:20\"")

        print("-- A: a seek over the watched break goes straight through")
        mpv.seek(5)
        mpv.wait_position(lambda p: abs(p - 5) <= TOLERANCE, 3, "mpv is back at 5 (backward seeks are not held)")
        mpv.seek(22)
        seen = mpv.wait_position(lambda p: p >= 22 - TOLERANCE, 3, "the seek to 22 lands")
        check(abs(seen[-1] - 22) <= TOLERANCE, f"the seek to 22 over the watched break lands at {seen[-1]:.2f}")
        later = []
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            later.append(mpv.position())
            time.sleep(POLL)
        check(all(p is not None and p >= 22 - TOLERANCE and not make_media.in_break(A, p) for p in later),
              f"mpv stays past the watched break for 1.5 s ({summary([p for p in later if p is not None])})")

        print("-- A: pause and quit")
        check(mpv.command("set_property", "pause", True)["error"] == "success", "mpv pauses")
        time.sleep(0.3)
        stopped = mpv.position()
        content = make_media.content_time(A, stopped)
        print(f"     paused at stream {stopped:.2f} = content {content:.2f}")
        check(not make_media.in_break(A, stopped), "the pause is in content")
        mpv.quit()
    finally:
        mpv.kill()

    print("-- A again: resumes at the same content time")
    with resumed(work, plugin, sock, movie_a, "a2", A, content) as (mpv, _):
        mpv.quit()

    print("-- B, another stitching (other ad lengths, breaks from its sidecar): the same content point")
    with resumed(work, plugin, sock, movie_b, "b1", B, content) as (mpv, first):
        check(mpv.command("set_property", "pause", False)["error"] == "success", "mpv plays B")
        mpv.wait_position(lambda p: p >= first + 1.0, 5, "B plays on from there")
        mpv.quit()
        check("3 breaks from sidecar" in mpv.output(), "B's breaks came from its sidecar")


def make_hls(work, movie, stitching):
    """Stitching `movie` as an HLS VOD stream of 1 s segments (ffmpeg, dated by PROGRAM-DATE-TIME), its
    breaks marked by EXT-X-DATERANGE SCTE35-OUT ranges dated from the first segment: the breaks come from
    the manifest alone (an HLS stream has no chapters)."""
    out = os.path.join(work, "hls")
    os.makedirs(out, exist_ok=True)
    playlist = os.path.join(out, "stream.m3u8")
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", movie, "-c", "copy", "-f", "hls", "-hls_time", "1",
                    "-hls_playlist_type", "vod", "-hls_flags", "program_date_time",
                    "-hls_segment_filename", os.path.join(out, "s%03d.ts"), playlist], check=True)
    with open(playlist) as f:
        lines = f.read().splitlines()
    first = next(l for l in lines if l.startswith("#EXT-X-PROGRAM-DATE-TIME:")).split(":", 1)[1]
    t0 = datetime.datetime.strptime(first, "%Y-%m-%dT%H:%M:%S.%f%z")
    ranges = []
    for i, (start, duration, _) in enumerate(make_media.layout(stitching)):
        date = (t0 + datetime.timedelta(seconds=start)).astimezone(datetime.timezone.utc)
        ranges.append(f'#EXT-X-DATERANGE:ID="splice-{i + 1}",START-DATE="{date.isoformat(timespec="milliseconds")}",'
                      f"DURATION={duration:.3f},SCTE35-OUT=0xFC")
    at = next(i for i, l in enumerate(lines) if l.startswith("#EXTINF"))
    with open(playlist, "w") as f:
        f.write("\n".join(lines[:at] + ranges + lines[at:]) + "\n")
    return playlist


def hls_manifest(work, plugin, sock, movie_a):
    """An HLS stream whose breaks are its playlist's DATERANGEs: a seek over the first snaps back to it,
    and after the break mpv returns to the target."""
    print("-- HLS (ffmpeg, DATERANGE markers): a seek over an unwatched break")
    playlist = make_hls(work, movie_a, A)
    first_break = make_media.layout(A)[0]
    target = 20.0
    mpv = Mpv(work, plugin, sock, playlist, "h1")
    try:
        mpv.wait_position(lambda p: p >= 1.0, 10, "mpv plays the HLS stream")
        check("3 breaks from manifest" in mpv.output(), "the stream's breaks came from its playlist")
        seek_over_break(mpv, first_break, target)
        mpv.quit()
    finally:
        mpv.kill()

    print("-- the same HLS stream over http (a loopback server): its playlist fetched through libcurl")
    mpv = None
    with http_server(os.path.dirname(playlist)) as base:
        try:
            mpv = Mpv(work, plugin, sock, f"{base}/{os.path.basename(playlist)}", "h2")
            mpv.wait_position(lambda p: p >= 1.0, 10, "mpv plays the HLS stream over http")
            check("3 breaks from manifest" in mpv.output(), "the stream's breaks came from its playlist over http")
            mpv.quit()
        finally:
            if mpv:
                mpv.kill()


@contextlib.contextmanager
def http_server(directory):
    """Python's http.server on a free loopback port serving `directory`: yields its base URL."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                              cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise Failure("the http server did not listen within 10 s")
            time.sleep(POLL)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait()


def wait_log(player, text, seconds, what, after=0):
    """Waits until the player's log holds `text` after offset `after`; returns the log's length then."""
    deadline = time.monotonic() + seconds
    while True:
        out = player.output()
        at = out.find(text, after)
        if at >= 0:
            check(True, what)
            return at + len(text)
        if time.monotonic() > deadline:
            raise Failure(f"{what}: no \"{text}\" in {os.path.basename(player.log_path)} within {seconds} s")
        time.sleep(POLL)


def live_refreshes(work, plugin, snapbackd, movie_a):
    """A live HLS playlist over http (no ENDLIST, 1 s segments of A's stitching) whose EXT-X-CUE-OUT break is
    opened, extended and closed by its CUE-IN in three rewrites of the playlist: the plugin refreshes it on
    its own timer (the playlist's target duration: 1 s), each change goes to the daemon as UpdateBreaks, a
    refused refresh changes nothing, a refresh made while the daemon is away reaches it once the library
    has reopened the session, and a seek over the closed break snaps back to it, then on to the target.
    The daemon's policy has live snapback on (it is off in every preset)."""
    print("-- live HLS over http: a CUE-OUT break opened, extended, closed by three refreshes; then a snapback")
    out = os.path.join(work, "live")
    os.makedirs(out, exist_ok=True)
    # AAC: the TS muxer cannot carry FLAC, and a stream without packets would hold ffmpeg's probing.
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", movie_a, "-c:v", "copy", "-c:a", "aac", "-f", "hls",
                    "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename",
                    os.path.join(out, "s%03d.ts"), os.path.join(out, "vod.m3u8")], check=True)
    with open(os.path.join(out, "vod.m3u8")) as f:
        lines = f.read().splitlines()
    segments = [(lines[i], lines[i + 1]) for i, l in enumerate(lines) if l.startswith("#EXTINF")]
    check(all(e == "#EXTINF:1.000000," for e, _ in segments[:30]), "the live stream's first 30 segments last 1 s each")
    start, duration, _ = make_media.layout(A)[0]  # (10, 6)
    playlist = os.path.join(out, "live.m3u8")

    def publish(n, cue_in=None, text=None):
        """The live playlist: segments 0 to n-1, a CUE-OUT before segment `start`, a CUE-IN before segment
        `cue_in` (or `text` as it is), replaced at once (the server never sends half of one)."""
        if text is None:
            body = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:0"]
            for i, (extinf, uri) in enumerate(segments[:n]):
                if i == start:
                    body.append("#EXT-X-CUE-OUT")
                if i == cue_in:
                    body.append("#EXT-X-CUE-IN")
                body += [extinf, uri]
            text = "\n".join(body) + "\n"
        with open(playlist + ".new", "w") as f:
            f.write(text)
        os.replace(playlist + ".new", playlist)

    break_id = f"cue-out@{start:g}"
    publish(int(start) + 2)  # opened: the break runs to the live edge, 2 s so far
    config = "[policy]\nlive-snapback = yes\n"
    daemon = e2e.Daemon(snapbackd, work, "live-daemon", config=config)
    mpv = None
    try:
        with http_server(out) as base:
            # From the window's first segment (ffmpeg starts 3 from the live edge), so that the stream's
            # time 0 is where the plugin's first playlist begins, as the break's start is counted.
            mpv = Mpv(work, plugin, daemon.sock, f"{base}/live.m3u8", "live",
                      mpv_args=["--ytdl=no", "--demuxer-lavf-o=live_start_index=0"])
            at = wait_log(mpv, "live, refreshed every 1 s", 10, "the live playlist is refreshed every target duration")
            at = wait_log(mpv, "1 breaks from manifest", 10, "the session opened with the open break", at)
            mpv.wait_position(lambda p: p >= 0.5, 10, "mpv plays the live stream")
            publish(int(start) + 5)  # extended: 5 s
            at = wait_log(mpv, f"refresh: break {break_id} changed", 5, "refresh 1: the open break extended", at)
            at = wait_log(mpv, "UpdateBreaks: the daemon took the refreshed breaks", 5, "the daemon took it", at)
            publish(0, text="#EXTM3U\n#EXTINF:x,\n")
            at = wait_log(mpv, "refresh refused", 5, "refresh 2: a malformed playlist is refused", at)
            daemon.stop()
            at = wait_log(mpv, "snapbackd went away", 5, "the daemon stopped", at)
            publish(len(segments), cue_in=int(start + duration))  # closed: 6 s
            at = wait_log(mpv, f"refresh: break {break_id} changed", 5, "refresh 3 (the daemon away): the break closed", at)
            daemon = e2e.Daemon(snapbackd, work, "live-daemon", log_name="live-daemon-2", config=config)
            at = wait_log(mpv, "session reopened after a daemon restart", 10, "the session is reopened", at)
            at = wait_log(mpv, "UpdateBreaks: the daemon took the refreshed breaks", 5, "then the daemon took it", at)
            pos = mpv.position()
            check(pos is not None and pos < start - 2, f"mpv is still before the break (at {pos})")
            time.sleep(1.5)  # ffmpeg's own reload of the playlist, and mpv's cache past the target
            seek_over_break(mpv, (start, duration), 20.0)
            mpv.quit()
        log = mpv.output()
        # The malformed refresh; the daemon's stop, and a call it cut off.
        expected = ("refresh refused", "snapbackd is stopping", "DISCONNECTED")
        bad = [l for l in e2e.plugin_failures(log) if not any(e in l for e in expected)]
        check(not bad, f"the plugin reported no other failure ({bad[:3]})")
        daemon.stop()
    finally:
        if mpv:
            mpv.kill()
        daemon.kill()


VMAP = """<?xml version="1.0" encoding="UTF-8"?>
<vmap:VMAP xmlns:vmap="http://www.iab.net/videoadvertising/vmap" version="1.0">
 <vmap:AdBreak timeOffset="00:00:08.000" breakType="linear" breakId="mid">
  <vmap:AdSource id="mid-ad" allowMultipleAds="false" followRedirects="true">
   <vmap:VASTAdData><VAST version="3.0"><Ad id="1"><InLine><AdSystem>test</AdSystem><AdTitle>ad</AdTitle>
    <Creatives><Creative><Linear><Duration>00:00:03.000</Duration></Linear></Creative></Creatives>
   </InLine></Ad></VAST></vmap:VASTAdData>
  </vmap:AdSource>
 </vmap:AdBreak>
 <vmap:AdBreak timeOffset="00:00:30.000" breakType="linear" breakId="empty"/>
</vmap:VMAP>
"""


def vmap_ad_rules(work, plugin, sock, movie_a):
    """A VMAP given as snapback-vmap makes the session an ad-rules one: a seek over its mid-roll at 8 s
    plays that break (PlayBreak: mpv has no ad player, so the content is held paused for the 3 s its
    inline VAST says), then the daemon sends mpv on to the seek's target; a seek over the break the ad
    server left empty goes straight through. The same VMAP as a sidecar beside the file is read too."""
    print("-- VMAP (snapback-vmap): a seek over its mid-roll plays the break, then goes on to the target")
    vmap = os.path.join(work, "rules.vmap.xml")
    with open(vmap, "w") as f:
        f.write(VMAP)
    mpv = Mpv(work, plugin, sock, movie_a, "v1", opts=f",snapback-vmap={vmap},snapback-content-id=vmap-movie")
    try:
        mpv.wait_position(lambda p: p >= 1.0, 10, "mpv plays the file")
        check("2 breaks from VMAP" in mpv.output(), "the breaks came from the VMAP, not the file's chapters")
        mpv.seek(20)
        at = wait_log(mpv, "PlayBreak midroll-8: the content held for 3 s", 3, "the seek over 8 s plays midroll-8")
        check(mpv.command("get_property", "pause")["data"] is True, "mpv's content is paused while the break plays")
        held = mpv.position()
        check(held is not None and abs(held - 20) <= TOLERANCE, f"the content waits at the seek target (at {held})")
        wait_log(mpv, "break midroll-8 played", 5, "the break ends after its 3 s", at)
        seen = mpv.wait_position(lambda p: p >= 21, 5, "the content plays on from the target")
        check(mpv.command("get_property", "pause")["data"] is False, "mpv plays again")
        check(all(p >= 20 - TOLERANCE for p in seen), f"it never went back before the target ({summary(seen)})")
        print("-- VMAP: a seek over the empty break (at 30 s) goes straight through")
        mpv.seek(40)
        seen = mpv.wait_position(lambda p: p >= 41.5, 4, "mpv plays on past 40")
        check(all(p >= 40 - TOLERANCE for p in seen[1:]), f"no break played ({summary(seen)})")
        check(mpv.output().count("PlayBreak") == 1, "one PlayBreak only (the empty break has none)")
        mpv.quit()
    finally:
        mpv.kill()

    print("-- VMAP as a sidecar (NAME.vmap.xml beside NAME.mkv)")
    media = os.path.join(work, "vmap-side")
    os.makedirs(media, exist_ok=True)
    movie = os.path.join(media, "feature.mkv")
    shutil.copy(movie_a, movie)
    shutil.copy(vmap, os.path.join(media, "feature.vmap.xml"))
    mpv = Mpv(work, plugin, sock, movie, "v2")
    try:
        mpv.wait_position(lambda p: p >= 0.5, 10, "mpv plays the file")
        check("2 breaks from VMAP" in mpv.output(), "the sidecar VMAP's breaks are the session's")
        mpv.quit()
    finally:
        mpv.kill()


def retired_sessions(work, plugin, sock, media, daemon):
    """Files that end while their sessions are still opening: each such session is closed once the
    daemon answers its open, however many there are; only the playing file's stays open."""
    movie_a, movie_b = media
    print("-- files ending while their sessions open (the daemon stopped): each closed once it answers")
    mpv = Mpv(work, plugin, sock, [movie_a, movie_b, movie_a, movie_b], "r1",
              opts=",snapback-resume=no,snapback-open-timeout=0.3")
    try:
        mpv.wait_position(lambda p: p >= 0.5, 10, "mpv plays the first file")
        daemon.send_signal(signal.SIGSTOP)
        try:
            for index in (1, 2, 3):
                check(mpv.command("playlist-next")["error"] == "success", f"mpv goes on to file {index + 1}")
                # Playing: the entry mpv plays is the next one (its previous file has ended) and it moves
                # (its start was held for its session, 0.3 s at most).
                deadline = time.monotonic() + 10
                while (mpv.command("get_property", "playlist-playing-pos").get("data") != index
                       or (mpv.position() or 0) < 0.3):
                    if time.monotonic() > deadline:
                        raise Failure(f"mpv did not play file {index + 1} within 10 s")
                    time.sleep(POLL)
        finally:
            daemon.send_signal(signal.SIGCONT)
        with sb.Client(sock) as c:
            c.hello()
            deadline = time.monotonic() + 5
            while True:
                sessions = c.call("Control/ListSessions").sessions
                if len(sessions) == 1 or time.monotonic() > deadline:
                    break
                time.sleep(POLL)
            check(len(sessions) == 1, f"one session open, the playing file's (got {len(sessions)}: "
                  f"{[(s.session_id, s.content_id) for s in sessions]})")
        mpv.quit()
    finally:
        mpv.kill()


@contextlib.contextmanager
def resumed(work, plugin, sock, movie, name, stitching, content):
    """mpv started paused on `movie`, whose first position must be `content`'s stream time in that
    stitching (the plugin holds the start until the session's resume): yields mpv and that position,
    and kills mpv if it is still running afterwards."""
    expect = make_media.stream_time(stitching, content)
    mpv = Mpv(work, plugin, sock, movie, name, paused=True)
    try:
        first = mpv.wait_position(lambda p: True, 10, "mpv has a position")[0]
        check(abs(first - expect) <= TOLERANCE,
              f"{name} starts at {first:.2f} = content {make_media.content_time(stitching, first):.2f}; "
              f"content {content:.2f} is at {expect:.2f} there")
        yield mpv, first
    finally:
        mpv.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--snapbackd", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the working directory (media, logs)")
    args = ap.parse_args()
    for tool in ("mpv", "ffmpeg"):
        if not shutil.which(tool):
            print(f"test_mpv: SKIPPED: {tool} is not installed (Debian: apt-get install mpv libmpv-dev ffmpeg)")
            return 0

    def body(work):
        started = time.monotonic()
        media = [make_media.make(work, "a"), make_media.make(work, "b")]
        print(f"test media made in {time.monotonic() - started:.1f} s")
        daemon = e2e.Daemon(args.snapbackd, work, "snapbackd")
        try:
            story(work, args.plugin, daemon.sock, media)
            hls_manifest(work, args.plugin, daemon.sock, media[0])
            live_refreshes(work, args.plugin, args.snapbackd, media[0])
            vmap_ad_rules(work, args.plugin, daemon.sock, media[0])
            retired_sessions(work, args.plugin, daemon.sock, media, daemon)
            for name in ("a1", "a2", "b1", "h1", "h2", "v1", "v2"):
                with open(os.path.join(work, f"{name}.log"), errors="replace") as f:
                    bad = e2e.plugin_failures(f.read())
                check(not bad, f"the plugin reported no failure in {name} ({bad[:3]})")
            daemon.stop()
        finally:
            daemon.kill()

    # mpv's status line ("AV: …") is left out of the logs shown.
    return e2e.run("test_mpv", "snapback-mpv.", args.keep, body, noise=("AV:",))


if __name__ == "__main__":
    sys.exit(main())
