#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""MPEG-TS test media with SCTE-35 cues, made by GStreamer itself (mpegtsmux writes the cues; Debian's
python3-gst-1.0 and the GstMpegts typelib drive it).

cues.ts: SECONDS (24) of a moving test pattern, 160x90 at 25 frames per second, MPEG-4 part 2 video
(libav's MPEG-2 encoder refuses every frame rate in Debian 12) with a keyframe every second, and two
SCTE-35 cues placed in the stream ahead of their splice times, as a broadcaster sends them: at 1 s a
splice_insert (out of network, event 1, a 4-second break at 8 with auto-return), at 2 s a time_signal
with a segmentation descriptor (provider advertisement start, event 2, 3 seconds at 18). short.ts: 8
seconds of the same with no cue.

    make_ts.py OUTDIR
"""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstMpegts", "1.0")
from gi.repository import Gst, GstMpegts  # noqa: E402

SECONDS = 24
FPS = 25
SCTE_PID = 500
# (sent at stream time, kind, event id, break start, break duration)
CUES = [(1.0, "splice_insert", 1, 8.0, 4.0), (2.0, "time_signal", 2, 18.0, 3.0)]
BREAKS = [(start, duration) for _, _, _, start, duration in CUES]


# mpegtsmux 1.22 writes the splice times of the cues an application builds (gst_mpegts_scte_*_new, in
# running time) one hour after running time, but its video timestamps elsewhere (here 7951.8 s for
# running time 0): such cues point hours away from the video. So the cue is written as raw bytes, its
# splice time taken from the first video PTS the muxer wrote; the muxer passes raw sections through,
# adding its one-hour base to pts_adjustment.
CLOCK_BASE = 90000 * 3600
PTS_WRAP = 1 << 33


def crc32_mpeg2(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def splice_time(pts):
    return ((0xFE << 32) | pts).to_bytes(5, "big")  # time_specified_flag, reserved, pts_time


def section(command_type, command, descriptors=b""):
    """A splice_info_section (SCTE-35 9.2): no encryption, pts_adjustment 0, CRC."""
    body = (bytes([0x00]) + (0).to_bytes(5, "big") + bytes([0x00])
            + ((0xFFF << 12) | len(command)).to_bytes(3, "big") + bytes([command_type]) + command
            + len(descriptors).to_bytes(2, "big") + descriptors)
    length = len(body) + 4
    head = bytes([0xFC, 0x30 | (length >> 8), length & 0xFF]) + body
    return head + crc32_mpeg2(head).to_bytes(4, "big")


def splice_insert(event_id, pts, duration_ticks):
    """splice_insert: out of network, program splice, a break_duration with auto-return, at `pts`
    (90 kHz, before pts_adjustment)."""
    command = (event_id.to_bytes(4, "big") + bytes([0x7F, 0xEF]) + splice_time(pts)
               + ((0xFE << 32) | duration_ticks).to_bytes(5, "big") + bytes([0x00, 0x01, 0x00, 0x00]))
    return section(0x05, command)


def time_signal(event_id, pts, duration_ticks):
    """time_signal at `pts` with a segmentation_descriptor (SCTE-35 10.3.3): a provider advertisement
    start (type 0x30) lasting duration_ticks, program-wide, no UPID."""
    seg = (b"CUEI" + event_id.to_bytes(4, "big") + bytes([0x7F, 0xFF]) + duration_ticks.to_bytes(5, "big")
           + bytes([0x00, 0x00, 0x30, 0x00, 0x00]))
    return section(0x06, splice_time(pts), bytes([0x02, len(seg)]) + seg)


def first_video_pts(buffers):
    """The PTS of the first PES packet (stream id 0xE0-0xEF) in TS output buffers, or None."""
    for buf in buffers:
        ok, info = buf.map(Gst.MapFlags.READ)
        if not ok:
            continue
        data = bytes(info.data)
        buf.unmap(info)
        for i in range(0, len(data) - 187, 188):
            p = data[i:i + 188]
            if p[0] != 0x47 or not p[1] & 0x40:
                continue
            off = 4 + (1 + p[4] if (p[3] >> 4) & 2 else 0)
            pes = p[off:]
            if len(pes) > 14 and pes[:3] == b"\0\0\1" and 0xE0 <= pes[3] <= 0xEF and pes[7] & 0x80:
                b = pes[9:14]
                return ((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1
    return None


def make(path, seconds, cues):
    Gst.init(None)
    GstMpegts.initialize()
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={seconds * FPS} pattern=ball ! video/x-raw,width=160,height=90,framerate={FPS}/1 "
        f"! avenc_mpeg4 gop-size={FPS} bitrate=200000 ! mpeg4videoparse ! mpegtsmux name=mux scte-35-pid={SCTE_PID} "
        f"! filesink location={path}")
    mux = pipeline.get_by_name("mux")
    pending = sorted(cues)
    base = []

    def on_buffer(pad, info):
        if info.type & Gst.PadProbeType.BUFFER_LIST:
            lst = info.get_buffer_list()
            buffers = [lst.get(i) for i in range(lst.length())]
        else:
            buffers = [info.get_buffer()]
        if not base:
            pts = first_video_pts(buffers)
            if pts is not None:
                base.append(pts)
        pts = buffers[0].pts
        while base and pending and pts != Gst.CLOCK_TIME_NONE and pts >= pending[0][0] * Gst.SECOND:
            _, kind, event_id, start, duration = pending.pop(0)
            at = (base[0] + round(start * 90000) - CLOCK_BASE) % PTS_WRAP
            data = (splice_insert if kind == "splice_insert" else time_signal)(event_id, at, round(duration * 90000))
            GstMpegts.Section.new(SCTE_PID, data).send_event(mux)
        return Gst.PadProbeReturn.OK

    # Timed by the muxer's output, not its input: the muxer writes a cue with the next packet it outputs,
    # and its input runs ahead of its output (a cue written before the PMT is ignored by tsdemux).
    mux.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER | Gst.PadProbeType.BUFFER_LIST, on_buffer)
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if not msg or msg.type != Gst.MessageType.EOS:
        raise RuntimeError(f"making {path} failed: {msg.parse_error() if msg else 'timeout'}")
    if pending:
        raise RuntimeError(f"{path}: cues not written: {pending}")
    return path


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    make(os.path.join(outdir, "cues.ts"), SECONDS, CUES)
    make(os.path.join(outdir, "short.ts"), 8, [])
    print(f"{outdir}/cues.ts: {SECONDS} s, breaks {BREAKS} (start, duration) from SCTE-35; "
          f"{outdir}/short.ts: 8 s, no cue")


if __name__ == "__main__":
    main()
