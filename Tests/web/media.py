# SPDX-License-Identifier: Apache-2.0
"""Test media made by ffmpeg at test time (never committed): an HLS stream whose primary playlist carries
an EXT-X-DATERANGE interstitial (an ad asset, X-RESTRICT="SKIP,JUMP") and a SCTE35-OUT date range, as
hls.js's interstitials need them (EXT-X-PROGRAM-DATE-TIME on every segment)."""

import os
import shutil
import subprocess


def ffmpeg(*args):
    binary = shutil.which("ffmpeg")
    if not binary:
        raise RuntimeError("ffmpeg is not installed (make deps installs it)")
    subprocess.run([binary, "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


def source(seconds, frequency):
    return ["-f", "lavfi", "-i", "testsrc=size=320x180:rate=25", "-f", "lavfi", "-i", "sine=frequency=%d" % frequency,
            "-t", str(seconds), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-c:a", "aac"]


def hls(directory, seconds=12, ad_seconds=3, ad_at=4):
    """hls/index.m3u8 (2 s segments, program date times) with an interstitial ad of `ad_seconds` at
    `ad_at` (X-RESTRICT="SKIP,JUMP", X-RESUME-OFFSET=0) and a SCTE35-OUT range at 8 s; hls/ad.m3u8 the ad."""
    out = os.path.join(directory, "hls")
    index = os.path.join(out, "index.m3u8")
    if os.path.exists(index):
        return index
    os.makedirs(out, exist_ok=True)
    for name, length, tone in (("primary", seconds, 440), ("ad", ad_seconds, 880)):
        ffmpeg(*source(length, tone), "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
               "-hls_segment_filename", os.path.join(out, name + "-%02d.ts"), os.path.join(out, name + ".m3u8"))
    os.replace(os.path.join(out, "ad.m3u8"), os.path.join(out, "ad-raw.m3u8"))
    # The ad as a playlist of its own, with program date times as well.
    with_dates(os.path.join(out, "ad-raw.m3u8"), os.path.join(out, "ad.m3u8"), [])
    ranges = [
        '#EXT-X-DATERANGE:ID="ad1",CLASS="com.apple.hls.interstitial",START-DATE="%s",DURATION=%d.0,'
        'X-ASSET-URI="ad.m3u8",X-RESTRICT="SKIP,JUMP",X-RESUME-OFFSET=0' % (date_at(ad_at), ad_seconds),
        '#EXT-X-DATERANGE:ID="splice1",START-DATE="%s",PLANNED-DURATION=2.0,SCTE35-OUT=0xFC302000000000000000FFF00506FE000000000000' % date_at(8),
    ]
    with_dates(os.path.join(out, "primary.m3u8"), index, ranges)
    return index


def date_at(seconds):
    return "2026-01-01T00:00:%02d.000Z" % seconds


def with_dates(source_path, target_path, ranges):
    """Copies a VOD playlist with EXT-X-PROGRAM-DATE-TIME before each segment and `ranges` after the header."""
    lines = open(source_path).read().splitlines()
    out, at, header_done = [], 0.0, False
    for line in lines:
        if line.startswith("#EXTINF") and not header_done:
            out += ranges
            header_done = True
        if line.startswith("#EXTINF"):
            out.append("#EXT-X-PROGRAM-DATE-TIME:%s" % ("2026-01-01T00:00:%06.3fZ" % at))
            at += float(line.split(":")[1].rstrip(","))
        out.append(line)
    with open(target_path, "w") as f:
        f.write("\n".join(out) + "\n")
