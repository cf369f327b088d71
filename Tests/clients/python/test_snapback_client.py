#!/usr/bin/env python3
"""End-to-end check of snapbackd with the standard-library Python client (no pytest needed).

    SNAPBACKD_BIN=.build/debug/snapbackd python3 Tests/clients/python/test_snapback_client.py
    python3 Tests/clients/python/test_snapback_client.py .build/debug/snapbackd

Starts the daemon on a socket in a temporary directory, prints one PASS/FAIL line per check, and exits
non-zero if any check failed.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapback_client as sb  # noqa: E402

FAILURES = []


def check(name, fn):
    """Runs fn; it returns a detail string (PASS) or raises (FAIL). Returns fn's success."""
    try:
        detail = fn()
    except Exception as e:  # noqa: BLE001 - any exception is a failed check
        FAILURES.append(name)
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
        return False
    print("PASS %s%s" % (name, ": " + detail if detail else ""), flush=True)
    return True


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def expect_error(code, fn):
    try:
        reply = fn()
    except sb.RpcError as e:
        expect(e.code == code, "got %s (%d) %r, expected %s" % (e.name, e.code, e.message, sb.STATUS_NAMES[code]))
        expect(e.body_code == e.code, "Status.code %s differs from the header's status %d" % (e.body_code, e.code))
        return "%s %r" % (e.name, e.message)
    raise AssertionError("got OK %r, expected %s" % (reply, sb.STATUS_NAMES[code]))


def seek_str(ev):
    p = ev.push
    what = p[p.kind] if p.kind else None
    if p.kind == "seek":
        what = "%g %s" % (what.stream_time, sb.enum_name("SeekReason", what.reason))
    return "push seq %d %s(%s) %r" % (p.seq, p.kind, what, p.reason)


