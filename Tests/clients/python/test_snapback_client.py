#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
        log_tail = b""
        if FAILURES and os.path.exists(os.path.join(tmp, "snapbackd.log")):
            with open(os.path.join(tmp, "snapbackd.log"), "rb") as f:
                log_tail = b"".join(f.readlines()[-40:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d check(s) failed: %s" % (len(FAILURES), ", ".join(FAILURES)) if FAILURES else "all checks passed",
          flush=True)
    if log_tail:
        sys.stderr.write("--- snapbackd log (last 40 lines) ---\n" + log_tail.decode("utf-8", "replace"))
    return 1 if FAILURES else 0


def run(path, version, proc):
    c = sb.Client(path)
    st = {}

    def hello():
        r = c.hello("snapback-python-test")
        expect(r.protocol_version == 1, "protocol_version %d" % r.protocol_version)
        expect(r.server_name == "snapbackd", "server_name %r" % r.server_name)
        expect(r.server_version == version, "server_version %r, --version says %r" % (r.server_version, version))
        expect(r.max_frame_size == 262144, "max_frame_size %d" % r.max_frame_size)
        expect(r.max_outbound_queue_bytes == 8388608, "max_outbound_queue_bytes %d" % r.max_outbound_queue_bytes)
        expect(r.max_breaks_per_session == 1000, "max_breaks_per_session %d" % r.max_breaks_per_session)
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

    st["bookmarks"] = []  # bookmark_saved pushes of the session, in seq order

    def ad_break():
        r1 = c.call("Timeline/AdBreakStarted", session_id=sid, break_id="b1")
        p1 = c.take_pushes()
        expect_push_frames(p1)
        st["break_started"] = (r1, p1)
        r2 = c.call("Timeline/AdBreakEnded", session_id=sid, break_id="b1")
        p2 = c.take_pushes()
        expect_push_frames(p2)
        pushes = p1 + p2
        # BreakWatched and the return's BookmarkSaved follow their commits, so they may come after the
        # reply (PROTOCOL.md): wait for both, so that later calls see only their own pushes.
        while not all(any(e.push.kind == k for e in pushes) for k in ("break_watched", "bookmark_saved")):
            ev = c.next_push(timeout=5.0)
            if ev is None:
                break
            expect_push_frames([ev])
            pushes.append(ev)
        st["bookmarks"] += [e.push for e in pushes if e.push.kind == "bookmark_saved"]
        watched = [e.push for e in pushes if e.push.kind == "break_watched"]
        seeks = [e.push for e in pushes if e.push.kind == "seek"]
        expect(len(watched) == 1 and watched[0].break_watched.break_id == "b1",
               "break_watched pushes: %s" % [seek_str(p) for p in pushes])
        expect(len(seeks) == 1 and seeks[0].seek.stream_time == 900.0
               and seeks[0].seek.reason == sb.SEEK_REASON_RESUME_AFTER_SNAPBACK,
               "seek pushes: %s" % [seek_str(p) for p in pushes])
        expect(p2 and r2.last_push_seq == p2[-1].push.seq, "AdBreakEnded last_push_seq %d, last push before it %s"
               % (r2.last_push_seq, p2[-1].push.seq if p2 else None))
        return "; ".join(seek_str(p) for p in pushes) + "; AdBreakEnded last_push_seq %d" % r2.last_push_seq
    check("AdBreakStarted/AdBreakEnded b1: break watched + seek 900 RESUME_AFTER_SNAPBACK", ad_break)

    def no_push_no_seq():
        expect("break_started" in st, "AdBreakStarted was not answered")
        r, pushes = st["break_started"]
        expect(not pushes and r.last_push_seq == 0, "AdBreakStarted caused %d push(es) but last_push_seq is %d "
               "(PROTOCOL.md: the seq of the last push the event caused, 0 if none)" % (len(pushes), r.last_push_seq))
        return "AdBreakStarted: no push, last_push_seq 0"
    check("an event that causes no push answers last_push_seq 0", no_push_no_seq)

    def close():
        r = c.close_session(sid)
        pushes = c.take_pushes()
        expect(all(e.push.seq <= r.last_push_seq for e in pushes), "pushes before the reply not counted in it: %s, last_push_seq %d" % ([(e.push.seq, e.push.kind) for e in pushes], r.last_push_seq))
        while True:  # a BookmarkSaved may follow the reply (PROTOCOL.md): give it a second
            ev = c.next_push(timeout=1.0)
            if ev is None:
                break
            pushes.append(ev)
        expect_push_frames(pushes)
        st["bookmarks"] += [e.push for e in pushes if e.push.kind == "bookmark_saved"]
        expect(st["bookmarks"], "no bookmark_saved push; pushes on close: %s" % [seek_str(p) for p in pushes])
        last = st["bookmarks"][-1]
        b = last.bookmark_saved
        expect(b.content_time == 840.0, "last bookmark_saved: content_time %g (stream %g)" % (b.content_time, b.stream_time))
        stored = c.call("Bookmarks/Get", profile="", content_id="py-movie")
        expect(stored.content_time == 840.0 and stored.stream_id == "py-stream" and not stored.finished,
               "stored bookmark %r" % dict(stored))
        return ("%d push(es) on close; last bookmark_saved seq %d content %g stream %g trigger %s; "
                "Bookmarks/Get: content %g stream %g" % (len(pushes), last.seq, b.content_time, b.stream_time,
                                                         sb.enum_name("BookmarkTrigger", b.trigger),
                                                         stored.content_time, stored.stream_time))
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
            # stderr is a file here: every log line was written.
            expect(status.log_lines_dropped == 0, "log_lines_dropped %d" % status.log_lines_dropped)
            return detail + "; Hello afterwards ok, GetStatus: %d connection(s), %d log lines dropped" % (
                status.connections, status.log_lines_dropped)
    check("call before Hello on a fresh connection -> FAILED_PRECONDITION", before_hello)

    malformed = [("truncated varint", b"\x08"), ("length past the end", b"\x08\x01\x12\x05ab"),
                 ("invalid wire type 7", b"\x0f\x01"), ("field number 0", b"\x00\x01")]
    for what, body in malformed:
        check("malformed body (%s) -> INVALID_ARGUMENT" % what,
              lambda body=body: raw_error(c, sb.METHODS["Timeline/OpenSession"].id, body, sb.INVALID_ARGUMENT))

    def pipelining():
        ids = [c.send("Control/GetStatus") for _ in range(3)] + [c.send_raw(0x01FF)]
        replies = [c.result(i) for i in reversed(ids[:3])]  # collected by call id, in any order
        expect(c.wait(ids[3]).status == sb.UNIMPLEMENTED, "unknown method in the pipeline")
        expect(all(r.protocol_version == 1 for r in replies), "GetStatus replies %r" % replies)
        return "4 requests in flight, answered by call id; %d request(s) answered so far" % replies[-1].requests
    check("pipelined calls matched by call id", pipelining)

    def oversized():
        limit = c.hello_reply.max_frame_size
        cid = c.send_raw(sb.METHODS["Control/GetStatus"].id, bytes(limit + 1))
        detail = expect_error(sb.RESOURCE_EXHAUSTED, lambda: c.result(cid))
        c.call("Control/GetStatus")  # the connection is kept and the body was skipped
        return detail + "; connection still usable"
    check("frame body above max_frame_size -> RESOURCE_EXHAUSTED, connection kept", oversized)

    def hello_v2():
        with sb.Client(path) as v2:
            detail = expect_error(sb.FAILED_PRECONDITION, lambda: v2.call("Control/Hello", protocol_version=2))
            try:
                v2.read_frame(timeout=5)
                raise AssertionError("the server sent another frame instead of closing")
            except sb.ProtocolError:
                pass  # closed, as documented
            return detail + "; connection closed by the server"
    check("Hello with protocol_version 2 -> FAILED_PRECONDITION, then closed", hello_v2)

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

    def refused_peer():
        # A peer off the allow-list (here uid/gid 65534; the default list is root and the socket's group)
        # gets an unsolicited RESPONSE with call id 0 and PERMISSION_DENIED, then the server hangs up.
        if os.geteuid() != 0:
            return "skipped: needs root to connect as another uid"
        os.chmod(os.path.dirname(path), 0o755)
        os.chmod(path, 0o666)  # let the kernel pass the peer, so that the daemon decides
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                try:
                    sb.Client(path).hello()
                    msg = "served"
                except sb.RpcError as e:
                    msg = "%s call id %s: %s" % (e.name, e.call_id, e.message)
            except Exception as e:  # noqa: BLE001
                msg = "%s: %s" % (type(e).__name__, e)
            os.write(w, msg.encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            msg = f.read().decode()
        os.waitpid(pid, 0)
        expect(msg.startswith("PERMISSION_DENIED call id 0: uid 65534"), msg)
        return msg
    check("a peer off the allow-list -> PERMISSION_DENIED with call id 0, then closed", refused_peer)

    def watch_decisions():
        # An operator (root, as the tests run) watches every session; another player snaps back.
        w = sb.Client(path)
        w.hello("snapback-python-watch")
        wid = w.send("Control/WatchDecisions")
        expect(w.result(wid) is None, "WatchDecisions answered a body")
        p = sb.Client(path)
        p.hello("snapback-python-player2")
        r = p.open_session(stream_id="py-2", content_id="py-watched", breaks=[{"id": "w1", "start": 600.0, "duration": 30.0}])
        p.call("Timeline/SeekEnded", session_id=r.session_id, from_stream_time=300.0, to_stream_time=900.0)
        seen = []
        while True:
            ev = w.next_push(timeout=5)
            expect(ev is not None, "no decision within 5 s; saw %r" % seen)
            expect(ev.call_id == wid and ev.method == sb.WATCH_DECISIONS, "push on call %d method 0x%04x" % (ev.call_id, ev.method))
            expect(ev.push.seq == len(seen) + 1, "decision seq %d after %d" % (ev.push.seq, len(seen)))
            seen.append(ev.push)
            if ev.push.kind == sb.DECISION_KIND_SEEK:
                break
        d = seen[-1]
        expect(d.session_id == r.session_id and d.content_id == "py-watched", "decision %r" % (d,))
        expect(d.stream_time == 600.0 and d.seek_reason == sb.SEEK_REASON_SNAPBACK, "decision %r" % (d,))
        listed = c.call("Control/ListSessions")
        ids = [s.session_id for s in listed.sessions]
        expect(r.session_id in ids, "ListSessions %r" % ids)
        info = c.call("Control/GetSession", session_id=r.session_id)
        expect([b.id for b in info.state.breaks] == ["w1"] and info.client_name == "snapback-python-player2", "%r" % (info,))
        p.close()
        w.close()
        return "decision #%d %r; ListSessions %s" % (d.seq, d.reason, ids)
    check("WatchDecisions: another player's snapback arrives with its reason; ListSessions, GetSession", watch_decisions)

    def get_metrics():
        # The snapbacks so far (the story above and the watched player's) are in the counters, by reason.
        m = c.call("Control/GetMetrics")
        seeks = [f for f in m.families if f.name == "snapbackd_seeks_commanded"]
        expect(len(seeks) == 1 and seeks[0].type == sb.METRIC_TYPE_COUNTER, "families %r" % [f.name for f in m.families])
        snapbacks = sum(s.value for s in seeks[0].series
                        if any(l.name == "reason" and l.value == "snapback" for l in s.labels))
        expect(snapbacks >= 2, "%d snapbacks counted" % snapbacks)
        lag = [f for f in m.families if f.name == "snapbackd_event_handling_seconds"][0].series[0]
        expect(lag.bucket_bounds[-1] == float("inf") and lag.bucket_counts[-1] == lag.count, "%r" % (lag,))
        expect(len(m.start_id) == 32 and m.starts >= 1, "start %r, %d starts" % (m.start_id, m.starts))
        return "%d snapbacks, %d families, start %s" % (snapbacks, len(m.families), m.start_id)
    check("GetMetrics: the snapbacks counted by reason, a histogram's buckets, this start's id", get_metrics)

    def sync_service():
        # The sync agent's calls (PROTOCOL.md "Household sync"): a merged remote bookmark is what a new
        # session resumes at and comes back on the change stream under its origin; a field out of range is
        # refused naming it.
        a = sb.Client(path)
        a.hello("snapback-python-sync")
        wid = a.send("Sync/WatchChanges", after=0)
        device = a.result(wid).device_id
        stamp = {"physical": 4102444800000, "counter": 0, "device": "py-box"}
        record = {"profile": "", "content_id": "py-synced", "stamp": stamp,
                  "bookmark": {"content_time": 777.0, "stream_id": "s", "stream_time": 777.0, "updated_at": 1.0}}
        merged = a.call("Sync/Merge", records=[record])
        expect(merged.records_changed == [True], "MergeReply %r" % (merged,))
        r = c.open_session(stream_id="py-synced", content_id="py-synced", resume={"use_bookmark": True})
        expect(r.resume_content_time == 777.0, "resumed at %r" % (r.resume_content_time,))
        c.call("Timeline/CloseSession", session_id=r.session_id)
        while True:
            ev = a.next_push(timeout=5)
            expect(ev is not None and ev.method == sb.WATCH_CHANGES, "no change within 5 s")
            rec = ev.push.record
            if rec is not None and rec.content_id == "py-synced" and rec.stamp.device == "py-box":
                break
        bad = dict(record, stamp=dict(stamp, counter=1 << 32))
        try:
            a.call("Sync/Merge", records=[bad])
            raise AssertionError("counter 2^32 accepted")
        except sb.RpcError as e:
            expect(e.name == "INVALID_ARGUMENT" and "records[0].stamp.counter" in e.message, "%s %s" % (e.name, e.message))
        a.close()
        return "device %s; change #%d from py-box" % (device, ev.push.seq)
    check("Sync: Merge changes the resume point, the change stream carries its origin, ranges named", sync_service)

    def skipped_and_racing():
        # PROTOCOL.md "Event order": trick play over two breaks pushes BreakSkipped for the one that does
        # not play, before the seek to the one that does; an ad event's stream_time is a playhead report;
        # an AdBreakEnded after the playhead left the break is OK with no push; break_states say it all.
        r = c.open_session(stream_id="py-skip", content_id="py-skip", kind=sb.SESSION_KIND_ON_DEMAND,
                           breaks=[{"id": "k1", "start": 600.0, "duration": 60.0},
                                   {"id": "k2", "start": 1000.0, "duration": 60.0}], content_duration=1800.0)
        sid2 = r.session_id
        c.call("Timeline/ReportPlayhead", session_id=sid2, stream_time=300.0, rate=1.0, playing=True)
        c.call("Timeline/TrickPlayStarted", session_id=sid2, stream_time=300.0, rate=8.0)
        c.take_pushes()
        c.call("Timeline/TrickPlayEnded", session_id=sid2, stream_time=1400.0)
        pushes = [e.push for e in c.take_pushes() if e.push.session_id == sid2]
        kinds = [p.kind for p in pushes]
        expect("break_skipped" in kinds and "seek" in kinds
               and kinds.index("break_skipped") < kinds.index("seek"), "pushes: %s" % kinds)
        skip = pushes[kinds.index("break_skipped")].break_skipped
        expect(skip.break_id == "k1" and skip.reason == sb.BREAK_SKIP_REASON_TRICK_PLAY, "%r" % (skip,))
        expect(pushes[kinds.index("seek")].seek.stream_time == 1000.0, "%r" % (pushes,))
        c.call("Timeline/AdBreakStarted", session_id=sid2, break_id="k2", stream_time=1000.0)
        c.call("Timeline/ReportPlayhead", session_id=sid2, stream_time=1060.5, rate=1.0, playing=True)
        late = c.call("Timeline/AdBreakEnded", session_id=sid2, break_id="k2", stream_time=1061.0)
        state = c.call("Timeline/GetSessionState", session_id=sid2)
        bs = state.break_states
        expect([b.break_id for b in bs] == ["k1", "k2"], "%r" % (bs,))
        expect(bs[0].skip_reason == sb.BREAK_SKIP_REASON_TRICK_PLAY and not bs[0].watched, "%r" % (bs[0],))
        expect(bs[1].watched and bs[1].skip_reason == sb.BREAK_SKIP_REASON_UNSPECIFIED, "%r" % (bs[1],))
        expect(all(b.position == sb.BREAK_POSITION_MIDROLL for b in bs), "%r" % (bs,))
        # What contradicts the session is still refused.
        expect_error(sb.FAILED_PRECONDITION, lambda: c.call("Timeline/TrickPlayEnded", session_id=sid2, stream_time=1100.0))
        c.close_session(sid2)
        c.take_pushes()
        return "BreakSkipped k1 TRICK_PLAY before the seek to 1000; racing AdBreakEnded OK (last_push_seq %d); " \
               "break_states %s" % (late.last_push_seq, [(b.break_id, b.watched, sb.enum_name("BreakSkipReason", b.skip_reason))
                                                        for b in bs])
    check("BreakSkipped push, ad event stream_time, racing AdBreakEnded, break_states", skipped_and_racing)

    def tvsdk_trick_play():
        # issue #25: under the tvsdk preset trick play tells every break it passed, the one that then plays
        # too (TVSDK's AD_BREAK_SKIPPED), before the seek to it; PolicyOverrides.trick_play_skipped_breaks
        # does the same for another preset, and a rewind tells them in the order it met them.
        told = {}
        for preset, overrides, start, end in (("tvsdk", None, 300.0, 1400.0),
                                              ("snapback", {"trick_play_skipped_breaks":
                                                            sb.TRICK_PLAY_SKIPPED_BREAKS_EVERY_PASSED}, 1400.0, 300.0)):
            fields = dict(stream_id="py-tv-" + preset, content_id="py-tv-" + preset, policy_preset=preset,
                          breaks=[{"id": "k1", "start": 600.0, "duration": 60.0},
                                  {"id": "k2", "start": 1000.0, "duration": 60.0}], content_duration=1800.0)
            if overrides:
                fields["policy_overrides"] = overrides
            sid3 = c.open_session(**fields).session_id
            c.call("Timeline/ReportPlayhead", session_id=sid3, stream_time=start, rate=1.0, playing=True)
            c.call("Timeline/TrickPlayStarted", session_id=sid3, stream_time=start, rate=8.0 if end > start else -8.0)
            c.take_pushes()
            c.call("Timeline/TrickPlayEnded", session_id=sid3, stream_time=end)
            pushes = [e.push for e in c.take_pushes() if e.push.session_id == sid3]
            kinds = [p.kind for p in pushes]
            skipped = [p.break_skipped.break_id for p in pushes if p.kind == "break_skipped"]
            seeks = [p.seek.stream_time for p in pushes if p.kind == "seek"]
            told[preset] = (skipped, seeks)
            c.close_session(sid3)
            c.take_pushes()
            if end > start:
                expect(skipped == ["k1", "k2"] and seeks == [1000.0]
                       and max(i for i, k in enumerate(kinds) if k == "break_skipped") < kinds.index("seek"),
                       "pushes: %s" % kinds)
            else:
                expect(skipped == ["k2", "k1"] and seeks == [], "pushes: %s" % kinds)
        return "tvsdk forward: skipped %s then seek %s; override, rewind: skipped %s" % (
            told["tvsdk"][0], told["tvsdk"][1], told["snapback"][0])
    check("tvsdk: BreakSkipped for every break trick play passed; the override; a rewind's order", tvsdk_trick_play)

    def replacing_break():
        # content_resume_offset = the break's duration: the break replaces the content it covers, so stream
        # 900 is content 900 (an inserted break would make it 840); the state echoes the field. Above the
        # duration the break cuts more than it lasts (Media3's 200 s ad group resuming the content 400 s
        # later): stream 4700 is content 4900, and content it cut converts to the break's end. A negative
        # offset is refused naming the field.
        r = c.open_session(stream_id="py-r", content_id="py-replaced",
                           breaks=[{"id": "r1", "start": 600.0, "duration": 60.0, "content_resume_offset": 60.0}],
                           content_duration=1800.0)
        ct = c.call("Timeline/ContentTimeForStreamTime", session_id=r.session_id, stream_time=900.0)
        expect(ct.content_time == 900.0, "content time %g" % ct.content_time)
        state = c.call("Timeline/GetSessionState", session_id=r.session_id)
        expect([b.content_resume_offset for b in state.breaks] == [60.0], "%r" % (state.breaks,))
        cut = c.open_session(stream_id="py-cut", content_id="py-cut",
                             breaks=[{"id": "ad3", "start": 4300.0, "duration": 200.0, "content_resume_offset": 400.0}],
                             content_duration=6000.0)
        after = c.call("Timeline/ContentTimeForStreamTime", session_id=cut.session_id, stream_time=4700.0)
        expect(after.content_time == 4900.0, "content time %g" % after.content_time)
        in_cut = c.call("Timeline/StreamTimeForContentTime", session_id=cut.session_id, content_time=4300.0)
        expect(in_cut.stream_time == 4500.0, "stream time %g" % in_cut.stream_time)
        detail = expect_error(sb.INVALID_ARGUMENT, lambda: c.open_session(
            stream_id="py-r2", content_id="py-replaced-2",
            breaks=[{"id": "r1", "start": 600.0, "duration": 60.0, "content_resume_offset": -1.0}]))
        expect("breaks[0].content_resume_offset" in detail, detail)
        c.close_session(r.session_id)
        c.close_session(cut.session_id)
        return "stream 900 = content %g; cut: stream 4700 = content %g, content 4300 = stream %g; %s" % (
            ct.content_time, after.content_time, in_cut.stream_time, detail)
    check("AdBreak.content_resume_offset: replacing and cutting breaks; out of range -> INVALID_ARGUMENT",
          replacing_break)

    def resume_at_stream_time():
        # ResumeOptions.resume_stream_time: the daemon turns the position into content time with the
        # request's own breaks (stream 900 after the 30 s break at 600 is content 870; inside it, stream
        # 615 is content 600, where the content stopped) and resumes there, winning over resume_content_time.
        # Out of its range it is refused naming the field.
        breaks = [{"id": "b1", "start": 600.0, "duration": 30.0}]
        told = []
        for stream_time, content_time, start in ((900.0, 870.0, 900.0), (615.0, 600.0, 630.0)):
            r = c.open_session(stream_id="py-rs", content_id="", breaks=breaks, content_duration=1800.0,
                               policy_overrides={"resume_breaks": sb.RESUME_BREAKS_NONE},
                               resume={"resume_stream_time": stream_time, "resume_content_time": 10.0})
            expect(r.resume_content_time == content_time and r.start_stream_time == start,
                   "stream %g: resumed at content %g, starts at %g" % (
                       stream_time, r.resume_content_time, r.start_stream_time))
            told.append("stream %g -> content %g, start %g" % (stream_time, r.resume_content_time,
                                                               r.start_stream_time))
            c.close_session(r.session_id)
        c.take_pushes()
        detail = expect_error(sb.INVALID_ARGUMENT, lambda: c.open_session(
            stream_id="py-rs", content_id="", breaks=breaks, resume={"resume_stream_time": -1.0}))
        expect("resume.resume_stream_time" in detail, detail)
        return "; ".join(told) + "; " + detail
    check("ResumeOptions.resume_stream_time: converted by the daemon's rule; out of range -> INVALID_ARGUMENT",
          resume_at_stream_time)

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
