#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""GStreamer under snapback, end to end: the real daemon, real playbin and playbin3 pipelines (player.py,
an application that knows nothing of snapback) with the plugin loaded as a tracer (GST_TRACERS, the
application unchanged) or inserted as the video sink (snapbacksink), and test media made at test time:
two Matroska stitchings of one program by ffmpeg (integrations/mpv/tests/make_media.py: ad chapters in
one, a sidecar in the other) and MPEG-TS with SCTE-35 cues by GStreamer (make_ts.py).

What the pipeline does is read from the pipeline itself (position queries; the stream time of the first
frame its video sink rendered), never from the plugin. Positions are compared within TOLERANCE: seeks
here are accurate, the position is polled every POLL seconds, and a report reaches the daemon within
0.25 s; 0.5 s is far below every distance the checks tell apart (the shortest break is 2 s).

    test_gstreamer.py --plugin-dir .build-c/gstreamer --snapbackd .build/debug/snapbackd
"""
import argparse
import os
import queue
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "mpv", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "Tests", "clients", "python"))
import make_media  # noqa: E402
import make_ts  # noqa: E402
import snapback_client  # noqa: E402  (the protocol's standard-library Python client: asks the daemon)
from e2e import POLL, Daemon, Failure, check, summary  # noqa: E402  (the players' shared fixture)
import e2e  # noqa: E402

TOLERANCE = 0.5
A = make_media.STITCHINGS["a"]
B = make_media.STITCHINGS["b"]


class Player(e2e.Player):
    """player.py in its own process (a tracer is loaded when GStreamer starts), driven over its stdin."""

    def __init__(self, ctx, uri, name, element=False, playbin3=False, paused=False, socket=None, next_uri=None,
                 content_id=None):
        super().__init__(ctx.work, name)
        env = dict(os.environ, GST_PLUGIN_PATH=ctx.plugin_dir, GST_REGISTRY=ctx.registry,
                   SNAPBACK_SOCKET=socket, SNAPBACK_VERBOSE="yes")
        env.pop("GST_TRACERS", None)
        env.pop("USE_PLAYBIN3", None)
        if not element:
            env["GST_TRACERS"] = "snapback"
        if playbin3:
            env["USE_PLAYBIN3"] = "1"
        args = [sys.executable, os.path.join(HERE, "player.py"), uri] + (["--element"] if element else []) \
            + (["--paused"] if paused else []) + (["--next", next_uri] if next_uri else []) \
            + (["--content-id", content_id] if content_id else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     text=True, bufsize=1)
        self.lines = queue.Queue()
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def command(self, line, seconds=10):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + seconds
        while True:
            try:
                reply = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise Failure(f"the player did not answer \"{line}\" within {seconds} s")
            if reply is None:
                raise Failure(f"the player exited during \"{line}\"")
            if reply.startswith("! "):
                self.events.append(reply[2:])
                if reply.startswith("! error"):
                    raise Failure(f"the pipeline failed: {reply[8:]}")
                continue
            return reply[2:].split(" ", 1)[1] if " " in reply[2:] else ""

    def position(self):
        v = self.command("pos")
        return None if v == "none" else float(v)

    def first_frame(self, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            v = self.command("first")
            if v != "none":
                return float(v)
            time.sleep(POLL)
        raise Failure(f"no video frame rendered within {seconds} s")

    def seek(self, target):
        check(self.command(f"seek {target}") == "ok", f"the pipeline accepts the seek to {target}")

    def wait_event(self, event, seconds):
        deadline = time.monotonic() + seconds
        while event not in self.events:
            if time.monotonic() > deadline:
                raise Failure(f"no {event} within {seconds} s")
            try:
                reply = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if reply is None:
                raise Failure(f"the player exited waiting for {event}")
            if reply.startswith("! "):
                self.events.append(reply[2:])

    def quit(self):
        self.command("quit")
        self.exited("exit")


def uri(path):
    return "file://" + os.path.abspath(path)


def matroska_story(ctx, element, playbin3):
    """The mpv plugin's story, on one kind of pipeline: snapback over an unwatched break, the return to
    the seek target, a watched break gone straight through, then a resume in both stitchings."""
    label = ("element" if element else "tracer") + ("+playbin3" if playbin3 else "+playbin")
    print(f"== Matroska, {label}", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, f"daemon-{label}")
    movie_a, movie_b = ctx.mkv
    first_break = make_media.layout(A)[0]  # (10, 6)
    b_start, b_end = first_break[0], first_break[0] + first_break[1]
    target = 20.0
    name = label.replace("+", "-")
    try:
        print("-- A, first viewing: a seek over an unwatched break", flush=True)
        p = Player(ctx, uri(movie_a), f"{name}-a1", element, playbin3, socket=daemon.sock)
        try:
            kind = p.command("type")
            check(kind == ("GstPlayBin3" if playbin3 else "GstPlayBin"), f"the pipeline is a {kind}")
            first = p.first_frame()
            check(abs(first) <= TOLERANCE, f"the first frame shown is the start ({first:.2f}): no bookmark yet")
            p.wait_position(lambda t: t >= 1.0, 10, "the pipeline plays A")
            p.seek(target)
            seen = p.wait_position(lambda t: b_start - TOLERANCE <= t < b_end, 3,
                                   f"the seek to {target} over the unwatched break lands in it [{b_start}, {b_end})")
            check(True, f"the pipeline is in the break at {seen[-1]:.2f} after the seek to {target}")
            seen = p.wait_position(lambda t: t >= b_end + 0.3, first_break[1] + 4, "the pipeline leaves the break")
            check(abs(seen[-1] - target) <= TOLERANCE + 0.5,
                  f"after the break the pipeline is at the seek target {target} (at {seen[-1]:.2f})")

            print("-- A: a seek over the watched break goes straight through", flush=True)
            p.seek(5)
            p.wait_position(lambda t: abs(t - 5) <= TOLERANCE, 3, "the pipeline is back at 5")
            p.seek(22)
            seen = p.wait_position(lambda t: t >= 22 - TOLERANCE, 3, "the seek to 22 lands")
            check(abs(seen[-1] - 22) <= TOLERANCE, f"the seek to 22 over the watched break lands at {seen[-1]:.2f}")
            later = []
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                later.append(p.position())
                time.sleep(POLL)
            check(all(t is not None and t >= 22 - TOLERANCE and not make_media.in_break(A, t) for t in later),
                  f"the pipeline stays past the watched break for 1.5 s ({summary([t for t in later if t is not None])})")

            print("-- A: pause and quit", flush=True)
            check(p.command("pause") in ("success", "async", "no-preroll"), "the pipeline pauses")
            time.sleep(0.4)
            stopped = p.position()
            content = make_media.content_time(A, stopped)
            print(f"     paused at stream {stopped:.2f} = content {content:.2f}", flush=True)
            check(not make_media.in_break(A, stopped), "the pause is in content")
            p.quit()
            # The viewer seeked three times (20, 5, 22); the plugin's own seeks (the start, the snapback,
            # the return) were told apart by their seqnum and not reported as the viewer's.
            out = p.output()
            viewer = [line.split("seeked ")[1] for line in out.splitlines() if "the viewer seeked" in line]
            own = out.count(" sent\n")
            check(len(viewer) == 3 and own >= 3,
                  f"only the viewer's seeks were reported as seeks ({viewer}; {own} seeks of the plugin's own)")
        finally:
            p.kill()

        for movie, stitching, tag, what in ((movie_a, A, "a2", "A again"),
                                            (movie_b, B, "b1", "B, another stitching (breaks from its sidecar)")):
            print(f"-- {what}: resumes at content {content:.2f} before its first frame", flush=True)
            expect = make_media.stream_time(stitching, content)
            p = Player(ctx, uri(movie), f"{name}-{tag}", element, playbin3, paused=True, socket=daemon.sock)
            try:
                first = p.first_frame()
                check(abs(first - expect) <= TOLERANCE,
                      f"{tag}'s first frame is at {first:.2f} = content {make_media.content_time(stitching, first):.2f}; "
                      f"content {content:.2f} is at {expect:.2f} there")
                pos = p.wait_position(lambda t: True, 5, "a position")[0]
                check(abs(pos - expect) <= TOLERANCE, f"{tag} is at {pos:.2f}")
                if tag == "b1":
                    # (A again only quits, so that its bookmark stays where B must resume.)
                    check(p.command("play") in ("success", "async"), f"{tag} plays")
                    p.wait_position(lambda t: t >= pos + 1.0, 5, f"{tag} plays on from there")
                p.quit()
                if tag == "b1":
                    check("3 breaks from sidecar" in p.output(), "B's breaks came from its sidecar")
            finally:
                p.kill()
        for tag in ("a1", "a2", "b1"):
            with open(os.path.join(ctx.work, f"{name}-{tag}.log"), errors="replace") as f:
                bad = e2e.plugin_failures(f.read())
            check(not bad, f"the plugin reported no failure in {tag} ({bad[:3]})")
    finally:
        daemon.stop()


def trick_play_story(ctx):
    """Fast forward over an unwatched break is trick play: when it ends, the break plays, then the
    pipeline goes on from where the fast forward stopped."""
    print("== trick play, tracer+playbin", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-trick")
    b_start, duration, _ = make_media.layout(A)[0]
    b_end = b_start + duration
    try:
        p = Player(ctx, uri(ctx.mkv[0]), "trick", socket=daemon.sock)
        try:
            p.wait_position(lambda t: t >= 1.0, 10, "the pipeline plays A")
            check(p.command("rate 4").startswith("ok"), "the pipeline fast-forwards at 4x")
            p.wait_position(lambda t: t >= 20.0, 15, "the fast forward goes past the break")
            reply = p.command("rate 1").split()
            check(reply[0] == "ok", "the pipeline plays at 1x again")
            stopped = float(reply[1])  # where the fast forward stopped: the 1x seek's start
            seen = p.wait_position(lambda t: b_start - TOLERANCE <= t < b_end, 3,
                                   f"the break skipped by the fast forward [{b_start}, {b_end}) plays")
            check(True, f"the pipeline is in the break at {seen[-1]:.2f} after the fast forward to {stopped:.2f}")
            seen = p.wait_position(lambda t: t >= b_end + 0.3, duration + 4, "the pipeline leaves the break")
            check(abs(seen[-1] - stopped) <= TOLERANCE + 0.5,
                  f"after the break the pipeline is where the fast forward stopped, {stopped:.2f} (at {seen[-1]:.2f})")
            p.quit()
            check("trick play at rate 4" in p.output() and "trick play ended" in p.output(),
                  "the fast forward went to the daemon as trick play")
        finally:
            p.kill()
    finally:
        daemon.stop()


def scte35_story(ctx, element):
    """Breaks from SCTE-35 cues as they arrive (a splice_insert and a time_signal with a segmentation
    descriptor): a seek past each announced break snaps back into it, and goes on to its target after."""
    label = "element" if element else "tracer"
    print(f"== MPEG-TS with SCTE-35 cues, {label}+playbin", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, f"daemon-scte35-{label}")
    try:
        # Through the element, the content id is its property's.
        content_id = "channel-7" if element else None
        p = Player(ctx, uri(ctx.ts), f"scte35-{label}", element, socket=daemon.sock, content_id=content_id)
        try:
            # tsdemux's stream time is the video's PTS: the stream starts a frame or so after 0.
            offset = p.first_frame()
            check(0 <= offset <= TOLERANCE, f"the stream starts at {offset:.2f}")
            last_cue = max(c[0] for c in make_ts.CUES)
            p.wait_position(lambda t: t >= last_cue + 1.0, 10, "the pipeline plays past the cues")
            check(f"{len(make_ts.BREAKS)} breaks from SCTE-35 cues" in p.output(),
                  f"the {len(make_ts.BREAKS)} cues became the session's breaks")
            for (start, duration), target in zip(make_ts.BREAKS, (16.0, 22.5)):
                b_start, b_end = start + offset, start + duration + offset
                p.seek(target)
                seen = p.wait_position(lambda t: b_start - TOLERANCE <= t < b_end, 3,
                                       f"the seek to {target} over the break at {b_start:.2f} lands in it")
                check(True, f"the pipeline is in the break [{b_start:.2f}, {b_end:.2f}) at {seen[-1]:.2f} "
                            f"after the seek to {target}")
                seen = p.wait_position(lambda t: t >= b_end + 0.3, duration + 4, "the pipeline leaves the break")
                check(abs(seen[-1] - target) <= TOLERANCE + 0.5,
                      f"after the break the pipeline is at the seek target {target} (at {seen[-1]:.2f})")
            p.quit()
        finally:
            p.kill()
        check(f"{len(make_ts.BREAKS)} breaks, preset" in daemon.output(), "the daemon's session has the cues' breaks")
        want = content_id or "cues"
        check(f'content "{want}" stream "cues.ts"' in daemon.output(), f"the session's content id is \"{want}\"")
    finally:
        daemon.stop()


def playlist_story(ctx):
    """Gapless playback of two items in one playbin (about-to-finish): a session each, and the second's
    SCTE-35 cues placed in its own time, not after the first item's."""
    print("== a gapless playlist in one playbin, tracer: short.ts then cues.ts", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-playlist")
    try:
        p = Player(ctx, uri(ctx.short), "playlist", socket=daemon.sock, next_uri=uri(ctx.ts))
        try:
            deadline = time.monotonic() + 8 + 10
            while 'stream "cues.ts"' not in daemon.output():
                if time.monotonic() > deadline:
                    raise Failure("no session for the second item within 18 s")
                time.sleep(0.1)
            out = daemon.output()
            check('stream "short.ts"' in out and out.index('stream "short.ts"') < out.index('stream "cues.ts"'),
                  "the first item had its session, then the second its own")
            offset = 0.125  # the stream time of the second item's first frame (its first PTS)
            p.wait_position(lambda t: 3.0 <= t < 8.0, 10, "the second item plays past its cues")
            check(f"{len(make_ts.BREAKS)} breaks from SCTE-35 cues" in p.output(), "its cues became its session's breaks")
            (start, duration), target = make_ts.BREAKS[0], 16.0
            b_start, b_end = start + offset, start + duration + offset
            p.seek(target)
            seen = p.wait_position(lambda t: b_start - TOLERANCE <= t < b_end, 3,
                                   f"the seek to {target} over its first break lands in it [{b_start:.2f}, {b_end:.2f})")
            check(True, f"the pipeline is in the second item's break at {seen[-1]:.2f}")
            p.quit()
        finally:
            p.kill()
    finally:
        daemon.stop()


def restart_story(ctx):
    """The daemon restarts while a pipeline plays: the plugin reconnects, its session is reopened, and
    snapback still holds the viewer to the unwatched break."""
    print("== the daemon restarts during playback, tracer+playbin", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-restart")
    b_start, duration, _ = make_media.layout(A)[0]
    b_end = b_start + duration
    try:
        p = Player(ctx, uri(ctx.mkv[0]), "restart", socket=daemon.sock)
        try:
            p.wait_position(lambda t: t >= 1.0, 10, "the pipeline plays A")
            daemon.stop()
            daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-restart", log_name="daemon-restart-2")
            deadline = time.monotonic() + 10
            while "session reopened after a daemon restart" not in p.output():
                if time.monotonic() > deadline:
                    raise Failure("the session was not reopened within 10 s of the restart")
                time.sleep(0.1)
            check(True, "the session was reopened on the restarted daemon")
            pos = p.position()
            check(pos is not None and pos < b_start - 1, f"the pipeline played on meanwhile (at {pos:.2f})")
            p.seek(20)
            seen = p.wait_position(lambda t: b_start - TOLERANCE <= t < b_end, 3,
                                   f"the seek to 20 over the unwatched break lands in it [{b_start}, {b_end})")
            check(True, f"the pipeline is in the break at {seen[-1]:.2f}: the restarted daemon holds the viewer")
            p.quit()
        finally:
            p.kill()
    finally:
        daemon.stop()


def live_story(ctx):
    """A stream with no known duration (MPEG-TS read from a pipe, as a channel is) gets a live session,
    and its SCTE-35 cues reach the daemon as UpdateBreaks on that same session."""
    print("== a live MPEG-TS stream with SCTE-35 cues, tracer+playbin", flush=True)
    daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-live")
    fifo = os.path.join(ctx.work, "live.ts")
    os.mkfifo(fifo)

    def feed():
        # The source may open the pipe, probe it, close it and open it again (basesrc started for pull
        # mode, then for push mode): the stream starts again for each reader, as a channel would.
        for _ in range(4):
            try:
                with open(ctx.ts, "rb") as src, open(fifo, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                return
            except BrokenPipeError:
                continue
            except OSError:
                return  # the player went away

    threading.Thread(target=feed, daemon=True).start()
    try:
        p = Player(ctx, uri(fifo), "live", socket=daemon.sock)
        try:
            last_cue = max(c[0] for c in make_ts.CUES)
            p.wait_position(lambda t: t >= last_cue + 1.5, 10, "the live stream plays past its cues")
            with snapback_client.Client(daemon.sock) as c:
                c.hello("test_gstreamer")
                sessions = c.call("Control/ListSessions").sessions
                check(len(sessions) == 1, f"one session for the stream ({len(sessions)})")
                info = c.call("Control/GetSession", session_id=sessions[0].session_id)
            check(info.kind == snapback_client.SESSION_KIND_LIVE, f"the session is live (kind {info.kind})")
            starts = [round(b.start, 3) for b in info.state.breaks]
            expect = [round(start + 0.125, 3) for start, _ in make_ts.BREAKS]  # 0.125: the stream's first PTS
            check(starts == expect, f"the daemon has the cues' breaks at {starts} (expected {expect})")
            p.quit()
            check("failed" not in p.output(), "UpdateBreaks was accepted")
        finally:
            p.kill()
        check(daemon.output().count(" opened: ") == 1, "the cues did not reopen the session")
    finally:
        daemon.stop()


def no_daemon_story(ctx):
    """No daemon: the pipeline plays from its start to its end in real time; a daemon that comes up while
    it plays gets its session (the plugin reconnects in the background)."""
    print("== no daemon, then one: tracer+playbin plays to the end", flush=True)
    sock = os.path.join(ctx.work, "daemon-late.sock")
    p = Player(ctx, uri(ctx.short), "no-daemon", socket=sock)
    daemon = None
    try:
        started = time.monotonic()
        first = p.first_frame()
        check(first <= TOLERANCE, f"the first frame shown is the start ({first:.2f})")
        p.wait_position(lambda t: t >= 1.5, 10, "the pipeline plays with no daemon")
        daemon = Daemon(ctx.snapbackd, ctx.work, "daemon-late")
        p.wait_event("eos", 8 + 10)
        elapsed = time.monotonic() - started
        check(7.5 <= elapsed <= 8 + 8, f"the 8-second stream played to its end in real time ({elapsed:.1f} s)")
        check("session 1 opened" in daemon.output() and "stream \"short.ts\"" in daemon.output(),
              "the daemon that came up during playback got the pipeline's session")
        p.quit()
        out = p.output()
        check("end of the stream: content complete" in out and "failed" not in out,
              "the end of the stream went to the daemon as the content's end, and was accepted")
    finally:
        p.kill()
        if daemon:
            daemon.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--snapbackd", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the working directory (media, logs)")
    ap.add_argument("--only", help="run only the stories whose label contains this")
    args = ap.parse_args()
    if not shutil.which("ffmpeg"):
        print("test_gstreamer: SKIPPED: ffmpeg is not installed (Debian: apt-get install ffmpeg)")
        return 0

    def body(work):
        ctx = argparse.Namespace(work=work, plugin_dir=args.plugin_dir, snapbackd=args.snapbackd,
                                 registry=os.path.join(work, "registry.bin"))
        os.environ["GST_REGISTRY"] = ctx.registry  # make_ts runs GStreamer in this process
        started = time.monotonic()
        ctx.mkv = [make_media.make(work, "a"), make_media.make(work, "b")]
        ctx.ts = make_ts.make(os.path.join(work, "cues.ts"), make_ts.SECONDS, make_ts.CUES)
        ctx.short = make_ts.make(os.path.join(work, "short.ts"), 8, [])
        print(f"test media made in {time.monotonic() - started:.1f} s", flush=True)
        stories = [(f"matroska-{'element' if e else 'tracer'}-{'playbin3' if p3 else 'playbin'}",
                    lambda e=e, p3=p3: matroska_story(ctx, e, p3))
                   for e in (False, True) for p3 in (False, True)]
        stories += [(f"scte35-{'element' if e else 'tracer'}", lambda e=e: scte35_story(ctx, e)) for e in (False, True)]
        stories.append(("trick-play", lambda: trick_play_story(ctx)))
        stories.append(("playlist", lambda: playlist_story(ctx)))
        stories.append(("restart", lambda: restart_story(ctx)))
        stories.append(("live", lambda: live_story(ctx)))
        stories.append(("no-daemon", lambda: no_daemon_story(ctx)))
        for label, story in stories:
            if not args.only or args.only in label:
                story()

    return e2e.run("test_gstreamer", "snapback-gst.", args.keep, body)


if __name__ == "__main__":
    sys.exit(main())
