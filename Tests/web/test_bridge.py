#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapback-web against the real snapbackd, over real sockets: the upgrade's checks (Host, Origin, token),
the health check, RFC 6455 framing errors and their close codes, quotas (rate, connections per app),
ping/pong and idle time, one snapbackd connection per page, and nothing left behind after many pages;
SIGHUP reloads the apps (an unchanged app's pages kept, a removed or changed app's closed 1012, a bad
file refused and the old configuration kept).

    python3 Tests/web/test_bridge.py .build/debug/snapbackd .build/debug/snapback-web

One PASS/FAIL line per check; exits non-zero if any failed.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import (FAILURES, check, daemon_connections, expect, free_port, rss_kib, start_bridge,  # noqa: E402
                     show_logs, start_daemon, stop, wait_port, wakeups, write_config)
from wsclient import Closed, WebSocket, http_request  # noqa: E402

GUIDE_ORIGIN = "http://127.0.0.1:8000"
GUIDE_TOKEN = "guide-token-0123456789abcdef"
OTHER_ORIGIN = "http://localhost:8001"
OTHER_TOKEN = "other-token-0123456789abcdef"


APPS = {"guide": {"origin": GUIDE_ORIGIN, "token": GUIDE_TOKEN, "profiles": "alice"},
        "other": {"origin": OTHER_ORIGIN, "token": OTHER_TOKEN, "max-connections": 2}}


def main():
    snapbackd, web = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="snapback-web-test-")
    sock_path = os.path.join(tmp, "snapbackd.sock")
    port = free_port()
    daemon = start_daemon(snapbackd, tmp, sock_path)
    bridge = None
    try:
        config = write_config(tmp, port, sock_path, APPS, messages_per_second=20, message_burst=40,
                              ping_interval="1s", pong_timeout="500ms", handshake_timeout="1s",
                              max_connections=6, max_frame_size="4K", max_message_size="8K")
        bridge = start_bridge(web, config, os.path.join(tmp, "snapback-web.log"), port)
        restart = lambda: start_daemon(snapbackd, tmp, sock_path)
        daemon = run_checks(port, sock_path, bridge, daemon, restart)
        check("socket-activated on 127.0.0.1 and [::1]", lambda: socket_activated(web, tmp, sock_path))
        check("under systemd: READY=1, and RELOADING=1 then READY=1 around each SIGHUP", lambda: notify_reload(web, tmp, sock_path))
        reload_checks(web, tmp, sock_path)
        check("a page that sends its close with output queued and stops reading is closed after the linger",
              lambda: unread_close(web, tmp, sock_path))
    finally:
        stop(bridge, daemon)
        if FAILURES:
            show_logs(tmp, ("snapback-web.log", "snapbackd.log"))
        shutil.rmtree(tmp, ignore_errors=True)
    if bridge is not None and bridge.returncode not in (0, None):
        FAILURES.append("snapback-web exit status %s" % bridge.returncode)
        print("FAIL snapback-web exited %s on SIGTERM" % bridge.returncode)
    print("%d failed" % len(FAILURES) if FAILURES else "all passed")
    sys.exit(1 if FAILURES else 0)


