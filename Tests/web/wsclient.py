# SPDX-License-Identifier: Apache-2.0
"""A small RFC 6455 client on the standard library: the bridge's tests speak to it with full control of
the upgrade's headers and of every frame's bits (masking, fragments, lengths), and the browser tests
drive Chromium's DevTools over it."""

import base64
import json
import os
import socket
import struct
import time


class Closed(Exception):
    def __init__(self, code, reason):
        super().__init__("closed %s %r" % (code, reason))
        self.code = code
        self.reason = reason


def http_request(host, port, head, timeout=5.0, rcvbuf=None):
    """Sends a raw request head; returns (status, headers dict lower-cased, body bytes, socket).
    `rcvbuf`: the socket's receive buffer, set before it connects (so the window is small from the start)."""
    if rcvbuf is None:
        s = socket.create_connection((host, port), timeout=timeout)
    else:
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(timeout)
        s.connect((host, port))
    s.sendall(head.encode() if isinstance(head, str) else head)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head_bytes, _, rest = data.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest, s


class WebSocket:
    def __init__(self, host, port, path="/jsonrpc", origin=None, host_header=None, protocols=None,
                 extra_headers=(), timeout=5.0, rcvbuf=None):
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path, "Host: %s" % (host_header or "%s:%d" % (host, port)),
                 "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: " + key,
                 "Sec-WebSocket-Version: 13"]
        if origin is not None:
            lines.append("Origin: " + origin)
        if protocols:
            lines.append("Sec-WebSocket-Protocol: " + ", ".join(protocols))
        lines += list(extra_headers)
        self.status, self.headers, rest, self.sock = http_request(host, port, "\r\n".join(lines) + "\r\n\r\n", timeout,
                                                                  rcvbuf)
        self.buffer = rest if self.status == 101 else b""
        self.body = rest if self.status != 101 else b""
        self.timeout = timeout

    # Frames out: masked unless told otherwise.
    def send_frame(self, opcode, payload=b"", fin=True, mask=True, rsv=0, length_override=None):
        first = (0x80 if fin else 0) | (rsv << 4) | opcode
        n = len(payload) if length_override is None else length_override
        if n < 126:
            header = struct.pack("!BB", first, (0x80 if mask else 0) | n)
        elif n <= 0xFFFF:
            header = struct.pack("!BBH", first, (0x80 if mask else 0) | 126, n)
        else:
            header = struct.pack("!BBQ", first, (0x80 if mask else 0) | 127, n)
        if mask:
            key = os.urandom(4)
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
            header += key
        self.sock.sendall(header + payload)

    def send_text(self, text, frame_size=None):
        """One text message; in frames of `frame_size` bytes (a text frame, then continuations) if given."""
        data = text.encode() if isinstance(text, str) else text
        if frame_size is None:
            self.send_frame(0x1, data)
            return
        for at in range(0, max(len(data), 1), frame_size):
            self.send_frame(0x1 if at == 0 else 0x0, data[at:at + frame_size], fin=at + frame_size >= len(data))

    def call(self, method, params=None, id=1):
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_text(json.dumps(message))
        return self.recv_json()

    def _fill(self, n, deadline):
        while len(self.buffer) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame within the timeout")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed(1006, "connection closed without a close frame")
            self.buffer += chunk

    def recv_frame(self, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        self._fill(2, deadline)
        b0, b1 = self.buffer[0], self.buffer[1]
        n = b1 & 0x7F
        pos = 2
        if n == 126:
            self._fill(4, deadline)
            n = struct.unpack("!H", self.buffer[2:4])[0]
            pos = 4
        elif n == 127:
            self._fill(10, deadline)
            n = struct.unpack("!Q", self.buffer[2:10])[0]
            pos = 10
        self._fill(pos + n, deadline)
        payload = self.buffer[pos:pos + n]
        self.buffer = self.buffer[pos + n:]
        return b0 & 0x0F, payload

    def recv(self, timeout=None, answer_pings=True):
        """The next text message; raises Closed on a close frame (with its code and reason)."""
        while True:
            opcode, payload = self.recv_frame(timeout)
            if opcode == 0x9 and answer_pings:
                self.send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise Closed(code, payload[2:].decode("utf-8", "replace"))
            if opcode == 0x1:
                return payload.decode()
            if opcode == 0xA:
                continue
            return payload

    def recv_json(self, timeout=None):
        return json.loads(self.recv(timeout))

    def expect_close(self, timeout=None):
        try:
            while True:
                self.recv(timeout)
        except Closed as closed:
            return closed.code, closed.reason

    def close(self, code=1000):
        try:
            self.send_frame(0x8, struct.pack("!H", code))
        except OSError:
            pass
        self.sock.close()
