#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A plain playbin player for the end-to-end test, driven over its standard input, one command a line.

It knows nothing of snapback: under the tracer it is an unchanged application (the test sets
GST_TRACERS and GST_PLUGIN_PATH in its environment); with --element its video sink is
"snapbacksink sink=fakevideosink", as a player that lets its video sink be chosen would have it.
USE_PLAYBIN3=1 in the environment makes "playbin" a playbin3. No display, no sound card: fakevideosink
and fakesink, both sync=true, so that the stream plays in real time.

Commands, each answered by one line "= ...":
  pos              the pipeline's own position (a position query), seconds, or "none"
  seek T           a flushing, accurate seek to T seconds, as a player's seek bar does
  rate R           play at rate R from where it is (fast forward R > 1, rewind R < 0; 1 ends it);
                   answers "ok" and that position
  pause | play     the pipeline's state
  type             the pipeline's GType name (GstPlayBin or GstPlayBin3)
  first            the stream time of the first video frame the sink rendered (preroll included)
  quit             to NULL, then exit
Lines "! eos" and "! error MESSAGE" report the bus as it goes.
"""
import argparse
import sys
import threading

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--element", action="store_true", help="wrap the video sink in snapbacksink")
    ap.add_argument("--paused", action="store_true", help="start paused")
    ap.add_argument("--content-id", help="snapbacksink's content-id (with --element)")
    ap.add_argument("--next", help="a URI to play after the first, gaplessly (playbin's about-to-finish)")
    args = ap.parse_args()

    Gst.init(None)
    pipeline = Gst.ElementFactory.make("playbin")
    video = Gst.ElementFactory.make("fakevideosink")
    video.set_property("sync", True)
    video.set_property("signal-handoffs", True)
    audio = Gst.ElementFactory.make("fakesink")
    audio.set_property("sync", True)
    if args.element:
        wrapper = Gst.ElementFactory.make("snapbacksink")
        if not wrapper:
            say("! error no snapbacksink element")
            return 1
        wrapper.set_property("sink", video)
        if args.content_id:
            wrapper.set_property("content-id", args.content_id)
        pipeline.set_property("video-sink", wrapper)
    else:
        pipeline.set_property("video-sink", video)
    pipeline.set_property("audio-sink", audio)
    pipeline.set_property("uri", args.uri)
    playlist = [args.next] if args.next else []

    def about_to_finish(bin):
        if playlist:
            bin.set_property("uri", playlist.pop(0))

    pipeline.connect("about-to-finish", about_to_finish)

    first = []

    def on_frame(sink, buf, pad):
        if not first and buf.pts != Gst.CLOCK_TIME_NONE:
            event = pad.get_sticky_event(Gst.EventType.SEGMENT, 0)
            if event:
                first.append(event.parse_segment().to_stream_time(Gst.Format.TIME, buf.pts) / Gst.SECOND)

    video.connect("preroll-handoff", on_frame)
    video.connect("handoff", on_frame)

    loop = GLib.MainLoop()

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.EOS:
            say("! eos")
        elif msg.type == Gst.MessageType.ERROR:
            err, _ = msg.parse_error()
            say(f"! error {err.message}")
        return True

    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)

    def commands():
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            cmd = words[0]
            if cmd == "pos":
                ok, pos = pipeline.query_position(Gst.Format.TIME)
                say(f"= pos {pos / Gst.SECOND:.3f}" if ok and pos >= 0 else "= pos none")
            elif cmd == "seek":
                ok = pipeline.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE,
                                          int(float(words[1]) * Gst.SECOND))
                say(f"= seek {'ok' if ok else 'refused'}")
            elif cmd == "rate":
                # Fast forward or rewind from where it is, as a player's trick-play keys do.
                rate = float(words[1])
                ok, pos = pipeline.query_position(Gst.Format.TIME)
                flags = Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE
                if rate >= 0:
                    ok = ok and pipeline.seek(rate, Gst.Format.TIME, flags, Gst.SeekType.SET, pos, Gst.SeekType.NONE, -1)
                else:
                    ok = ok and pipeline.seek(rate, Gst.Format.TIME, flags, Gst.SeekType.SET, 0, Gst.SeekType.SET, pos)
                say(f"= rate ok {pos / Gst.SECOND:.3f}" if ok else "= rate refused")
            elif cmd in ("pause", "play"):
                ret = pipeline.set_state(Gst.State.PAUSED if cmd == "pause" else Gst.State.PLAYING)
                say(f"= {cmd} {ret.value_nick}")
            elif cmd == "type":
                say(f"= type {type(pipeline).__gtype__.name}")
            elif cmd == "first":
                say(f"= first {first[0]:.3f}" if first else "= first none")
            elif cmd == "quit":
                break
            else:
                say(f"= unknown {cmd}")
        pipeline.set_state(Gst.State.NULL)
        say("= bye")
        GLib.idle_add(loop.quit)

    pipeline.set_state(Gst.State.PAUSED if args.paused else Gst.State.PLAYING)
    threading.Thread(target=commands, daemon=True).start()
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