def run_checks(port, sock_path, bridge, daemon, restart):
    def page(**kw):
        kw.setdefault("origin", GUIDE_ORIGIN)
        path = kw.pop("path", "/jsonrpc?token=" + GUIDE_TOKEN)
        return WebSocket("127.0.0.1", port, path=path, **kw)

    def refused(ws, status, words):
        expect(ws.status == status, "status %d, wanted %d (%r)" % (ws.status, status, ws.body))
        expect(words in ws.body.decode(), "reason %r lacks %r" % (ws.body, words))
        ws.sock.close()
        return "%d %s" % (status, ws.body.decode().strip())

    base = daemon_connections(sock_path)

    def upgrade_query_token():
        ws = page()
        expect(ws.status == 101, "status %d %r" % (ws.status, ws.body))
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "player"})
        expect(reply == {"jsonrpc": "2.0", "id": 1, "result": None}, "register: %r" % reply)
        ws.close()
        return "101, register -> null"
    check("an app's page upgrades with ?token=", upgrade_query_token)

    def upgrade_protocol_token():
        ws = page(path="/jsonrpc", protocols=["snapback.v1.json", "snapback.token." + GUIDE_TOKEN])
        expect(ws.status == 101, "status %d %r" % (ws.status, ws.body))
        expect(ws.headers.get("sec-websocket-protocol") == "snapback.v1.json", "protocol %r" % ws.headers)
        reply = ws.call("Snapback.1.unregister", {"event": "push", "id": "player"}, id="a")
        expect(reply.get("id") == "a" and reply.get("result") is None, "unregister: %r" % reply)
        ws.close()
        return "101 snapback.v1.json"
    check("the token as a Sec-WebSocket-Protocol entry", upgrade_protocol_token)

    check("origin not configured: 403", lambda: refused(page(origin="http://evil.example"), 403, "not a configured app"))
    check("Origin null (file://): 403", lambda: refused(page(origin="null"), 403, "'null'"))
    check("no Origin: 403", lambda: refused(page(origin=None), 403, "no Origin"))
    check("wrong token: 403", lambda: refused(page(path="/jsonrpc?token=guide-token-0123456789abcdeX"), 403, "wrong token"))
    check("another app's token: 403", lambda: refused(page(path="/jsonrpc?token=" + OTHER_TOKEN), 403, "wrong token"))
    check("no token: 403", lambda: refused(page(path="/jsonrpc"), 403, "no token"))
    check("two tokens: 403", lambda: refused(
        page(protocols=["snapback.v1.json", "snapback.token." + GUIDE_TOKEN]), 403, "more than one token"))
    check("rebinding Host: 403", lambda: refused(page(host_header="rebind.example:%d" % port), 403, "is not this bridge"))
    check("Host without the port: 403", lambda: refused(page(host_header="127.0.0.1"), 403, "is not this bridge"))
    check("two Hosts: 400", lambda: refused(page(extra_headers=["Host: 127.0.0.1:%d" % port]), 400, "Host"))
    check("localhost and [::1] are the bridge's names", lambda: (
        [expect(page(host_header=h).status == 101, h) for h in ("localhost:%d" % port, "[::1]:%d" % port)], "101")[1])
    check("sub-protocols without snapback.v1.json: 400", lambda: refused(page(protocols=["chat"]), 400, "snapback.v1.json"))
    check("version 8: 426", lambda: refused(_raw_refusal(port, "Sec-WebSocket-Version: 8"), 426, "version 13"))
    check("unknown path: 404", lambda: refused(page(path="/admin"), 404, "nothing at /admin"))

    def health():
        status, headers, body, s = http_request("127.0.0.1", port,
                                                "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\n\r\n" % (port, GUIDE_ORIGIN))
        s.close()
        expect(status == 200 and json.loads(body) == {"status": "ok"}, "%d %r" % (status, body))
        expect(headers.get("access-control-allow-origin") == GUIDE_ORIGIN, "CORS %r" % headers)
        status, headers, body, s = http_request("127.0.0.1", port,
                                                "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://evil.example\r\n\r\n" % port)
        s.close()
        expect("access-control-allow-origin" not in headers, "CORS for a stranger %r" % headers)
        status, headers, _, s = http_request("127.0.0.1", port,
                                             "OPTIONS /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\n\r\n" % (port, GUIDE_ORIGIN))
        s.close()
        expect(status == 204 and headers.get("access-control-allow-private-network") == "true", "preflight %d %r" % (status, headers))
        return "200 with CORS for the app, none for a stranger; preflight 204"
    check("GET /health", health)

    def jsonrpc_errors():
        ws = page()
        ws.send_text("{not json")
        e1 = ws.recv_json()
        ws.send_text('[{"jsonrpc":"2.0","id":1,"method":"Snapback.1.register"}]')
        e2 = ws.recv_json()
        e3 = ws.call("Controller.1.activate", {})
        e4 = ws.call("Snapback.1.register", {"event": "everything", "id": "x"})
        ws.send_text('{"jsonrpc":"1.0","id":7,"method":"Snapback.1.register"}')
        e5 = ws.recv_json()
        ws.close()
        codes = [e["error"]["code"] for e in (e1, e2, e3, e4, e5)]
        expect(codes == [-32700, -32600, -32601, -32602, -32600], "codes %r" % [e1, e2, e3, e4, e5])
        expect(e5["id"] == 7, "id echoed: %r" % e5)
        return "codes %s" % codes
    check("JSON-RPC errors: parse, batch, unknown method, bad params, version", jsonrpc_errors)

    def close_code(send, code, words):
        ws = page()
        expect(ws.status == 101, "upgrade %d" % ws.status)
        ws.call("Snapback.1.register", {"event": "push", "id": "p"})  # the link is up
        send(ws)
        got, reason = ws.expect_close()
        ws.sock.close()
        expect(got == code and words in reason, "close %s %r, wanted %d ~%r" % (got, reason, code, words))
        return "%d %s" % (got, reason)

    check("binary message: 1003", lambda: close_code(lambda ws: ws.send_frame(0x2, b"\x00\x01"), 1003, "binary"))
    check("unmasked frame: 1002", lambda: close_code(lambda ws: ws.send_frame(0x1, b"{}", mask=False), 1002, "not masked"))
    check("reserved bits: 1002", lambda: close_code(lambda ws: ws.send_frame(0x1, b"{}", rsv=4), 1002, "reserved"))
    check("invalid UTF-8 text: 1007", lambda: close_code(lambda ws: ws.send_frame(0x1, b"\xc3\x28"), 1007, "UTF-8"))
    check("frame over max-frame-size: 1009", lambda: close_code(lambda ws: ws.send_frame(0x1, b"x" * 5000), 1009, "limit"))
    check("message over max-message-size: 1009", lambda: close_code(
        lambda ws: [ws.send_frame(0x1 if i == 0 else 0x0, b"x" * 3000, fin=False) for i in range(3)], 1009, "message over"))
    check("fragmented ping: 1002", lambda: close_code(lambda ws: ws.send_frame(0x9, b"", fin=False), 1002, "fragmented control"))
    check("continuation with nothing to continue: 1002", lambda: close_code(lambda ws: ws.send_frame(0x0, b"x"), 1002, "continuation"))

    def fragments_and_ping():
        ws = page()
        text = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "Snapback.1.register", "params": {"event": "push", "id": "é"}})
        data = text.encode()
        ws.send_frame(0x1, data[:10], fin=False)
        ws.send_frame(0x9, b"hi")  # a ping between fragments
        ws.send_frame(0x0, data[10:20], fin=False)
        ws.send_frame(0x0, data[20:])
        opcode, payload = ws.recv_frame()
        expect(opcode == 0xA and payload == b"hi", "pong %r %r" % (opcode, payload))
        reply = ws.recv_json()
        expect(reply == {"jsonrpc": "2.0", "id": 9, "result": None}, "reply %r" % reply)
        ws.close()
        return "pong echoed, message reassembled"
    check("fragmented message with a ping between its fragments", fragments_and_ping)

    def page_close_echoed():
        ws = page()
        ws.call("Snapback.1.register", {"event": "push", "id": "p"})
        ws.send_frame(0x8, struct.pack("!H", 4001) + b"bye")
        code, _ = ws.expect_close()
        ws.sock.close()
        expect(code == 4001, "echo %r" % code)
        return "close 4001 echoed"
    check("a page's close is echoed", page_close_echoed)

    def reset_while_closing(frames):
        # The bridge is stopped while the page sends its frames and resets the connection, so that it
        # reads them with the peer already gone: its answer (the pong, the echoed close) fails, and the
        # connection is closed by that failure while the bridge was closing it (a second uv_close of the
        # handle aborted the process on libuv's "!uv__is_closing(handle)" assertion).
        def run():
            ws = page()
            ws.call("Snapback.1.register", {"event": "push", "id": "r"})
            ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            os.kill(bridge.pid, signal.SIGSTOP)
            try:
                for opcode, payload in frames:
                    ws.send_frame(opcode, payload)
                ws.sock.close()  # linger 0: a reset
                time.sleep(0.1)
            finally:
                os.kill(bridge.pid, signal.SIGCONT)
            time.sleep(0.2)
            expect(bridge.poll() is None, "snapback-web exited %s" % bridge.returncode)
            after = page()
            reply = after.call("Snapback.1.register", {"event": "push", "id": "r2"})
            after.close()
            expect(reply.get("result", 0) is None, "a page after it %r" % reply)
            return "bridge alive, the next page served"
        return run
    check("a page's close frame, then a reset, while the bridge reads: one close",
          reset_while_closing([(0x8, struct.pack("!H", 1000))]))
    check("a ping and a close, then a reset, while the bridge reads: one close",
          reset_while_closing([(0x9, b"p"), (0x8, struct.pack("!H", 1000))]))

    def flood():
        quiet = page()
        quiet.call("Snapback.1.register", {"event": "push", "id": "q"})
        noisy = page()
        noisy.call("Snapback.1.register", {"event": "push", "id": "n"})
        message = json.dumps({"jsonrpc": "2.0", "method": "Snapback.1.register", "params": {"event": "push", "id": "n"}})
        try:
            for _ in range(200):
                noisy.send_text(message)
        except OSError:
            pass
        code, reason = noisy.expect_close()
        noisy.sock.close()
        expect(code == 1008 and "messages per second" in reason, "flood close %s %r" % (code, reason))
        reply = quiet.call("Snapback.1.register", {"event": "push", "id": "q2"}, id=2)
        expect(reply.get("result", 0) is None, "quiet page %r" % reply)
        quiet.close()
        return "flooder %d %r; the other page goes on" % (code, reason)
    check("a flooding page is closed 1008, another goes on", flood)

    def per_app_limit():
        first = [WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + OTHER_TOKEN, origin=OTHER_ORIGIN) for _ in range(2)]
        for ws in first:
            ws.call("Snapback.1.register", {"event": "push", "id": "o"})
        third = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + OTHER_TOKEN, origin=OTHER_ORIGIN)
        expect(third.status == 101, "upgrade %d" % third.status)
        code, reason = third.expect_close()
        third.sock.close()
        for ws in first:
            ws.close()
        expect(code == 1013 and "at most 2 pages" in reason, "third %s %r" % (code, reason))
        return "%d %r" % (code, reason)
    check("connections per app: 1013", per_app_limit)

    def total_limit():
        pages = [page() for _ in range(6)]
        for ws in pages:
            ws.call("Snapback.1.register", {"event": "push", "id": "t"})
        extra = page()
        code, reason = extra.expect_close()
        extra.sock.close()
        for ws in pages:
            ws.close()
        expect(code == 1013 and "at most 6 pages" in reason, "extra %s %r" % (code, reason))
        return "%d %r" % (code, reason)
    check("connections in all: 1013", total_limit)

    def ping_pong():
        ws = page()
        ws.call("Snapback.1.register", {"event": "push", "id": "p"})
        opcode, _ = ws.recv_frame(timeout=3)
        expect(opcode == 0x9, "opcode %r, wanted a ping" % opcode)
        ws.send_frame(0xA, b"")
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "p2"}, id=3)
        expect(reply.get("id") == 3, "after pong %r" % reply)
        silent = page()
        silent.call("Snapback.1.register", {"event": "push", "id": "s"})
        code, reason = _close_without_pong(silent)
        ws.close()
        expect(code == 1008 and "no pong" in reason, "silent page %s %r" % (code, reason))
        return "pinged after 1 s; no pong: %d %r" % (code, reason)
    check("idle pages are pinged; no pong closes", ping_pong)

    def handshake_timeout():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /jsonrpc HTTP/1.1\r\n")
        s.settimeout(4)
        t0 = time.monotonic()
        data = s.recv(4096)
        s.close()
        expect(data.startswith(b"HTTP/1.1 408"), "%r" % data[:40])
        return "408 after %.1f s" % (time.monotonic() - t0)
    check("incomplete request head: 408 after handshake-timeout", handshake_timeout)

    check("request head over 8 KiB: 431", lambda: _head_status(port, "GET /health HTTP/1.1\r\nX: %s\r\n\r\n" % ("a" * 9000), 431))
    check("bare LF: 400", lambda: _head_status(port, "GET /health HTTP/1.1\nHost: x\n\n" + " " * 8200, 400))
    check("obsolete folding: 400", lambda: _head_status(port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n x\r\n\r\n" % port, 400))

    def one_daemon_connection_per_page():
        before = daemon_connections(sock_path)
        pages = [page() for _ in range(3)]
        for ws in pages:
            ws.call("Snapback.1.register", {"event": "push", "id": "x"})
        during = daemon_connections(sock_path)
        for ws in pages:
            ws.close()
        deadline = time.monotonic() + 5
        after = during
        while time.monotonic() < deadline and after != before:
            time.sleep(0.05)
            after = daemon_connections(sock_path)
        expect(during == before + 3 and after == before, "daemon connections %d -> %d -> %d" % (before, during, after))
        return "%d -> %d -> %d" % (before, during, after)
    check("one snapbackd connection per page, gone with it", one_daemon_connection_per_page)

    def many_pages():
        rss0 = rss_kib(bridge.pid)
        for i in range(200):
            ws = page()
            ws.call("Snapback.1.register", {"event": "push", "id": "m"})
            if i % 2:
                ws.close()
            else:
                ws.sock.close()  # gone without a close frame
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and daemon_connections(sock_path) != base:
            time.sleep(0.05)
        left = daemon_connections(sock_path)
        rss1 = rss_kib(bridge.pid)
        expect(left == base, "snapbackd still has %d connections (base %d)" % (left, base))
        expect(rss1 - rss0 < 1024, "bridge RSS %d -> %d KiB" % (rss0, rss1))
        return "snapbackd connections back to %d; bridge RSS %d -> %d KiB" % (left, rss0, rss1)
    check("200 pages opened and closed leave nothing behind", many_pages)

    def idle_no_wakeups():
        time.sleep(1.5)  # the last pages' lingering closes
        w0 = wakeups(bridge.pid)
        time.sleep(3)
        w1 = wakeups(bridge.pid)
        expect(w1 == w0, "%d wake-ups in 3 s with no page" % (w1 - w0))
        return "0 wake-ups in 3 s"
    check("no page: no wake-ups", idle_no_wakeups)

    def daemon_gone():
        ws = page()
        ws.call("Snapback.1.register", {"event": "push", "id": "d"})
        daemon.terminate()
        daemon.wait(10)
        code, reason = ws.expect_close()
        ws.sock.close()
        expect(code == 1011 and "snapbackd" in reason, "close %s %r" % (code, reason))
        late = page()
        late_code, late_reason = late.expect_close()
        late.sock.close()
        expect(late_code == 1011 and "cannot connect" in late_reason, "late page %s %r" % (late_code, late_reason))
        return "%d %r; a page while it is down: %d %r" % (code, reason, late_code, late_reason)
    check("snapbackd gone: pages told 1011", daemon_gone)
    daemon = restart()
    check("SIGTERM: pages told 1001", lambda: _sigterm(bridge, page))
    return daemon


KEPT_ORIGIN, KEPT_TOKEN = "http://127.0.0.1:8100", "kept-token-0123456789abcdefg"
GONE_ORIGIN, GONE_TOKEN = "http://127.0.0.1:8101", "gone-token-0123456789abcdefg"
CHANGED_ORIGIN, OLD_TOKEN, NEW_TOKEN = "http://127.0.0.1:8102", "old-token-0123456789abcdefgh", "new-token-0123456789abcdefgh"
ADDED_ORIGIN, ADDED_TOKEN = "http://127.0.0.1:8103", "added-token-0123456789abcdef"


def unread_close(web, tmp, sock_path):
    """The bridge echoes a page's close once all it queued is written: a page that stops reading with
    more queued than the kernel's buffers hold never lets it drain, and must not hold its slot."""
    ltmp = os.path.join(tmp, "linger")
    os.mkdir(ltmp)
    port = free_port()
    config = write_config(ltmp, port, sock_path, APPS, max_outbound="32M", ping_interval="60s")
    bridge = start_bridge(web, config, os.path.join(ltmp, "snapback-web.log"), port)
    try:
        base = daemon_connections(sock_path)
        ws = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + GUIDE_TOKEN, origin=GUIDE_ORIGIN, rcvbuf=4096)
        expect(ws.status == 101, "status %d %r" % (ws.status, ws.body))
        ws.call("Snapback.1.register", {"event": "push", "id": "q"})
        # 12 MB of pongs to a page that reads none: more than its receive and the bridge's send buffers
        # (a few MB on loopback), so the rest waits in the bridge. Masked with a zero key: the bytes as they are.
        ping = b"\x89\xfd\0\0\0\0" + b"p" * 125
        for _ in range(12):
            ws.sock.sendall(ping * 8000)
        ws.sock.sendall(b"\x88\x82\0\0\0\0\x03\xe8")  # close 1000
        started = time.monotonic()
        deadline = started + 5
        while time.monotonic() < deadline and daemon_connections(sock_path) != base:
            time.sleep(0.05)
        waited = time.monotonic() - started
        left = daemon_connections(sock_path)
        ws.sock.close()
        expect(left == base, "the page still holds its snapbackd connection %.1f s after its close" % waited)
        with open(os.path.join(ltmp, "snapback-web.log"), errors="replace") as f:
            lines = [line.strip() for line in f if "bytes still unread by the page after 1000 ms" in line]
        expect(lines, "no linger line in the log")
        return "closed %.1f s after its close: %s" % (waited, lines[-1])
    finally:
        stop(bridge)


def reload_checks(web, tmp, sock_path):
    """SIGHUP: a bridge of its own, its configuration file rewritten under it."""
    rtmp = os.path.join(tmp, "reload")
    os.mkdir(rtmp)
    port = free_port()
    log_path = os.path.join(rtmp, "snapback-web.log")
    before = {"kept": {"origin": KEPT_ORIGIN, "token": KEPT_TOKEN},
              "gone": {"origin": GONE_ORIGIN, "token": GONE_TOKEN},
              "changed": {"origin": CHANGED_ORIGIN, "token": OLD_TOKEN}}
    config = write_config(rtmp, port, sock_path, before)
    bridge = start_bridge(web, config, log_path, port)

    def page(origin, token):
        ws = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + token, origin=origin)
        expect(ws.status == 101, "%s: status %d %r" % (origin, ws.status, ws.body))
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "r"})
        expect(reply == {"jsonrpc": "2.0", "id": 1, "result": None}, "register: %r" % reply)
        return ws

    def answers(ws, id):
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "r%d" % id}, id=id)
        expect(reply == {"jsonrpc": "2.0", "id": id, "result": None}, "the kept page: %r" % reply)

    def status(origin, token):
        ws = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + token, origin=origin)
        ws.sock.close()
        return ws.status

    def logged(words, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(log_path, encoding="utf-8", errors="replace") as f:
                lines = [line.strip() for line in f if words in line]
            if lines:
                return lines[-1]
            time.sleep(0.05)
        raise AssertionError("not logged within %d s: %r" % (timeout, words))

    state = {}

    def apps_changed():
        kept, gone, changed = page(KEPT_ORIGIN, KEPT_TOKEN), page(GONE_ORIGIN, GONE_TOKEN), page(CHANGED_ORIGIN, OLD_TOKEN)
        state["kept"] = kept
        after = {"added": {"origin": ADDED_ORIGIN, "token": ADDED_TOKEN},
                 "kept": {"origin": KEPT_ORIGIN, "token": KEPT_TOKEN},  # now second: its index moves
                 "changed": {"origin": CHANGED_ORIGIN, "token": NEW_TOKEN}}
        write_config(rtmp, port, sock_path, after)
        bridge.send_signal(signal.SIGHUP)
        closes = {}
        for name, ws in (("gone", gone), ("changed", changed)):
            closes[name] = ws.expect_close(timeout=10)
            ws.sock.close()
        expect(closes["gone"] == (1012, "app gone was removed by a configuration reload"), "gone: %r" % (closes["gone"],))
        expect(closes["changed"] == (1012, "app changed was changed by a configuration reload"), "changed: %r" % (closes["changed"],))
        line = logged("configuration reloaded")
        answers(kept, 2)
        codes = {"added": status(ADDED_ORIGIN, ADDED_TOKEN), "changed, new token": status(CHANGED_ORIGIN, NEW_TOKEN),
                 "changed, old token": status(CHANGED_ORIGIN, OLD_TOKEN), "gone": status(GONE_ORIGIN, GONE_TOKEN)}
        expect(codes == {"added": 101, "changed, new token": 101, "changed, old token": 403, "gone": 403}, "upgrades %r" % codes)
        return "closed %r; the kept page still answered; upgrades %r; log: %s" % (closes, codes, line)
    check("SIGHUP: pages of a removed or changed app closed 1012, an unchanged app's page kept, an added app admitted",
          apps_changed)

    def bad_file():
        with open(config, "w") as f:
            f.write("[app broken]\norigin = http://127.0.0.1:8104\nno-such-key = 1\n")
        bridge.send_signal(signal.SIGHUP)
        line = logged("configuration not reloaded")
        answers(state["kept"], 3)
        codes = (status(ADDED_ORIGIN, ADDED_TOKEN), status(KEPT_ORIGIN, KEPT_TOKEN))
        expect(codes == (101, 101) and bridge.poll() is None, "after the bad file: upgrades %r, bridge %r" % (codes, bridge.poll()))
        return "log: %s; the kept page still answered, upgrades %r" % (line, codes)
    check("SIGHUP: a bad file is refused with a log line and the configuration in force kept", bad_file)

    def limits_for_open_pages():
        # The kept page, connected under the default rate (50 a second, burst 100), takes the new one.
        write_config(rtmp, port, sock_path, {"kept": {"origin": KEPT_ORIGIN, "token": KEPT_TOKEN}},
                     messages_per_second=2, message_burst=3)
        bridge.send_signal(signal.SIGHUP)
        logged("configuration reloaded: 1 apps")
        ws = state.pop("kept")
        for i in range(10):
            ws.send_text('{"jsonrpc":"2.0","id":%d,"method":"Snapback.1.register","params":{"event":"push","id":"f"}}' % i)
        code, reason = ws.expect_close(timeout=10)
        ws.sock.close()
        expect(code == 1008 and "more than 2 messages per second (burst 3)" in reason, "close %r %r" % (code, reason))
        return "the page connected before the reload closed %d %r" % (code, reason)
    check("SIGHUP: the new [limits] hold for the pages already connected", limits_for_open_pages)

    if "kept" in state:
        state["kept"].close()
    stop(bridge)
    if FAILURES:
        show_logs(rtmp, ("snapback-web.log",))


def socket_activated(web, tmp, sock_path):
    port = free_port()
    config = write_config(tmp, port, sock_path, APPS)
    proc = subprocess.Popen(["systemd-socket-activate", "-l", "127.0.0.1:%d" % port, "-l", "[::1]:%d" % port,
                             web, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(port, proc)
        ws = WebSocket("::1", port, path="/jsonrpc?token=" + GUIDE_TOKEN, origin=GUIDE_ORIGIN, host_header="[::1]:%d" % port)
        expect(ws.status == 101, "upgrade on [::1]: %d %r" % (ws.status, ws.body))
        reply = ws.call("Snapback.1.register", {"event": "push", "id": "a"})
        expect(reply.get("result", 0) is None, "register %r" % reply)
        ws.close()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    expect(b"listening on fd 3 fd 4" in err, "log %r" % err[-300:])
    return "adopted fd 3 and fd 4; a page on [::1] upgraded"


def notify_reload(web, tmp, sock_path):
    """Under systemd (Type=notify, a NOTIFY_SOCKET): READY=1 once listening; a SIGHUP is RELOADING=1 with
    MONOTONIC_USEC, then READY=1 again — also when the new file is refused, which the STATUS says."""
    ntmp = os.path.join(tmp, "notify")
    os.mkdir(ntmp)
    port = free_port()
    config = write_config(ntmp, port, sock_path, APPS)
    address = os.path.join(ntmp, "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(address)
    notify.settimeout(10)
    proc = subprocess.Popen([web, "--config", config], env=dict(os.environ, NOTIFY_SOCKET=address),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def message():
            return notify.recv(4096).decode()
        ready = message()
        expect(ready.startswith("READY=1\nSTATUS=listening on"), "at start %r" % ready)
        proc.send_signal(signal.SIGHUP)
        reloading, again = message(), message()
        expect(reloading.startswith("RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC="), "reload %r" % reloading)
        expect(again.startswith("READY=1") and "configuration reloaded" in again, "after the reload %r" % again)
        with open(config, "a") as f:
            f.write("no-such-key = 1\n")
        proc.send_signal(signal.SIGHUP)
        refused = [message(), message()]
        expect(refused[0].startswith("RELOADING=1") and refused[1].startswith("READY=1")
               and "last reload refused" in refused[1], "a refused reload %r" % refused)
        return "%r, then %r" % (reloading.split("\n")[0], refused[1].split("\n")[1][:90])
    finally:
        stop(proc)
        notify.close()


def _raw_refusal(port, version_header):
    ws = WebSocket.__new__(WebSocket)
    head = ("GET /jsonrpc?token=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n%s\r\n\r\n") % (GUIDE_TOKEN, port, GUIDE_ORIGIN, version_header)
    ws.status, ws.headers, ws.body, ws.sock = http_request("127.0.0.1", port, head)
    return ws


def _head_status(port, head, status):
    got, _, body, s = http_request("127.0.0.1", port, head)
    s.close()
    expect(got == status, "status %d, wanted %d (%r)" % (got, status, body))
    return "%d %s" % (got, body.decode().strip())


def _close_without_pong(ws):
    try:
        while True:
            ws.recv(timeout=4, answer_pings=False)
    except Closed as closed:
        ws.sock.close()
        return closed.code, closed.reason


def _sigterm(bridge, page):
    ws = page()
    ws.call("Snapback.1.register", {"event": "push", "id": "z"})
    bridge.terminate()
    code, reason = ws.expect_close()
    ws.sock.close()
    bridge.wait(10)
    expect(code == 1001 and bridge.returncode == 0, "close %s %r, exit %s" % (code, reason, bridge.returncode))
    return "1001 %r, exit 0" % reason


if __name__ == "__main__":
    main()