def start_daemon(binary, tmp):
    sock_path = os.path.join(tmp, "snapbackd.sock")
    log = open(os.path.join(tmp, "snapbackd.log"), "wb")
    proc = subprocess.Popen([binary, "--socket", sock_path, "--state-dir", os.path.join(tmp, "state"),
                             "--log-level", "debug"], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("snapbackd exited with %d at start" % proc.returncode)
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            s.close()
            return proc, sock_path
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("snapbackd did not listen on %s within 15 s" % sock_path)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SNAPBACKD_BIN")
    if not binary:
        print("usage: test_snapback_client.py SNAPBACKD_BIN (or set SNAPBACKD_BIN)", file=sys.stderr)
        return 2
    binary = os.path.abspath(binary)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()[-1]
    tmp = tempfile.mkdtemp(prefix="snapback-py-")
    proc = None
    try:
        proc, path = start_daemon(binary, tmp)
        run(path, version, proc)
    except Exception as e:  # noqa: BLE001
        FAILURES.append("setup")
        print("FAIL setup: %s: %s" % (type(e).__name__, e), flush=True)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if FAILURES:
            with open(os.path.join(tmp, "snapbackd.log"), "rb") as f:
                sys.stderr.write("--- snapbackd log (last 40 lines) ---\n")
                sys.stderr.write(b"".join(f.readlines()[-40:]).decode("utf-8", "replace"))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d check(s) failed: %s" % (len(FAILURES), ", ".join(FAILURES)) if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


def run(path, version, proc):
    c = sb.Client(path)
    st = {}

    def hello():
        r = c.hello("snapback-python-test")
        expect(r.protocol_version == 1, "protocol_version %d" % r.protocol_version)
        expect(r.server_name == "snapbackd", "server_name %r" % r.server_name)
        expect(r.server_version == version, "server_version %r, --version says %r" % (r.server_version, version))
        expect(r.max_frame_size == 1048576, "max_frame_size %d" % r.max_frame_size)
        expect(r.max_outbound_queue_bytes == 8388608, "max_outbound_queue_bytes %d" % r.max_outbound_queue_bytes)
        expect(r.max_breaks_per_session == 100000, "max_breaks_per_session %d" % r.max_breaks_per_session)
        expect(r.default_policy_preset in r.policy_presets, "default preset %r not in %r"
               % (r.default_policy_preset, r.policy_presets))
        return "%s %s, max_frame_size %d, max_outbound_queue_bytes %d, max_breaks %d, presets %s (default %s)" % (
            r.server_name, r.server_version, r.max_frame_size, r.max_outbound_queue_bytes,
            r.max_breaks_per_session, ",".join(r.policy_presets), r.default_policy_preset)
    if not check("Hello: ok, server version and limits", hello):
        return

    def open_session():
        r = c.open_session(stream_id="py-stream", content_id="py-movie", kind=sb.SESSION_KIND_ON_DEMAND,
                           breaks=[{"id": "b1", "start": 600.0, "duration": 60.0}], content_duration=1800.0)
        expect(r.session_id != 0, "session_id 0")
        expect(r.last_push_seq == 0, "opening caused pushes up to seq %d" % r.last_push_seq)
        expect(not c.take_pushes(), "pushes before the OpenSession reply")
        st["sid"], st["open_call"] = r.session_id, c.session_call_ids[r.session_id]
        return "session %d (preset %s), break b1 at 600 s for 60 s" % (r.session_id, r.policy_preset)
    if not check("OpenSession", open_session):
        return
    sid = st["sid"]
    st["last_seq"] = 0

    def expect_push_frames(events):
        for ev in events:
            expect(ev.call_id == st["open_call"], "push on call id %d, OpenSession's was %d" % (ev.call_id, st["open_call"]))
            expect(ev.method == sb.OPEN_SESSION, "push method 0x%04x" % ev.method)
            expect(ev.push.session_id == sid, "push for session %d" % ev.push.session_id)
            expect(ev.push.seq == st["last_seq"] + 1, "push seq %d after %d" % (ev.push.seq, st["last_seq"]))
            st["last_seq"] = ev.push.seq

    def playhead():
        r = c.call("Timeline/ReportPlayhead", session_id=sid, stream_time=300.0, rate=1.0, playing=True)
        pushes = c.take_pushes()
        expect(r.last_push_seq == 0 and not pushes, "unexpected pushes: %s" % [seek_str(p) for p in pushes])
        return "no push"
    check("ReportPlayhead 300", playhead)

    def snapback():
        r = c.call("Timeline/SeekEnded", session_id=sid, from_stream_time=300.0, to_stream_time=900.0)
        pushes = c.take_pushes()  # exactly the pushes read before the reply
        expect(pushes, "no push arrived before the reply (last_push_seq %d)" % r.last_push_seq)
        expect_push_frames(pushes)
        seeks = [e.push for e in pushes if e.push.kind == "seek"]
        expect(len(seeks) == 1, "pushes: %s" % [seek_str(p) for p in pushes])
        expect(seeks[0].seek.stream_time == 600.0 and seeks[0].seek.reason == sb.SEEK_REASON_SNAPBACK,
               "got %s" % seek_str(pushes[0]))
        expect(r.last_push_seq == pushes[-1].push.seq, "last_push_seq %d, last push before the reply has seq %d"
               % (r.last_push_seq, pushes[-1].push.seq))
        return "%s before the reply; reply last_push_seq %d" % ("; ".join(seek_str(p) for p in pushes), r.last_push_seq)
    check("SeekEnded 300->900: snapback push before reply, last_push_seq matches", snapback)

    def ad_break():
        r1 = c.call("Timeline/AdBreakStarted", session_id=sid, break_id="b1")
        p1 = c.take_pushes()
        expect_push_frames(p1)
        expect(r1.last_push_seq == (p1[-1].push.seq if p1 else 0), "AdBreakStarted last_push_seq %d" % r1.last_push_seq)
        r2 = c.call("Timeline/AdBreakEnded", session_id=sid, break_id="b1")
        p2 = c.take_pushes()
        expect_push_frames(p2)
        pushes = p1 + p2
        watched = [e.push for e in pushes if e.push.kind == "break_watched"]
        seeks = [e.push for e in pushes if e.push.kind == "seek"]
        expect(len(watched) == 1 and watched[0].break_watched.break_id == "b1",
               "break_watched pushes: %s" % [seek_str(p) for p in pushes])
        expect(len(seeks) == 1 and seeks[0].seek.stream_time == 900.0
               and seeks[0].seek.reason == sb.SEEK_REASON_RESUME_AFTER_SNAPBACK,
               "seek pushes: %s" % [seek_str(p) for p in pushes])
        expect(p2 and r2.last_push_seq == p2[-1].push.seq, "AdBreakEnded last_push_seq %d" % r2.last_push_seq)
        return "; ".join(seek_str(p) for p in pushes) + "; last_push_seq %d" % r2.last_push_seq
    check("AdBreakStarted/AdBreakEnded b1: break watched + seek 900 RESUME_AFTER_SNAPBACK", ad_break)

    def close():
        r = c.close_session(sid)
        pushes = c.take_pushes()
        counted = [e for e in pushes if e.push.seq <= r.last_push_seq]
        expect(len(counted) == len(pushes), "pushes after last_push_seq arrived before the reply")
        deadline = time.monotonic() + 5
        while not any(e.push.kind == "bookmark_saved" for e in pushes) and time.monotonic() < deadline:
            ev = c.next_push(timeout=deadline - time.monotonic())
            if ev is None:
                break
            pushes.append(ev)
        expect_push_frames(pushes)
        saved = [e.push for e in pushes if e.push.kind == "bookmark_saved"]
        expect(saved, "no bookmark_saved push within 5 s; pushes: %s" % [seek_str(p) for p in pushes])
        b = saved[0].bookmark_saved
        expect(b.content_time == 840.0, "bookmark content_time %g (stream %g)" % (b.content_time, b.stream_time))
        expect(b.trigger == sb.BOOKMARK_TRIGGER_CLOSED, "trigger %s" % sb.enum_name("BookmarkTrigger", b.trigger))
        return "bookmark_saved content %g stream %g trigger %s (seq %d, reply last_push_seq %d)" % (
            b.content_time, b.stream_time, sb.enum_name("BookmarkTrigger", b.trigger), saved[0].seq, r.last_push_seq)
    check("CloseSession: bookmark saved at content time 840", close)

    check("call on the closed session -> NOT_FOUND",
          lambda: expect_error(sb.NOT_FOUND, lambda: c.call("Timeline/GetSessionState", session_id=sid)))

    check("unknown method 0x01FF -> UNIMPLEMENTED", lambda: raw_error(c, 0x01FF, b"", sb.UNIMPLEMENTED))
    check("unknown service 0x7F00 -> UNIMPLEMENTED", lambda: raw_error(c, 0x7F00, b"\x08\x01", sb.UNIMPLEMENTED))

    def before_hello():
        with sb.Client(path) as fresh:
            detail = expect_error(sb.FAILED_PRECONDITION, lambda: fresh.call("Control/GetStatus"))
            fresh.hello()  # the connection stays usable
            status = fresh.call("Control/GetStatus")
            return detail + "; Hello afterwards ok, GetStatus: %d connection(s)" % status.connections
    check("call before Hello on a fresh connection -> FAILED_PRECONDITION", before_hello)

    malformed = [("truncated varint", b"\x08"), ("length past the end", b"\x08\x01\x12\x05ab"),
                 ("invalid wire type 7", b"\x0f\x01"), ("field number 0", b"\x00\x01")]
    for what, body in malformed:
        check("malformed body (%s) -> INVALID_ARGUMENT" % what,
              lambda body=body: raw_error(c, sb.METHODS["Timeline/OpenSession"].id, body, sb.INVALID_ARGUMENT))

    def foreign_session():
        owner = c.open_session(content_id="py-other", breaks=[{"id": "b1", "start": 600.0, "duration": 60.0}])
        with sb.Client(path) as other:
            other.hello()
            detail = expect_error(sb.NOT_FOUND, lambda: other.call(
                "Timeline/SeekEnded", session_id=owner.session_id, from_stream_time=300.0, to_stream_time=900.0))
            expect_error(sb.NOT_FOUND, lambda: other.call("Timeline/GetSessionState", session_id=999999))
        state = c.call("Timeline/GetSessionState", session_id=owner.session_id)  # still the owner's
        expect(state.phase == sb.SESSION_PHASE_CONTENT, "owner's session phase %s"
               % sb.enum_name("SessionPhase", state.phase))
        expect(not c.take_pushes(), "the other connection's call pushed to the owner")
        return "session %d of another connection: %s" % (owner.session_id, detail)
    check("session id not opened on this connection -> NOT_FOUND", foreign_session)

    def sigterm():
        # c is still connected with an open session: the stop must still be clean.
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("still running 10 s after SIGTERM")
        expect(rc == 0, "exit status %d" % rc)
        return "exit status 0"
    check("SIGTERM -> daemon exits 0", sigterm)
    c.close()


def raw_error(client, method_id, body, code):
    status, reply = client.call_raw(method_id, body)
    expect(status == code, "status %s (%d), expected %s; body %s" % (
        sb.STATUS_NAMES[status] if status < len(sb.STATUS_NAMES) else status, status, sb.STATUS_NAMES[code],
        reply.hex()))
    st = sb.decode("Status", reply)
    expect(st.code == status, "Status.code %d differs from the header's status %d" % (st.code, status))
    return "%s %r" % (sb.STATUS_NAMES[status], st.message)


if __name__ == "__main__":
    sys.exit(main())
