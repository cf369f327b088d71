# SPDX-License-Identifier: Apache-2.0
"""A static HTTP server on 127.0.0.1 that answers Range requests with 206 (python3 -m http.server answers
200, and a browser then cannot seek: its seeks land at 0). Used by the browser tests.

A query `?hold=N` holds a file's bytes from offset N on until the server's `release` event is set (or
60 s): the element plays what came before and then stalls, and a seek beyond N never completes, as on a
network that stops answering.

`STREAM/live.m3u8?run=R` is a live playlist that grows: STREAM/live-source.m3u8 (media.live) cut to the
segments of its first `LIVE_FIRST` segments plus one more every segment's duration since run R's first
request, with the date ranges that start within them — as a live event's playlist grows, an interstitial
appearing in it only once its time has come near."""

import http.server
import io
import os
import re
import socketserver
import threading
import time
import urllib.parse

# How long a held request waits for the server's release at most.
HOLD_SECONDS = 60
# The segments a live playlist shows at its first request.
LIVE_FIRST = 3
# Each segment's duration in media.py's streams (its -hls_time), and where its program dates begin.
SEGMENT_SECONDS = 2


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".m3u8": "application/vnd.apple.mpegurl",
                      ".ts": "video/mp2t", ".mp4": "video/mp4"}

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def send_head(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path.endswith("/live.m3u8"):
            return self.live_playlist(url)
        match = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        hold = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("hold")
        if not os.path.isfile(path) or not (match or hold):
            return super().send_head()
        size = os.path.getsize(path)
        self._hold_at = int(hold[0]) if hold else None
        if not match:
            # The whole file (200), through the hold (WPE asks so for a <video>'s src).
            self._offset, self._range_left = 0, size
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Length", str(size))
            self.end_headers()
            return open(path, "rb")
        start = int(match.group(1)) if match.group(1) else max(0, size - int(match.group(2) or 0))
        end = int(match.group(2)) if match.group(1) and match.group(2) else size - 1
        end = min(end, size - 1)
        if start >= size or start > end:
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % size)
            self.end_headers()
            return None
        self._offset = start
        f = open(path, "rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self._range_left = end - start + 1
        return f

    def live_playlist(self, url):
        source = self.translate_path(url.path[: -len("live.m3u8")] + "live-source.m3u8")
        run = urllib.parse.parse_qs(url.query).get("run", [""])[0]
        if not os.path.isfile(source):
            self.send_error(404)
            return None
        with self.server.lock:
            started = self.server.live_runs.setdefault(run, time.monotonic())
        shown = LIVE_FIRST + int((time.monotonic() - started) // SEGMENT_SECONDS)
        with open(source) as f:
            lines = f.read().splitlines()
        out, segment = [], 0
        for line in lines:
            if line.startswith("#EXT-X-DATERANGE"):
                start = re.search(r'START-DATE="[^"]*T\d\d:(\d\d):(\d\d(?:\.\d+)?)Z"', line)
                at = int(start.group(1)) * 60 + float(start.group(2))
                if at >= shown * SEGMENT_SECONDS:
                    continue
            elif line.startswith("#EXT-X-PROGRAM-DATE-TIME"):
                if segment >= shown:
                    break
                segment += 1
            out.append(line)
        body = ("\n".join(out) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.apple.mpegurl")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self._range_left = None
        return io.BytesIO(body)

    def copyfile(self, source, outputfile):
        left = getattr(self, "_range_left", None)
        if left is None:
            return super().copyfile(source, outputfile)
        while left > 0:
            step = min(65536, left)
            if self._hold_at is not None:
                if self._offset >= self._hold_at:
                    self.server.release.wait(HOLD_SECONDS)
                    self._hold_at = None
                else:
                    step = min(step, self._hold_at - self._offset)
            chunk = source.read(step)
            self._offset += len(chunk)
            if not chunk:
                break
            outputfile.write(chunk)
            left -= len(chunk)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        # Set: the `?hold=` requests go on.
        self.release = threading.Event()
        # Each live run's first request (monotonic seconds), by its `run`.
        self.live_runs = {}
        self.lock = threading.Lock()


def serve(directory, port=0):
    """Starts a server for `directory` on 127.0.0.1 in a thread; returns (server, port)."""
    handler = lambda *a, **kw: RangeHandler(*a, directory=directory, **kw)  # noqa: E731
    server = Server(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]
