#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test media for the mpv plugin, made with ffmpeg: two stitchings of one program with different ads.

The program is 75 s of content: a test pattern with its content clock burnt in ("content 0:00:12"),
a 440 Hz tone. Each stitching cuts it at content 10, 25 and 50 s and puts an ad break in each cut:
a colour card reading "AD 1"/"AD 2a"/... over an 880 Hz tone. 160x90 at 10 frames per second, a
keyframe every second (every break edge is on one), H.264 and AAC in Matroska: a few hundred KiB,
made in a second or two.

- A (movie-a.mkv): ads of 6, 2+3 (two ads back to back) and 4 s, marked by chapters titled
  "AD 1", "AD 2a", "AD 2b", "AD 3" between "Content" chapters; the content id is the file's
  `content_id` tag.
- B (movie-b.mkv): ads of 3, 8 and 2 s, with content chapters only ("Opening", ...); the breaks and
  the content id come from the sidecar movie-b.snapback.json.

    python3 make_media.py OUTDIR     # writes both, prints their layouts
"""
import json
import os
import subprocess
import sys

CONTENT = 75.0
CUTS = [10.0, 25.0, 50.0]  # content times of the breaks
CONTENT_ID = "snapback-test-movie"
FPS = 10
SIZE = "160x90"
COLOURS = ["red", "blue", "green", "purple", "orange"]

# Per stitching: per break, its ads' durations.
STITCHINGS = {
    "a": [[6.0], [2.0, 3.0], [4.0]],
    "b": [[3.0], [8.0], [2.0]],
}


def layout(ads):
    """The stitching's breaks in stream time: [(start, duration, [ad durations])]."""
    out, shift = [], 0.0
    for cut, durations in zip(CUTS, ads):
        out.append((cut + shift, sum(durations), durations))
        shift += sum(durations)
    return out


def in_break(ads, stream):
    """Whether a stream time of the stitching is in one of its breaks."""
    return any(s <= stream < s + d for s, d, _ in layout(ads))


def stream_time(ads, content):
    """Stream time of a content time in a stitching (a content time at a break: after the break)."""
    return content + sum(d for (s, d, _), cut in zip(layout(ads), CUTS) if cut <= content)


def content_time(ads, stream):
    """Content time of a stream time (inside a break: the break's content position)."""
    t = stream
    for start, duration, _ in layout(ads):
        if stream >= start + duration:
            t -= duration
        elif stream >= start:
            t -= stream - start
    return t


def _segments(ads):
    """(kind, label, duration) in stream order; kind "content" carries its content start."""
    segs, at = [], 0.0
    for i, (cut, durations) in enumerate(zip(CUTS, ads)):
        segs.append(("content", at, cut - at))
        for k, d in enumerate(durations):
            label = f"AD {i + 1}" + (chr(ord("a") + k) if len(durations) > 1 else "")
            segs.append(("ad", label, d))
        at = cut
    segs.append(("content", at, CONTENT - at))
    return segs


def _metadata(name, ads, chapters_mark_ads):
    lines = [";FFMETADATA1", f"title=snapback test stitching {name}"]
    if chapters_mark_ads:
        lines.append(f"content_id={CONTENT_ID}")

    def chapter(start, end, title):
        lines.extend(["[CHAPTER]", "TIMEBASE=1/1000", f"START={round(start * 1000)}", f"END={round(end * 1000)}",
                      f"title={title}"])

    if chapters_mark_ads:
        t = 0.0
        for kind, label, d in _segments(ads):
            chapter(t, t + d, "Content" if kind == "content" else label)
            t += d
    else:
        # Chapters of the story only: the ads are inside them, known from the sidecar.
        total = CONTENT + sum(map(sum, ads))
        starts = [0.0] + [stream_time(ads, c) for c in CUTS[1:]]
        for i, (start, title) in enumerate(zip(starts, ["Opening", "Middle", "Ending"])):
            chapter(start, starts[i + 1] if i + 1 < len(starts) else total, title)
    return "\n".join(lines) + "\n"


def make(outdir, name, ffmpeg="ffmpeg"):
    ads = STITCHINGS[name]
    chapters_mark_ads = name == "a"
    path = os.path.join(outdir, f"movie-{name}.mkv")
    meta = os.path.join(outdir, f"movie-{name}.ffmeta")
    with open(meta, "w") as f:
        f.write(_metadata(name, ads, chapters_mark_ads))
    graph, labels, colour = [], [], 0
    segs = _segments(ads)
    n_content = sum(1 for s in segs if s[0] == "content")
    graph.append(f"testsrc2=size={SIZE}:rate={FPS}:duration={CONTENT},"
                 "drawtext=text='content %{pts\\:hms}':fontcolor=white:fontsize=10:box=1:boxcolor=black:x=4:y=4,"
                 f"split={n_content}" + "".join(f"[cv{i}]" for i in range(n_content)))
    graph.append(f"sine=frequency=440:sample_rate=16000:duration={CONTENT},asplit={n_content}"
                 + "".join(f"[ca{i}]" for i in range(n_content)))
    ci = 0
    for j, (kind, label, d) in enumerate(segs):
        if kind == "content":
            start = label
            graph.append(f"[cv{ci}]trim=start={start}:duration={d},setpts=PTS-STARTPTS[v{j}]")
            graph.append(f"[ca{ci}]atrim=start={start}:duration={d},asetpts=PTS-STARTPTS[a{j}]")
            ci += 1
        else:
            c = COLOURS[colour % len(COLOURS)]
            colour += 1
            graph.append(f"color=c={c}:size={SIZE}:rate={FPS}:duration={d},"
                         f"drawtext=text='{label}':fontcolor=white:fontsize=32:x=(w-tw)/2:y=(h-th)/2[v{j}]")
            graph.append(f"sine=frequency=880:sample_rate=16000:duration={d}[a{j}]")
        labels.append(f"[v{j}][a{j}]")
    graph.append("".join(labels) + f"concat=n={len(segs)}:v=1:a=1[v][a]")
    cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-i", meta, "-filter_complex", ";".join(graph),
           "-map", "[v]", "-map", "[a]", "-map_metadata", "0", "-map_chapters", "0",
           "-c:v", "libx264", "-preset", "veryfast", "-crf", "35", "-g", str(FPS), "-keyint_min", str(FPS), "-sc_threshold", "0",
           "-c:a", "flac", "-ac", "1", path]
    subprocess.run(cmd, check=True)
    os.remove(meta)
    if not chapters_mark_ads:
        sidecar = {"content_id": CONTENT_ID,
                   "breaks": [{"start": s, "duration": d, "ads": a} for s, d, a in layout(ads)]}
        with open(os.path.join(outdir, f"movie-{name}.snapback.json"), "w") as f:
            json.dump(sidecar, f, indent=2)
    return path


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    for name, ads in STITCHINGS.items():
        path = make(outdir, name)
        breaks = ", ".join(f"{s:g}+{d:g}" for s, d, _ in layout(ads))
        print(f"{path}: {CONTENT:g} s of content, breaks at {breaks} (stream time)")


if __name__ == "__main__":
    main()
