# SPDX-License-Identifier: Apache-2.0
"""Test media made by ffmpeg at test time (never committed): an HLS stream whose primary playlist carries
an EXT-X-DATERANGE interstitial (an ad asset, X-RESTRICT="SKIP,JUMP") and a SCTE35-OUT date range, as
hls.js's interstitials need them (EXT-X-PROGRAM-DATE-TIME on every segment), in MPEG-TS segments (hls/,
which hls.js transmuxes) or fragmented MP4 ones (hls-fmp4/, which it appends as they are); and an MP4 for
a plain <video> whose breaks the page lists.

WPE WebKit 2.38 plays the fMP4 stream and not, reliably, the TS one: hls.js's TS remux leaves a gap at the
buffer's start, which hls.js jumps by seeking the element to 0.1 s while its pipeline is still prerolling,
and WebKit's MSE player then never completes that seek (docs/web.md)."""

import json
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


# The stream's folder under the site, by kind of segment.
STREAMS = {"ts": "hls", "fmp4": "hls-fmp4"}


def hls(directory, seconds=12, ad_seconds=3, ad_at=4, segments="ts"):
    """STREAM/index.m3u8 (STREAM = STREAMS[segments]; 2 s segments, program date times) with an
    interstitial ad of `ad_seconds` at `ad_at` (X-RESTRICT="SKIP,JUMP", X-RESUME-OFFSET=0) and a SCTE35-OUT
    range at 8 s; STREAM/ad.m3u8 the ad."""
    stream = STREAMS[segments]
    out = os.path.join(directory, stream)
    index = os.path.join(out, "index.m3u8")
    if os.path.exists(index):
        return index
    os.makedirs(out, exist_ok=True)
    for name, length, tone in (("primary", seconds, 440), ("ad", ad_seconds, 880)):
        if segments == "fmp4":
            kind = ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", name + "-init.mp4",
                    "-hls_segment_filename", os.path.join(out, name + "-%02d.m4s")]
        else:
            kind = ["-hls_segment_filename", os.path.join(out, name + "-%02d.ts")]
        ffmpeg(*source(length, tone), "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", *kind,
               os.path.join(out, name + ".m3u8"))
    os.replace(os.path.join(out, "ad.m3u8"), os.path.join(out, "ad-raw.m3u8"))
    # The ad as a playlist of its own, with program date times as well.
    with_dates(os.path.join(out, "ad-raw.m3u8"), os.path.join(out, "ad.m3u8"), [])
    # The asset's URI from the site's root: hls.js 1.6.15 resolves a relative X-ASSET-URI against the
    # page's URL, not the playlist's (its asset player's loadSource builds the URL without a base, which
    # throws, and loads the bare attribute), so "ad.m3u8" would be a 404 and no ad would play.
    ranges = [
        '#EXT-X-DATERANGE:ID="ad1",CLASS="com.apple.hls.interstitial",START-DATE="%s",DURATION=%d.0,'
        'X-ASSET-URI="/%s/ad.m3u8",X-RESTRICT="SKIP,JUMP",X-RESUME-OFFSET=0' % (date_at(ad_at), ad_seconds, stream),
        '#EXT-X-DATERANGE:ID="splice1",START-DATE="%s",PLANNED-DURATION=2.0,SCTE35-OUT=0x%s'
        % (date_at(8), splice_insert(event_id=2, duration=2).hex().upper()),
    ]
    with_dates(os.path.join(out, "primary.m3u8"), index, ranges)
    return index


def splice(directory, out_at=4, seconds=3, segments="ts"):
    """STREAM/splice.m3u8: the primary segments with no interstitial, and a SCTE35-OUT date range at
    `out_at` of `seconds` (the ads stitched into the stream, as a real SCTE-35 splice_insert)."""
    out = os.path.join(directory, STREAMS[segments])
    path = os.path.join(out, "splice.m3u8")
    hls(directory, segments=segments)
    ranges = ['#EXT-X-DATERANGE:ID="splice1",START-DATE="%s",DURATION=%d.0,SCTE35-OUT=0x%s'
              % (date_at(out_at), seconds, splice_insert(event_id=1, duration=seconds).hex().upper())]
    with_dates(os.path.join(out, "primary.m3u8"), path, ranges)
    return path


