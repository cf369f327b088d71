# SPDX-License-Identifier: Apache-2.0
"""A NATS client in the protocol's own words (CONNECT, SUB, PUB, MSG/HMSG, PING/PONG), for the telemetry
tests: it holds the agent's reports without answering them (a stalled stream), answers them when told,
and watches the household's bucket subjects, seeing each message as it is delivered.

    wire = NatsWire(port)                       # connected, headers on
    wire.subscribe("snapback.telemetry.>")      # returns the subscription's id
    msg = wire.next(lambda m: m.subject.startswith("snapback.telemetry."), timeout=60)
    wire.publish(msg.reply, b'{"stream":"S","seq":1}')
"""

import queue
import socket
import threading
import time


class Message:
    def __init__(self, subject, sid, reply, headers, data):
        self.subject = subject
        self.sid = sid
        self.reply = reply
        self.headers = headers
        self.data = data

    def __repr__(self):
        return f"Message({self.subject!r}, reply={self.reply!r}, headers={self.headers!r}, {len(self.data)} bytes)"


class NatsWire:
    def __init__(self, port, user=None, password=None, timeout=30):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.file = self.sock.makefile("rb")
        self.lock = threading.Lock()
        self.messages = queue.Queue()
        self.backlog = []
        self.errors = []
        self.sids = 0
        info = self.file.readline()
        if not info.startswith(b"INFO "):
            raise RuntimeError(f"not a NATS server: {info!r}")
        auth = f',"user":"{user}","pass":"{password}"' if user else ""
        self._send(('CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,'
                    f'"protocol":1,"name":"telemetry-test"{auth}}}\r\nPING\r\n').encode())
        line = self.file.readline()
        if line.startswith(b"-ERR"):
            raise RuntimeError(f"refused: {line!r}")
        if line != b"PONG\r\n":
            raise RuntimeError(f"no PONG after CONNECT: {line!r}")
        self.sock.settimeout(None)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _send(self, data):
        with self.lock:
            self.sock.sendall(data)

    def _read(self):
        try:
            while True:
                line = self.file.readline()
                if not line:
                    return
                words = line.decode().split()
                if not words:
                    continue
                if words[0] == "PING":
                    self._send(b"PONG\r\n")
                elif words[0] == "MSG":
                    subject, sid = words[1], words[2]
                    reply = words[3] if len(words) == 5 else None
                    size = int(words[-1])
                    data = self.file.read(size + 2)[:size]
                    self.messages.put(Message(subject, sid, reply, {}, data))
                elif words[0] == "HMSG":
                    subject, sid = words[1], words[2]
                    reply = words[3] if len(words) == 6 else None
                    header_size, total = int(words[-2]), int(words[-1])
                    raw = self.file.read(total + 2)[:total]
                    headers = {}
                    for header in raw[:header_size].decode().split("\r\n")[1:]:
                        if ":" in header:
                            name, value = header.split(":", 1)
                            headers[name.strip()] = value.strip()
                    self.messages.put(Message(subject, sid, reply, headers, raw[header_size:]))
                elif words[0] == "-ERR":
                    self.errors.append(line.decode().strip())
        except (OSError, ValueError):
            return

    def subscribe(self, subject):
        self.sids += 1
        self._send(f"SUB {subject} {self.sids}\r\n".encode())
        self.flush()
        return self.sids

    def unsubscribe(self, sid):
        self._send(f"UNSUB {sid}\r\n".encode())
        self.flush()

    def publish(self, subject, data, reply=None):
        self._send(f"PUB {subject} {reply + ' ' if reply else ''}{len(data)}\r\n".encode() + data + b"\r\n")

    def flush(self):
        """A PING the server answers after it has taken everything sent before (the reader takes the PONG)."""
        self._send(b"PING\r\n")

    def next(self, matching, timeout):
        """The first message not taken yet that `matching` accepts, waiting up to `timeout` seconds for it;
        the others stay for a later call."""
        deadline = time.monotonic() + timeout
        while True:
            for i, message in enumerate(self.backlog):
                if matching(message):
                    del self.backlog[i]
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout} s (others: {self.backlog[-4:]})")
            try:
                self.backlog.append(self.messages.get(timeout=left))
            except queue.Empty:
                continue

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
