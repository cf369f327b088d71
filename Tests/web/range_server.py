# SPDX-License-Identifier: Apache-2.0
"""A static HTTP server on 127.0.0.1 that answers Range requests with 206 (python3 -m http.server answers
200, and a browser then cannot seek: its seeks land at 0). Used by the browser tests.

A query `?hold=N` holds a file's bytes from offset N on until the server's `release` event is set (or
60 s): the element plays what came before and then stalls, and a seek beyond N never completes, as on a
network that stops answering."""

import http.server
import os
import re
import socketserver
import threading
import urllib.parse

# How long a held request waits for the server's release at most.
HOLD_SECONDS = 60


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


def serve(directory, port=0):
    """Starts a server for `directory` on 127.0.0.1 in a thread; returns (server, port)."""
    handler = lambda *a, **kw: RangeHandler(*a, directory=directory, **kw)  # noqa: E731
    server = Server(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]