def live(directory, second_ad_at=10, ad_seconds=3, segments="ts"):
    """STREAM/live-source.m3u8: the primary segments as an EVENT playlist (no ENDLIST) with two
    interstitials, the ad at 4 s and another at `second_ad_at`: what range_server's STREAM/live.m3u8 shows
    a growing part of, as a live playlist grows (its interstitials appearing with their segments)."""
    stream = STREAMS[segments]
    out = os.path.join(directory, stream)
    path = os.path.join(out, "live-source.m3u8")
    hls(directory, segments=segments)
    ranges = [
        '#EXT-X-DATERANGE:ID="ad%d",CLASS="com.apple.hls.interstitial",START-DATE="%s",DURATION=%d.0,'
        'X-ASSET-URI="/%s/ad.m3u8",X-RESUME-OFFSET=0' % (i + 1, date_at(at), ad_seconds, stream)
        for i, at in enumerate((4, second_ad_at))
    ]
    with_dates(os.path.join(out, "primary.m3u8"), path, ranges)
    with open(path) as f:
        lines = [line for line in f.read().splitlines() if line not in ("#EXT-X-ENDLIST", "#EXT-X-PLAYLIST-TYPE:VOD")]
    lines.insert(1, "#EXT-X-PLAYLIST-TYPE:EVENT")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def splice_insert(event_id, duration):
    """A SCTE-35 splice_info_section (SCTE 35 §9.6): a splice_insert out of network, immediate, with a
    break_duration of `duration` seconds that returns on its own, and its CRC-32."""
    ticks = int(duration * 90000)
    command = (event_id.to_bytes(4, "big") + bytes([0x7F,          # not cancelled, reserved
                                                    0xFF,          # out, program splice, duration, immediate
                                                    0xFE | (ticks >> 32)]) + (ticks & 0xFFFFFFFF).to_bytes(4, "big")
               + (event_id & 0xFFFF).to_bytes(2, "big") + bytes([0, 0]))  # unique_program_id, avail_num, avails_expected
    body = (bytes([0]) + bytes(5) + bytes([0]) + bytes([0xFF, 0xF0 | (len(command) >> 8), len(command) & 0xFF, 0x05])
            + command + bytes([0, 0]))  # protocol_version, pts_adjustment, cw_index, tier + command length, type; no descriptors
    length = len(body) + 4
    section = bytes([0xFC, 0x30 | (length >> 8), length & 0xFF]) + body
    return section + crc32_mpeg2(section).to_bytes(4, "big")


def crc32_mpeg2(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


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


def mp4(directory, seconds=40):
    """film.mp4: `seconds` of test picture and tone, a key frame every second, its index at the front (a
    <video> starts playing before the whole file is fetched, and seeks with Range requests)."""
    path = os.path.join(directory, "film.mp4")
    if not os.path.exists(path):
        ffmpeg(*source(seconds, 440), "-movflags", "+faststart", path)
    return path


def cue_playlist(max_bytes):
    """An HLS playlist whose readCues message is at most `max_bytes`, made of segments each with a
    SCTE35-OUT date range (a real splice_insert) and a program date time: the most work a byte of
    playlist gives the reader (a date, attributes, hex, a SCTE-35 section, a break or a rejection).
    Returns (text, date ranges): the largest readCues the bridge's default max-message-size admits."""
    splice = splice_insert(event_id=1, duration=2).hex().upper()
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"]
    envelope = len(json.dumps({"jsonrpc": "2.0", "id": 1 << 30, "method": "Snapback.1.readCues",
                               "params": {"text": "", "format": "hls", "reset": True}}))
    size, i = envelope + sum(len(json.dumps(line)) for line in lines) + 32, 0
    while True:
        at = "2026-01-01T%02d:%02d:%02d.000Z" % ((i * 2) // 3600 % 24, (i * 2) // 60 % 60, (i * 2) % 60)
        unit = ['#EXT-X-DATERANGE:ID="d%d",START-DATE="%s",PLANNED-DURATION=2.0,SCTE35-OUT=0x%s' % (i, at, splice),
                "#EXT-X-PROGRAM-DATE-TIME:" + at, "#EXTINF:2,", "s%d.ts" % i]
        cost = sum(len(json.dumps(line)) for line in unit)  # its quotes' two bytes: the newline's "\\n"
        if size + cost > max_bytes:
            break
        lines += unit
        size, i = size + cost, i + 1
    return "\n".join(lines + ["#EXT-X-ENDLIST"]) + "\n", i
